//! The driver against a software BAR: the `mrc_csr` cycle model (mrc-model) behind `Bar`.

use mrc_config::NicConfig;
use mrc_host_driver::*;
use mrc_model::mrc_csr::{CsrInputs, CsrOutputs, MrcCsr, RESPONSE_CLOCKS, RESP_OKAY};
use std::cell::RefCell;
use std::collections::HashMap;

/// One MMIO access at a time through the CSR model (offered for a clock, then idle clocks
/// until the response, as a bus master waiting for `r_valid` / `b_valid` would); RO inputs
/// held in `ro`.
struct SoftBar {
    csr: RefCell<MrcCsr>,
    ro: RefCell<Vec<u32>>,
}

impl SoftBar {
    fn new(cfg: &NicConfig) -> Self {
        let csr = MrcCsr::new(cfg);
        let ro = vec![0; csr.ports().ro.len()];
        SoftBar {
            csr: RefCell::new(csr),
            ro: RefCell::new(ro),
        }
    }
    fn set_ro(&self, reg: Reg, v: u32) {
        let i = self
            .csr
            .borrow()
            .ports()
            .ro
            .iter()
            .position(|&(b, r)| (b, r) == (reg.block, reg.name))
            .expect("RO port");
        self.ro.borrow_mut()[i] = v;
    }
    fn inputs(&self) -> CsrInputs {
        let c = self.csr.borrow();
        CsrInputs {
            ro: self.ro.borrow().clone(),
            ..c.idle_inputs()
        }
    }
    /// Offers `x` for one clock, then idles until the response (at most RESPONSE_CLOCKS).
    fn access(&self, x: &CsrInputs) -> CsrOutputs {
        let mut c = self.csr.borrow_mut();
        let mut o = c.step(x);
        for _ in 1..RESPONSE_CLOCKS {
            if o.r_valid || o.b_valid {
                break;
            }
            let idle = CsrInputs {
                ro: self.ro.borrow().clone(),
                ..c.idle_inputs()
            };
            o = c.step(&idle);
        }
        o
    }
    fn rw_port(&self, reg: Reg) -> u32 {
        let c = self.csr.borrow();
        let i = c
            .ports()
            .rw
            .iter()
            .position(|&(b, r)| (b, r) == (reg.block, reg.name))
            .expect("RW port");
        c.outputs().rw[i]
    }
}

impl Bar for SoftBar {
    fn read32(&self, offset: u32) -> Result<u32, BusError> {
        let x = CsrInputs {
            rd_valid: true,
            rd_addr: offset,
            ..self.inputs()
        };
        let o = self.access(&x);
        assert!(
            o.r_valid,
            "the model answers every read within RESPONSE_CLOCKS"
        );
        if o.r_resp == RESP_OKAY {
            Ok(o.r_data)
        } else {
            Err(BusError {
                offset,
                write: false,
            })
        }
    }
    fn write32(&self, offset: u32, value: u32) -> Result<(), BusError> {
        let x = CsrInputs {
            wr_valid: true,
            wr_addr: offset,
            wr_data: value,
            wr_strb: 0xF,
            ..self.inputs()
        };
        let o = self.access(&x);
        assert!(o.b_valid);
        if o.b_resp == RESP_OKAY {
            Ok(())
        } else {
            Err(BusError {
                offset,
                write: true,
            })
        }
    }
}

#[test]
fn walk_finds_every_block_of_the_map_in_order() {
    let cfg = NicConfig::default();
    let bar = SoftBar::new(&cfg);
    let found = check_blocks(&bar).unwrap();
    let map = mrc_regmap::build(&cfg);
    assert_eq!(found.len(), map.blocks.len());
    for (f, b) in found.iter().zip(&map.blocks) {
        assert_eq!(f.name, Some(b.name));
        assert_eq!(
            (f.offset, f.type_id, f.version),
            (b.base, b.type_id, b.version)
        );
    }
    assert_eq!(found.last().unwrap().next, 0);
    assert_eq!(read(&bar, regs::csr::BAD_ACCESS).unwrap(), 0);
}

#[test]
fn generated_constants_match_the_map_for_every_register() {
    // The accessors come from build.rs; check a few by name against the map crate.
    let map = mrc_regmap::build(&NicConfig::default());
    for (reg, b, r) in [
        (regs::csr::SCRATCH, "CSR", "SCRATCH"),
        (regs::xport::RTO_EXP, "XPORT", "RTO_EXP"),
        (regs::evt::EV_STATE, "EVT", "EV_STATE"),
        (regs::evq::EVQ_POP, "EVQ", "EVQ_POP"),
        (regs::cnt::OUT_OF_WINDOW, "CNT", "OUT_OF_WINDOW"),
    ] {
        let l = map.find(b, r).unwrap();
        assert_eq!((reg.offset, reg.width), (l.addr, l.reg.width), "{b}.{r}");
    }
    assert_eq!(regs::BLOCKS.len(), map.blocks.len());
    assert_eq!(regs::evt::ev_state::PENALTY.lsb, 8);
}

