//! Golden model of the CSR block `mrc_csr`: a 32-bit MMIO slave decoding the register map of
//! `mrc-regmap` (the same description that generates the C header and the driver accessors).
//!
//! Contract: `step(inputs)` is one rising clock edge; the outputs are the registers after it;
//! the power-on state is the reset state (every register at its map reset value).
//!
//! Interface (AXI4-Lite-shaped, simplified; no response back-pressure). An access is accepted
//! at an edge (the *accepting* edge), decoded into a register, and takes effect at the next
//! edge (the *response* edge, [`RESPONSE_CLOCKS`] = 2 edges after it is offered): one access
//! per clock, pipelined, in order.
//! - write: `wr_valid` with `wr_addr`, `wr_data`, `wr_strb` (4 byte strobes). Always accepted
//!   (`wr_ready` = 1). The register changes at the response edge, and `b_valid` is high for
//!   one clock after it, with `b_resp` OKAY (0) or SLVERR (2).
//! - read: `rd_valid` with `rd_addr`, accepted when no write is offered in the same clock
//!   (`rd_ready` = !`wr_valid`, the one combinational output), so at most one access per
//!   clock. The data of a CSR-held register (RW, W1C, STAT) is read at the response edge (so
//!   it includes every write accepted before the read); an RO register's is its input in the
//!   accepting clock (below). `r_valid` is high for one clock after the response edge with
//!   `r_data` (0 on SLVERR) and `r_resp`.
//!
//! Refused with SLVERR, counted in CSR.BAD_ACCESS (saturating, at the response edge), nothing
//! written: an offset not 4-aligned, an offset where no register is (including >= the BAR
//! size, up to 2^`ADDR_BITS`), a write whose strobe is not 0b1111 (no register takes partial
//! writes), a write to a CONST / RO / STAT register. Reads of WO registers return 0 with OKAY.
//!
//! Hardware side: RW registers drive `rw[i]` (map order); RO registers read `ro[i]` (map
//! order, masked to the width) as it is in the accepting clock: the RTL registers every RO
//! input each clock beside the read mux, so the mux does not reach across the die to its
//! sources (in `mrc_core` at 006a1d6, seed 1: EVQ_DEPTH -> the read mux -> `r_data_q`,
//! 10.3 ns, 8.7 of it routing). W1C registers hold sticky bits set by `w1c_set[i]` every
//! clock (set wins over a clear at the same edge: the clear is the write's response edge); a
//! WO write raises `wo_stb[i]` for one clock with `wo_data[i]`, from its response edge.
//! `rst` is synchronous: it returns every register to its reset value, clears the counter
//! and drops the accesses offered in that clock and in the clock before (no response for
//! either).

use mrc_config::NicConfig;
use mrc_regmap::{Access, RegMap};

/// Address bits of the MMIO port (4 KiB window; the map uses the low 2 KiB).
pub const ADDR_BITS: u32 = 12;
/// `b_resp` / `r_resp` encodings (AXI).
pub const RESP_OKAY: u8 = 0;
pub const RESP_SLVERR: u8 = 2;
/// Edges from offering an access to its response: the response is visible in the clock
/// after the second edge (offered in clock t, `b_valid` / `r_valid` in clock t + 2).
pub const RESPONSE_CLOCKS: u32 = 2;

/// One clock of inputs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CsrInputs {
    pub rst: bool,
    pub wr_valid: bool,
    pub wr_addr: u32,
    pub wr_data: u32,
    pub wr_strb: u8,
    pub rd_valid: bool,
    pub rd_addr: u32,
    /// One value per RO register, map order.
    pub ro: Vec<u32>,
    /// One set mask per W1C register, map order.
    pub w1c_set: Vec<u32>,
}

/// Registers after the edge (plus the combinational `rd_ready`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CsrOutputs {
    pub wr_ready: bool,
    pub rd_ready: bool,
    pub b_valid: bool,
    pub b_resp: u8,
    pub r_valid: bool,
    pub r_data: u32,
    pub r_resp: u8,
    pub rw: Vec<u32>,
    pub w1c: Vec<u32>,
    pub wo_stb: Vec<bool>,
    pub wo_data: Vec<u32>,
    pub bad_access: u32,
}

