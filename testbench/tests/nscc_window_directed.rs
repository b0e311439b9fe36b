//! Directed scenarios for `nscc_window`, each run on the RTL in lockstep with the model
//! (`NsccRig` panics on any divergence), with the expected numbers worked out here from the
//! config's fixed-point constants (`NsccFixed`) and the reciprocal table.

use mrc_config::nscc::{recip_table, NsccFixed, RECIP_FRAC, RECIP_INDEX_BITS};
use mrc_config::NicConfig;
use mrc_model::nscc::{
    NsccEvent, WindowInputs, EVENT_CYCLES, FIELD_MAX, FULFILL_CYCLES, KIND_NACK, KIND_RTO,
    MD_CYCLES,
};
use mrc_testbench::NsccRig;

fn k() -> NsccFixed {
    NsccFixed::new(&NicConfig::default())
}

fn ack(now: u32, bytes: u32, rtt_ns: u32, ecn: bool) -> NsccEvent {
    NsccEvent::Ack {
        now,
        bytes,
        rtt_ns,
        ecn,
        penalty: 0,
    }
}

fn run(evs: &[NsccEvent]) -> mrc_testbench::EventRun {
    NsccRig::new(&NicConfig::default()).run_events(evs)
}

/// `x / cwnd` the way the RTL divides: min(x >> (p - 2), 2^34 - 1) * table[i] >> 13, p the
/// leading one of cwnd and i the 10 bits under it.
fn div_by_cwnd(x: u64, cwnd: u32) -> u64 {
    let p = 31 - cwnd.leading_zeros();
    let i = ((cwnd >> (p - RECIP_INDEX_BITS)) & ((1 << RECIP_INDEX_BITS) - 1)) as usize;
    let xs = (x >> (p - 2)).min((1 << 34) - 1);
    (xs * u64::from(recip_table()[i])) >> (RECIP_FRAC + 2 - RECIP_INDEX_BITS)
}

/// The fair-increase accumulator step for `bytes`: fi x bytes, fi as mantissa << shift.
fn fair_step(bytes: u64) -> u64 {
    (bytes * u64::from(k().fi_m)) << k().fi_e
}

/// The proportional accumulator step: alpha x bytes x (target - delay), alpha as mantissa <<
/// shift in Q16, the byte-ns product shifted right 7 first.
fn prop_step(bytes: u64, delay: u32) -> u64 {
    let k = k();
    (((bytes * u64::from(k.target_ns - delay)) >> 7) * u64::from(k.alpha_m)) >> (9 - k.alpha_e)
}

/// One EWMA step of the Q24.8 average towards `delay` ns (rounding towards the old value).
fn ewma(avg_q8: u32, delay: u32) -> u32 {
    let (d, a, w) = (
        u64::from(delay) << 8,
        u64::from(avg_q8),
        u64::from(k().ewma_q16),
    );
    if d >= a {
        (a + (((d - a) * w) >> 16)) as u32
    } else {
        (a - (((a - d) * w) >> 16)) as u32
    }
}

/// Bring cwnd down from maxwnd: an ACK opens the quick-adapt epoch, a trim NACK after the
/// epoch closes it with nothing achieved (cwnd = MTU, accumulator cleared), an ACK of 0 bytes
/// a base RTT after time 0 runs a timed fulfill that adds eta (and sets the last adjust to
/// `start + 38_000`).
fn from_low_window(start: u32) -> Vec<NsccEvent> {
    vec![
        ack(start, 4096, 12_000, false),
        NsccEvent::Nack {
            now: start + 30_000,
            bytes: 4096,
        },
        ack(start + 38_000, 0, 12_000, false),
    ]
}

/// cwnd after `from_low_window`: MTU + eta.
fn low_cwnd() -> u32 {
    k().mtu + k().eta
}

