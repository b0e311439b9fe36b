//! `sack_rx_tracker` in the harness: typed port packing, the model as a [`Stepper`], and the
//! random traffic used by `mrcgen compare`, `mrcgen bench` and the property suites.

use crate::error::CosimError;
use crate::ports::{Port, PortMap};
use crate::stepper::Stepper;
use mrc_config::NicConfig;
use mrc_model::rng::SplitMix64;
use mrc_model::sack_rx_tracker::{
    psn_add, window_limit, SharedRxTracker, TrackerInputs, TrackerOutputs,
};

pub const MODULE: &str = "sack_rx_tracker";

const IN_NAMES: [&str; 14] = [
    "rst",
    "init_psn",
    "pkt_valid",
    "pkt_psn",
    "pkt_len",
    "pkt_ecn",
    "pkt_trimmed",
    "pkt_lasthop",
    "pkt_ackreq",
    "pkt_ev",
    "mpr",
    "ack_bytes",
    "pkt_qp",
    "qp_rst",
];
const OUT_NAMES: [&str; 17] = [
    "sack_valid",
    "nack_valid",
    "cack_out",
    "sack_offset",
    "sack_bitmap",
    "sack_m",
    "rsp_ev",
    "ooo_count",
    "rcvd_bytes",
    "nack_reason",
    "nack_psn",
    "cack_psn",
    "cnt_accepted",
    "cnt_duplicate",
    "cnt_out_of_window",
    "cnt_trimmed",
    "rsp_qp",
];

/// The tracker's ports, looked up once by name in the map parsed from the emitted Verilog.
#[derive(Debug, Clone)]
pub struct TrackerPorts {
    pm: PortMap,
    i: [Port; 14],
    o: [Port; 17],
}

impl TrackerPorts {
    pub fn new(pm: &PortMap) -> Result<Self, CosimError> {
        let (i, o) = super::lookup_ports(MODULE, pm, IN_NAMES, OUT_NAMES)?;
        Ok(TrackerPorts {
            pm: pm.clone(),
            i,
            o,
        })
    }

    pub fn port_map(&self) -> &PortMap {
        &self.pm
    }

    pub fn pack_inputs(&self, x: &TrackerInputs, w: &mut [u32]) {
        let v: [u64; 14] = [
            x.rst as u64,
            x.init_psn as u64,
            x.pkt_valid as u64,
            x.pkt_psn as u64,
            x.pkt_len as u64,
            x.pkt_ecn as u64,
            x.pkt_trimmed as u64,
            x.pkt_lasthop as u64,
            x.pkt_ackreq as u64,
            x.pkt_ev as u64,
            x.mpr as u64,
            x.ack_bytes as u64,
            x.pkt_qp as u64,
            x.qp_rst as u64,
        ];
        for (p, v) in self.i.iter().zip(v) {
            p.set(w, v);
        }
    }

    pub fn unpack_inputs(&self, w: &[u32]) -> TrackerInputs {
        let g = |k: usize| self.i[k].get(w);
        TrackerInputs {
            rst: g(0) != 0,
            init_psn: g(1) as u32,
            pkt_valid: g(2) != 0,
            pkt_psn: g(3) as u32,
            pkt_len: g(4) as u16,
            pkt_ecn: g(5) != 0,
            pkt_trimmed: g(6) != 0,
            pkt_lasthop: g(7) != 0,
            pkt_ackreq: g(8) != 0,
            pkt_ev: g(9) as u32,
            mpr: g(10) as u8,
            ack_bytes: g(11) as u32,
            pkt_qp: g(12) as u8,
            qp_rst: g(13) as u16,
        }
    }

