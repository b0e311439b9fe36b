//! `sack_tx_scoreboard` in the harness: typed port packing, the model as a [`Stepper`], and a
//! random peer (ideal receiver + lossy, reordering network) used by `mrcgen compare`,
//! `mrcgen bench` and the property suites.
//!
//! The peer reacts to the scoreboard's outputs (`can_send`, `rtx_psn`, counters). The lockstep
//! stimulus only sees the cycle number, so the peer owns a private copy of the golden model
//! (the "shadow"), steps it with every input it produces and reacts to the shadow's outputs,
//! which equal the DUT's for as long as the two agree. No runner change is needed, and
//! `mrcgen bench` can record the stimulus ahead of time.

use crate::error::CosimError;
use crate::ports::{Port, PortMap};
use crate::stepper::Stepper;
use mrc_config::NicConfig;
use mrc_model::rng::SplitMix64;
use mrc_model::sack_tx_scoreboard::{
    SackTxScoreboard, TxInputs, TxOutputs, OP_NACK, OP_NOP, OP_SACK, OP_SEND, OP_TICK, PSN_MASK,
};
use std::collections::{BTreeSet, VecDeque};

pub const MODULE: &str = "sack_tx_scoreboard";

const IN_NAMES: [&str; 15] = [
    "rst",
    "init_psn",
    "op",
    "psn",
    "ev_idx",
    "cack",
    "offset",
    "bitmap",
    "m",
    "rcvd_bytes",
    "reason",
    "rto_exp",
    "rto_linear_retries",
    "rto_backoff_retries",
    "rtx_ooo_threshold",
];
const OUT_NAMES: [&str; 20] = [
    "una",
    "una_adv",
    "nxt",
    "can_send",
    "acked_pkts",
    "acked_bytes",
    "fb_valid",
    "fb_idx",
    "fb_kind",
    "rtx_valid",
    "rtx_psn",
    "qp_error",
    "err_psn",
    "cnt_new_sends",
    "cnt_retransmits",
    "cnt_timeouts",
    "cnt_bad_send",
    "cnt_stale_sack",
    "cnt_bad_sack",
    "cnt_bad_nack",
];

/// The scoreboard's ports, looked up by name in the map parsed from the emitted Verilog.
#[derive(Debug, Clone)]
pub struct TxPorts {
    pm: PortMap,
    i: [Port; 15],
    o: [Port; 20],
}

impl TxPorts {
    pub fn new(pm: &PortMap) -> Result<Self, CosimError> {
        let (i, o) = super::lookup_ports(MODULE, pm, IN_NAMES, OUT_NAMES)?;
        Ok(TxPorts {
            pm: pm.clone(),
            i,
            o,
        })
    }

    pub fn port_map(&self) -> &PortMap {
        &self.pm
    }

    pub fn pack_inputs(&self, x: &TxInputs, w: &mut [u32]) {
        let v: [u64; 15] = [
            x.rst as u64,
            x.init_psn as u64,
            x.op as u64,
            x.psn as u64,
            x.ev_idx as u64,
            x.cack as u64,
            x.offset as u64,
            x.bitmap,
            x.m as u64,
            x.rcvd_bytes as u64,
            x.reason as u64,
            x.rto_exp as u64,
            x.rto_linear_retries as u64,
            x.rto_backoff_retries as u64,
            x.rtx_ooo_threshold as u64,
        ];
        for (p, v) in self.i.iter().zip(v) {
            p.set(w, v);
        }
    }

    pub fn unpack_inputs(&self, w: &[u32]) -> TxInputs {
        let g = |k: usize| self.i[k].get(w);
        TxInputs {
            rst: g(0) != 0,
            init_psn: g(1) as u32,
            op: g(2) as u8,
            psn: g(3) as u32,
            ev_idx: g(4) as u8,
            cack: g(5) as u32,
            offset: g(6) as u16,
            bitmap: g(7),
            m: g(8) as u8,
            rcvd_bytes: g(9) as u32,
            reason: g(10) as u8,
            rto_exp: g(11) as u8,
            rto_linear_retries: g(12) as u8,
            rto_backoff_retries: g(13) as u8,
            rtx_ooo_threshold: g(14) as u16,
        }
    }