/// The power-on state is the reset state: events straight after power-on, no `rst` ever,
/// agree with the model (whose power-on state is `Fixed::new`) every cycle.
#[test]
fn power_on_state_is_the_reset_state_without_a_reset() {
    let cfg = NicConfig::default();
    let mut rig = NsccRig::new(&cfg);
    let mut inputs = Vec::new();
    for c in 0..200u32 {
        inputs.push(WindowInputs {
            ev_valid: true,
            ev_kind: if c % 3 == 0 { 0 } else { 3 },
            ev_bytes: 4096,
            ev_rtt_ns: 12_000 + 500 * (c % 7),
            now_ns: 1_000 * c,
            inflight: 1_000_000,
            next_len: 4096,
            ..WindowInputs::default()
        });
    }
    let log = rig.run(&inputs);
    assert_eq!(log[0].cwnd, 1_800_000);
    assert!(log[0].can_send && log.iter().any(|y| y.cnt_events > 5));
}

#[test]
fn reset_gives_one_and_a_half_bdp() {
    let k = k();
    let cfg = NicConfig::default();
    let r = run(&[]);
    let y = *r.log.last().unwrap();
    // 1.5 BDP = 1.5 x link_gbps x base_rtt / 8 bytes = 1.5 x 800 x 12,000 / 8.
    let bdp = u64::from(cfg.link_gbps) * u64::from(cfg.base_rtt_ns) / 8;
    assert_eq!(u64::from(y.cwnd), bdp * 3 / 2);
    assert_eq!(y.cwnd, 1_800_000);
    assert_eq!(y.cwnd, k.init_cwnd);
    assert_eq!(y.maxwnd, y.cwnd);
    assert_eq!(y.base_rtt_ns, cfg.base_rtt_ns);
    assert_eq!(
        (y.avg_delay_q8, y.cnt_events, y.cnt_md, y.cnt_qa),
        (0, 0, 0, 0)
    );
    assert!(y.ev_ready);
}

#[test]
fn an_rto_takes_exactly_one_mtu_and_storms_stop_at_one_mtu() {
    let k = k();
    let r = run(&[NsccEvent::Rto { now: 5 }, NsccEvent::Rto { now: 6 }]);
    assert_eq!(r.after[0].cwnd, 1_800_000 - k.mtu);
    assert_eq!(r.after[1].cwnd, 1_800_000 - 2 * k.mtu);
    assert_eq!(r.cycles, vec![EVENT_CYCLES as usize; 2]);
    assert_eq!((r.after[1].cnt_events, r.after[1].cnt_qa), (2, 0));
    // 1.8 MB / 4096 = 439.45 RTOs to the floor.
    let storm: Vec<_> = (0..450).map(|i| NsccEvent::Rto { now: i }).collect();
    let r = run(&storm);
    for (n, y) in r.after.iter().enumerate() {
        let want = 1_800_000u32
            .saturating_sub((n as u32 + 1) * k.mtu)
            .max(k.mtu);
        assert_eq!(y.cwnd, want, "after RTO {n}");
    }
    assert_eq!(r.after[449].cnt_events, 450);
}

