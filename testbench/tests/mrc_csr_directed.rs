//! Directed `mrc_csr` scenarios over MMIO; every cycle is also an RTL-vs-model check (the rig
//! runs both in lockstep).

use mrc_config::NicConfig;
use mrc_host_driver::{check_blocks, Bar, BusError};
use mrc_model::mrc_csr::{CsrInputs, CsrOutputs, RESPONSE_CLOCKS, RESP_OKAY, RESP_SLVERR};
use mrc_regmap::{Access, RegMap};
use mrc_testbench::CsrRig;
use std::cell::RefCell;

struct T {
    rig: CsrRig,
    map: RegMap,
    ro: Vec<u32>,
}

impl T {
    fn new(cfg: &NicConfig) -> Self {
        let rig = CsrRig::new(cfg);
        let n = rig.idle().ro.len();
        let mut t = T {
            rig,
            map: mrc_regmap::build(cfg),
            ro: vec![0; n],
        };
        let r = t.inputs(true);
        t.rig.run(&[r.clone(), r]);
        t
    }
    fn inputs(&self, rst: bool) -> CsrInputs {
        CsrInputs {
            rst,
            ro: self.ro.clone(),
            ..self.rig.idle()
        }
    }
    fn step(&mut self, x: CsrInputs) -> CsrOutputs {
        self.rig.run(&[x]).pop().unwrap()
    }
    /// Offers `x` for one clock, then idles to the response edge ([`RESPONSE_CLOCKS`] after
    /// the offer); the outputs after it.
    fn respond(&mut self, x: CsrInputs) -> CsrOutputs {
        let o = self.step(x);
        assert!(
            !o.b_valid && !o.r_valid,
            "no response at the accepting edge"
        );
        for _ in 1..RESPONSE_CLOCKS {
            let idle = self.inputs(false);
            let o = self.step(idle);
            if o.b_valid || o.r_valid {
                return o;
            }
        }
        panic!("no response {RESPONSE_CLOCKS} clocks after the offer");
    }
    fn read(&mut self, addr: u32) -> CsrOutputs {
        let x = CsrInputs {
            rd_valid: true,
            rd_addr: addr,
            ..self.inputs(false)
        };
        let o = self.respond(x);
        assert!(o.r_valid && !o.b_valid, "read at {addr:#x} answered");
        o
    }
    fn write_strb(&mut self, addr: u32, data: u32, strb: u8) -> CsrOutputs {
        let x = CsrInputs {
            wr_valid: true,
            wr_addr: addr,
            wr_data: data,
            wr_strb: strb,
            ..self.inputs(false)
        };
        let o = self.respond(x);
        assert!(o.b_valid && !o.r_valid, "write at {addr:#x} answered");
        o
    }
    fn write(&mut self, addr: u32, data: u32) -> CsrOutputs {
        self.write_strb(addr, data, 0xF)
    }
    fn addr(&self, b: &str, r: &str) -> u32 {
        self.map.find(b, r).unwrap().addr
    }
    fn bad(&mut self) -> u32 {
        let a = self.addr("CSR", "BAD_ACCESS");
        self.read(a).r_data
    }
    fn ro_index(&self, b: &str, r: &str) -> usize {
        self.rig
            .model
            .model
            .ports()
            .ro
            .iter()
            .position(|&k| k == (b, r))
            .unwrap()
    }
    fn rw_index(&self, b: &str, r: &str) -> usize {
        self.rig
            .model
            .model
            .ports()
            .rw
            .iter()
            .position(|&k| k == (b, r))
            .unwrap()
    }
}

#[test]
fn every_register_reads_its_reset_value() {
    for cfg in [
        NicConfig::default(),
        NicConfig {
            rto_exp: 13,
            mtu: 9000,
            ..NicConfig::default()
        },
    ] {
        let mut t = T::new(&cfg);
        // RO registers read their inputs, masked to their width.
        for (i, v) in t.ro.iter_mut().enumerate() {
            *v = 0xA5A5_0000 ^ (i as u32 * 0x1111);
        }
        let map = t.map.clone();
        for l in map.registers() {
            let o = t.read(l.addr);
            assert_eq!(o.r_resp, RESP_OKAY, "{}.{}", l.block.name, l.reg.name);
            let want = match l.reg.access {
                Access::Ro => t.ro[t.ro_index(l.block.name, l.reg.name)] & l.reg.mask(),
                Access::Wo => 0,
                _ => l.reg.reset,
            };
            assert_eq!(o.r_data, want, "{}.{}", l.block.name, l.reg.name);
        }
        assert_eq!(t.read(t.addr("XPORT", "RTO_EXP")).r_data, cfg.rto_exp);
        assert_eq!(t.read(t.addr("NSCC", "MTU")).r_data, cfg.mtu);
        assert_eq!(t.bad(), 0);
    }
}