#[test]
fn typed_accessors_read_reset_values_write_rw_and_refuse_misuse() {
    let cfg = NicConfig {
        rto_exp: 11,
        ..NicConfig::default()
    };
    let bar = SoftBar::new(&cfg);
    assert_eq!(read(&bar, regs::xport::RTO_EXP).unwrap(), 11);
    assert_eq!(read(&bar, regs::csr::PLANES).unwrap(), cfg.planes);
    write(&bar, regs::xport::RTO_EXP, 20).unwrap();
    assert_eq!(read(&bar, regs::xport::RTO_EXP).unwrap(), 20);
    assert_eq!(bar.rw_port(regs::xport::RTO_EXP), 20);
    write_field(
        &bar,
        regs::evt::EV_INDEX,
        Field {
            name: "ALL",
            lsb: 0,
            width: 8,
        },
        0x42,
    )
    .unwrap();
    assert_eq!(read(&bar, regs::evt::EV_INDEX).unwrap(), 0x42);
    bar.set_ro(regs::nscc::CWND, 123_456);
    assert_eq!(read(&bar, regs::nscc::CWND).unwrap(), 123_456);
    bar.set_ro(regs::evt::EV_STATE, 3 | 7 << 8);
    assert_eq!(
        read_field(&bar, regs::evt::EV_STATE, regs::evt::ev_state::STATE).unwrap(),
        3
    );
    assert_eq!(
        read_field(&bar, regs::evt::EV_STATE, regs::evt::ev_state::PENALTY).unwrap(),
        7
    );
    // Refused by the driver before the bus sees them.
    assert!(matches!(
        write(&bar, regs::nscc::CWND, 1),
        Err(DriverError::NotWritable { .. })
    ));
    assert!(matches!(
        read(&bar, regs::evq::EVQ_POP),
        Err(DriverError::NotReadable { .. })
    ));
    assert!(matches!(
        write(&bar, regs::xport::RTO_EXP, 32),
        Err(DriverError::TooWide { .. })
    ));
    assert_eq!(read(&bar, regs::csr::BAD_ACCESS).unwrap(), 0);
    // Refused by the device: an error response and the counter.
    assert_eq!(
        bar.write32(regs::nscc::CWND.offset, 1),
        Err(BusError {
            offset: regs::nscc::CWND.offset,
            write: true
        })
    );
    assert!(bar.read32(0x7F0).is_err());
    assert!(bar.read32(regs::csr::SCRATCH.offset + 2).is_err());
    assert_eq!(read(&bar, regs::csr::BAD_ACCESS).unwrap(), 3);
    assert_eq!(read(&bar, regs::nscc::CWND).unwrap(), 123_456);
}

/// A BAR that is only a table of words (for broken chains).
struct TableBar(HashMap<u32, u32>);

impl Bar for TableBar {
    fn read32(&self, offset: u32) -> Result<u32, BusError> {
        self.0.get(&offset).copied().ok_or(BusError {
            offset,
            write: false,
        })
    }
    fn write32(&self, offset: u32, _: u32) -> Result<(), BusError> {
        Err(BusError {
            offset,
            write: true,
        })
    }
}

fn chain(blocks: &[(u32, u32, u32)]) -> TableBar {
    let mut m = HashMap::new();
    for &(at, ty, next) in blocks {
        m.insert(at, ty);
        m.insert(at + 4, 1);
        m.insert(at + 8, next);
    }
    TableBar(m)
}

#[test]
fn walk_refuses_broken_chains_with_typed_errors() {
    let csr = regs::BLOCKS[0].type_id;
    assert_eq!(
        walk_blocks(&chain(&[(0, csr, 0x100), (0x100, 7, 0)])).unwrap()[1].name,
        None
    );
    assert_eq!(
        walk_blocks(&chain(&[(0, csr, 0x100), (0x100, 7, 0)]))
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        walk_blocks(&chain(&[(0, csr, 0x100), (0x100, 7, 0x100)])),
        Err(DriverError::ChainLoop { at: 0x100 })
    );
    assert_eq!(
        walk_blocks(&chain(&[(0, csr, 0x104)])),
        Err(DriverError::BadNext { at: 0, next: 0x104 })
    );
    assert_eq!(
        walk_blocks(&chain(&[(0, csr, 0x1000)])),
        Err(DriverError::BadNext {
            at: 0,
            next: 0x1000
        })
    );
    assert!(matches!(
        walk_blocks(&chain(&[(0, csr, 0x200)])),
        Err(DriverError::Bus(BusError {
            offset: 0x200,
            write: false
        }))
    ));
    assert_eq!(
        check_blocks(&chain(&[(0, csr, 0)])),
        Err(DriverError::Missing { name: "QP" })
    );
}