#[test]
fn a_trim_quick_adapts_to_mtu_and_ticks_fulfill_only_after_acked_bytes() {
    let k = k();
    let e = EVENT_CYCLES as usize;
    let ef = (EVENT_CYCLES + FULFILL_CYCLES) as usize;
    let r = run(&[
        ack(1_000, 4096, 12_000, false),
        NsccEvent::Nack {
            now: 31_000,
            bytes: 4096,
        },
        // A base RTT since the last adjust (0) but nothing acked since the last fulfill (the
        // quick adapt cleared the count): no fulfill, no eta.
        NsccEvent::Tick { now: 39_000 },
        // A 0-byte ACK: the timed fulfill runs (empty accumulator) and adds eta.
        ack(39_000, 0, 12_000, false),
        // Within a base RTT of that adjust: nothing.
        NsccEvent::Tick { now: 45_000 },
        // 4 KB acked at delay 0 (proportional, into the accumulator; no fulfill yet).
        ack(46_000, 4096, 12_000, false),
        // A base RTT + 1 ns after the adjust, bytes acked: fulfill + eta.
        NsccEvent::Tick { now: 51_001 },
    ]);
    // The ACK: delay 0, proportional increase into the accumulator; cwnd stays at maxwnd.
    assert_eq!(r.after[0].cwnd, 1_800_000);
    // The NACK closes the epoch with 0 bytes achieved: cwnd = max(0, MTU).
    assert_eq!(r.after[1].cwnd, k.mtu);
    assert_eq!(r.after[1].cnt_qa, 1);
    assert_eq!(r.after[2].cwnd, k.mtu);
    assert_eq!(r.after[3].cwnd, low_cwnd());
    assert_eq!(r.after[3].cwnd, 4096 + 4915);
    assert_eq!(r.after[4].cwnd, low_cwnd());
    assert_eq!(r.after[5].cwnd, low_cwnd());
    let want = low_cwnd() + div_by_cwnd(prop_step(4096, 0), low_cwnd()) as u32 + k.eta;
    assert_eq!(r.after[6].cwnd, want);
    assert_eq!(r.cycles, vec![e, e, e, ef, e, e, ef]);
    assert_eq!(r.after[6].cnt_events, 7);
}

#[test]
fn quick_adapt_sets_cwnd_to_the_bytes_achieved_in_the_epoch() {
    let k = k();
    // Epoch opened at 1 us (ends at 1 + 12 + 9 = 22 us); 10 x 16 KB achieved in it; a trim at
    // 30 us: 163,840 < maxwnd / 8 = 225,000, so cwnd = 163,840.
    let mut ev = vec![ack(1_000, 4096, 12_000, false)];
    for i in 0..10 {
        ev.push(ack(2_000 + i * 100, 16_384, 12_000, false));
    }
    ev.push(NsccEvent::Nack {
        now: 30_000,
        bytes: 4096,
    });
    let r = run(&ev);
    let y = r.after[11];
    assert_eq!(y.cwnd, 163_840);
    assert_eq!(y.cnt_qa, 1);
    // Above the gate (75 x 4 KB = 300 KB > 225 KB): no quick adapt, the NACK takes its bytes.
    let mut ev = vec![ack(1_000, 4096, 12_000, false)];
    for i in 0..75 {
        ev.push(ack(2_000 + i * 100, 4096, 12_000, false));
    }
    ev.push(NsccEvent::Nack {
        now: 40_000,
        bytes: 4096,
    });
    let r = run(&ev);
    assert_eq!(r.after[75].cwnd, 1_800_000);
    assert_eq!(r.after[76].cwnd, 1_800_000 - k.mtu);
    assert_eq!(r.after[76].cnt_qa, 0);
}

/// 9 ACKs of 4 KB at `rtt` 50 ns apart after `from_low_window`: the 9th passes 8 MTU received
/// and fulfills. Returns (run, expected cwnd after the 9th) given the per-ACK accumulator step.
fn nine_acks(rtt: u32, inc_step: u64) -> (mrc_testbench::EventRun, u32) {
    let mut ev = from_low_window(1_000);
    for i in 0..9 {
        ev.push(ack(40_000 + i * 50, 4096, rtt, false));
    }
    let r = run(&ev);
    let w0 = low_cwnd();
    for n in 3..11 {
        assert_eq!(
            r.after[n].cwnd, w0,
            "no change before the fulfill (ACK {n})"
        );
        assert_eq!(r.cycles[n], EVENT_CYCLES as usize);
    }
    assert_eq!(r.cycles[11], (EVENT_CYCLES + FULFILL_CYCLES) as usize);
    let want = w0 + div_by_cwnd(9 * inc_step, w0) as u32;
    (r, want)
}

