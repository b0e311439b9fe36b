//! Property cosim of `nscc_window`: seeded random event streams from `NsccTraffic` (calm,
//! proportional, fair and congested ACK stretches, trim-NACK / RTO storms, TICKs, extremes,
//! base-RTT drops, `now_ns` jumps and wrap, events held while not ready, mid-run resets).
//! Every cycle the RTL must equal the model, and the outputs must satisfy the window's
//! invariants: MTU <= cwnd <= maxwnd, base RTT never rises except at reset, the `ev_ready`
//! cadence (6 / 9 / 11 / 14 clocks per event), `cnt_events` counts taken events, `can_send`
//! is its formula, and the shown state is the event-level `Fixed` replay of the taken events.

use mrc_config::nscc::NsccFixed;
use mrc_config::NicConfig;
use mrc_cosim::modules::nscc_window::{NsccMix, NsccTraffic};
use mrc_model::nscc::{
    Fixed, NsccWindow, WindowInputs, WindowOutputs, EVENT_CYCLES, FULFILL_CYCLES, MD_CYCLES,
};
use mrc_testbench::NsccRig;
use proptest::prelude::*;

const CYCLES: usize = 20_000;

/// `make test` is reproducible: a fixed seed unless PROPTEST_RNG_SEED asks for another.
fn config(cases: u32) -> ProptestConfig {
    let rng_seed = if std::env::var_os("PROPTEST_RNG_SEED").is_some() {
        ProptestConfig::default().rng_seed
    } else {
        proptest::test_runner::RngSeed::Fixed(0x4E53_4343)
    };
    ProptestConfig {
        cases,
        failure_persistence: None,
        rng_seed,
        ..ProptestConfig::default()
    }
}

/// 400 Gb/s, jumbo MTU, no trimming, 4 us base RTT (passes config validation).
fn other_cfg() -> NicConfig {
    let c = NicConfig {
        link_gbps: 400,
        mtu: 9216,
        trimming: false,
        base_rtt_ns: 4000,
        ..NicConfig::default()
    };
    c.validate().expect("valid config");
    c
}

/// The slow end of the config space: 25 Gb/s, 100 us base RTT, 1 KB MTU.
fn slow_cfg() -> NicConfig {
    let c = NicConfig {
        link_gbps: 25,
        mtu: 1024,
        base_rtt_ns: 100_000,
        ..NicConfig::default()
    };
    c.validate().expect("valid config");
    c
}

