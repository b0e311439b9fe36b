//! Property cosim of `mrc_core`: seeded closed-loop traffic (`CoreTraffic`: the core's own
//! transmit and ACK headers looped back with delay, reordering, loss, trims and ECN; MMIO
//! setup, parameter changes, EV loads / deny / allow, QP_CTRL, EVQ pops, reads and illegal
//! accesses; send-queue posts, some refused; junk headers; ticks; plane flaps; resets). The
//! RTL must equal the model every cycle on `configs/core_small.toml` (three QPs, W = 64).
//!
//! Why not the default config (one QP, W = 256) here too: its Verilator build takes about
//! 5 minutes on CI's two cores, and `make test` must stay under 30. Its blocks are cosimulated
//! at W = 256 in their own suites, and `make run` cosimulates the default-config `mrc_core`
//! for 1 M cycles (`mrcgen compare --module mrc_core`).

use mrc_config::NicConfig;
use mrc_cosim::modules::mrc_core::CoreMix;
use mrc_testbench::CoreRig;
use proptest::prelude::*;

fn config(cases: u32) -> ProptestConfig {
    let rng_seed = if std::env::var_os("PROPTEST_RNG_SEED").is_some() {
        ProptestConfig::default().rng_seed
    } else {
        proptest::test_runner::RngSeed::Fixed(0x4D43_434F)
    };
    ProptestConfig {
        cases,
        failure_persistence: None,
        rng_seed,
        ..ProptestConfig::default()
    }
}

fn core_small() -> NicConfig {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/core_small.toml"
    ))
    .expect("configs/core_small.toml");
    NicConfig::from_toml(&text).expect("core_small config")
}

fn run_case(cfg: &NicConfig, seed: u64, mix: CoreMix, cycles: u64) -> Result<(), TestCaseError> {
    let report = CoreRig::run_traffic(cfg, seed, mix, cycles);
    if let Some(d) = report.divergence {
        return Err(TestCaseError::fail(format!(
            "RTL diverged from the model:\n{d}"
        )));
    }
    prop_assert_eq!(report.cycles_run, cycles);
    Ok(())
}

fn mix() -> impl Strategy<Value = CoreMix> {
    (
        (
            0u64..=30,
            0u64..=30,
            0u64..=20,
            0u64..=20,
            0u64..=50,
            0u64..=20,
        ),
        (
            1u64..=120,
            0u64..=20,
            0u64..=30,
            0u64..=100,
            0u64..=20,
            0u64..=2000,
        ),
    )
        .prop_map(
            |(
                (sq_pct, sq_bad_pct, loss_pct, trim_pct, ecn_pct, ack_loss_pct),
                (max_delay, junk_pct, mmio_pct, ticks_per_k, plane_flap_pct, resets_per_million),
            )| CoreMix {
                sq_pct,
                sq_bad_pct,
                loss_pct,
                trim_pct,
                ecn_pct,
                ack_loss_pct,
                max_delay,
                junk_pct,
                mmio_pct,
                ticks_per_k,
                plane_flap_pct,
                resets_per_million,
            },
        )
}

proptest! {
    #![proptest_config(config(5))]
    #[test]
    fn rtl_equals_model_on_three_qps(seed in any::<u64>(), mix in mix()) {
        run_case(&core_small(), seed, mix, 8_000)?;
    }
}

/// The default mix for longer, so the loop reaches steady state (una moving, retransmits,
/// NSCC events, EVQ traffic).
#[test]
fn rtl_equals_model_on_long_default_traffic() {
    let cfg = core_small();
    let report = CoreRig::run_traffic(&cfg, 0xC0DE, CoreMix::default(), 40_000);
    if let Some(d) = report.divergence {
        panic!("RTL diverged from the model (qps {}):\n{d}", cfg.qps);
    }
}