#[test]
fn fair_increase_above_target_without_ecn() {
    let k = k();
    // delay 20 us >= target 9 us: inc += fi x acked.
    let (r, want) = nine_acks(32_000, fair_step(4096));
    assert_eq!(r.after[11].cwnd, want);
    // Within 0.1 % of the real quotient: w0 + fi x 36,864 / w0.
    let real = f64::from(low_cwnd()) + f64::from(k.fi) * 36_864.0 / f64::from(low_cwnd());
    assert!(
        (f64::from(want) / real - 1.0).abs() < 1e-3,
        "{want} vs {real}"
    );
}

#[test]
fn proportional_increase_below_target_scales_with_the_gap() {
    let step = |delay: u32| prop_step(4096, delay);
    let (near, want_near) = nine_acks(12_000 + 8_000, step(8_000));
    let (far, want_far) = nine_acks(12_000 + 2_000, step(2_000));
    assert_eq!(near.after[11].cwnd, want_near);
    assert_eq!(far.after[11].cwnd, want_far);
    let g = |w: u32| f64::from(w - low_cwnd());
    // The gain is proportional to target - delay: 7 us vs 1 us.
    assert!((g(want_far) / g(want_near) - 7.0).abs() < 0.01);
}

#[test]
fn fast_increase_after_a_window_below_one_microsecond() {
    let k = k();
    // delay 0.5 us. The low-window ACK left 4 KB counted; ACK 1 brings it to 8 KB, not above
    // cwnd (9,011): proportional. ACK 2: 12 KB > cwnd: fast increase from here on, cwnd +=
    // acked x fi_scale (2.0 = 512 in Q8) per ACK.
    let mut ev = from_low_window(1_000);
    for i in 0..4 {
        ev.push(ack(40_000 + i * 10, 4096, 12_500, false));
    }
    let r = run(&ev);
    let inc = (4096 * u64::from(k.fi_scale_q8)) >> 8;
    assert_eq!(inc, 8192);
    assert_eq!(r.after[3].cwnd, low_cwnd());
    for n in 1..4u32 {
        assert_eq!(r.after[3 + n as usize].cwnd, low_cwnd() + n * inc as u32);
    }
    // A long calm stretch climbs to maxwnd and stays there.
    let mut ev = from_low_window(1_000);
    for i in 0..400 {
        ev.push(ack(40_000 + i * 10, 16_384, 12_500, false));
    }
    let r = run(&ev);
    assert_eq!(r.after.last().unwrap().cwnd, 1_800_000);
}

#[test]
fn multiplicative_decrease_once_per_base_rtt_with_a_floor_of_half() {
    let k = k();
    // 20 fair-increase ACKs at delay 200 us drive the average far above target (past 24 us,
    // where 1 - 0.8 (avg - target) / avg falls under the 0.5 floor); cwnd stays at maxwnd.
    let mut ev = Vec::new();
    for i in 0..20 {
        ev.push(ack(13_000 + i * 100, 4096, 212_000, false));
    }
    // ECN above target, a base RTT after time 0: one cut, to exactly half.
    ev.push(ack(15_100, 4096, 212_000, true));
    // Again 100 ns later: within a base RTT of the last cut, no cut.
    ev.push(ack(15_200, 4096, 212_000, true));
    // A base RTT + 1 ns after the first cut: cut again.
    ev.push(ack(15_100 + 12_001, 4096, 212_000, true));
    let r = run(&ev);
    let mut avg = 0;
    for (n, y) in r.after.iter().enumerate() {
        avg = ewma(avg, 200_000);
        assert_eq!(y.avg_delay_q8, avg, "average after ACK {n}");
    }
    assert!(r.after[19].avg_delay_q8 > 24_000 << 8);
    assert_eq!(r.after[19].cwnd, 1_800_000);
    assert_eq!(r.after[20].cwnd, 900_000);
    assert_eq!(r.after[20].cnt_md, 1);
    assert_eq!(r.cycles[20], (EVENT_CYCLES + MD_CYCLES) as usize);
    assert_eq!(r.after[21].cnt_md, 1);
    assert_eq!(r.after[21].cwnd, 900_000);
    assert_eq!(r.cycles[21], EVENT_CYCLES as usize);
    // The third cut also finds a base RTT since the last adjust (13 us): a timed fulfill adds
    // the accumulator (fi x 4 KB from ACK 19, the last before the ECN ones) over cwnd, and eta.
    assert_eq!(r.after[22].cnt_md, 2);
    let h = 450_000;
    let want = h + div_by_cwnd(fair_step(4096), h) as u32 + k.eta;
    assert_eq!(r.after[22].cwnd, want);
    assert_eq!(
        r.cycles[22],
        (EVENT_CYCLES + MD_CYCLES + FULFILL_CYCLES) as usize
    );
    assert_eq!(r.after[22].cnt_qa, 0);
}

