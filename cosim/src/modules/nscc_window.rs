//! `nscc_window` in the harness: typed port packing, the model as a [`Stepper`], and the
//! random event source used by `mrcgen compare`, `mrcgen bench` and the property suites.

use crate::error::CosimError;
use crate::ports::{Port, PortMap};
use crate::stepper::Stepper;
use mrc_config::nscc::NsccFixed;
use mrc_config::NicConfig;
use mrc_model::nscc::{
    NsccWindow, WindowInputs, WindowOutputs, FIELD_MAX, KIND_ACK, KIND_NACK, KIND_RTO, KIND_TICK,
};
use mrc_model::rng::SplitMix64;

pub const MODULE: &str = "nscc_window";

/// Input ports (name, width) in packing order; `clock` is driven by the shim.
pub const IN_PORTS: [(&str, u32); 13] = [
    ("rst", 1),
    ("ev_valid", 1),
    ("ev_kind", 2),
    ("ev_bytes", 24),
    ("ev_rtt_ns", 24),
    ("ev_ecn", 1),
    ("ev_penalty", 7),
    ("now_ns", 32),
    ("inflight", 32),
    ("next_len", 16),
    ("sw_valid", 1),
    ("sw_ctx", 4),
    ("ctx_clr", 16),
];
/// Output ports (name, width) in packing order.
pub const OUT_PORTS: [(&str, u32); 14] = [
    ("ev_ready", 1),
    ("cwnd", 32),
    ("maxwnd", 32),
    ("base_rtt_ns", 24),
    ("avg_delay_q8", 32),
    ("can_send", 1),
    ("cnt_events", 32),
    ("cnt_md", 32),
    ("cnt_qa", 32),
    ("ctx_owner", 4),
    ("nx_load", 1),
    ("nx_cwnd", 32),
    ("nx_maxwnd", 32),
    ("nx_base_rtt_ns", 24),
];

/// The window's ports, looked up once by name in the map parsed from the emitted Verilog.
#[derive(Debug, Clone)]
pub struct NsccPorts {
    pm: PortMap,
    i: [Port; 13],
    o: [Port; 14],
}

impl NsccPorts {
    pub fn new(pm: &PortMap) -> Result<Self, CosimError> {
        let (i, o) = super::lookup_ports(
            MODULE,
            pm,
            IN_PORTS.map(|(n, _)| n),
            OUT_PORTS.map(|(n, _)| n),
        )?;
        Ok(NsccPorts {
            pm: pm.clone(),
            i,
            o,
        })
    }

    /// The ports as the contract gives them, without Verilog (unit tests, model-only runs).
    pub fn from_contract() -> Self {
        let pm = PortMap::from_widths(MODULE, &IN_PORTS, &OUT_PORTS);
        NsccPorts::new(&pm).expect("contract ports")
    }

    pub fn port_map(&self) -> &PortMap {
        &self.pm
    }

    /// Pack `x`, each field truncated to its port width.
    pub fn pack_inputs(&self, x: &WindowInputs, w: &mut [u32]) {
        let v: [u64; 13] = [
            x.rst as u64,
            x.ev_valid as u64,
            x.ev_kind as u64,
            x.ev_bytes as u64,
            x.ev_rtt_ns as u64,
            x.ev_ecn as u64,
            x.ev_penalty as u64,
            x.now_ns as u64,
            x.inflight as u64,
            x.next_len as u64,
            x.sw_valid as u64,
            x.sw_ctx as u64,
            x.ctx_clr as u64,
        ];
        for (p, v) in self.i.iter().zip(v) {
            p.set(w, v);
        }
    }

    pub fn unpack_inputs(&self, w: &[u32]) -> WindowInputs {
        let g = |k: usize| self.i[k].get(w);
        WindowInputs {
            rst: g(0) != 0,
            ev_valid: g(1) != 0,
            ev_kind: g(2) as u8,
            ev_bytes: g(3) as u32,
            ev_rtt_ns: g(4) as u32,
            ev_ecn: g(5) != 0,
            ev_penalty: g(6) as u8,
            now_ns: g(7) as u32,
            inflight: g(8) as u32,
            next_len: g(9) as u32,
            sw_valid: g(10) != 0,
            sw_ctx: g(11) as u8,
            ctx_clr: g(12) as u16,
        }
    }

