//! Property cosim of `sack_rx_tracker`: random receiver traffic (loss, reordering, duplicates,
//! trims, ECN, ack requests, out-of-window PSNs, PSN wrap, window-edge probes, resets, mpr /
//! ack_bytes changes). Every cycle the RTL must equal the model, and the outputs must satisfy
//! the receiver's safety invariants against an ideal set-based receiver; with traffic that
//! stays in the window, cack must cover every contiguous prefix within the lag bound.

use mrc_config::NicConfig;
use mrc_cosim::modules::sack_rx_tracker::{SharedTrackerTraffic, TrackerTraffic, TrafficMix};
use mrc_model::sack_rx_tracker::{
    cack_lag_bound, psn_sub, IdealReceiver, TrackerInputs, TrackerOutputs,
};
use mrc_testbench::TrackerRig;
use proptest::prelude::*;

const CYCLES: usize = 3_000;

/// `make test` is reproducible: a fixed seed unless PROPTEST_RNG_SEED asks for another.
fn config(cases: u32) -> ProptestConfig {
    let rng_seed = if std::env::var_os("PROPTEST_RNG_SEED").is_some() {
        ProptestConfig::default().rng_seed
    } else {
        proptest::test_runner::RngSeed::Fixed(0x5341_434B)
    };
    ProptestConfig {
        cases,
        failure_persistence: None,
        rng_seed,
        ..ProptestConfig::default()
    }
}

fn run_case(
    cfg: &NicConfig,
    seed: u64,
    mix: TrafficMix,
    init_psn: u32,
    check_liveness: bool,
) -> Result<(), TestCaseError> {
    let mut rig = TrackerRig::new(cfg);
    let mut t = TrackerTraffic::new(cfg, seed, mix).with_init_psn(init_psn);
    let seq: Vec<TrackerInputs> = (0..CYCLES as u64).map(|c| t.next_inputs(c)).collect();
    let (report, log) = rig.run_report(&seq);
    if let Some(d) = report.divergence {
        return Err(TestCaseError::fail(format!(
            "RTL diverged from the model:\n{d}"
        )));
    }
    prop_assert_eq!(report.cycles_run, CYCLES as u64);

    // Safety: nothing acked or claimed that was not received (every cycle).
    let mut ideal = IdealReceiver::default();
    let mut contig = Vec::with_capacity(CYCLES);
    let mut last_rst = Vec::with_capacity(CYCLES);
    let mut r = 0usize;
    for (s, (x, y)) in seq.iter().zip(&log).enumerate() {
        ideal.observe(x);
        if x.rst {
            r = s;
        }
        contig.push(ideal.contiguous());
        last_rst.push(r);
        if let Err(e) = ideal.check(y) {
            return Err(TestCaseError::fail(format!("cycle {s}: {e}")));
        }
    }
    // Liveness: with every packet inside the window, cack covers the contiguous prefix seen at
    // step s by step s + bound (no reset in between).
    if check_liveness {
        let bound = cack_lag_bound(cfg.sack_window_bits);
        for s in 0..CYCLES - bound {
            if last_rst[s + bound] != last_rst[s] || seq[s].rst {
                continue;
            }
            let behind = psn_sub(contig[s], log[s + bound].cack_psn);
            prop_assert!(
                behind == 0 || behind > 0x80_0000,
                "cycle {}: contiguous {:#x} but cack {:#x} {} cycles later",
                s,
                contig[s],
                log[s + bound].cack_psn,
                bound
            );
        }
    }
    if mix.in_order {
        prop_assert!(
            log.iter().all(|y| !y.nack_valid),
            "in-order traffic drew a NACK"
        );
        prop_assert_eq!(log.last().unwrap().cnt_duplicate, 0);
    }
    Ok(())
}

prop_compose! {
    fn mix()(pkt_pct in 20u64..=100, loss_pct in 0u64..=30, reorder_pct in 0u64..=40,
             dup_pct in 0u64..=30, trim_pct in 0u64..=20, ecn_pct in 0u64..=30,
             ackreq_pct in 0u64..=20, oow_pct in 0u64..=10, resets in 0u64..=2000,
             knobs in 0u64..=5000, probes in 0u64..=5000) -> TrafficMix {
        TrafficMix {
            pkt_pct, loss_pct, reorder_pct, dup_pct, trim_pct, ecn_pct, ackreq_pct, oow_pct,
            resets_per_million: resets,
            knob_changes_per_million: knobs,
            edge_probes_per_million: probes,
            in_order: false,
        }
    }
}

/// Traffic that never leaves the window (no OOW PSNs, probes or knob changes), so every
/// untrimmed packet is accepted or a duplicate and the liveness bound applies.
fn in_window(mut m: TrafficMix) -> TrafficMix {
    m.oow_pct = 0;
    m.edge_probes_per_million = 0;
    m.knob_changes_per_million = 0;
    m
}

fn init() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..0x100_0000, (0x100_0000u32 - 3000)..0x100_0000]
}