#[test]
fn an_ro_read_returns_the_value_of_its_accepting_clock() {
    let mut t = T::new(&NicConfig::default());
    let (k, a) = (t.ro_index("CNT", "PKTS_SENT"), t.addr("CNT", "PKTS_SENT"));
    // A counter that moves every clock: 10 in the clock before the offer, 11 in the offer's
    // (accepting) clock, 12 in the response's.
    t.ro[k] = 10;
    let idle = t.inputs(false);
    t.step(idle);
    t.ro[k] = 11;
    let x = CsrInputs {
        rd_valid: true,
        rd_addr: a,
        ..t.inputs(false)
    };
    assert!(!t.step(x).r_valid);
    t.ro[k] = 12;
    let idle = t.inputs(false);
    let o = t.step(idle);
    assert!(o.r_valid && o.r_resp == RESP_OKAY);
    assert_eq!(o.r_data, 11, "the RO value of the accepting clock");
}

#[test]
fn rw_registers_write_read_back_masked_and_drive_their_ports() {
    let mut t = T::new(&NicConfig::default());
    let map = t.map.clone();
    for l in map.registers().filter(|l| l.reg.access == Access::Rw) {
        for v in [u32::MAX, 0x5A5A_A5A5, 0] {
            let o = t.write(l.addr, v);
            assert_eq!(o.b_resp, RESP_OKAY);
            assert_eq!(o.rw[t.rw_index(l.block.name, l.reg.name)], v & l.reg.mask());
            assert_eq!(t.read(l.addr).r_data, v & l.reg.mask());
        }
    }
    assert_eq!(t.bad(), 0);
    // Reset puts every RW register back.
    let a = t.addr("XPORT", "RTX_OOO_THRESHOLD");
    t.write(a, 999);
    let r = t.inputs(true);
    t.step(r);
    assert_eq!(t.read(a).r_data, NicConfig::default().rtx_ooo_threshold);
}

#[test]
fn writes_to_read_only_registers_are_refused_counted_and_change_nothing() {
    let mut t = T::new(&NicConfig::default());
    let map = t.map.clone();
    let mut n = 0;
    for l in map.registers().filter(|l| !l.reg.access.writable()) {
        let before = t.read(l.addr).r_data;
        let o = t.write(l.addr, !before);
        assert_eq!(o.b_resp, RESP_SLVERR, "{}.{}", l.block.name, l.reg.name);
        n += 1;
        if l.reg.access != Access::Stat {
            assert_eq!(
                t.read(l.addr).r_data,
                before,
                "{}.{}",
                l.block.name,
                l.reg.name
            );
        }
        assert_eq!(t.bad(), n);
    }
}

#[test]
fn unmapped_misaligned_and_partial_accesses_are_refused() {
    let mut t = T::new(&NicConfig::default());
    let scratch = t.addr("CSR", "SCRATCH");
    t.write(scratch, 0x1234_5678);
    let mut n = 0;
    for a in [0x02C, 0x0FC, 0x7FC, 0x800, 0xFFC] {
        assert_eq!(t.read(a).r_resp, RESP_SLVERR, "read {a:#x}");
        assert_eq!(t.read(a).r_data, 0);
        assert_eq!(t.write(a, 1).b_resp, RESP_SLVERR, "write {a:#x}");
        n += 3;
    }
    for off in 1..4 {
        assert_eq!(t.read(scratch + off).r_resp, RESP_SLVERR);
        assert_eq!(t.write(scratch + off, 0).b_resp, RESP_SLVERR);
        n += 2;
    }
    for strb in [0x0, 0x1, 0x3, 0x7, 0xE, 0x8] {
        assert_eq!(t.write_strb(scratch, 0, strb).b_resp, RESP_SLVERR);
        n += 1;
    }
    assert_eq!(t.read(scratch).r_data, 0x1234_5678, "nothing written");
    assert_eq!(t.bad(), n);
}

#[test]
fn w1c_bits_stick_until_written_one_and_set_wins() {
    let mut t = T::new(&NicConfig::default());
    let a = t.addr("EVQ", "EVQ_STATUS");
    let mut x = t.inputs(false);
    x.w1c_set[0] = 1;
    assert_eq!(t.step(x).w1c[0], 1);
    assert_eq!(t.read(a).r_data, 1, "sticky");
    assert_eq!(t.write(a, 0).w1c[0], 1, "writing 0 keeps it");
    assert_eq!(t.write(a, 1).w1c[0], 0, "writing 1 clears it");
    let x = CsrInputs {
        wr_valid: true,
        wr_addr: a,
        wr_data: 1,
        wr_strb: 0xF,
        ..t.inputs(false)
    };
    assert_eq!(t.step(x).w1c[0], 0, "the clear is at the response edge");
    // The write's response edge clears; a set at that same edge wins.
    let mut x = t.inputs(false);
    x.w1c_set[0] = 1;
    let o = t.step(x);
    assert!(o.b_valid);
    assert_eq!(o.w1c[0], 1, "a set in the clearing clock wins");
}