    pub fn pack_outputs(&self, y: &WindowOutputs, w: &mut [u32]) {
        let v: [u64; 14] = [
            y.ev_ready as u64,
            y.cwnd as u64,
            y.maxwnd as u64,
            y.base_rtt_ns as u64,
            y.avg_delay_q8 as u64,
            y.can_send as u64,
            y.cnt_events as u64,
            y.cnt_md as u64,
            y.cnt_qa as u64,
            y.ctx_owner as u64,
            y.nx_load as u64,
            y.nx_cwnd as u64,
            y.nx_maxwnd as u64,
            y.nx_base_rtt_ns as u64,
        ];
        for (p, v) in self.o.iter().zip(v) {
            p.set(w, v);
        }
    }

    pub fn unpack_outputs(&self, w: &[u32]) -> WindowOutputs {
        let g = |k: usize| self.o[k].get(w);
        WindowOutputs {
            ev_ready: g(0) != 0,
            cwnd: g(1) as u32,
            maxwnd: g(2) as u32,
            base_rtt_ns: g(3) as u32,
            avg_delay_q8: g(4) as u32,
            can_send: g(5) != 0,
            cnt_events: g(6) as u32,
            cnt_md: g(7) as u32,
            cnt_qa: g(8) as u32,
            ctx_owner: g(9) as u8,
            nx_load: g(10) != 0,
            nx_cwnd: g(11) as u32,
            nx_maxwnd: g(12) as u32,
            nx_base_rtt_ns: g(13) as u32,
        }
    }
}

/// Corrupts what the model sees (a deliberately wrong model) without touching the model.
pub type Tamper = Box<dyn FnMut(&mut WindowInputs) + Send>;

/// The golden model behind the word interface.
pub struct NsccModel {
    pub ports: NsccPorts,
    pub model: NsccWindow,
    pub tamper: Option<Tamper>,
}

impl NsccModel {
    pub fn new(cfg: &NicConfig, ports: NsccPorts) -> Self {
        NsccModel {
            ports,
            model: NsccWindow::new(cfg),
            tamper: None,
        }
    }
}

impl Stepper for NsccModel {
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

/// What a stretch of events looks like (the generator switches stretches at random).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stretch {
    /// No ECN, delay below 1 us: fast increase, cwnd climbs to maxwnd.
    Calm,
    /// No ECN, delay below target: proportional increase.
    Proportional,
    /// No ECN, delay at or above target: fair increase.
    Fair,
    /// ECN and delay above target: multiplicative decreases, quick adapt.
    Congested,
    /// Trim NACKs (often huge) and RTOs: cwnd pushed to one MTU.
    Storm,
    /// Every field random, extremes included.
    Chaos,
}

const STRETCHES: [Stretch; 6] = [
    Stretch::Calm,
    Stretch::Proportional,
    Stretch::Fair,
    Stretch::Congested,
    Stretch::Storm,
    Stretch::Chaos,
];

/// Shape of the random event stream; percentages per event or per cycle as stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NsccMix {
    /// Cycles (with no event pending) on which a new event is offered.
    pub offer_pct: u64,
    /// An offered event that was not taken is offered again next cycle (else withdrawn).
    pub hold_pct: u64,
    /// `now_ns` advances by 0..=this per cycle.
    pub ns_step_max: u32,
    /// Jumps of `now_ns` by up to ~2^31 ns, per million cycles.
    pub jumps_per_million: u64,
    /// Mid-run resets per million cycles.
    pub resets_per_million: u64,
    /// Start (and restart after a reset) `now_ns` within 100 us of the 2^32 wrap.
    pub near_wrap: bool,
    /// Events whose fields take extreme values (0, 1, 2^24 - 1, penalty 127, garbage in
    /// fields the kind ignores).
    pub extreme_pct: u64,
    /// RTT samples below the current base RTT (the min filter moves), per mille of ACKs.
    pub below_base_permille: u64,
    /// TICKs mixed into every stretch.
    pub tick_pct: u64,
    /// Relative weights of Calm, Proportional, Fair, Congested, Storm, Chaos stretches.
    pub stretch_weights: [u64; 6],
    /// Events per stretch: 1..=this.
    pub stretch_max: u32,
    /// Stretches in which time runs 16x faster (few bytes per quick-adapt epoch, so quick
    /// adapt can fire; TICKs find base RTTs elapsed).
    pub slow_stretch_pct: u64,
}