#[test]
fn multiplicative_decrease_above_the_floor_uses_the_table() {
    let k = k();
    // 40 ACKs at delay 30 us (below the quick-adapt threshold of 36 us): avg ~ 11.8 us.
    let mut ev = Vec::new();
    for i in 0..40 {
        ev.push(ack(13_000 + i * 100, 4096, 42_000, false));
    }
    ev.push(ack(17_100, 4096, 42_000, true));
    let r = run(&ev);
    let avg = r.after[40].avg_delay_q8;
    assert!(avg > k.target_ns << 8 && avg < 24_000 << 8, "{avg}");
    // f = (1 - gamma) + gamma x target / avg, the division by the table, in Q16.
    let p = 31 - avg.leading_zeros();
    let i = ((avg >> (p - RECIP_INDEX_BITS)) & 1023) as usize;
    let gts = (k.gamma_target_q24 >> (p - 16)) & ((1 << 33) - 1);
    let gt = (gts * u64::from(recip_table()[i])) >> (RECIP_FRAC + 16 - RECIP_INDEX_BITS);
    let f = (65536 - u64::from(k.gamma_q16)) + gt.min(65536);
    let real = 1.0 - 0.8 * (f64::from(avg) / 256.0 - 9000.0) / (f64::from(avg) / 256.0);
    assert!((f as f64 / 65536.0 - real).abs() < 2e-3, "{f} vs {real}");
    let before = r.after[39].cwnd;
    assert_eq!(before, 1_800_000);
    assert_eq!(r.after[40].cwnd, ((u64::from(before) * f) >> 16) as u32);
    assert_eq!(r.after[40].cnt_md, 1);
}

#[test]
fn ecn_below_target_leaves_the_window_alone() {
    let mut ev = from_low_window(1_000);
    ev.push(ack(40_000, 4096, 13_000, true));
    let r = run(&ev);
    assert_eq!(r.after[3].cwnd, low_cwnd());
    assert_eq!(r.after[3].cnt_md, 0);
    assert_eq!(r.cycles[3], EVENT_CYCLES as usize);
}

#[test]
fn a_lower_rtt_moves_base_and_maxwnd_and_zero_is_no_sample() {
    let k = k();
    let r = run(&[
        ack(1_000, 4096, 0, false),
        ack(2_000, 4096, 6_000, false),
        ack(3_000, 4096, 9_000, false),
        ack(4_000, 4096, 0, false),
    ]);
    // No sample: base and average untouched.
    assert_eq!(r.after[0].base_rtt_ns, 12_000);
    assert_eq!(r.after[0].avg_delay_q8, 0);
    // 6 us: maxwnd = 6,000 x 150 B/ns = 900 KB, and cwnd is clamped to it.
    let mw = ((6_000u64 * u64::from(k.maxwnd_per_ns_q8)) >> 8) as u32;
    assert_eq!(mw, 900_000);
    assert_eq!(r.after[1].base_rtt_ns, 6_000);
    assert_eq!((r.after[1].maxwnd, r.after[1].cwnd), (mw, mw));
    // A larger sample never raises it; its delay (3 us) enters the average.
    assert_eq!(r.after[2].base_rtt_ns, 6_000);
    assert_eq!(r.after[2].avg_delay_q8, ewma(0, 3_000));
    assert_eq!(r.after[2].avg_delay_q8, 9_597);
    assert_eq!(r.after[3].base_rtt_ns, 6_000);
    assert_eq!(r.after[3].avg_delay_q8, 9_597);
    // A 1 ns sample: maxwnd floors at one MTU.
    let r = run(&[ack(1_000, 4096, 1, false)]);
    assert_eq!((r.after[0].maxwnd, r.after[0].cwnd), (k.mtu, k.mtu));
}

