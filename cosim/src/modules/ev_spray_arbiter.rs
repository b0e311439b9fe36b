//! `ev_spray_arbiter` in the harness: typed port packing, the model as a [`Stepper`], and the
//! random traffic used by `mrcgen compare`, `mrcgen bench` and the property suites.

use crate::error::CosimError;
use crate::ports::{Port, PortMap};
use crate::stepper::Stepper;
use mrc_config::NicConfig;
use mrc_model::ev_spray_arbiter::{ArbiterInputs, ArbiterOutputs, EvSprayArbiter};
use mrc_model::rng::SplitMix64;

pub const MODULE: &str = "ev_spray_arbiter";

/// The arbiter's ports, looked up once by name in the map parsed from the emitted Verilog, so
/// a renamed or resized port fails loudly here instead of comparing the wrong words.
#[derive(Debug, Clone)]
pub struct ArbiterPorts {
    pm: PortMap,
    i: [Port; 13],
    o: [Port; 11],
}

const IN_NAMES: [&str; 13] = [
    "rst",
    "req",
    "plane_ready",
    "fb_valid",
    "fb_idx",
    "fb_kind",
    "ctl_op",
    "ctl_idx",
    "ctl_ev",
    "policy",
    "min_active",
    "seed",
    "rd_idx",
];
const OUT_NAMES: [&str; 11] = [
    "grant_valid",
    "grant_none",
    "grant_idx",
    "grant_plane",
    "grant_ev",
    "active_count",
    "fb_drop",
    "ctl_drop",
    "retire_held",
    "rd_state",
    "rd_pen",
];

impl ArbiterPorts {
    pub fn new(pm: &PortMap) -> Result<Self, CosimError> {
        let (i, o) = super::lookup_ports(MODULE, pm, IN_NAMES, OUT_NAMES)?;
        Ok(ArbiterPorts {
            pm: pm.clone(),
            i,
            o,
        })
    }

    pub fn port_map(&self) -> &PortMap {
        &self.pm
    }

    pub fn pack_inputs(&self, x: &ArbiterInputs, w: &mut [u32]) {
        let v: [u64; 13] = [
            x.rst as u64,
            x.req as u64,
            x.plane_ready as u64,
            x.fb_valid as u64,
            x.fb_idx as u64,
            x.fb_kind as u64,
            x.ctl_op as u64,
            x.ctl_idx as u64,
            x.ctl_ev as u64,
            x.policy as u64,
            x.min_active as u64,
            x.seed as u64,
            x.rd_idx as u64,
        ];
        for (p, v) in self.i.iter().zip(v) {
            p.set(w, v);
        }
    }

    pub fn unpack_inputs(&self, w: &[u32]) -> ArbiterInputs {
        let g = |k: usize| self.i[k].get(w);
        ArbiterInputs {
            rst: g(0) != 0,
            req: g(1) != 0,
            plane_ready: g(2) as u8,
            fb_valid: g(3) != 0,
            fb_idx: g(4) as u8,
            fb_kind: g(5) as u8,
            ctl_op: g(6) as u8,
            ctl_idx: g(7) as u8,
            ctl_ev: g(8) as u32,
            policy: g(9) != 0,
            min_active: g(10) as u16,
            seed: g(11) as u16,
            rd_idx: g(12) as u8,
        }
    }

    pub fn pack_outputs(&self, y: &ArbiterOutputs, w: &mut [u32]) {
        let v: [u64; 11] = [
            y.grant_valid as u64,
            y.grant_none as u64,
            y.grant_idx as u64,
            y.grant_plane as u64,
            y.grant_ev as u64,
            y.active_count as u64,
            y.fb_drop as u64,
            y.ctl_drop as u64,
            y.retire_held as u64,
            y.rd_state as u64,
            y.rd_pen as u64,
        ];
        for (p, v) in self.o.iter().zip(v) {
            p.set(w, v);
        }
    }

    pub fn unpack_outputs(&self, w: &[u32]) -> ArbiterOutputs {
        let g = |k: usize| self.o[k].get(w);
        ArbiterOutputs {
            grant_valid: g(0) != 0,
            grant_none: g(1) != 0,
            grant_idx: g(2) as u8,
            grant_plane: g(3) as u8,
            grant_ev: g(4) as u32,
            active_count: g(5) as u16,
            fb_drop: g(6) != 0,
            ctl_drop: g(7) != 0,
            retire_held: g(8) != 0,
            rd_state: g(9) as u8,
            rd_pen: g(10) as u8,
        }
    }
}

/// Rewrites the model's inputs before it sees them (a deliberately wrong model, in tests).
pub type Tamper = Box<dyn FnMut(&mut ArbiterInputs) + Send>;