impl Default for NsccMix {
    fn default() -> Self {
        NsccMix {
            offer_pct: 70,
            hold_pct: 80,
            ns_step_max: 12,
            jumps_per_million: 20,
            resets_per_million: 30,
            near_wrap: false,
            extreme_pct: 3,
            below_base_permille: 2,
            tick_pct: 5,
            stretch_weights: [30, 15, 15, 15, 10, 5],
            stretch_max: 400,
            slow_stretch_pct: 25,
        }
    }
}

/// A seeded random `nscc_window` environment. It steps a shadow [`NsccWindow`] with every
/// input it produces, so it knows `ev_ready`, the current cwnd and base RTT, and can aim RTT
/// samples, `inflight` and `next_len` at the interesting values. Deterministic for a seed.
pub struct NsccTraffic {
    rng: SplitMix64,
    mix: NsccMix,
    k: NsccFixed,
    shadow: NsccWindow,
    last: WindowOutputs,
    now: u32,
    /// The event being offered (held while not ready).
    pending: Option<WindowInputs>,
    stretch: Stretch,
    stretch_left: u32,
    /// Current `now_ns` step bound (per stretch).
    ns_step: u32,
    rst_left: u32,
    taken: u64,
}

impl NsccTraffic {
    pub fn new(cfg: &NicConfig, seed: u64, mix: NsccMix) -> Self {
        let mut rng = SplitMix64::new(seed);
        let now = start_time(&mut rng, mix.near_wrap);
        NsccTraffic {
            rng,
            mix,
            k: NsccFixed::new(cfg),
            shadow: NsccWindow::new(cfg),
            last: WindowOutputs::default(),
            now,
            pending: None,
            stretch: Stretch::Calm,
            stretch_left: 0,
            ns_step: mix.ns_step_max,
            rst_left: 0,
            taken: 0,
        }
    }

    /// The shadow model (stepped with every input produced so far).
    pub fn shadow(&self) -> &NsccWindow {
        &self.shadow
    }

    /// Events the shadow model has taken so far (resets included).
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// The inputs for `cycle` (cycles 0 and 1 are reset).
    pub fn next_inputs(&mut self, cycle: u64) -> WindowInputs {
        let mut x = self.make(cycle);
        self.contexts(&mut x);
        let own_clr = x.ctx_clr >> self.shadow.owner() & 1 != 0;
        if !x.rst && !own_clr && x.ev_valid && self.shadow.ready() {
            self.taken += 1;
            self.pending = None;
        }
        self.last = self.shadow.step(&x);
        x
    }

    /// Context switches and clears (with one context a switch is never acted on and a clear
    /// of context 0 is a reset): a switch request now and then (with no event offered), to
    /// any of the 16 numbers (those past the window's contexts must be refused), and a rare
    /// clear.
    fn contexts(&mut self, x: &mut WindowInputs) {
        if self.rng.chance(1, 6) {
            // A switch is acted on only when no event is taken: offer none with it (a
            // pending event is offered again later).
            x.ev_valid = false;
            x.sw_valid = true;
            x.sw_ctx = if self.rng.chance(1, 8) {
                self.rng.below(16) as u8
            } else {
                self.rng.below(self.shadow.contexts() as u64) as u8
            };
        }
        if self.rng.chance(1, 3000) {
            x.ctx_clr = self.rng.below(1 << 16) as u16;
        }
    }