    pub fn pack_outputs(&self, y: &TrackerOutputs, w: &mut [u32]) {
        let v: [u64; 17] = [
            y.sack_valid as u64,
            y.nack_valid as u64,
            y.cack_out as u64,
            y.sack_offset as u64,
            y.sack_bitmap,
            y.sack_m as u64,
            y.rsp_ev as u64,
            y.ooo_count as u64,
            y.rcvd_bytes as u64,
            y.nack_reason as u64,
            y.nack_psn as u64,
            y.cack_psn as u64,
            y.cnt_accepted as u64,
            y.cnt_duplicate as u64,
            y.cnt_out_of_window as u64,
            y.cnt_trimmed as u64,
            y.rsp_qp as u64,
        ];
        for (p, v) in self.o.iter().zip(v) {
            p.set(w, v);
        }
    }

    pub fn unpack_outputs(&self, w: &[u32]) -> TrackerOutputs {
        let g = |k: usize| self.o[k].get(w);
        TrackerOutputs {
            sack_valid: g(0) != 0,
            nack_valid: g(1) != 0,
            cack_out: g(2) as u32,
            sack_offset: g(3) as u16,
            sack_bitmap: g(4),
            sack_m: g(5) as u8,
            rsp_ev: g(6) as u32,
            ooo_count: g(7) as u16,
            rcvd_bytes: g(8) as u32,
            nack_reason: g(9) as u8,
            nack_psn: g(10) as u32,
            cack_psn: g(11) as u32,
            cnt_accepted: g(12) as u32,
            cnt_duplicate: g(13) as u32,
            cnt_out_of_window: g(14) as u32,
            cnt_trimmed: g(15) as u32,
            rsp_qp: g(16) as u8,
        }
    }
}

/// The golden model behind the word interface: one context per QP of the config (with one,
/// exactly [`SackRxTracker`]).
pub struct TrackerModel {
    pub ports: TrackerPorts,
    pub model: SharedRxTracker,
}

impl TrackerModel {
    pub fn new(cfg: &NicConfig, ports: TrackerPorts) -> Self {
        TrackerModel {
            ports,
            model: SharedRxTracker::new(cfg),
        }
    }
}

impl Stepper for TrackerModel {
    fn port_map(&self) -> &PortMap {
        self.ports.port_map()
    }

    fn step(&mut self, inputs: &[u32], outputs: &mut [u32]) {
        let x = self.ports.unpack_inputs(inputs);
        let y = self.model.step(&x);
        self.ports.pack_outputs(&y, outputs);
    }
}

/// Shape of the random traffic; percentages per packet unless stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrafficMix {
    /// Cycles carrying a packet header.
    pub pkt_pct: u64,
    /// New packets lost on the way (the PSN becomes a hole).
    pub loss_pct: u64,
    /// New packets sent a few PSNs ahead (reordering).
    pub reorder_pct: u64,
    /// Packets that repeat an earlier PSN (retransmission / duplication).
    pub dup_pct: u64,
    pub trim_pct: u64,
    pub ecn_pct: u64,
    pub ackreq_pct: u64,
    /// PSNs beyond the window or anywhere in the 2^24 space.
    pub oow_pct: u64,
    /// Mid-run resets (new init_psn, often near the 2^24 wrap) per million cycles.
    pub resets_per_million: u64,
    /// `mpr` / `ack_bytes` changes per million cycles.
    pub knob_changes_per_million: u64,
    /// Quiet gaps (the receiver catches up) followed by probes at the exact window edges,
    /// per million cycles.
    pub edge_probes_per_million: u64,
    /// In-order only: no loss, reordering, duplicates, trims or OOW (for liveness checks).
    pub in_order: bool,
}

impl Default for TrafficMix {
    fn default() -> Self {
        TrafficMix {
            pkt_pct: 85,
            loss_pct: 5,
            reorder_pct: 10,
            dup_pct: 8,
            trim_pct: 3,
            ecn_pct: 5,
            ackreq_pct: 3,
            oow_pct: 1,
            resets_per_million: 100,
            knob_changes_per_million: 200,
            edge_probes_per_million: 300,
            in_order: false,
        }
    }
}

const RING: usize = 4096;