proptest! {
    #![proptest_config(config(32))]

    /// Default config (W = 256): every kind of traffic, safety checked every cycle.
    #[test]
    fn rtl_equals_model_and_is_safe_w256(seed in any::<u64>(), mix in mix(), init in init()) {
        run_case(&NicConfig::default(), seed, mix, init, false)?;
    }

    /// W = 256, in-window traffic: cack catches up within the bound.
    #[test]
    fn cack_meets_the_lag_bound_w256(seed in any::<u64>(), mix in mix(), init in init()) {
        run_case(&NicConfig::default(), seed, in_window(mix), init, true)?;
    }
}

proptest! {
    #![proptest_config(config(16))]

    /// The other window sizes, W = 64 and 128 (W = 1024 is covered by the model unit tests).
    #[test]
    fn rtl_equals_model_other_windows(seed in any::<u64>(), mix in mix(), init in init(), wi in 0usize..2, live in any::<bool>()) {
        let cfg = NicConfig { sack_window_bits: [64, 128][wi], ..NicConfig::default() };
        let m = if live { in_window(mix) } else { mix };
        run_case(&cfg, seed, m, init, live)?;
    }

    /// In-order traffic: no NACK, no duplicate, and the lag bound.
    #[test]
    fn in_order_traffic_draws_no_nack(seed in any::<u64>(), init in init(), w64 in any::<bool>(), pkt_pct in 30u64..=100) {
        let cfg = NicConfig { sack_window_bits: if w64 { 64 } else { 256 }, ..NicConfig::default() };
        let mix = TrafficMix { pkt_pct, resets_per_million: 0, in_order: true, ..TrafficMix::default() };
        run_case(&cfg, seed, mix, init, true)?;
    }
}

/// One tracker for three QPs (`qps = 3`, as `mrc_core` elaborates it): packets of the three
/// contexts interleaved or in runs, each context with its own resets. The RTL must equal the
/// model (one `SackRxTracker` per context) every cycle, and every response must be safe against
/// an ideal receiver of the context it is tagged with.
fn run_shared_case(cfg: &NicConfig, seed: u64, mix: TrafficMix) -> Result<Coverage, TestCaseError> {
    let mut rig = TrackerRig::new(cfg);
    let mut t = SharedTrackerTraffic::new(cfg, seed, mix);
    let seq: Vec<TrackerInputs> = (0..CYCLES as u64 * 3).map(|c| t.next_inputs(c)).collect();
    let (report, log) = rig.run_report(&seq);
    if let Some(d) = report.divergence {
        return Err(TestCaseError::fail(format!(
            "RTL diverged from the model:\n{d}"
        )));
    }
    prop_assert_eq!(report.cycles_run, seq.len() as u64);
    let n = cfg.qps as usize;
    let mut ideal = vec![IdealReceiver::default(); n];
    let mut cov = Coverage::default();
    let mut prev_qp = None;
    for (s, (x, y)) in seq.iter().zip(&log).enumerate() {
        for (q, r) in ideal.iter_mut().enumerate() {
            r.observe(&TrackerInputs {
                rst: x.rst || x.qp_rst >> q & 1 != 0,
                pkt_valid: x.pkt_valid && usize::from(x.pkt_qp) == q,
                ..*x
            });
        }
        if x.qp_rst != 0 && x.qp_rst != 1 {
            cov.resets_beyond_0 += 1;
        }
        if x.pkt_valid {
            if prev_qp.is_some_and(|p| p != x.pkt_qp) {
                cov.switches += 1;
            }
            prev_qp = Some(x.pkt_qp);
        }
        if y.sack_valid || y.nack_valid {
            let q = usize::from(y.rsp_qp);
            prop_assert!(q < n, "cycle {}: response tagged with context {}", s, q);
            cov.responses[q] += 1;
            let only = TrackerOutputs {
                cack_psn: ideal[q].contiguous(),
                ..*y
            };
            if let Err(e) = ideal[q].check(&only) {
                return Err(TestCaseError::fail(format!("cycle {s}, context {q}: {e}")));
            }
        }
        if let Err(e) = ideal[0].check(&TrackerOutputs {
            cack_psn: y.cack_psn,
            ..TrackerOutputs::default()
        }) {
            return Err(TestCaseError::fail(format!("cycle {s}, context 0: {e}")));
        }
    }
    Ok(cov)
}

#[derive(Debug, Default)]
struct Coverage {
    responses: [u64; 16],
    switches: u64,
    resets_beyond_0: u64,
}

proptest! {
    #![proptest_config(config(8))]

    #[test]
    fn rtl_equals_model_with_three_contexts(seed in any::<u64>(), mix in mix()) {
        let cfg = NicConfig { qps: 3, ..NicConfig::default() };
        run_shared_case(&cfg, seed, mix)?;
    }
}

/// The shared traffic does what the test above relies on: every context answers, packets
/// switch context often, contexts other than 0 are reset on their own.
#[test]
fn three_context_traffic_reaches_every_context() {
    let cfg = NicConfig {
        qps: 3,
        ..NicConfig::default()
    };
    let mix = TrafficMix {
        resets_per_million: 2_000,
        ..TrafficMix::default()
    };
    let cov = run_shared_case(&cfg, 7, mix).unwrap();
    eprintln!("{cov:?}");
    assert!(cov.responses[..3].iter().all(|&r| r > 100), "{cov:?}");
    assert!(cov.switches > 1_000, "{cov:?}");
    assert!(cov.resets_beyond_0 > 0, "{cov:?}");
}