    fn make(&mut self, cycle: u64) -> WindowInputs {
        let mix = self.mix;
        if mix.jumps_per_million > 0 && self.rng.chance(mix.jumps_per_million, 1_000_000) {
            // Mostly well under 2^31; now and then right up to it.
            let j = if self.rng.chance(1, 4) {
                (1u64 << 31) - 1 - self.rng.below(1000)
            } else {
                self.rng.below(1 << 30)
            };
            self.now = self.now.wrapping_add(j as u32);
        } else {
            self.now = self
                .now
                .wrapping_add(self.rng.below(u64::from(self.ns_step) + 1) as u32);
        }
        let (inflight, next_len) = self.send_probe();
        let mut x = WindowInputs {
            now_ns: self.now,
            inflight,
            next_len,
            ..WindowInputs::default()
        };
        if cycle < 2 || self.rst_left > 0 || self.rng.chance(mix.resets_per_million, 1_000_000) {
            if self.rst_left == 0 {
                self.rst_left = 1 + self.rng.below(2) as u32;
                if cycle >= 2 && self.rng.chance(1, 3) {
                    self.now = start_time(&mut self.rng, mix.near_wrap);
                    x.now_ns = self.now;
                }
            }
            self.rst_left -= 1;
            self.pending = None;
            self.stretch_left = 0;
            x.rst = true;
            // Sometimes an event offered during reset (it must not be taken).
            if self.rng.chance(1, 4) {
                let e = self.event();
                x = WindowInputs { rst: true, ..e };
            }
            return x;
        }
        if let Some(p) = self.pending {
            if self.rng.chance(mix.hold_pct, 100) {
                // Held: same event fields; `now` keeps running (the RTL samples it when taken).
                return WindowInputs {
                    now_ns: x.now_ns,
                    inflight,
                    next_len,
                    ..p
                };
            }
            self.pending = None;
        }
        if self.rng.chance(mix.offer_pct, 100) {
            let e = self.event();
            self.pending = Some(e);
            return e;
        }
        // Idle: the event fields carry garbage now and then (ev_valid low must ignore them).
        if self.rng.chance(mix.extreme_pct, 100) {
            let e = self.event();
            x = WindowInputs {
                ev_valid: false,
                ..e
            };
        }
        x
    }

    /// inflight / next_len near the window so `can_send` toggles, with the exact boundary and
    /// the 32-bit overflow now and then.
    fn send_probe(&mut self) -> (u32, u32) {
        let r = &mut self.rng;
        let cwnd = if r.chance(1, 2) {
            self.last.cwnd
        } else {
            self.shadow.state().cwnd
        };
        let next_len = match r.below(10) {
            0 => 0,
            1 => r.below(1 << 16) as u32,
            2 => 0xFFFF,
            3 => 1,
            4 => 16384,
            _ => self.k.mtu.min(0xFFFF),
        };
        let inflight = match r.below(10) {
            0 => cwnd.saturating_sub(next_len),
            1 => cwnd.saturating_sub(next_len).wrapping_add(1),
            2 => u32::MAX - r.below(0x1_0000) as u32,
            3 => r.below(1 << 32) as u32,
            4 => 0,
            _ => {
                let c = u64::from(cwnd);
                (c / 2 + r.below(c * 7 / 10 + 1)) as u32
            }
        };
        (inflight, next_len)
    }

    fn pick_stretch(&mut self) {
        let w = self.mix.stretch_weights;
        let total: u64 = w.iter().sum();
        let mut r = if total == 0 { 0 } else { self.rng.below(total) };
        self.stretch = Stretch::Chaos;
        for (s, &wi) in STRETCHES.iter().zip(&w) {
            if r < wi {
                self.stretch = *s;
                break;
            }
            r -= wi;
        }
        self.stretch_left = 1 + self.rng.below(u64::from(self.mix.stretch_max.max(1))) as u32;
        self.ns_step = if self.rng.chance(self.mix.slow_stretch_pct, 100) {
            self.mix.ns_step_max.saturating_mul(16)
        } else {
            self.mix.ns_step_max
        };
    }