/// Random receiver traffic from a sender that mostly stays inside the window. The generator
/// keeps its own view of what arrived whole (`una`, a ring of delivered offsets) and only counts
/// a packet as delivered when it was well inside the window (3/8 of it), so the receiver's
/// cumulative ack always catches up and the run keeps making progress. Deterministic for a seed.
pub struct TrackerTraffic {
    rng: SplitMix64,
    mix: TrafficMix,
    w: u32,
    base: TrackerInputs,
    /// Offsets from init_psn: everything below `una` delivered; `nxt` the next new PSN.
    una: u32,
    nxt: u32,
    delivered: Vec<bool>,
    /// Cycles left in a reset / quiet gap / after a knob change (nothing counts as delivered).
    rst_left: u32,
    quiet_left: u32,
    probe_left: u32,
    knob_guard: u32,
    ev: u32,
}

impl TrackerTraffic {
    pub fn new(cfg: &NicConfig, seed: u64, mix: TrafficMix) -> Self {
        TrackerTraffic {
            rng: SplitMix64::new(seed),
            mix,
            w: cfg.sack_window_bits,
            base: TrackerInputs::idle(cfg),
            una: 0,
            nxt: 0,
            delivered: vec![false; RING],
            rst_left: 0,
            quiet_left: 0,
            probe_left: 0,
            knob_guard: 0,
            ev: 0x1234_5678,
        }
    }

    /// Override the starting init_psn.
    pub fn with_init_psn(mut self, p: u32) -> Self {
        self.base.init_psn = p & 0xFF_FFFF;
        self
    }
    /// Override `mpr` / `ack_bytes` (config defaults otherwise).
    pub fn with_knobs(mut self, mpr: u8, ack_bytes: u32) -> Self {
        self.base.mpr = mpr;
        self.base.ack_bytes = ack_bytes;
        self
    }

    fn lim(&self) -> u32 {
        window_limit(self.w, self.base.mpr)
    }

    fn psn(&self, off: u32) -> u32 {
        psn_add(self.base.init_psn, off)
    }

    fn reset_state(&mut self) {
        self.una = 0;
        self.nxt = 0;
        self.delivered.iter_mut().for_each(|d| *d = false);
    }

    fn deliver(&mut self, off: u32) {
        if off >= self.una && off < self.una + RING as u32 / 2 {
            self.delivered[off as usize % RING] = true;
            while self.delivered[self.una as usize % RING] {
                self.delivered[self.una as usize % RING] = false;
                self.una += 1;
            }
            self.nxt = self.nxt.max(self.una);
        }
    }