/// What one decoded offset is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Const(u32),
    Ro(usize, u32),
    Rw(usize, u32),
    W1c(usize, u32),
    Wo(usize, u32),
    Stat,
}

/// An access accepted at the last edge, decoded, waiting for its response edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    Idle,
    /// `slot` is `None` when the write is refused (decode miss or partial strobe).
    Write {
        slot: Option<Slot>,
        data: u32,
    },
    /// `ro`: an RO register's value in the accepting clock (0 for other slots).
    Read {
        slot: Option<Slot>,
        ro: u32,
    },
}

/// The CSR block's hardware ports, derived from the map: which register each vector entry is.
#[derive(Debug, Clone)]
pub struct CsrPorts {
    /// `(block, register)` per `ro` entry.
    pub ro: Vec<(&'static str, &'static str)>,
    pub rw: Vec<(&'static str, &'static str)>,
    pub w1c: Vec<(&'static str, &'static str)>,
    pub wo: Vec<(&'static str, &'static str)>,
}

/// The cycle model.
#[derive(Debug, Clone)]
pub struct MrcCsr {
    map: RegMap,
    /// Decode table indexed by `addr >> 2`.
    slots: Vec<Option<Slot>>,
    rw_reset: Vec<u32>,
    w1c_reset: Vec<u32>,
    w1c_mask: Vec<u32>,
    ports: CsrPorts,
    out: CsrOutputs,
    pend: Pending,
}

impl MrcCsr {
    pub fn new(cfg: &NicConfig) -> Self {
        let map = mrc_regmap::build(cfg);
        let mut slots = vec![None; 1 << (ADDR_BITS - 2)];
        let mut ports = CsrPorts {
            ro: vec![],
            rw: vec![],
            w1c: vec![],
            wo: vec![],
        };
        let (mut rw_reset, mut w1c_reset, mut w1c_mask) = (vec![], vec![], vec![]);
        for l in map.registers() {
            let key = (l.block.name, l.reg.name);
            let m = l.reg.mask();
            let slot = match l.reg.access {
                Access::Const => Slot::Const(l.reg.reset),
                Access::Ro => {
                    ports.ro.push(key);
                    Slot::Ro(ports.ro.len() - 1, m)
                }
                Access::Rw => {
                    ports.rw.push(key);
                    rw_reset.push(l.reg.reset);
                    Slot::Rw(ports.rw.len() - 1, m)
                }
                Access::W1c => {
                    ports.w1c.push(key);
                    w1c_reset.push(l.reg.reset);
                    w1c_mask.push(m);
                    Slot::W1c(ports.w1c.len() - 1, m)
                }
                Access::Wo => {
                    ports.wo.push(key);
                    Slot::Wo(ports.wo.len() - 1, m)
                }
                Access::Stat => Slot::Stat,
            };
            slots[(l.addr >> 2) as usize] = Some(slot);
        }
        let out = CsrOutputs {
            wr_ready: true,
            rd_ready: true,
            rw: rw_reset.clone(),
            w1c: w1c_reset.clone(),
            wo_stb: vec![false; ports.wo.len()],
            wo_data: vec![0; ports.wo.len()],
            ..CsrOutputs::default()
        };
        MrcCsr {
            map,
            slots,
            rw_reset,
            w1c_reset,
            w1c_mask,
            ports,
            out,
            pend: Pending::Idle,
        }
    }

    pub fn map(&self) -> &RegMap {
        &self.map
    }

    pub fn ports(&self) -> &CsrPorts {
        &self.ports
    }

    /// The outputs as they stand (power-on: the reset state).
    pub fn outputs(&self) -> &CsrOutputs {
        &self.out
    }

    /// Inputs with the right vector lengths and nothing offered.
    pub fn idle_inputs(&self) -> CsrInputs {
        CsrInputs {
            ro: vec![0; self.ports.ro.len()],
            w1c_set: vec![0; self.ports.w1c.len()],
            ..CsrInputs::default()
        }
    }

    fn decode(&self, addr: u32) -> Option<Slot> {
        let a = addr & ((1 << ADDR_BITS) - 1);
        if a & 3 != 0 {
            return None;
        }
        self.slots[(a >> 2) as usize]
    }

