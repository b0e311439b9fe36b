//! Scripted NSCC event traces and the `Fixed` vs `Reference` comparison over them (issue 4).
//!
//! Each trace is open loop: a deterministic list of [`NsccEvent`]s that does not depend on the
//! window it drives (ACK pacing, RTT samples, ECN marks, trims and timeouts are scripted, with
//! [`SplitMix64`] and a fixed seed where they are random). Traces scale with the config: ACKs
//! arrive at the configured line rate (4096 B at 800 Gb/s every ~41 ns), RTT samples are the
//! configured base RTT plus a scripted queuing delay expressed in units of the target delay,
//! and a TICK arrives every microsecond as the NIC timer would. With the default config each
//! trace is 3,000 to 6,000 events and 0.5 to 0.8 ms long. The shapes (phase lengths in us,
//! the 1/32 incast share) are tuned for the default 800 Gb/s x 12 us: on a much slower link
//! or a much longer RTT some traces no longer reach their mechanism (at 25 Gb/s the incast
//! and the RTO storm end without a quick adapt); the per-trace tests use the default.
//!
//! [`compare`] runs one trace through both levels and checks the bound at every event:
//! `|fixed - reference| <= max(1 % of reference, 1 MTU)`.

use crate::nscc::{Fixed, NsccEvent, Reference};
use crate::rng::SplitMix64;
use mrc_config::nscc::NsccParams;
use mrc_config::NicConfig;

/// The NIC timer's period: one TICK per microsecond.
pub const TICK_NS: u32 = 1_000;
/// Every trace starts here (ns), after a quiet first microsecond.
const T0: f64 = 1_000.0;
/// Seed of every trace's generator (each trace mixes in its own constant).
const SEED: u64 = 0x4E53_4343;

/// Names of the traces, in the order [`all`] returns them.
pub const NAMES: [&str; 5] = [
    "steady_ramp",
    "persistent_ecn",
    "incast_trims",
    "rto_storm",
    "base_rtt_drop",
];

/// Every trace by name, for the default order of tables and plots.
pub fn all(cfg: &NicConfig) -> Vec<(&'static str, Vec<NsccEvent>)> {
    NAMES
        .iter()
        .map(|&n| (n, by_name(cfg, n).expect("listed name")))
        .collect()
}

/// One trace by name; `None` for an unknown name.
pub fn by_name(cfg: &NicConfig, name: &str) -> Option<Vec<NsccEvent>> {
    Some(match name {
        "steady_ramp" => steady_ramp(cfg),
        "persistent_ecn" => persistent_ecn(cfg),
        "incast_trims" => incast_trims(cfg),
        "rto_storm" => rto_storm(cfg),
        "base_rtt_drop" => base_rtt_drop(cfg),
        _ => return None,
    })
}

/// The link a trace is scripted for, from the config.
#[derive(Debug, Clone, Copy)]
struct Link {
    /// ns per byte on the wire at line rate.
    ns_per_byte: f64,
    base: f64,
    target: f64,
    mtu: u32,
    /// The sender's retransmit timeout, ns (`1.024 us << rto_exp`, capped at ~1 ms so that a
    /// storm of ten stays a few thousand TICKs long).
    rto: f64,
}

impl Link {
    fn new(cfg: &NicConfig) -> Self {
        let p = NsccParams::new(cfg);
        Link {
            ns_per_byte: 8.0 / f64::from(cfg.link_gbps),
            base: p.base_rtt_ns,
            target: p.target_ns,
            mtu: cfg.mtu,
            rto: 1_024.0 * f64::from(1u32 << cfg.rto_exp.min(10)),
        }
    }

    /// An RTT sample: `base` plus a queuing delay of `delay_targets` target delays.
    fn rtt(&self, base: f64, delay_targets: f64) -> u32 {
        (base + delay_targets.max(0.0) * self.target).round() as u32
    }
}

/// Appends events in time order and inserts the timer's TICKs between them.
struct Builder {
    ev: Vec<NsccEvent>,
    next_tick: u32,
}

impl Builder {
    fn new() -> Self {
        Builder {
            ev: Vec::new(),
            next_tick: TICK_NS,
        }
    }

    /// TICKs due at or before `now`.
    fn ticks_until(&mut self, now: u32) {
        while self.next_tick <= now {
            self.ev.push(NsccEvent::Tick {
                now: self.next_tick,
            });
            self.next_tick += TICK_NS;
        }
    }

