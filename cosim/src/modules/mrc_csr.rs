//! `mrc_csr` in the harness: port packing (vector ports `ro$i`, `rw$i`, ... in map order), the
//! model as a [`Stepper`], and random MMIO traffic (legal and illegal accesses, random RO
//! values, W1C sets, resets).

use crate::error::CosimError;
use crate::ports::{Port, PortMap};
use crate::stepper::Stepper;
use mrc_config::NicConfig;
use mrc_model::mrc_csr::{CsrInputs, CsrOutputs, MrcCsr, ADDR_BITS};
use mrc_model::rng::SplitMix64;

pub const MODULE: &str = "mrc_csr";

const IN_FIXED: [&str; 7] = [
    "rst", "wr_valid", "wr_addr", "wr_data", "wr_strb", "rd_valid", "rd_addr",
];
const OUT_FIXED: [&str; 7] = [
    "wr_ready", "rd_ready", "b_valid", "b_resp", "r_valid", "r_data", "r_resp",
];

/// Port counts per class (from the model, i.e. from the map).
#[derive(Debug, Clone, Copy)]
struct Counts {
    ro: usize,
    rw: usize,
    w1c: usize,
    wo: usize,
}

/// The CSR block's ports, looked up by name in the parsed Verilog.
#[derive(Debug, Clone)]
pub struct CsrWirePorts {
    pm: PortMap,
    i: Vec<Port>,
    o: Vec<Port>,
    n: Counts,
}

impl CsrWirePorts {
    pub fn new(pm: &PortMap, cfg: &NicConfig) -> Result<Self, CosimError> {
        let m = MrcCsr::new(cfg);
        let p = m.ports();
        let n = Counts {
            ro: p.ro.len(),
            rw: p.rw.len(),
            w1c: p.w1c.len(),
            wo: p.wo.len(),
        };
        fn vec_names(base: &'static str, k: usize) -> impl Iterator<Item = String> {
            (0..k).map(move |j| format!("{base}${j}"))
        }
        let ins: Vec<String> = IN_FIXED
            .iter()
            .map(|s| s.to_string())
            .chain(vec_names("ro", n.ro))
            .chain(vec_names("w1c_set", n.w1c))
            .collect();
        let outs: Vec<String> = OUT_FIXED
            .iter()
            .map(|s| s.to_string())
            .chain(vec_names("rw", n.rw))
            .chain(vec_names("w1c", n.w1c))
            .chain(vec_names("wo_stb", n.wo))
            .chain(vec_names("wo_data", n.wo))
            .chain(std::iter::once("bad_access".to_string()))
            .collect();
        let missing = |name: &str| CosimError::Parse {
            module: MODULE.into(),
            message: format!("port `{name}` missing from the Verilog"),
        };
        let i = ins
            .iter()
            .map(|s| pm.input(s).cloned().ok_or_else(|| missing(s)))
            .collect::<Result<Vec<_>, _>>()?;
        let o = outs
            .iter()
            .map(|s| pm.output(s).cloned().ok_or_else(|| missing(s)))
            .collect::<Result<Vec<_>, _>>()?;
        if pm.inputs.len() != i.len() || pm.outputs.len() != o.len() {
            return Err(CosimError::Parse {
                module: MODULE.into(),
                message: format!(
                    "the Verilog has ports the harness does not drive or check: {pm:?}"
                ),
            });
        }
        Ok(CsrWirePorts {
            pm: pm.clone(),
            i,
            o,
            n,
        })
    }

    pub fn port_map(&self) -> &PortMap {
        &self.pm
    }

    pub fn pack_inputs(&self, x: &CsrInputs, w: &mut [u32]) {
        let fixed = [
            x.rst as u64,
            x.wr_valid as u64,
            u64::from(x.wr_addr),
            u64::from(x.wr_data),
            u64::from(x.wr_strb),
            x.rd_valid as u64,
            u64::from(x.rd_addr),
        ];
        let vals = fixed
            .into_iter()
            .chain(x.ro.iter().map(|&v| u64::from(v)))
            .chain(x.w1c_set.iter().map(|&v| u64::from(v)));
        for (p, v) in self.i.iter().zip(vals) {
            p.set(w, v);
        }
    }

    pub fn unpack_inputs(&self, w: &[u32]) -> CsrInputs {
        let g = |k: usize| self.i[k].get(w);
        let n = self.n;
        CsrInputs {
            rst: g(0) != 0,
            wr_valid: g(1) != 0,
            wr_addr: g(2) as u32,
            wr_data: g(3) as u32,
            wr_strb: g(4) as u8,
            rd_valid: g(5) != 0,
            rd_addr: g(6) as u32,
            ro: (0..n.ro).map(|j| g(7 + j) as u32).collect(),
            w1c_set: (0..n.w1c).map(|j| g(7 + n.ro + j) as u32).collect(),
        }
    }