#[test]
fn extreme_24_bit_fields_do_not_overflow() {
    let k = k();
    // Biggest ACK: 16 MB acked, the largest RTT, penalty 127/128 of it (more than the window):
    // cwnd floors at MTU, then the byte-triggered fulfill adds fi x 16 MB / MTU and clamps.
    let r = run(&[NsccEvent::Ack {
        now: 1_000,
        bytes: FIELD_MAX,
        rtt_ns: FIELD_MAX,
        ecn: false,
        penalty: 127,
    }]);
    let y = r.after[0];
    let inc = fair_step(u64::from(FIELD_MAX));
    assert!(u64::from(k.mtu) + div_by_cwnd(inc, k.mtu) > 1_800_000);
    assert_eq!(y.cwnd, 1_800_000);
    assert_eq!(y.base_rtt_ns, 12_000);
    assert_eq!(y.avg_delay_q8, ewma(0, FIELD_MAX - 12_000));
    assert_eq!(r.cycles[0], (EVENT_CYCLES + FULFILL_CYCLES) as usize);
    // The same with ECN: an MD (avg 207 us > target) to half, then the penalty takes
    // everything: MTU. The fulfill adds nothing (ECN adds no increase): MTU.
    let r = run(&[NsccEvent::Ack {
        now: 13_000,
        bytes: FIELD_MAX,
        rtt_ns: FIELD_MAX,
        ecn: true,
        penalty: 127,
    }]);
    assert_eq!(r.after[0].cnt_md, 1);
    assert_eq!(r.after[0].cwnd, k.mtu + k.eta);
    assert_eq!(
        r.cycles[0],
        (EVENT_CYCLES + MD_CYCLES + FULFILL_CYCLES) as usize
    );
    // The biggest trim: the first NACK opens the epoch and subtracts, to the MTU floor.
    let r = run(&[NsccEvent::Nack {
        now: 5,
        bytes: FIELD_MAX,
    }]);
    assert_eq!(r.after[0].cwnd, k.mtu);
    // An RTT sample of 2^24 - 1 below nothing: base RTT keeps 12 us; now near the wrap.
    let r = run(&[
        ack(u32::MAX - 100, 4096, FIELD_MAX, false),
        ack(50, 4096, 12_000, false),
    ]);
    assert_eq!(r.after[1].base_rtt_ns, 12_000);
    assert!(r.after[1].cwnd <= r.after[1].maxwnd);
}