    /// One rising edge.
    pub fn step(&mut self, x: &CsrInputs) -> CsrOutputs {
        assert_eq!(x.ro.len(), self.ports.ro.len(), "ro inputs");
        assert_eq!(x.w1c_set.len(), self.ports.w1c.len(), "w1c_set inputs");
        let prev = &self.out;
        let mut n = prev.clone();
        n.rd_ready = !x.wr_valid;
        n.b_valid = false;
        n.b_resp = RESP_OKAY;
        n.r_valid = false;
        n.r_data = 0;
        n.r_resp = RESP_OKAY;
        n.wo_stb.iter_mut().for_each(|s| *s = false);
        if x.rst {
            n.rw = self.rw_reset.clone();
            n.w1c = self.w1c_reset.clone();
            n.wo_data.iter_mut().for_each(|d| *d = 0);
            n.bad_access = 0;
            self.pend = Pending::Idle;
            self.out = n.clone();
            return n;
        }
        // The access accepted at the last edge takes effect now.
        let mut bad = false;
        let mut clear: Vec<u32> = vec![0; self.ports.w1c.len()];
        match self.pend {
            Pending::Idle => {}
            Pending::Write { slot, data } => {
                let ok = match slot {
                    Some(Slot::Rw(i, m)) => {
                        n.rw[i] = data & m;
                        true
                    }
                    Some(Slot::W1c(i, m)) => {
                        clear[i] = data & m;
                        true
                    }
                    Some(Slot::Wo(i, m)) => {
                        n.wo_stb[i] = true;
                        n.wo_data[i] = data & m;
                        true
                    }
                    _ => false,
                };
                n.b_valid = true;
                n.b_resp = if ok { RESP_OKAY } else { RESP_SLVERR };
                bad = !ok;
            }
            Pending::Read { slot, ro } => {
                let v = match slot {
                    Some(Slot::Const(v)) => Some(v),
                    Some(Slot::Ro(..)) => Some(ro),
                    Some(Slot::Rw(i, _)) => Some(prev.rw[i]),
                    Some(Slot::W1c(i, _)) => Some(prev.w1c[i]),
                    Some(Slot::Wo(..)) => Some(0),
                    Some(Slot::Stat) => Some(prev.bad_access),
                    None => None,
                };
                n.r_valid = true;
                n.r_data = v.unwrap_or(0);
                n.r_resp = if v.is_some() { RESP_OKAY } else { RESP_SLVERR };
                bad = v.is_none();
            }
        }
        // This clock's access is accepted and decoded.
        self.pend = if x.wr_valid {
            let slot = match self.decode(x.wr_addr) {
                _ if x.wr_strb & 0xF != 0xF => None,
                s @ Some(Slot::Rw(..) | Slot::W1c(..) | Slot::Wo(..)) => s,
                _ => None,
            };
            Pending::Write {
                slot,
                data: x.wr_data,
            }
        } else if x.rd_valid {
            let slot = self.decode(x.rd_addr);
            let ro = match slot {
                Some(Slot::Ro(i, m)) => x.ro[i] & m,
                _ => 0,
            };
            Pending::Read { slot, ro }
        } else {
            Pending::Idle
        };
        for (i, (f, set)) in n.w1c.iter_mut().zip(&x.w1c_set).enumerate() {
            *f = ((*f & !clear[i]) | set) & self.w1c_mask[i];
        }
        if bad {
            n.bad_access = n.bad_access.saturating_add(1);
        }
        self.out = n.clone();
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csr() -> MrcCsr {
        MrcCsr::new(&NicConfig::default())
    }

    fn write(c: &mut MrcCsr, addr: u32, data: u32, strb: u8) -> CsrOutputs {
        let mut x = c.idle_inputs();
        x.wr_valid = true;
        x.wr_addr = addr;
        x.wr_data = data;
        x.wr_strb = strb;
        respond(c, &x)
    }

    /// Offers `x` for one clock, then idles until the response edge; its outputs.
    fn respond(c: &mut MrcCsr, x: &CsrInputs) -> CsrOutputs {
        let o = c.step(x);
        assert!(
            !o.b_valid && !o.r_valid,
            "no response at the accepting edge"
        );
        let idle = c.idle_inputs();
        let o = c.step(&idle);
        assert!(o.b_valid != o.r_valid, "one response at the next edge");
        o
    }

    fn read(c: &mut MrcCsr, addr: u32) -> CsrOutputs {
        let mut x = c.idle_inputs();
        x.rd_valid = true;
        x.rd_addr = addr;
        respond(c, &x)
    }

    #[test]
    fn reads_reset_values_and_refuses_bad_accesses() {
        let mut c = csr();
        let map = c.map().clone();
        for l in map.registers() {
            let o = read(&mut c, l.addr);
            assert!(o.r_valid);
            assert_eq!(o.r_resp, RESP_OKAY);
            let want = match l.reg.access {
                Access::Wo | Access::Ro => 0,
                _ => l.reg.reset,
            };
            assert_eq!(o.r_data, want, "{}.{}", l.block.name, l.reg.name);
        }
        assert_eq!(c.outputs().bad_access, 0);
        let scratch = map.find("CSR", "SCRATCH").unwrap().addr;
        let o = write(&mut c, scratch, 0xDEAD_BEEF, 0xF);
        assert_eq!((o.b_valid, o.b_resp), (true, RESP_OKAY));
        assert_eq!(read(&mut c, scratch).r_data, 0xDEAD_BEEF);
        assert_eq!(write(&mut c, scratch, 1, 0x3).b_resp, RESP_SLVERR);
        assert_eq!(write(&mut c, scratch + 1, 1, 0xF).b_resp, RESP_SLVERR);
        assert_eq!(write(&mut c, 0x7FC, 1, 0xF).b_resp, RESP_SLVERR);
        assert_eq!(write(&mut c, 0, 1, 0xF).b_resp, RESP_SLVERR);
        assert_eq!(read(&mut c, 0x802).r_resp, RESP_SLVERR);
        assert_eq!(read(&mut c, scratch).r_data, 0xDEAD_BEEF);
        let bad = map.find("CSR", "BAD_ACCESS").unwrap().addr;
        assert_eq!(read(&mut c, bad).r_data, 5);
        let mut x = c.idle_inputs();
        x.rst = true;
        let o = c.step(&x);
        assert_eq!(o.bad_access, 0);
        assert_eq!(read(&mut c, scratch).r_data, 0);
    }

    #[test]
    fn w1c_set_wins_and_write_one_clears() {
        let mut c = csr();
        let a = c.map().find("EVQ", "EVQ_STATUS").unwrap().addr;
        let mut x = c.idle_inputs();
        x.w1c_set[0] = 0xFF;
        assert_eq!(c.step(&x).w1c[0], 1);
        assert_eq!(read(&mut c, a).r_data, 1);
        assert_eq!(write(&mut c, a, 1, 0xF).w1c[0], 0);
    }

    #[test]
    fn accesses_are_pipelined_one_per_clock_and_reset_drops_both_stages() {
        let mut c = csr();
        let scratch = c.map().find("CSR", "SCRATCH").unwrap().addr;
        let mut w = c.idle_inputs();
        (w.wr_valid, w.wr_addr, w.wr_data, w.wr_strb) = (true, scratch, 42, 0xF);
        let mut r = c.idle_inputs();
        (r.rd_valid, r.rd_addr) = (true, scratch);
        let idle = c.idle_inputs();
        assert!(!c.step(&w).b_valid);
        // The read offered right behind the write sees it.
        let o = c.step(&r);
        assert!(o.b_valid && !o.r_valid);
        assert_eq!(
            o.rw[c
                .ports()
                .rw
                .iter()
                .position(|&k| k == ("CSR", "SCRATCH"))
                .unwrap()],
            42
        );
        let o = c.step(&idle);
        assert!(o.r_valid && !o.b_valid);
        assert_eq!(o.r_data, 42);
        // rst drops the access accepted at the last edge and the one offered with it.
        c.step(&w);
        let mut x = r.clone();
        x.rst = true;
        assert!(!c.step(&x).b_valid);
        let o = c.step(&idle);
        assert!(!o.b_valid && !o.r_valid);
        assert_eq!(read(&mut c, scratch).r_data, 0);
    }
}