    fn push(&mut self, e: NsccEvent) {
        self.ticks_until(e.now());
        self.ev.push(e);
    }

    fn ack(&mut self, t: f64, bytes: u32, rtt_ns: u32, ecn: bool) {
        self.push(NsccEvent::Ack {
            now: t.round() as u32,
            bytes,
            rtt_ns,
            ecn,
            penalty: 0,
        });
    }

    fn nack(&mut self, t: f64, bytes: u32) {
        self.push(NsccEvent::Nack {
            now: t.round() as u32,
            bytes,
        });
    }

    fn rto(&mut self, t: f64) {
        self.push(NsccEvent::Rto {
            now: t.round() as u32,
        });
    }

    fn finish(mut self, end: f64) -> Vec<NsccEvent> {
        self.ticks_until(end.round() as u32);
        self.ev
    }
}

/// 1 to 4 full packets: the 4 KB .. 16 KB a (coalesced) ACK covers.
fn ack_bytes(rng: &mut SplitMix64, mtu: u32) -> u32 {
    mtu * (1 + rng.below(4) as u32)
}

/// Uniform in `[lo, hi)`.
fn uniform(rng: &mut SplitMix64, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * (rng.below(1 << 20) as f64 / f64::from(1u32 << 20))
}

/// Gap to the next ACK of `bytes` when the ACK rate starts at one packet per base RTT at
/// `start` and doubles every base RTT up to line rate (the ACK clock of a window that grows
/// from one packet; scripted, not fed back from the model).
fn ramp_gap(l: &Link, t: f64, start: f64, bytes: u32) -> f64 {
    let rtts = ((t - start) / l.base).max(0.0);
    let per_ns = f64::from(l.mtu) / l.base * 2f64.powf(rtts.min(30.0));
    (f64::from(bytes) / per_ns).max(f64::from(bytes) * l.ns_per_byte)
}

/// A flow's start without congestion. The first ACK opens the quick-adapt epoch and one trim
/// NACK follows (the initial 1.5 BDP burst overflowed a queue); the rest of that first window
/// is lost, so the next ACK, one epoch later, finds almost nothing achieved and quick adapt
/// drops cwnd to one packet. Then ACKs of 4 KB .. 16 KB arrive at a rate that starts at one
/// packet per base RTT and doubles every base RTT up to line rate, for ~500 us, with the
/// delay in four phases: 0.2 .. 0.8 target (proportional increase) for 100 us, below 1 us
/// (fast increase once a window's worth of ACKs saw it) until 250 us, just above the target
/// without ECN (fair increase) until 400 us, then low again. cwnd ramps from one packet to
/// maxwnd and stays there, topped up by eta each base RTT.
pub fn steady_ramp(cfg: &NicConfig) -> Vec<NsccEvent> {
    let l = Link::new(cfg);
    let mut rng = SplitMix64::new(SEED ^ 1);
    let mut b = Builder::new();
    b.ack(T0, l.mtu, l.rtt(l.base, 0.05), false);
    b.nack(T0 + 200.0, l.mtu);
    let start = T0 + l.base + l.target + 2_000.0;
    let mut t = start;
    let end = start + 500_000.0;
    let fast = 600.0 / l.target; // 0.6 us in target units
    while t < end {
        let us = (t - start) / 1_000.0;
        let d = if us < 100.0 {
            uniform(&mut rng, 0.2, 0.8)
        } else if us < 250.0 {
            uniform(&mut rng, 0.2 * fast, fast)
        } else if us < 400.0 {
            uniform(&mut rng, 1.0, 1.3)
        } else {
            uniform(&mut rng, 0.05, 0.3)
        };
        let bytes = ack_bytes(&mut rng, l.mtu);
        b.ack(t, bytes, l.rtt(l.base, d), false);
        t += ramp_gap(&l, t, start, bytes);
    }
    b.finish(end)
}