#[test]
fn events_offered_while_busy_are_not_taken_and_results_show_after_the_event() {
    let cfg = NicConfig::default();
    let k = k();
    let rto = WindowInputs {
        ev_valid: true,
        ev_kind: KIND_RTO,
        now_ns: 100,
        ..WindowInputs::default()
    };
    let nack = WindowInputs {
        ev_valid: true,
        ev_kind: KIND_NACK,
        ev_bytes: FIELD_MAX,
        now_ns: 100,
        ..WindowInputs::default()
    };
    let idle = WindowInputs::default();
    let rst = WindowInputs {
        rst: true,
        ..WindowInputs::default()
    };
    // Edge 2: RTO taken (6 clocks: not ready after edges 2..=6, ready after 7, result shown
    // after 8). Edges 3..=7: a huge NACK offered while busy, never taken. Then idle. Then a
    // reset with an event offered (not taken).
    let mut x = vec![rst, rst, rto];
    x.extend(std::iter::repeat_n(nack, 5));
    x.extend(std::iter::repeat_n(idle, 20));
    x.push(WindowInputs { rst: true, ..nack });
    x.extend(std::iter::repeat_n(idle, 5));
    let y = NsccRig::new(&cfg).run(&x);
    let ready: Vec<usize> = (0..28).filter(|&c| y[c].ev_ready).collect();
    let mut want = vec![0, 1];
    want.extend(1 + EVENT_CYCLES as usize..28);
    assert_eq!(ready, want);
    let t = 2 + EVENT_CYCLES as usize;
    for (c, yc) in y.iter().enumerate().take(28) {
        let shown = c >= t;
        assert_eq!(
            yc.cwnd,
            if shown { 1_800_000 - k.mtu } else { 1_800_000 },
            "{c}"
        );
        assert_eq!(yc.cnt_events, u32::from(shown), "{c}");
    }
    // After the reset: back to the initial window, nothing taken.
    for yc in &y[28..] {
        assert_eq!((yc.cwnd, yc.cnt_events), (1_800_000, 0));
        assert!(yc.ev_ready);
    }
}

#[test]
fn a_reset_mid_event_loses_it() {
    let rto = WindowInputs {
        ev_valid: true,
        ev_kind: KIND_RTO,
        now_ns: 100,
        ..WindowInputs::default()
    };
    let idle = WindowInputs::default();
    let rst = WindowInputs {
        rst: true,
        ..WindowInputs::default()
    };
    let mut x = vec![rst, rst, rto, idle, idle, rst];
    x.extend(std::iter::repeat_n(idle, 20));
    let y = NsccRig::new(&NicConfig::default()).run(&x);
    for (c, yc) in y.iter().enumerate() {
        assert_eq!((yc.cwnd, yc.cnt_events), (1_800_000, 0), "{c}");
    }
    assert!(y[5..].iter().all(|y| y.ev_ready));
}

#[test]
fn can_send_is_next_len_fitting_in_the_window() {
    let k = k();
    let w = 1_800_000u32;
    let cases = [
        (w - k.mtu, k.mtu, true),
        (w - k.mtu + 1, k.mtu, false),
        (0, 0, false),
        (w, 0, false),
        (0, 0xFFFF, true),
        (u32::MAX, 1, false),
        (u32::MAX - 0xFFFE, 0xFFFF, false),
        (w - 1, 1, true),
    ];
    let mut x = vec![
        WindowInputs {
            rst: true,
            ..WindowInputs::default()
        };
        2
    ];
    for &(inflight, next_len, _) in &cases {
        x.push(WindowInputs {
            inflight,
            next_len,
            ..WindowInputs::default()
        });
    }
    let y = NsccRig::new(&NicConfig::default()).run(&x);
    for (n, &(inflight, next_len, want)) in cases.iter().enumerate() {
        assert_eq!(
            y[2 + n].can_send,
            want,
            "inflight {inflight} next_len {next_len}"
        );
    }
}

#[test]
fn the_other_config_starts_at_its_own_bdp_and_takes_a_jumbo_mtu_per_rto() {
    let cfg = NicConfig {
        link_gbps: 400,
        mtu: 9216,
        trimming: false,
        base_rtt_ns: 4000,
        ..NicConfig::default()
    };
    cfg.validate().unwrap();
    let k = NsccFixed::new(&cfg);
    // 1.5 x 400 x 4,000 / 8 = 300 KB.
    assert_eq!(k.init_cwnd, 300_000);
    let r = NsccRig::new(&cfg).run_events(&[NsccEvent::Rto { now: 1 }]);
    assert_eq!(r.log[2].cwnd, 300_000);
    assert_eq!(r.after[0].cwnd, 300_000 - 9216);
}
