//! Property cosim of `ev_spray_arbiter`: random requests, plane-ready masks, feedback and
//! controller events, policy flips and resets; the RTL must equal the model every cycle.

use mrc_config::NicConfig;
use mrc_cosim::modules::ev_spray_arbiter::{ArbiterTraffic, TrafficMix};
use mrc_testbench::ArbiterRig;
use proptest::prelude::*;

const CYCLES: usize = 2_000;

/// `make test` is reproducible: a fixed seed unless PROPTEST_RNG_SEED asks for another
/// (set it to explore new cases; a failure prints the case to replay).
fn config(cases: u32) -> ProptestConfig {
    let rng_seed = if std::env::var_os("PROPTEST_RNG_SEED").is_some() {
        ProptestConfig::default().rng_seed
    } else {
        proptest::test_runner::RngSeed::Fixed(0x4D52_4332)
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
    bitmap: bool,
    min_active: u16,
) -> Result<(), TestCaseError> {
    let mut rig = ArbiterRig::new(cfg);
    let mut t = ArbiterTraffic::new(cfg, seed, mix)
        .with_policy(bitmap)
        .with_min_active(min_active);
    let seq: Vec<_> = (0..CYCLES as u64).map(|c| t.next_inputs(c)).collect();
    let (report, _) = rig.run_report(&seq);
    if let Some(d) = report.divergence {
        return Err(TestCaseError::fail(format!(
            "RTL diverged from the model:\n{d}"
        )));
    }
    prop_assert_eq!(report.cycles_run, CYCLES as u64);
    Ok(())
}

fn mix() -> impl Strategy<Value = TrafficMix> {
    (
        0u64..=100,
        0u64..=100,
        0u64..=100,
        0u64..=20,
        0u64..=10,
        0u64..=2000,
        0u64..=2000,
    )
        .prop_map(
            |(
                req_pct,
                all_ready_pct,
                fb_pct,
                ctl_pct,
                bad_idx_pct,
                resets_per_million,
                policy_flips_per_million,
            )| TrafficMix {
                req_pct,
                all_ready_pct,
                fb_pct,
                ctl_pct,
                bad_idx_pct,
                resets_per_million,
                policy_flips_per_million,
            },
        )
}

proptest! {
    #![proptest_config(config(256))]

    /// Default config (8 planes x 16 EVs = 128 entries): 256 cases x 2,000 cycles.
    #[test]
    fn rtl_equals_model_default_config(seed in any::<u64>(), mix in mix(), bitmap in any::<bool>(), min_active in 0u16..=140) {
        run_case(&NicConfig::default(), seed, mix, bitmap, min_active)?;
    }
}

proptest! {
    #![proptest_config(config(32))]

    /// Odd profile padded to 16 entries (3 planes x 5 EVs) and the 256-entry maximum.
    #[test]
    fn rtl_equals_model_edge_configs(seed in any::<u64>(), mix in mix(), bitmap in any::<bool>(), min_active in 0u16..=260, big in any::<bool>()) {
        let cfg = if big {
            NicConfig { planes: 8, evs_per_plane: 32, ..NicConfig::default() }
        } else {
            NicConfig { planes: 3, evs_per_plane: 5, ev_min_active: 2, ..NicConfig::default() }
        };
        run_case(&cfg, seed, mix, bitmap, min_active)?;
    }
}