/// A long congested stretch at line rate: the queue builds over 100 us to 2.5 targets of
/// delay (below the 4-target quick-adapt threshold), stays there with jitter for 500 us, then
/// drains to a third of the target. The switch marks ECN on 90 % of ACKs whose delay is at or
/// above the target and on 10 % below it (which must change nothing). The average-delay EWMA
/// climbs over the first samples; once it passes the target, marked ACKs cut cwnd
/// multiplicatively at most once per base RTT by a factor from the average, and the unmarked
/// ACKs above the target add fair increase between the cuts, so cwnd settles into a saw tooth
/// well below maxwnd, then recovers when the queue drains. ACKs cover 16 KB (coalesced).
pub fn persistent_ecn(cfg: &NicConfig) -> Vec<NsccEvent> {
    let l = Link::new(cfg);
    let mut rng = SplitMix64::new(SEED ^ 2);
    let mut b = Builder::new();
    let bytes = 4 * l.mtu;
    let gap = f64::from(bytes) * l.ns_per_byte;
    let mut t = T0;
    let end = T0 + 800_000.0;
    while t < end {
        let us = (t - T0) / 1_000.0;
        let level = if us < 100.0 {
            2.5 * us / 100.0
        } else if us < 600.0 {
            2.5
        } else if us < 700.0 {
            2.5 - (2.5 - 0.33) * (us - 600.0) / 100.0
        } else {
            0.33
        };
        let d = (level + uniform(&mut rng, -0.15, 0.15)).max(0.0);
        let ecn = if d >= 1.0 {
            rng.chance(9, 10)
        } else {
            rng.chance(1, 10)
        };
        b.ack(t, bytes, l.rtt(l.base, d), ecn);
        t += gap;
    }
    b.finish(end)
}

/// Incast: six 100 us rounds. In the first 40 us of each, 32 senders converge on one port:
/// this flow gets 1/32 of the line (one 4 KB ACK every ~1.3 us at 800 Gb/s), the queue sits
/// at 1.5 targets, and about half the packets are trimmed (a burst of trim NACKs among the
/// ACKs). Within a quick-adapt epoch each NACK subtracts its bytes; at the epoch's end the
/// achieved bytes are far under maxwnd / 8, so quick adapt sets cwnd to them. In the other
/// 60 us the incast is over: ACKs at line rate with a small delay, and cwnd climbs back.
pub fn incast_trims(cfg: &NicConfig) -> Vec<NsccEvent> {
    let l = Link::new(cfg);
    let mut rng = SplitMix64::new(SEED ^ 3);
    let mut b = Builder::new();
    let mut t = T0;
    let end = T0 + 600_000.0;
    while t < end {
        let in_round = ((t - T0) / 1_000.0) % 100.0;
        if in_round < 40.0 {
            let gap = 32.0 * f64::from(l.mtu) * l.ns_per_byte;
            let d = uniform(&mut rng, 1.3, 1.7);
            if rng.chance(1, 2) {
                b.nack(t, l.mtu);
            } else {
                b.ack(t, l.mtu, l.rtt(l.base, d), false);
            }
            t += gap;
        } else {
            let bytes = ack_bytes(&mut rng, l.mtu);
            b.ack(t, bytes, l.rtt(l.base, uniform(&mut rng, 0.1, 0.4)), false);
            t += f64::from(bytes) * l.ns_per_byte;
        }
    }
    b.finish(end)
}

/// A path dies under a flow running at line rate with a moderate queue (100 us of ACKs,
/// delay 0.3 .. 0.7 target, a few ECN marks). No ACK arrives for the next ~300 us: the
/// retransmit timer fires back to back, seven times at the configured RTO and three more with
/// exponential backoff; each RTO takes one MTU off cwnd and arms quick adapt (the timer's
/// TICKs keep running and add eta once per base RTT). Then the retransmissions get through on
/// another path and ACKs return with a low delay at a rate that starts at one packet per base
/// RTT and doubles every base RTT up to line rate. The first ACK closes the epoch that was
/// open when the path died (too many bytes achieved in it for quick adapt); the armed quick
/// adapt fires at the end of the next one, with only the first few packets achieved, and
/// cwnd ramps back from there.
pub fn rto_storm(cfg: &NicConfig) -> Vec<NsccEvent> {
    let l = Link::new(cfg);
    let mut rng = SplitMix64::new(SEED ^ 4);
    let mut b = Builder::new();
    let mut t = T0;
    let stop = T0 + 100_000.0;
    while t < stop {
        let bytes = ack_bytes(&mut rng, l.mtu);
        let d = uniform(&mut rng, 0.3, 0.7);
        b.ack(t, bytes, l.rtt(l.base, d), rng.chance(1, 20));
        t += f64::from(bytes) * l.ns_per_byte;
    }
    let mut rto_at = t + l.rto;
    for i in 0..10 {
        b.rto(rto_at);
        let backoff = if i < 7 {
            1.0
        } else {
            f64::from(1u32 << (i - 6))
        };
        rto_at += l.rto * backoff;
    }
    let start = rto_at;
    t = start;
    let end = t + 250_000.0;
    while t < end {
        let bytes = ack_bytes(&mut rng, l.mtu);
        b.ack(t, bytes, l.rtt(l.base, uniform(&mut rng, 0.05, 0.5)), false);
        t += ramp_gap(&l, t, start, bytes);
    }
    b.finish(end)
}