    pub fn pack_outputs(&self, y: &CsrOutputs, w: &mut [u32]) {
        let fixed = [
            y.wr_ready as u64,
            y.rd_ready as u64,
            y.b_valid as u64,
            u64::from(y.b_resp),
            y.r_valid as u64,
            u64::from(y.r_data),
            u64::from(y.r_resp),
        ];
        let vals = fixed
            .into_iter()
            .chain(y.rw.iter().map(|&v| u64::from(v)))
            .chain(y.w1c.iter().map(|&v| u64::from(v)))
            .chain(y.wo_stb.iter().map(|&v| v as u64))
            .chain(y.wo_data.iter().map(|&v| u64::from(v)))
            .chain(std::iter::once(u64::from(y.bad_access)));
        for (p, v) in self.o.iter().zip(vals) {
            p.set(w, v);
        }
    }

    pub fn unpack_outputs(&self, w: &[u32]) -> CsrOutputs {
        let g = |k: usize| self.o[k].get(w);
        let n = self.n;
        let rw0 = 7;
        let w1c0 = rw0 + n.rw;
        let stb0 = w1c0 + n.w1c;
        let wod0 = stb0 + n.wo;
        CsrOutputs {
            wr_ready: g(0) != 0,
            rd_ready: g(1) != 0,
            b_valid: g(2) != 0,
            b_resp: g(3) as u8,
            r_valid: g(4) != 0,
            r_data: g(5) as u32,
            r_resp: g(6) as u8,
            rw: (0..n.rw).map(|j| g(rw0 + j) as u32).collect(),
            w1c: (0..n.w1c).map(|j| g(w1c0 + j) as u32).collect(),
            wo_stb: (0..n.wo).map(|j| g(stb0 + j) != 0).collect(),
            wo_data: (0..n.wo).map(|j| g(wod0 + j) as u32).collect(),
            bad_access: g(wod0 + n.wo) as u32,
        }
    }
}

/// The golden model behind the word interface.
pub struct CsrModel {
    pub ports: CsrWirePorts,
    pub model: MrcCsr,
}

impl CsrModel {
    pub fn new(cfg: &NicConfig, ports: CsrWirePorts) -> Self {
        CsrModel {
            ports,
            model: MrcCsr::new(cfg),
        }
    }
}

impl Stepper for CsrModel {
    fn port_map(&self) -> &PortMap {
        self.ports.port_map()
    }

    fn step(&mut self, inputs: &[u32], outputs: &mut [u32]) {
        let x = self.ports.unpack_inputs(inputs);
        let y = self.model.step(&x);
        self.ports.pack_outputs(&y, outputs);
    }
}

/// Shape of the random MMIO traffic; percentages per cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsrMix {
    pub write_pct: u64,
    pub read_pct: u64,
    /// Accesses to a mapped register (else misaligned or random offsets).
    pub mapped_pct: u64,
    /// Writes with all four strobes.
    pub full_strobe_pct: u64,
    pub w1c_set_pct: u64,
    pub resets_per_million: u64,
}

impl Default for CsrMix {
    fn default() -> Self {
        CsrMix {
            write_pct: 35,
            read_pct: 50,
            mapped_pct: 70,
            full_strobe_pct: 85,
            w1c_set_pct: 5,
            resets_per_million: 500,
        }
    }
}

/// Random MMIO traffic: reset for the first two cycles, then reads and writes (reads and
/// writes offered together too), RO inputs that change at random, W1C sets. Deterministic for
/// a seed.
pub struct CsrTraffic {
    rng: SplitMix64,
    mix: CsrMix,
    addrs: Vec<u32>,
    base: CsrInputs,
}

impl CsrTraffic {
    pub fn new(cfg: &NicConfig, seed: u64, mix: CsrMix) -> Self {
        let m = MrcCsr::new(cfg);
        CsrTraffic {
            rng: SplitMix64::new(seed),
            mix,
            addrs: m.map().registers().map(|l| l.addr).collect(),
            base: m.idle_inputs(),
        }
    }

    fn addr(&mut self) -> u32 {
        let r = &mut self.rng;
        if r.chance(self.mix.mapped_pct, 100) {
            self.addrs[r.below(self.addrs.len() as u64) as usize]
        } else if r.chance(1, 2) {
            self.addrs[r.below(self.addrs.len() as u64) as usize] + 1 + r.below(3) as u32
        } else {
            r.below(1 << ADDR_BITS) as u32
        }
    }

    pub fn next_inputs(&mut self, cycle: u64) -> CsrInputs {
        for v in self.base.ro.iter_mut() {
            if self.rng.chance(1, 8) {
                *v = self.rng.next_u64() as u32;
            }
        }
        let mut x = self.base.clone();
        x.rst = cycle < 2 || self.rng.chance(self.mix.resets_per_million, 1_000_000);
        for s in x.w1c_set.iter_mut() {
            if self.rng.chance(self.mix.w1c_set_pct, 100) {
                *s = self.rng.next_u64() as u32;
            }
        }
        if self.rng.chance(self.mix.write_pct, 100) {
            x.wr_valid = true;
            x.wr_addr = self.addr();
            x.wr_data = self.rng.next_u64() as u32;
            x.wr_strb = if self.rng.chance(self.mix.full_strobe_pct, 100) {
                0xF
            } else {
                self.rng.below(16) as u8
            };
        }
        if self.rng.chance(self.mix.read_pct, 100) {
            x.rd_valid = true;
            x.rd_addr = self.addr();
        }
        x
    }
}