    pub fn next_inputs(&mut self, cycle: u64) -> TrackerInputs {
        let mix = self.mix;
        // resets: two cycles, new init_psn (half the time within 2,000 of the wrap)
        if cycle < 2 || self.rst_left > 0 || self.rng.chance(mix.resets_per_million, 1_000_000) {
            if self.rst_left == 0 {
                self.rst_left = 2;
                if cycle >= 2 {
                    self.base.init_psn = if self.rng.chance(1, 2) {
                        (0x100_0000 - 1 - self.rng.below(2000)) as u32
                    } else {
                        self.rng.below(1 << 24) as u32
                    };
                }
            }
            self.rst_left -= 1;
            self.reset_state();
            return TrackerInputs {
                rst: true,
                ..self.base
            };
        }
        if !mix.in_order && self.rng.chance(mix.knob_changes_per_million, 1_000_000) {
            if self.rng.chance(1, 2) {
                self.base.mpr = match self.rng.below(6) {
                    0 => 1,
                    1 => 2,
                    2 => 3,
                    // mpr = 0 (no window: every PSN out of window) only now and then
                    3 if self.rng.chance(1, 8) => 0,
                    3 => 128,
                    4 => 255,
                    _ => self.rng.below(256) as u8,
                };
            } else {
                self.base.ack_bytes = match self.rng.below(5) {
                    0 => 1,
                    1 => 4096,
                    2 => 16384,
                    3 => self.rng.below(1 << 24) as u32,
                    _ => 0,
                };
            }
            self.knob_guard = 4;
        }
        self.knob_guard = self.knob_guard.saturating_sub(1);
        if !mix.in_order
            && self.quiet_left == 0
            && self.probe_left == 0
            && self.rng.chance(mix.edge_probes_per_million, 1_000_000)
        {
            self.quiet_left = self.w / 8 + 10;
        }
        let mut x = self.base;
        if self.quiet_left > 0 {
            self.quiet_left -= 1;
            if self.quiet_left == 0 {
                self.probe_left = 2;
            }
            return x;
        }
        let lim = self.lim();
        if self.probe_left > 0 {
            // the receiver has caught up: cack = una - 1 exactly; probe cack + lim, + lim + 1
            self.probe_left -= 1;
            let off = if self.probe_left == 1 {
                self.una + lim
            } else {
                self.una + lim.saturating_sub(1)
            };
            self.fill(&mut x, off);
            x.pkt_trimmed = false;
            if self.probe_left == 0 && lim > 0 && self.knob_guard == 0 {
                let top = self.una + lim - 1;
                self.deliver(top);
            }
            return x;
        }
        if !self.rng.chance(mix.pkt_pct, 100) {
            return x;
        }
        let safe = lim * 3 / 8;
        let r = &mut self.rng;
        let off;
        let mut counts = true;
        if !mix.in_order && r.chance(mix.oow_pct, 100) {
            counts = false;
            off = if r.chance(1, 2) {
                self.una + lim + r.below(2000) as u32
            } else {
                r.below(1 << 24) as u32
            };
        } else if !mix.in_order && (r.chance(mix.dup_pct, 100) || self.nxt >= self.una + safe) {
            // retransmit: the oldest hole first, else anything recent (behind cack too)
            off = if r.chance(1, 2) {
                self.una
            } else {
                let lo = self.una.saturating_sub(80);
                lo + r.below(u64::from(self.nxt.max(lo + 1) - lo)) as u32
            };
        } else if mix.in_order && self.nxt >= self.una + safe.max(1) {
            return x;
        } else {
            let mut o = self.nxt;
            if !mix.in_order && r.chance(mix.reorder_pct, 100) {
                o += r.below(4) as u32;
            }
            self.nxt = o + 1;
            if !mix.in_order && r.chance(mix.loss_pct, 100) {
                return x;
            }
            off = o;
        }
        self.fill(&mut x, off);
        if !x.pkt_trimmed && counts && self.knob_guard == 0 && off < self.una + safe {
            self.deliver(off);
        }
        x
    }

    fn fill(&mut self, x: &mut TrackerInputs, off: u32) {
        let mix = self.mix;
        x.pkt_psn = self.psn(off);
        let r = &mut self.rng;
        self.ev = self.ev.wrapping_mul(0x9E37_79B1).wrapping_add(1);
        x.pkt_valid = true;
        x.pkt_len = match r.below(4) {
            0 => 64,
            1 => r.below(65536) as u16,
            _ => 4096,
        };
        x.pkt_ev = self.ev;
        if !mix.in_order {
            x.pkt_trimmed = r.chance(mix.trim_pct, 100);
            x.pkt_lasthop = x.pkt_trimmed && r.chance(1, 2);
        }
        x.pkt_ecn = r.chance(mix.ecn_pct, 100);
        x.pkt_ackreq = r.chance(mix.ackreq_pct, 100);
    }
}

/// Traffic for a tracker of `cfg.qps` contexts: one [`TrackerTraffic`] per context, each
/// cycle one of them (the one before again half the time, so a context sees runs as well as
/// interleaving) steps and its packet goes to its context; its resets become its `qp_rst` bit
/// with its `init_psn` on the shared port. `mpr` / `ack_bytes` are shared ports, so they stay at
/// the config's values (knob changes off). With one context it is [`TrackerTraffic`] itself.
pub struct SharedTrackerTraffic {
    rng: SplitMix64,
    ctx: Vec<TrackerTraffic>,
    /// Each context's own cycle count (its generator's time).
    own: Vec<u64>,
    last: usize,
}