/// The invariants, cycle by cycle, on one run (`log[c]` = outputs after edge `c`). For a
/// one-context window (one QP): no switch is ever acted on, and clearing context 0 is a reset.
fn check_invariants(
    cfg: &NicConfig,
    seq: &[WindowInputs],
    log: &[WindowOutputs],
) -> Result<(), String> {
    assert_eq!(cfg.qps, 1, "the replay follows one context");
    let k = NsccFixed::new(cfg);
    let lens = [
        EVENT_CYCLES,
        EVENT_CYCLES + MD_CYCLES,
        EVENT_CYCLES + FULFILL_CYCLES,
        EVENT_CYCLES + MD_CYCLES + FULFILL_CYCLES,
    ];
    // Event-level replay: `state` has every taken event applied, `shown` the ones whose result
    // is on the outputs; `busy` = (edge after which the event in flight shows `ev_ready`, its
    // state). An event taken at edge t of length L: not ready after edges t .. t+L-2, ready
    // after t+L-1, its result shown after t+L.
    let mut state = Fixed::new(cfg);
    let mut shown = state;
    let mut busy: Option<(usize, Fixed)> = None;
    let mut taken_since_reset = 0u32;
    for (c, (x, y)) in seq.iter().zip(log).enumerate() {
        let fail = |m: String| Err(format!("cycle {c}: {m}\n inputs {x:?}\n outputs {y:?}"));
        // The edge.
        let reset = x.rst || x.ctx_clr & 1 != 0;
        if reset {
            state = Fixed::new(cfg);
            shown = state;
            busy = None;
            taken_since_reset = 0;
        } else {
            let ready = busy.as_ref().is_none_or(|(r, _)| *r + 1 == c);
            if c > 0 && ready != log[c - 1].ev_ready {
                return fail("ev_ready before this edge disagrees with the replay".into());
            }
            if let Some((r, s)) = &busy {
                if *r + 1 == c {
                    shown = *s;
                    busy = None;
                }
            }
            if ready && x.ev_valid {
                let len = state.apply(&x.event()).cycles();
                if !lens.contains(&len) {
                    return fail(format!("event length {len}"));
                }
                taken_since_reset += 1;
                busy = Some((c + len as usize - 1, state));
            }
        }
        // The outputs after it.
        if y.cwnd < k.mtu || y.cwnd > y.maxwnd {
            return fail(format!("cwnd {} outside [MTU {}, maxwnd]", y.cwnd, k.mtu));
        }
        if c > 0 && y.base_rtt_ns > log[c - 1].base_rtt_ns && !reset {
            return fail(format!(
                "base RTT rose {} -> {} without a reset",
                log[c - 1].base_rtt_ns,
                y.base_rtt_ns
            ));
        }
        let want_send = x.next_len > 0
            && u64::from(x.inflight) + u64::from(x.next_len & 0xFFFF) <= u64::from(y.cwnd);
        if y.can_send != want_send {
            return fail(format!("can_send {} expected {want_send}", y.can_send));
        }
        // ev_ready: high exactly when no event is in flight or it is in its last clock.
        let want_ready = busy.as_ref().is_none_or(|(r, _)| *r == c);
        if y.ev_ready != want_ready {
            return fail(format!("ev_ready {} expected {want_ready}", y.ev_ready));
        }
        // The shown state is the replay of the events completed so far.
        let got = (
            y.cwnd,
            y.maxwnd,
            y.base_rtt_ns,
            y.avg_delay_q8,
            y.cnt_events,
            y.cnt_md,
            y.cnt_qa,
        );
        let want = (
            shown.cwnd,
            shown.maxwnd,
            shown.base_rtt,
            shown.avg_q8,
            shown.events,
            shown.md_count,
            shown.qa_count,
        );
        if got != want {
            return fail(format!(
                "shown (cwnd, maxwnd, base, avg_q8, events, md, qa) {got:?}, \
                 event-level replay {want:?}"
            ));
        }
        if y.cnt_events > taken_since_reset {
            return fail(format!(
                "cnt_events {} but {taken_since_reset} taken",
                y.cnt_events
            ));
        }
    }
    Ok(())
}

fn run_case(cfg: &NicConfig, seed: u64, mix: NsccMix, cycles: usize) -> Result<(), TestCaseError> {
    let mut rig = NsccRig::new(cfg);
    let mut t = NsccTraffic::new(cfg, seed, mix);
    let seq: Vec<WindowInputs> = (0..cycles as u64).map(|c| t.next_inputs(c)).collect();
    let (report, log) = rig.run_report(&seq);
    if let Some(d) = report.divergence {
        return Err(TestCaseError::fail(format!(
            "RTL diverged from the model (seed {seed}, {mix:?}):\n{d}"
        )));
    }
    prop_assert_eq!(report.cycles_run, cycles as u64);
    check_invariants(cfg, &seq, &log).map_err(TestCaseError::fail)?;
    Ok(())
}