    /// A fresh event for the current stretch (ev_valid set).
    fn event(&mut self) -> WindowInputs {
        if self.stretch_left == 0 {
            self.pick_stretch();
        }
        self.stretch_left -= 1;
        let mix = self.mix;
        let k = self.k;
        let base = self.shadow.state().base_rtt;
        let target = k.target_ns;
        let r = &mut self.rng;
        let bytes = |r: &mut SplitMix64| match r.below(8) {
            0..=4 => 4096,
            5 | 6 => 16384,
            _ => k.mtu,
        };
        let mut x = WindowInputs {
            ev_valid: true,
            now_ns: self.now,
            ..WindowInputs::default()
        };
        if r.chance(mix.tick_pct, 100) {
            x.ev_kind = KIND_TICK;
        } else {
            match self.stretch {
                Stretch::Calm | Stretch::Proportional | Stretch::Fair | Stretch::Congested => {
                    x.ev_kind = KIND_ACK;
                    x.ev_bytes = bytes(r);
                    let q = match self.stretch {
                        Stretch::Calm => r.below(1000) as u32,
                        Stretch::Proportional => r.below(u64::from(target)) as u32,
                        Stretch::Fair => target + r.below(u64::from(3 * target)) as u32,
                        _ => target + r.below(u64::from(5 * target)) as u32,
                    };
                    x.ev_rtt_ns = base.saturating_add(q).min(FIELD_MAX);
                    x.ev_ecn = match self.stretch {
                        Stretch::Congested => r.chance(85, 100),
                        _ => r.chance(1, 100),
                    };
                    x.ev_penalty = if r.chance(3, 100) {
                        r.below(128) as u8
                    } else {
                        0
                    };
                    if r.chance(2, 100) {
                        x.ev_rtt_ns = 0;
                    }
                    // Now and then a trim inside a busy stretch (quick adapt).
                    if r.chance(1, 200) {
                        x.ev_kind = KIND_NACK;
                    }
                }
                Stretch::Storm => {
                    x.ev_kind = if r.chance(1, 3) { KIND_RTO } else { KIND_NACK };
                    x.ev_bytes = match r.below(4) {
                        0 => FIELD_MAX,
                        1 => r.below(1 << 24) as u32,
                        _ => bytes(r),
                    };
                }
                Stretch::Chaos => {
                    x.ev_kind = r.below(4) as u8;
                    x.ev_bytes = r.below(1 << 24) as u32;
                    x.ev_rtt_ns = r.below(1 << 24) as u32;
                    x.ev_ecn = r.chance(1, 2);
                    x.ev_penalty = r.below(128) as u8;
                }
            }
        }
        if x.ev_kind == KIND_ACK && r.chance(mix.below_base_permille, 1000) {
            // Below the current base: usually a little, sometimes a lot (maxwnd collapses).
            x.ev_rtt_ns = match r.below(4) {
                0 => 1 + r.below(u64::from(base.max(1))) as u32,
                _ => base.saturating_sub(1 + r.below(u64::from(base / 20 + 1)) as u32),
            };
        }
        if r.chance(mix.extreme_pct, 100) {
            let pick = |r: &mut SplitMix64| match r.below(5) {
                0 => 0,
                1 => 1,
                2 | 3 => FIELD_MAX,
                _ => r.below(1 << 24) as u32,
            };
            match r.below(5) {
                0 => x.ev_bytes = pick(r),
                1 => x.ev_rtt_ns = pick(r),
                2 => x.ev_penalty = 127,
                3 => {
                    x.ev_bytes = pick(r);
                    x.ev_rtt_ns = pick(r);
                    x.ev_penalty = r.below(128) as u8;
                    x.ev_ecn = r.chance(1, 2);
                }
                _ => {
                    // Garbage in the fields this kind ignores.
                    if x.ev_kind != KIND_ACK {
                        x.ev_rtt_ns = r.below(1 << 24) as u32;
                        x.ev_ecn = r.chance(1, 2);
                        x.ev_penalty = r.below(128) as u8;
                    }
                    if x.ev_kind == KIND_RTO || x.ev_kind == KIND_TICK {
                        x.ev_bytes = r.below(1 << 24) as u32;
                    }
                }
            }
        }
        x
    }
}