impl SharedTrackerTraffic {
    pub fn new(cfg: &NicConfig, seed: u64, mix: TrafficMix) -> Self {
        let n = cfg.qps.clamp(1, 16) as usize;
        let mix = if n > 1 {
            TrafficMix {
                knob_changes_per_million: 0,
                ..mix
            }
        } else {
            mix
        };
        SharedTrackerTraffic {
            rng: SplitMix64::new(seed ^ 0x005E_ED0F_C0A7),
            ctx: (0..n)
                .map(|q| TrackerTraffic::new(cfg, seed.wrapping_add(q as u64 * 0x9E37), mix))
                .collect(),
            own: vec![0; n],
            last: 0,
        }
    }

    pub fn next_inputs(&mut self, cycle: u64) -> TrackerInputs {
        let n = self.ctx.len();
        if n == 1 {
            return self.ctx[0].next_inputs(cycle);
        }
        // Every context starts with its generator's reset cycles, one context after another.
        let q = match (0..n).find(|&q| self.own[q] < 2) {
            Some(q) => q,
            None if self.rng.chance(1, 2) => self.last,
            None => self.rng.below(n as u64) as usize,
        };
        self.last = q;
        let x = self.ctx[q].next_inputs(self.own[q]);
        self.own[q] += 1;
        TrackerInputs {
            rst: false,
            qp_rst: u16::from(x.rst) << q,
            pkt_qp: q as u8,
            ..x
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mrc_model::sack_rx_tracker::SackRxTracker;

    /// The default traffic is useful: mostly accepted packets, every class present, SACKs and
    /// NACKs of every kind, the cumulative ack moving (checked on the model alone).
    #[test]
    fn default_traffic_exercises_every_class() {
        for w in [64u32, 256] {
            let cfg = NicConfig {
                sack_window_bits: w,
                ..NicConfig::default()
            };
            let mut t = TrackerTraffic::new(&cfg, 11, TrafficMix::default());
            let mut m = SackRxTracker::new(&cfg);
            let (mut pkts, mut sacks, mut nacks, mut moves) = (0u64, 0u64, 0u64, 0u64);
            let mut reasons = [0u64; 256];
            let (mut acc, mut dup, mut oow, mut trim) = (0u64, 0u64, 0u64, 0u64);
            let mut prev = TrackerOutputs::default();
            for c in 0..300_000 {
                let x = t.next_inputs(c);
                pkts += u64::from(x.pkt_valid && !x.rst);
                let y = m.step(&x);
                sacks += u64::from(y.sack_valid);
                nacks += u64::from(y.nack_valid);
                reasons[y.nack_reason as usize] += u64::from(y.nack_valid);
                moves += u64::from(y.cack_psn != prev.cack_psn);
                if y.cnt_accepted < prev.cnt_accepted || x.rst {
                    // a reset: bank the totals
                    acc += u64::from(prev.cnt_accepted);
                    dup += u64::from(prev.cnt_duplicate);
                    oow += u64::from(prev.cnt_out_of_window);
                    trim += u64::from(prev.cnt_trimmed);
                    prev = TrackerOutputs::default();
                    continue;
                }
                prev = y;
            }
            acc += u64::from(prev.cnt_accepted);
            dup += u64::from(prev.cnt_duplicate);
            oow += u64::from(prev.cnt_out_of_window);
            trim += u64::from(prev.cnt_trimmed);
            eprintln!(
                "W {w}: {pkts} pkts, accepted {acc} dup {dup} oow {oow} trimmed {trim}; \
                 {sacks} SACKs, {nacks} NACKs ({} trim, {} lasthop, {} oow); cack moved {moves}x",
                reasons[1], reasons[2], reasons[11]
            );
            assert!(acc * 100 > pkts * 60, "most packets accepted");
            assert!(dup * 100 > pkts * 3 && oow * 1000 > pkts && trim * 100 > pkts);
            assert!(
                oow * 100 < pkts * 5,
                "the sender mostly stays in the window"
            );
            assert!(reasons[1] > 0 && reasons[2] > 0 && reasons[11] > 0);
            assert!(sacks > 0 && moves * 100 > pkts * 20);
        }
    }
}