/// The fabric's base RTT steps down. For 250 us every RTT sample is the configured base RTT
/// plus a queuing delay: congested for the first 100 us (mostly 0.5 .. 1.8 targets, ECN on
/// 3/4 of the samples above the target, so cwnd is cut below maxwnd), then 0.2 .. 0.8 target
/// and cwnd climbs back to maxwnd. Then the flow is moved to a shorter route: every sample is
/// 2/3 of the configured base RTT plus the delay. The min filter takes the new base at the
/// first shorter sample, maxwnd (1.5 BDP) drops to 2/3 of its old value and cwnd is clamped
/// under it; delays are measured from the new base from then on, and from 350 us the queue is
/// congested again as in the first 100 us. One sample in 20 sees an empty queue throughout.
pub fn base_rtt_drop(cfg: &NicConfig) -> Vec<NsccEvent> {
    let l = Link::new(cfg);
    let mut rng = SplitMix64::new(SEED ^ 5);
    let mut b = Builder::new();
    let mut t = T0;
    let end = T0 + 500_000.0;
    while t < end {
        let us = (t - T0) / 1_000.0;
        let base = if us < 250.0 {
            l.base
        } else {
            l.base * 2.0 / 3.0
        };
        let congested = !(100.0..350.0).contains(&us);
        let bytes = ack_bytes(&mut rng, l.mtu);
        let d = if rng.chance(1, 20) {
            uniform(&mut rng, 0.0, 0.02)
        } else if congested {
            uniform(&mut rng, 0.5, 1.8)
        } else {
            uniform(&mut rng, 0.2, 0.8)
        };
        let ecn = d >= 1.0 && rng.chance(3, 4);
        b.ack(t, bytes, l.rtt(base, d), ecn);
        t += f64::from(bytes) * l.ns_per_byte;
    }
    b.finish(end)
}

// ---------------------------------------------------------------------------------------------
// Fixed vs Reference
// ---------------------------------------------------------------------------------------------

/// cwnd of both levels after one event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    /// Index of the event in the trace.
    pub index: usize,
    /// The event's time, ns.
    pub now: u32,
    pub reference: f64,
    pub fixed: u32,
}

impl Row {
    /// `fixed - reference`, bytes.
    pub fn deviation(&self) -> f64 {
        f64::from(self.fixed) - self.reference
    }

    /// `|fixed - reference| / reference`.
    pub fn relative(&self) -> f64 {
        self.deviation().abs() / self.reference
    }
}

/// A deviation and the event where it happened.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Worst {
    pub value: f64,
    pub index: usize,
    pub now: u32,
}

/// One trace through `Reference` and `Fixed`, event by event.
#[derive(Debug, Clone)]
pub struct TraceComparison {
    pub rows: Vec<Row>,
    /// Largest `|fixed - reference|`, bytes.
    pub worst_abs: Worst,
    /// Largest `|fixed - reference| / reference`.
    pub worst_rel: Worst,
    /// The MTU of the bound.
    pub mtu: u32,
    /// The first event where `|fixed - reference| > max(1 % of reference, 1 MTU)`.
    pub first_violation: Option<usize>,
    /// Both levels after the last event.
    pub reference: Reference,
    pub fixed: Fixed,
}

impl TraceComparison {
    /// The bound held at every event.
    pub fn holds(&self) -> bool {
        self.first_violation.is_none()
    }

    /// Events where the bound does not hold.
    pub fn violations(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| !within_bound(r, self.mtu))
            .count()
    }
}

/// The goal: `|fixed - reference| <= max(1 % of reference, 1 MTU)`.
pub fn within_bound(r: &Row, mtu: u32) -> bool {
    r.deviation().abs() <= (0.01 * r.reference).max(f64::from(mtu))
}

/// Run `events` through a fresh `Reference` and `Fixed` built from `cfg` and compare cwnd
/// after every event.
pub fn compare(cfg: &NicConfig, events: &[NsccEvent]) -> TraceComparison {
    compare_levels(Reference::new(cfg), Fixed::new(cfg), events)
}