    pub fn pack_outputs(&self, y: &TxOutputs, w: &mut [u32]) {
        let v: [u64; 20] = [
            y.una as u64,
            y.una_adv as u64,
            y.nxt as u64,
            y.can_send as u64,
            y.acked_pkts as u64,
            y.acked_bytes as u64,
            y.fb_valid as u64,
            y.fb_idx as u64,
            y.fb_kind as u64,
            y.rtx_valid as u64,
            y.rtx_psn as u64,
            y.qp_error as u64,
            y.err_psn as u64,
            y.cnt_new_sends as u64,
            y.cnt_retransmits as u64,
            y.cnt_timeouts as u64,
            y.cnt_bad_send as u64,
            y.cnt_stale_sack as u64,
            y.cnt_bad_sack as u64,
            y.cnt_bad_nack as u64,
        ];
        for (p, v) in self.o.iter().zip(v) {
            p.set(w, v);
        }
    }

    pub fn unpack_outputs(&self, w: &[u32]) -> TxOutputs {
        let g = |k: usize| self.o[k].get(w);
        TxOutputs {
            una: g(0) as u32,
            una_adv: g(1) as u8,
            nxt: g(2) as u32,
            can_send: g(3) != 0,
            acked_pkts: g(4) as u8,
            acked_bytes: g(5) as u32,
            fb_valid: g(6) != 0,
            fb_idx: g(7) as u8,
            fb_kind: g(8) as u8,
            rtx_valid: g(9) != 0,
            rtx_psn: g(10) as u32,
            qp_error: g(11) != 0,
            err_psn: g(12) as u32,
            cnt_new_sends: g(13) as u32,
            cnt_retransmits: g(14) as u32,
            cnt_timeouts: g(15) as u32,
            cnt_bad_send: g(16) as u32,
            cnt_stale_sack: g(17) as u32,
            cnt_bad_sack: g(18) as u32,
            cnt_bad_nack: g(19) as u32,
        }
    }
}

/// The golden model behind the word interface.
pub struct TxModel {
    pub ports: TxPorts,
    pub model: SackTxScoreboard,
}

impl TxModel {
    pub fn new(cfg: &NicConfig, ports: TxPorts) -> Self {
        TxModel {
            ports,
            model: SackTxScoreboard::new(cfg),
        }
    }
}

impl Stepper for TxModel {
    fn port_map(&self) -> &PortMap {
        self.ports.port_map()
    }

    fn step(&mut self, inputs: &[u32], outputs: &mut [u32]) {
        let x = self.ports.unpack_inputs(inputs);
        let y = self.model.step(&x);
        self.ports.pack_outputs(&y, outputs);
    }
}

/// Shape of the peer's behaviour; percentages unless said otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxMix {
    /// Chance per free cycle of sending a new packet (when `can_send`).
    pub send_pct: u64,
    /// Chance per free cycle of a timer tick.
    pub tick_pct: u64,
    /// Data packets silently lost.
    pub loss_pct: u64,
    /// Data packets trimmed (answered by NACK TRIMMED / TRIMMED_LASTHOP).
    pub trim_pct: u64,
    /// Data packets delivered twice.
    pub dup_pct: u64,
    /// Chance that a delivered packet triggers a SACK (duplicates always do).
    pub sack_pct: u64,
    /// Largest one-way network delay in cycles (reordering comes from the spread).
    pub max_delay: u64,
    /// Chance per free cycle of a malformed op (bad SACK / NACK / SEND).
    pub malformed_pct: u64,
    /// Mid-run resets per million cycles.
    pub resets_per_million: u64,
}