/// The golden model behind the word interface. `tamper` lets a test corrupt what the model
/// sees (a deliberately wrong model) without touching the model itself.
pub struct ArbiterModel {
    pub ports: ArbiterPorts,
    pub model: EvSprayArbiter,
    pub tamper: Option<Tamper>,
}

impl ArbiterModel {
    pub fn new(cfg: &NicConfig, ports: ArbiterPorts) -> Self {
        ArbiterModel {
            ports,
            model: EvSprayArbiter::new(cfg),
            tamper: None,
        }
    }
}

impl Stepper for ArbiterModel {
    fn port_map(&self) -> &PortMap {
        self.ports.port_map()
    }

    fn step(&mut self, inputs: &[u32], outputs: &mut [u32]) {
        let mut x = self.ports.unpack_inputs(inputs);
        if let Some(t) = self.tamper.as_mut() {
            t(&mut x);
        }
        let y = self.model.step(&x);
        self.ports.pack_outputs(&y, outputs);
    }
}

/// Shape of the random traffic; percentages per cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrafficMix {
    pub req_pct: u64,
    /// Cycles with every plane ready (else a random mask).
    pub all_ready_pct: u64,
    pub fb_pct: u64,
    pub ctl_pct: u64,
    /// Feedback / controller indices outside the profile (exercise the drop path).
    pub bad_idx_pct: u64,
    /// Mid-run resets per million cycles.
    pub resets_per_million: u64,
    /// Policy flips (MRC <-> BITMAP) per million cycles.
    pub policy_flips_per_million: u64,
}

impl Default for TrafficMix {
    fn default() -> Self {
        TrafficMix {
            req_pct: 70,
            all_ready_pct: 60,
            fb_pct: 40,
            ctl_pct: 4,
            bad_idx_pct: 3,
            resets_per_million: 200,
            policy_flips_per_million: 100,
        }
    }
}

/// Random arbiter traffic: reset for the first two cycles, then requests, plane-ready masks,
/// feedback of every kind (weighted so EVs do retire and come back), controller ops and
/// readbacks. Deterministic for a seed.
pub struct ArbiterTraffic {
    rng: SplitMix64,
    mix: TrafficMix,
    total: u64,
    base: ArbiterInputs,
}

/// fb_kind weights: ACK_GOOD, SKIP_ONCE, ALWAYS_SKIP, NACK_TRIMMED, LASTHOP, TIMEOUT, PROBE_NONE, PROBE_SKIP.
const KIND_WEIGHTS: [u64; 8] = [30, 20, 8, 10, 5, 8, 12, 7];

impl ArbiterTraffic {
    pub fn new(cfg: &NicConfig, seed: u64, mix: TrafficMix) -> Self {
        let base = ArbiterInputs::idle(cfg);
        ArbiterTraffic {
            rng: SplitMix64::new(seed),
            mix,
            total: cfg.total_evs() as u64,
            base,
        }
    }

    /// Override the `min_active` input (config default otherwise).
    pub fn with_min_active(mut self, m: u16) -> Self {
        self.base.min_active = m;
        self
    }

    /// Override the starting policy (config default otherwise).
    pub fn with_policy(mut self, bitmap: bool) -> Self {
        self.base.policy = bitmap;
        self
    }

    fn idx(&mut self) -> u8 {
        if self.rng.chance(self.mix.bad_idx_pct, 100) {
            self.rng.below(256) as u8
        } else {
            self.rng.below(self.total) as u8
        }
    }

    pub fn next_inputs(&mut self, cycle: u64) -> ArbiterInputs {
        let r = &mut self.rng;
        if r.chance(self.mix.policy_flips_per_million, 1_000_000) {
            self.base.policy = !self.base.policy;
        }
        let mut x = self.base;
        x.rst = cycle < 2 || r.chance(self.mix.resets_per_million, 1_000_000);
        x.req = r.chance(self.mix.req_pct, 100);
        x.plane_ready = if r.chance(self.mix.all_ready_pct, 100) {
            0xFF
        } else {
            r.below(256) as u8
        };
        x.rd_idx = r.below(256) as u8;
        if self.rng.chance(self.mix.fb_pct, 100) {
            x.fb_valid = true;
            x.fb_idx = self.idx();
            let mut k = self.rng.below(KIND_WEIGHTS.iter().sum());
            x.fb_kind = KIND_WEIGHTS
                .iter()
                .position(|&w| {
                    if k < w {
                        true
                    } else {
                        k -= w;
                        false
                    }
                })
                .unwrap() as u8;
        }
        if self.rng.chance(self.mix.ctl_pct, 100) {
            x.ctl_op = 1 + self.rng.below(3) as u8;
            x.ctl_idx = self.idx();
            x.ctl_ev = self.rng.next_u64() as u32;
        }
        x
    }
}