/// [`compare`] from given starting states (e.g. a `Reference` of a different config, to show
/// the comparison failing).
pub fn compare_levels(
    mut reference: Reference,
    mut fixed: Fixed,
    events: &[NsccEvent],
) -> TraceComparison {
    let mtu = fixed.k.mtu;
    let mut rows = Vec::with_capacity(events.len());
    let none = Worst {
        value: 0.0,
        index: 0,
        now: 0,
    };
    let (mut worst_abs, mut worst_rel, mut first_violation) = (none, none, None);
    for (index, e) in events.iter().enumerate() {
        reference.apply(e);
        fixed.apply(e);
        let row = Row {
            index,
            now: e.now(),
            reference: reference.cwnd,
            fixed: fixed.cwnd,
        };
        let now = row.now;
        if row.deviation().abs() > worst_abs.value {
            worst_abs = Worst {
                value: row.deviation().abs(),
                index,
                now,
            };
        }
        if row.relative() > worst_rel.value {
            worst_rel = Worst {
                value: row.relative(),
                index,
                now,
            };
        }
        if first_violation.is_none() && !within_bound(&row, mtu) {
            first_violation = Some(index);
        }
        rows.push(row);
    }
    TraceComparison {
        rows,
        worst_abs,
        worst_rel,
        mtu,
        first_violation,
        reference,
        fixed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> NicConfig {
        NicConfig::default()
    }

    fn run(name: &str) -> (Vec<NsccEvent>, TraceComparison) {
        let ev = by_name(&cfg(), name).expect("known trace");
        let c = compare(&cfg(), &ev);
        (ev, c)
    }

    fn min_fixed(c: &TraceComparison) -> u32 {
        c.rows.iter().map(|r| r.fixed).min().expect("rows")
    }

    #[test]
    fn every_trace_is_ordered_sized_and_within_the_bound() {
        for (name, ev) in all(&cfg()) {
            assert!((1_000..=50_000).contains(&ev.len()), "{name}: {}", ev.len());
            assert!(ev.windows(2).all(|w| w[0].now() <= w[1].now()), "{name}");
            assert!(ev.last().unwrap().now() < 1 << 31, "{name}");
            // A TICK at least every microsecond.
            let ticks: Vec<u32> = ev
                .iter()
                .filter(|e| matches!(e, NsccEvent::Tick { .. }))
                .map(|e| e.now())
                .collect();
            assert!(ticks.windows(2).all(|w| w[1] - w[0] == TICK_NS), "{name}");
            let c = compare(&cfg(), &ev);
            assert_eq!(c.rows.len(), ev.len());
            assert!(
                c.holds(),
                "{name}: bound broken at event {:?} ({} events); worst {:?}",
                c.first_violation,
                c.violations(),
                c.worst_abs
            );
        }
    }

    #[test]
    fn traces_are_deterministic_and_names_resolve() {
        assert_eq!(all(&cfg()), all(&cfg()));
        assert!(by_name(&cfg(), "no_such_trace").is_none());
        let names: Vec<&str> = all(&cfg()).iter().map(|(n, _)| *n).collect();
        assert_eq!(names, NAMES);
    }

    #[test]
    fn steady_ramp_quick_adapts_to_one_packet_then_ramps_to_maxwnd() {
        let (_, c) = run("steady_ramp");
        assert_eq!((c.reference.qa_count, c.fixed.qa_count), (1, 1));
        assert_eq!(min_fixed(&c), cfg().mtu);
        assert_eq!(c.fixed.md_count, 0);
        assert_eq!(c.fixed.cwnd, c.fixed.maxwnd);
        assert_eq!(c.reference.cwnd, c.reference.maxwnd);
        // The ramp takes a while (the ACK clock doubles per RTT): half of maxwnd is first
        // reached more than 5 base RTTs after the quick adapt.
        let qa = c.rows.iter().position(|r| r.fixed == cfg().mtu).unwrap();
        let half = qa + c.rows[qa..].iter().position(|r| r.fixed > 900_000).unwrap();
        assert!(c.rows[half].now - c.rows[qa].now > 5 * cfg().base_rtt_ns);
    }

    #[test]
    fn persistent_ecn_cuts_multiplicatively_once_per_base_rtt_at_both_levels() {
        let (ev, c) = run("persistent_ecn");
        assert!(c.fixed.md_count > 10, "{}", c.fixed.md_count);
        assert_eq!(u64::from(c.fixed.md_count), c.reference.md_count);
        assert_eq!(c.fixed.qa_count, 0);
        // Cut well below maxwnd, and recovered after the queue drained.
        assert!(min_fixed(&c) < c.fixed.maxwnd / 8);
        assert!(c.fixed.cwnd > c.fixed.maxwnd / 2);
        // Never more than one cut per base RTT: replay and watch the counter.
        let mut f = Fixed::new(&cfg());
        let mut last_cut: Option<u32> = None;
        for e in &ev {
            let before = f.md_count;
            f.apply(e);
            if f.md_count != before {
                if let Some(t) = last_cut {
                    assert!(e.now() - t > cfg().base_rtt_ns);
                }
                last_cut = Some(e.now());
            }
        }
    }

    #[test]
    fn incast_trims_quick_adapt_and_subtract_nacked_bytes() {
        let (ev, c) = run("incast_trims");
        assert!(c.fixed.qa_count >= 3, "{}", c.fixed.qa_count);
        assert_eq!(u64::from(c.fixed.qa_count), c.reference.qa_count);
        // Some NACKs inside an epoch take exactly their bytes off cwnd.
        let mut f = Fixed::new(&cfg());
        let mut subtracted = 0;
        for e in &ev {
            let (w, qa) = (f.cwnd, f.qa_count);
            f.apply(e);
            if let NsccEvent::Nack { bytes, .. } = *e {
                if f.qa_count == qa && w > bytes + f.k.mtu && f.cwnd == w - bytes {
                    subtracted += 1;
                }
            }
        }
        assert!(subtracted > 50, "{subtracted}");
        assert!(min_fixed(&c) < c.fixed.maxwnd / 16);
    }

    #[test]
    fn rto_storm_takes_a_packet_per_timeout_then_quick_adapts_and_recovers() {
        let (ev, c) = run("rto_storm");
        let mut f = Fixed::new(&cfg());
        let mut rtos = 0;
        for e in &ev {
            let w = f.cwnd;
            f.apply(e);
            if matches!(e, NsccEvent::Rto { .. }) {
                assert_eq!(f.cwnd, w - cfg().mtu);
                rtos += 1;
            }
        }
        assert_eq!(rtos, 10);
        assert_eq!((c.fixed.qa_count, c.reference.qa_count), (1, 1));
        assert!(min_fixed(&c) <= 4 * cfg().mtu, "{}", min_fixed(&c));
        assert!(c.fixed.cwnd > 100 * min_fixed(&c));
    }

    #[test]
    fn base_rtt_drop_moves_the_min_filter_and_maxwnd() {
        let (_, c) = run("base_rtt_drop");
        let base = cfg().base_rtt_ns;
        assert!(
            c.fixed.base_rtt < base * 2 / 3 + 200,
            "{}",
            c.fixed.base_rtt
        );
        assert_eq!(f64::from(c.fixed.base_rtt), c.reference.base_rtt);
        assert_eq!(f64::from(c.fixed.maxwnd), c.reference.maxwnd);
        let initial = Fixed::new(&cfg()).maxwnd;
        assert!(c.fixed.maxwnd < initial * 7 / 10, "{}", c.fixed.maxwnd);
        assert!(c.fixed.md_count > 0);
        assert_eq!(u64::from(c.fixed.md_count), c.reference.md_count);
    }

    #[test]
    fn the_bound_is_one_percent_or_one_mtu() {
        let row = |reference: f64, fixed: u32| Row {
            index: 0,
            now: 0,
            reference,
            fixed,
        };
        assert!(within_bound(&row(1_000_000.0, 1_010_000), 4096));
        assert!(!within_bound(&row(1_000_000.0, 1_010_001), 4096));
        assert!(within_bound(&row(100_000.0, 95_904), 4096));
        assert!(!within_bound(&row(100_000.0, 95_903), 4096));
    }

    #[test]
    fn the_comparison_fails_against_a_reference_of_another_config() {
        // Without trimming the target is a whole RTT instead of 0.75: the same events give a
        // different window, and the comparison must say so.
        let no_trim = NicConfig {
            trimming: false,
            ..cfg()
        };
        let ev = persistent_ecn(&cfg());
        let c = compare_levels(Reference::new(&no_trim), Fixed::new(&cfg()), &ev);
        assert!(!c.holds());
        assert!(c.violations() > 100, "{}", c.violations());
        assert!(c.worst_rel.value > 0.05, "{:?}", c.worst_rel);
    }
}