impl Default for TxMix {
    fn default() -> Self {
        TxMix {
            send_pct: 60,
            tick_pct: 8,
            loss_pct: 3,
            trim_pct: 3,
            dup_pct: 2,
            sack_pct: 40,
            max_delay: 60,
            malformed_pct: 2,
            resets_per_million: 100,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Ctl {
    Sack {
        cack: u32,
        offset: u16,
        bitmap: u64,
        ev: u8,
        m: u8,
        rb: u32,
    },
    Nack {
        psn: u32,
        reason: u8,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Issued {
    New(u64, u8),
    Rtx(u64, u8),
    Other,
}

/// A peer that behaves like a real one: it transmits what the scoreboard allows, runs the
/// packets through a lossy, reordering, trimming, duplicating network into an ideal receiver,
/// and returns that receiver's SACKs and NACKs; plus timer ticks, malformed control packets
/// and resets with a random start PSN (often just below the 2^24 wrap). Deterministic per
/// seed.
pub struct TxPeer {
    rng: SplitMix64,
    mix: TxMix,
    base: TxInputs,
    shadow: SackTxScoreboard,
    last: TxOutputs,
    /// Ops issued and not yet known: [last cycle's, the one before, the one before that] (a
    /// SEND is judged at S1, two edges after its inputs: the I stage, then S0; its counter
    /// shows it a clock later).
    prev: [Issued; 3],
    init: u32,
    /// Packets accepted as new so far (absolute index of the next new PSN).
    sent: u64,
    /// Receiver: every index below `cum` received; `got` holds those above.
    cum: u64,
    got: BTreeSet<u64>,
    rcvd_units: u32,
    data: Vec<(u64, u64, u8)>,
    ctl: Vec<(u64, Ctl)>,
    recent_rtx: VecDeque<(u64, u32)>,
    err_cycles: u64,
    cycle: u64,
}

impl TxPeer {
    pub fn new(cfg: &NicConfig, seed: u64, mix: TxMix) -> Self {
        TxPeer {
            rng: SplitMix64::new(seed),
            mix,
            base: TxInputs::idle(cfg),
            shadow: SackTxScoreboard::new(cfg),
            last: TxOutputs::default(),
            prev: [Issued::Other; 3],
            init: 0,
            sent: 0,
            cum: 0,
            got: BTreeSet::new(),
            rcvd_units: 0,
            data: Vec::new(),
            ctl: Vec::new(),
            recent_rtx: VecDeque::new(),
            err_cycles: 0,
            cycle: 0,
        }
    }

    /// Override the timer / threshold ports (config values otherwise).
    pub fn with_timers(mut self, rto_exp: u8, lin: u8, backoff: u8, thr: u16) -> Self {
        self.base.rto_exp = rto_exp;
        self.base.rto_linear_retries = lin;
        self.base.rto_backoff_retries = backoff;
        self.base.rtx_ooo_threshold = thr;
        self
    }

    /// The shadow model's outputs after the last cycle (equal to the DUT's while they agree).
    pub fn outputs(&self) -> TxOutputs {
        self.last
    }

    fn psn(&self, a: u64) -> u32 {
        u64::from(self.init).wrapping_add(a) as u32 & PSN_MASK
    }

    fn abs(&self, psn: u32) -> u64 {
        // PSNs the scoreboard names are within a window below `sent`.
        let back = (self.psn(self.sent).wrapping_sub(psn) & PSN_MASK) as u64;
        self.sent.wrapping_sub(back)
    }

    fn received(&self, a: u64) -> bool {
        a < self.cum || self.got.contains(&a)
    }

    fn sack(&mut self, ev: u8) -> Ctl {
        let hi = self.got.iter().next_back().copied().unwrap_or(0);
        let base = hi.saturating_sub(63).max(self.cum);
        let mut bitmap = 0u64;
        for j in 0..64 {
            if self.received(base + j) {
                bitmap |= 1 << j;
            }
        }
        let cack = self.psn(self.cum.wrapping_sub(1));
        let m = match self.rng.below(10) {
            0 => 1,
            1 => 2,
            _ => 0,
        };
        Ctl::Sack {
            cack,
            offset: (base + 1 - self.cum) as u16,
            bitmap,
            ev,
            m,
            rb: self.rcvd_units,
        }
    }

    fn deliver(&mut self, a: u64, ev: u8) {
        let dup = self.received(a);
        if !dup {
            self.got.insert(a);
            while self.got.remove(&self.cum) {
                self.cum += 1;
            }
            self.rcvd_units = (self.rcvd_units + 1 + self.rng.below(16) as u32) & PSN_MASK;
        }
        if dup || self.rng.chance(self.mix.sack_pct, 100) {
            let s = self.sack(ev);
            let d = self.cycle + 1 + self.rng.below(self.mix.max_delay.max(1));
            self.ctl.push((d, s));
        }
    }

    fn transmit(&mut self, a: u64, ev: u8) {
        let r = &mut self.rng;
        let d = self.cycle + 1 + r.below(self.mix.max_delay.max(1));
        if r.chance(self.mix.loss_pct, 100) {
            return;
        }
        if r.chance(self.mix.trim_pct, 100) {
            let reason = if r.chance(1, 3) { 2 } else { 1 };
            let psn = self.psn(a);
            self.ctl.push((d, Ctl::Nack { psn, reason }));
            return;
        }
        self.data.push((d, a, ev));
        if self.rng.chance(self.mix.dup_pct, 100) {
            let d2 = d + self.rng.below(20);
            self.data.push((d2, a, ev));
        }
    }

    fn reset_state(&mut self) {
        self.init = if self.rng.chance(1, 2) {
            (0x100_0000 - 1 - self.rng.below(3000)) as u32
        } else {
            self.rng.below(1 << 24) as u32
        };
        self.sent = 0;
        self.cum = 0;
        self.got.clear();
        self.rcvd_units = 0;
        self.data.clear();
        self.ctl.clear();
        self.recent_rtx.clear();
        self.err_cycles = 0;
    }

    fn malformed(&mut self, x: &mut TxInputs) {
        let hi = self.psn(self.sent);
        match self.rng.below(6) {
            0 => {
                // bitmap claiming PSNs never sent
                x.op = OP_SACK;
                x.cack = self.psn(self.cum.wrapping_sub(1));
                x.offset = (self.sent - self.cum + 1 + self.rng.below(4)) as u16;
                x.bitmap = 1 | self.rng.next_u64();
                x.ev_idx = self.rng.below(256) as u8;
            }
            1 => {
                // cack beyond nxt, or a non-positive offset
                x.op = OP_SACK;
                if self.rng.chance(1, 2) {
                    x.cack = (hi + self.rng.below(100) as u32) & PSN_MASK;
                    x.offset = 1;
                } else {
                    x.cack = self.psn(self.cum.wrapping_sub(1));
                    x.offset = (self.rng.below(3) as i16 - 2) as u16;
                }
                x.bitmap = self.rng.below(4);
            }
            2 => {
                // cack far behind
                x.op = OP_SACK;
                x.cack = self
                    .psn(self.cum)
                    .wrapping_sub(2 + self.rng.below(5000) as u32)
                    & PSN_MASK;
                x.offset = 1;
            }
            3 => {
                // NACK for an acked (or never sent) PSN
                x.op = OP_NACK;
                x.psn = if self.rng.chance(1, 2) && self.cum > 0 {
                    let back = self.rng.below(self.cum.min(40));
                    self.psn(self.cum - 1 - back)
                } else {
                    (hi + self.rng.below(50) as u32) & PSN_MASK
                };
                x.reason = [1, 2, 0x0B, 0x19][self.rng.below(4) as usize];
            }
            4 => {
                // SEND of a random PSN
                x.op = OP_SEND;
                x.psn = if self.rng.chance(1, 2) {
                    self.rng.below(1 << 24) as u32
                } else {
                    self.last.una.wrapping_add(self.rng.below(300) as u32) & PSN_MASK
                };
                x.ev_idx = self.rng.below(256) as u8;
            }
            _ => {
                // junk op codes
                x.op = 5 + self.rng.below(3) as u8;
            }
        }
    }

    /// The inputs of `cycle` (call once per cycle, in order).
    pub fn next_inputs(&mut self, cycle: u64) -> TxInputs {
        self.cycle = cycle;
        let mut x = self.base;
        x.init_psn = self.init;
        if self.last.qp_error {
            self.err_cycles += 1;
        }
        let rst = cycle < 2
            || self.err_cycles > 200
            || self.rng.chance(self.mix.resets_per_million, 1_000_000);
        let mut issued = Issued::Other;
        if rst {
            self.reset_state();
            x.rst = true;
            x.init_psn = self.init;
        } else {
            // network deliveries into the receiver (not ops)
            let now = cycle;
            let mut k = 0;
            while k < self.data.len() {
                if self.data[k].0 <= now {
                    let (_, a, ev) = self.data.swap_remove(k);
                    self.deliver(a, ev);
                } else {
                    k += 1;
                }
            }
            let due = self.ctl.iter().position(|c| c.0 <= now);
            let rtx_ok = self.last.rtx_valid
                && !self
                    .recent_rtx
                    .iter()
                    .any(|&(c, p)| p == self.last.rtx_psn && c + 7 > cycle);
            if let Some(i) = due {
                match self.ctl.swap_remove(i).1 {
                    Ctl::Sack {
                        cack,
                        offset,
                        bitmap,
                        ev,
                        m,
                        rb,
                    } => {
                        x.op = OP_SACK;
                        x.cack = cack;
                        x.offset = offset;
                        x.bitmap = bitmap;
                        x.ev_idx = ev;
                        x.m = m;
                        x.rcvd_bytes = rb;
                    }
                    Ctl::Nack { psn, reason } => {
                        x.op = OP_NACK;
                        x.psn = psn;
                        x.reason = reason;
                    }
                }
            } else if rtx_ok && self.rng.chance(85, 100) {
                let psn = self.last.rtx_psn;
                let ev = self.rng.below(256) as u8;
                x.op = OP_SEND;
                x.psn = psn;
                x.ev_idx = ev;
                self.recent_rtx.push_back((cycle, psn));
                if self.recent_rtx.len() > 8 {
                    self.recent_rtx.pop_front();
                }
                issued = Issued::Rtx(self.abs(psn), ev);
            } else if self.last.can_send && self.rng.chance(self.mix.send_pct, 100) {
                let a = self.sent
                    + self
                        .prev
                        .iter()
                        .filter(|p| matches!(p, Issued::New(..)))
                        .count() as u64;
                let ev = self.rng.below(256) as u8;
                x.op = OP_SEND;
                x.psn = self.psn(a);
                x.ev_idx = ev;
                issued = Issued::New(a, ev);
            } else if self.rng.chance(self.mix.tick_pct, 100) {
                x.op = OP_TICK;
            } else if self.rng.chance(self.mix.malformed_pct, 100) {
                self.malformed(&mut x);
            } else {
                x.op = OP_NOP;
            }
        }
        let y = self.shadow.step(&x);
        // The op issued three cycles ago was counted at this edge (S1 + 1): learn its fate.
        match self.prev[2] {
            Issued::New(a, ev) if y.cnt_new_sends != self.last.cnt_new_sends => {
                self.sent = a + 1;
                self.transmit(a, ev);
            }
            Issued::Rtx(a, ev) if y.cnt_retransmits != self.last.cnt_retransmits => {
                self.transmit(a, ev);
            }
            _ => {}
        }
        self.prev = if rst {
            [Issued::Other; 3]
        } else {
            [issued, self.prev[0], self.prev[1]]
        };
        self.last = y;
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default peer reaches every outcome the scoreboard counts (model only, no Verilator).
    #[test]
    fn the_default_peer_covers_every_counter_and_feedback_kind() {
        for w in [64, 256] {
            let cfg = NicConfig {
                sack_window_bits: w,
                ..NicConfig::default()
            };
            let mut peer = TxPeer::new(&cfg, 1, TxMix::default());
            let mut sum = [0u64; 7];
            let mut kinds = [0u64; 6];
            let mut prev = TxOutputs::default();
            let mut holes_or_rtx = 0;
            for c in 0..300_000 {
                let x = peer.next_inputs(c);
                let y = peer.outputs();
                if !x.rst {
                    let now = [
                        y.cnt_new_sends,
                        y.cnt_retransmits,
                        y.cnt_timeouts,
                        y.cnt_bad_send,
                        y.cnt_stale_sack,
                        y.cnt_bad_sack,
                        y.cnt_bad_nack,
                    ];
                    let was = [
                        prev.cnt_new_sends,
                        prev.cnt_retransmits,
                        prev.cnt_timeouts,
                        prev.cnt_bad_send,
                        prev.cnt_stale_sack,
                        prev.cnt_bad_sack,
                        prev.cnt_bad_nack,
                    ];
                    for k in 0..7 {
                        sum[k] += u64::from(now[k].wrapping_sub(was[k]));
                    }
                }
                if y.fb_valid {
                    kinds[y.fb_kind as usize] += 1;
                }
                holes_or_rtx += y.rtx_valid as u64;
                prev = y;
            }
            assert!(sum.iter().all(|&n| n > 0), "W={w}: counters {sum:?}");
            assert!(
                kinds.iter().all(|&n| n > 0),
                "W={w}: feedback kinds {kinds:?}"
            );
            assert!(sum[0] > 50_000, "W={w}: too few sends {sum:?}");
            assert!(holes_or_rtx > 0);
        }
    }
}