fn start_time(rng: &mut SplitMix64, near_wrap: bool) -> u32 {
    if near_wrap {
        0u32.wrapping_sub(1 + rng.below(100_000) as u32)
    } else {
        rng.below(1 << 20) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mrc_model::nscc::NsccEvent;

    #[test]
    fn ports_round_trip_at_their_widths() {
        let p = NsccPorts::from_contract();
        let mut rng = SplitMix64::new(5);
        let pm = p.port_map().clone();
        for _ in 0..2000 {
            let r = |rng: &mut SplitMix64, bits: u32| (rng.next_u64() & ((1 << bits) - 1)) as u32;
            let x = WindowInputs {
                rst: rng.chance(1, 2),
                ev_valid: rng.chance(1, 2),
                ev_kind: r(&mut rng, 2) as u8,
                ev_bytes: r(&mut rng, 24),
                ev_rtt_ns: r(&mut rng, 24),
                ev_ecn: rng.chance(1, 2),
                ev_penalty: r(&mut rng, 7) as u8,
                now_ns: r(&mut rng, 32),
                inflight: r(&mut rng, 32),
                next_len: r(&mut rng, 16),
                sw_valid: rng.chance(1, 2),
                sw_ctx: r(&mut rng, 4) as u8,
                ctx_clr: r(&mut rng, 16) as u16,
            };
            let mut w = vec![0u32; pm.in_words()];
            p.pack_inputs(&x, &mut w);
            assert_eq!(p.unpack_inputs(&w), x);
            let y = WindowOutputs {
                ev_ready: rng.chance(1, 2),
                cwnd: r(&mut rng, 32),
                maxwnd: r(&mut rng, 32),
                base_rtt_ns: r(&mut rng, 24),
                avg_delay_q8: r(&mut rng, 32),
                can_send: rng.chance(1, 2),
                cnt_events: r(&mut rng, 32),
                cnt_md: r(&mut rng, 32),
                cnt_qa: r(&mut rng, 32),
                ctx_owner: r(&mut rng, 4) as u8,
                nx_load: rng.chance(1, 2),
                nx_cwnd: r(&mut rng, 32),
                nx_maxwnd: r(&mut rng, 32),
                nx_base_rtt_ns: r(&mut rng, 24),
            };
            let mut w = vec![0u32; pm.out_words()];
            p.pack_outputs(&y, &mut w);
            assert_eq!(p.unpack_outputs(&w), y);
        }
        // Wider values are truncated to the port, as the RTL would see them.
        let mut w = vec![0u32; pm.in_words()];
        let x = WindowInputs {
            ev_kind: 7,
            ev_bytes: u32::MAX,
            ev_penalty: 0xFF,
            next_len: 0x1_2345,
            ..WindowInputs::default()
        };
        p.pack_inputs(&x, &mut w);
        let u = p.unpack_inputs(&w);
        assert_eq!(
            (u.ev_kind, u.ev_bytes, u.ev_penalty, u.next_len),
            (3, FIELD_MAX, 127, 0x2345)
        );
    }

    #[test]
    fn a_port_map_missing_a_port_or_with_an_extra_one_is_refused() {
        let short = PortMap::from_widths(MODULE, &IN_PORTS[..9], &OUT_PORTS);
        assert!(NsccPorts::new(&short).is_err());
        let mut ins = IN_PORTS.to_vec();
        ins.push(("spare", 1));
        let extra = PortMap::from_widths(MODULE, &ins, &OUT_PORTS);
        assert!(NsccPorts::new(&extra).is_err());
    }

    #[test]
    fn offering_round_trips_through_the_model_decoding() {
        let evs = [
            NsccEvent::Ack {
                now: 9,
                bytes: 4096,
                rtt_ns: 12_345,
                ecn: true,
                penalty: 100,
            },
            NsccEvent::Nack {
                now: u32::MAX,
                bytes: FIELD_MAX,
            },
            NsccEvent::Rto { now: 1 },
            NsccEvent::Tick { now: 1 << 31 },
        ];
        for e in evs {
            let x = WindowInputs::offering(&e);
            assert!(x.ev_valid && !x.rst);
            assert_eq!(x.event(), e);
        }
    }

    /// The stepper is the model behind the words: same outputs as stepping it directly.
    #[test]
    fn the_stepper_is_the_model() {
        let cfg = NicConfig::default();
        let p = NsccPorts::from_contract();
        let mut s = NsccModel::new(&cfg, p.clone());
        let mut m = NsccWindow::new(&cfg);
        let mut t = NsccTraffic::new(&cfg, 3, NsccMix::default());
        let (mut wi, mut wo) = (
            vec![0; p.port_map().in_words()],
            vec![0; p.port_map().out_words()],
        );
        for c in 0..20_000 {
            let x = t.next_inputs(c);
            p.pack_inputs(&x, &mut wi);
            s.step(&wi, &mut wo);
            assert_eq!(
                p.unpack_outputs(&wo),
                m.step(&p.unpack_inputs(&wi)),
                "cycle {c}"
            );
        }
    }

    /// The default stream is useful (model alone): every event kind, events held while not
    /// ready, resets, MDs and quick adapts, cwnd at both clamps, base RTT moving, can_send
    /// both ways; and the generator's shadow agrees with a model stepped on the same inputs.
    #[test]
    fn default_traffic_exercises_the_window() {
        for (seed, near_wrap) in [(11u64, false), (12, true)] {
            let cfg = NicConfig::default();
            let k = NsccFixed::new(&cfg);
            let mix = NsccMix {
                near_wrap,
                ..NsccMix::default()
            };
            let mut t = NsccTraffic::new(&cfg, seed, mix);
            let mut m = NsccWindow::new(&cfg);
            let mut kinds = [0u64; 4];
            let (mut held, mut resets, mut at_max, mut at_mtu, mut base_moves) =
                (0u64, 0u64, 0u64, 0u64, 0u64);
            let (mut send, mut nosend, mut md, mut qa) = (0u64, 0u64, 0u64, 0u64);
            let mut wrapped = false;
            let mut prev = WindowOutputs::default();
            let mut prev_x = WindowInputs::default();
            for c in 0..400_000 {
                let x = t.next_inputs(c);
                let ready = m.ready();
                let y = m.step(&x);
                assert_eq!(y.ev_ready, m.ready());
                if x.ev_valid && !x.rst {
                    if ready {
                        kinds[x.ev_kind as usize] += 1;
                    } else {
                        held += 1;
                    }
                }
                resets += u64::from(x.rst && !prev_x.rst);
                at_max += u64::from(y.cwnd == y.maxwnd && y.cwnd != prev.cwnd);
                at_mtu += u64::from(y.cwnd == k.mtu && prev.cwnd != k.mtu);
                base_moves += u64::from(y.base_rtt_ns < prev.base_rtt_ns);
                send += u64::from(y.can_send);
                nosend += u64::from(!y.can_send);
                if !prev_x.rst && !x.rst {
                    md += u64::from(y.cnt_md != prev.cnt_md);
                    qa += u64::from(y.cnt_qa != prev.cnt_qa);
                }
                wrapped |= x.now_ns < prev_x.now_ns;
                prev = y;
                prev_x = x;
            }
            assert_eq!(m.state(), t.shadow().state());
            eprintln!(
                "seed {seed}: kinds {kinds:?}, held {held}, resets {resets}, at maxwnd {at_max}, \
                 at MTU {at_mtu}, base moves {base_moves}, can_send {send}/{nosend}, \
                 MD {md}, QA {qa}, wrapped {wrapped}"
            );
            assert!(kinds.iter().all(|&n| n > 200), "{kinds:?}");
            assert!(held > 1000 && resets > 3);
            assert!(at_max > 10 && at_mtu > 10 && base_moves > 3);
            assert!(send > 10_000 && nosend > 10_000);
            assert!(md > 5 && qa > 5, "MD {md} QA {qa}");
            assert!(wrapped);
        }
    }

    /// With three contexts (`core_small`) the stream switches often, to every context and to
    /// numbers past them (refused), clears contexts now and then, and takes events in every
    /// context, some right after a switch's load.
    #[test]
    fn three_context_traffic_switches_and_clears() {
        let cfg = NicConfig {
            qps: 3,
            ..NicConfig::default()
        };
        let mut t = NsccTraffic::new(&cfg, 21, NsccMix::default());
        let mut m = NsccWindow::new(&cfg);
        assert_eq!(m.contexts(), 3);
        let (mut switches, mut refused, mut clears) = (0u64, 0u64, 0u64);
        let mut taken = [0u64; 3];
        let mut after_load = 0u64;
        let mut loaded_at = 0u64;
        for c in 0..300_000u64 {
            let x = t.next_inputs(c);
            let (own, ready) = (m.owner(), m.ready());
            let own_clr = x.ctx_clr >> own & 1 != 0;
            let y = m.step(&x);
            if !x.rst && !own_clr && x.ev_valid && ready {
                taken[own] += 1;
                after_load += u64::from(loaded_at + 2 == c);
            }
            if usize::from(y.ctx_owner) != own && !x.rst {
                switches += 1;
                loaded_at = c;
            }
            refused += u64::from(x.sw_valid && x.sw_ctx >= 3);
            clears += u64::from(x.ctx_clr & 7 != 0 && !x.rst);
        }
        eprintln!(
            "switches {switches}, refused {refused}, clears {clears}, taken {taken:?}, \
             after a load {after_load}"
        );
        assert!(switches > 500, "{switches}");
        assert!(refused > 100 && clears > 20, "{refused} {clears}");
        assert!(taken.iter().all(|&n| n > 1_000), "{taken:?}");
        assert!(after_load > 100, "{after_load}");
        assert_eq!(m.state(), t.shadow().state());
    }
}