#[test]
fn wo_strobes_pulse_one_clock_and_reads_of_them_return_zero() {
    let mut t = T::new(&NicConfig::default());
    let a = t.addr("EVT", "EV_OP");
    let i = t
        .rig
        .model
        .model
        .ports()
        .wo
        .iter()
        .position(|&k| k == ("EVT", "EV_OP"))
        .unwrap();
    let o = t.write(a, 0xFFFF_FFFF);
    assert!(o.wo_stb[i]);
    assert_eq!(o.wo_data[i], 3);
    let x = t.inputs(false);
    assert!(!t.step(x).wo_stb[i]);
    assert_eq!(t.read(a).r_data, 0);
}

#[test]
fn a_read_offered_with_a_write_waits() {
    let mut t = T::new(&NicConfig::default());
    let scratch = t.addr("CSR", "SCRATCH");
    let x = CsrInputs {
        wr_valid: true,
        wr_addr: scratch,
        wr_data: 7,
        wr_strb: 0xF,
        rd_valid: true,
        rd_addr: scratch,
        ..t.inputs(false)
    };
    let o = t.step(x);
    assert!(!o.rd_ready, "the read is not accepted");
    let x = t.inputs(false);
    let o = t.step(x);
    assert!(o.b_valid && !o.r_valid, "only the write is answered");
    let x = t.inputs(false);
    assert!(!t.step(x).r_valid);
    assert_eq!(t.read(scratch).r_data, 7);
}

#[test]
fn back_to_back_accesses_pipeline_one_per_clock_in_order() {
    let mut t = T::new(&NicConfig::default());
    let scratch = t.addr("CSR", "SCRATCH");
    let bad = t.addr("CSR", "BAD_ACCESS");
    let w = |t: &T, addr: u32, data: u32| CsrInputs {
        wr_valid: true,
        wr_addr: addr,
        wr_data: data,
        wr_strb: 0xF,
        ..t.inputs(false)
    };
    let r = |t: &T, addr: u32| CsrInputs {
        rd_valid: true,
        rd_addr: addr,
        ..t.inputs(false)
    };
    // write, read of it, refused read, read of the counter, then idle: one response per
    // clock, each RESPONSE_CLOCKS after its offer, and each read sees every access before it.
    let xs = [
        w(&t, scratch, 0xCAFE),
        r(&t, scratch),
        r(&t, scratch + 2),
        r(&t, bad),
        t.inputs(false),
        t.inputs(false),
    ];
    let os: Vec<CsrOutputs> = xs.into_iter().map(|x| t.step(x)).collect();
    assert!(!os[0].b_valid && !os[0].r_valid);
    assert!(os[1].b_valid && os[1].b_resp == RESP_OKAY);
    assert!(os[2].r_valid && os[2].r_data == 0xCAFE);
    assert!(os[3].r_valid && os[3].r_resp == RESP_SLVERR && os[3].r_data == 0);
    assert!(
        os[4].r_valid && os[4].r_data == 1,
        "the refusal is counted before the next read"
    );
    assert!(!os[5].b_valid && !os[5].r_valid);
}

/// The driver's Bar over the RTL (and model) in lockstep.
struct RigBar(RefCell<T>);

impl Bar for RigBar {
    fn read32(&self, offset: u32) -> Result<u32, BusError> {
        let o = self.0.borrow_mut().read(offset);
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
        let o = self.0.borrow_mut().write(offset, value);
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
fn the_driver_walks_the_next_chain_over_mmio_and_finds_every_block() {
    for path in ["../configs/small.toml", "../configs/max.toml"] {
        let cfg = NicConfig::load(std::path::Path::new(path)).unwrap();
        let bar = RigBar(RefCell::new(T::new(&cfg)));
        let found = check_blocks(&bar).unwrap();
        let map = mrc_regmap::build(&cfg);
        let names: Vec<_> = found.iter().map(|f| f.name.unwrap()).collect();
        let want: Vec<_> = map.blocks.iter().map(|b| b.name).collect();
        assert_eq!(names, want, "{path}");
        let evs = mrc_host_driver::read(&bar, mrc_host_driver::regs::evt::EV_COUNT).unwrap();
        assert_eq!(evs, cfg.total_evs());
        assert_eq!(bar.0.borrow_mut().bad(), 0);
    }
}