prop_compose! {
    fn mix()(offer_pct in 5u64..=100, hold_pct in 0u64..=100, ns_step_max in 0u32..=400,
             jumps in 0u64..=3000, resets in 0u64..=3000, near_wrap in any::<bool>(),
             extreme_pct in 0u64..=30, below_base in 0u64..=30, tick_pct in 0u64..=30,
             w in prop::array::uniform6(0u64..=10), stretch_max in 1u32..=500,
             slow in 0u64..=100) -> NsccMix {
        NsccMix {
            offer_pct, hold_pct, ns_step_max,
            jumps_per_million: jumps,
            resets_per_million: resets,
            near_wrap, extreme_pct,
            below_base_permille: below_base,
            tick_pct,
            stretch_weights: if w.iter().all(|&v| v == 0) { [1; 6] } else { w },
            stretch_max,
            slow_stretch_pct: slow,
        }
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// Default config, random mixes.
    #[test]
    fn rtl_equals_model_and_keeps_invariants(seed in any::<u64>(), mix in mix()) {
        run_case(&NicConfig::default(), seed, mix, CYCLES)?;
    }
}

proptest! {
    #![proptest_config(config(128))]

    /// 400 Gb/s, MTU 9216, no trimming, 4 us base RTT, random mixes.
    #[test]
    fn rtl_equals_model_other_config(seed in any::<u64>(), mix in mix()) {
        run_case(&other_cfg(), seed, mix, CYCLES)?;
    }
}

proptest! {
    #![proptest_config(config(48))]

    /// 25 Gb/s, 1 KB MTU, 100 us base RTT, random mixes.
    #[test]
    fn rtl_equals_model_slow_config(seed in any::<u64>(), mix in mix()) {
        run_case(&slow_cfg(), seed, mix, CYCLES)?;
    }
}

/// The default mix for long enough that cwnd travels between both clamps many times.
#[test]
fn long_default_stream_both_configs() {
    for (cfg, seed) in [(NicConfig::default(), 1u64), (other_cfg(), 2)] {
        for near_wrap in [false, true] {
            let mix = NsccMix {
                near_wrap,
                ..NsccMix::default()
            };
            run_case(&cfg, seed, mix, 1_000_000).unwrap();
        }
    }
}

/// Three contexts (the window `core_small`'s three QPs share): the stream switches contexts
/// about once per 300 cycles, to every context and to numbers past them (refused), and
/// clears some now and then; RTL and model agree every cycle. (The event-level checker
/// above follows one context, so this is lockstep only; a context saved or loaded wrong
/// shows as a divergence within a few thousand cycles.)
#[test]
fn rtl_equals_model_with_three_contexts() {
    let cfg = NicConfig {
        qps: 3,
        ..NicConfig::default()
    };
    for seed in [1u64, 2, 3] {
        let mut rig = NsccRig::new(&cfg);
        let mut t = NsccTraffic::new(&cfg, seed, NsccMix::default());
        let seq: Vec<WindowInputs> = (0..200_000).map(|c| t.next_inputs(c)).collect();
        let (report, _) = rig.run_report(&seq);
        if let Some(d) = report.divergence {
            panic!("RTL diverged from the model (seed {seed}):\n{d}");
        }
        assert_eq!(report.cycles_run, 200_000);
    }
}

/// The checker itself, on the model alone (no RTL): it accepts the model's own outputs and
/// rejects a tampered log.
#[test]
fn the_invariant_checker_accepts_the_model_and_rejects_a_bad_log() {
    for cfg in [NicConfig::default(), other_cfg(), slow_cfg()] {
        let mut t = NsccTraffic::new(&cfg, 9, NsccMix::default());
        let mut m = NsccWindow::new(&cfg);
        let seq: Vec<WindowInputs> = (0..100_000).map(|c| t.next_inputs(c)).collect();
        let log: Vec<WindowOutputs> = seq.iter().map(|x| m.step(x)).collect();
        check_invariants(&cfg, &seq, &log).unwrap();
        let mut bad = log.clone();
        let c = bad.iter().position(|y| !y.ev_ready).unwrap();
        bad[c].ev_ready = true;
        assert!(check_invariants(&cfg, &seq, &bad).is_err());
        let mut bad = log.clone();
        bad[50_000].can_send = !bad[50_000].can_send;
        assert!(check_invariants(&cfg, &seq, &bad).is_err());
        let mut bad = log;
        bad[60_000].cnt_events += 1;
        assert!(check_invariants(&cfg, &seq, &bad).is_err());
    }
}
