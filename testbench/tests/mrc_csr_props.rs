//! Property cosim of `mrc_csr`: random MMIO traffic (mapped, misaligned and random offsets,
//! partial strobes, reads and writes offered together), random RO inputs, W1C sets and
//! resets; the RTL must equal the model every cycle, on the default and edge configs.

use mrc_config::NicConfig;
use mrc_cosim::modules::mrc_csr::{CsrMix, CsrTraffic};
use mrc_model::mrc_csr::RESP_SLVERR;
use mrc_testbench::CsrRig;
use proptest::prelude::*;

const CYCLES: usize = 3_000;

fn config(cases: u32) -> ProptestConfig {
    let rng_seed = if std::env::var_os("PROPTEST_RNG_SEED").is_some() {
        ProptestConfig::default().rng_seed
    } else {
        proptest::test_runner::RngSeed::Fixed(0x4D43_5352)
    };
    ProptestConfig {
        cases,
        failure_persistence: None,
        rng_seed,
        ..ProptestConfig::default()
    }
}

fn run_case(cfg: &NicConfig, seed: u64, mix: CsrMix) -> Result<(), TestCaseError> {
    let mut rig = CsrRig::new(cfg);
    let mut t = CsrTraffic::new(cfg, seed, mix);
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

fn mix() -> impl Strategy<Value = CsrMix> {
    (
        0u64..=100,
        0u64..=100,
        0u64..=100,
        0u64..=100,
        0u64..=30,
        0u64..=5000,
    )
        .prop_map(
            |(
                write_pct,
                read_pct,
                mapped_pct,
                full_strobe_pct,
                w1c_set_pct,
                resets_per_million,
            )| {
                CsrMix {
                    write_pct,
                    read_pct,
                    mapped_pct,
                    full_strobe_pct,
                    w1c_set_pct,
                    resets_per_million,
                }
            },
        )
}

proptest! {
    #![proptest_config(config(32))]
    #[test]
    fn rtl_equals_model_on_random_mmio(seed in any::<u64>(), mix in mix()) {
        run_case(&NicConfig::default(), seed, mix)?;
    }
}

#[test]
fn rtl_equals_model_on_the_edge_configs() {
    for path in ["../configs/small.toml", "../configs/max.toml"] {
        let cfg = NicConfig::load(std::path::Path::new(path)).unwrap();
        for seed in 0..4 {
            run_case(&cfg, seed, CsrMix::default()).unwrap_or_else(|e| panic!("{path}: {e}"));
        }
    }
}

/// The default traffic reaches every kind of answer, so the equality above means something.
#[test]
fn default_traffic_exercises_okay_and_slverr_on_both_channels() {
    let cfg = NicConfig::default();
    let mut rig = CsrRig::new(&cfg);
    let mut t = CsrTraffic::new(&cfg, 1, CsrMix::default());
    let seq: Vec<_> = (0..CYCLES as u64).map(|c| t.next_inputs(c)).collect();
    let out = rig.run(&seq);
    let count =
        |f: &dyn Fn(&mrc_model::mrc_csr::CsrOutputs) -> bool| out.iter().filter(|o| f(o)).count();
    assert!(count(&|o| o.b_valid && o.b_resp == 0) > 100);
    assert!(count(&|o| o.b_valid && o.b_resp == RESP_SLVERR) > 100);
    assert!(count(&|o| o.r_valid && o.r_resp == 0 && o.r_data != 0) > 100);
    assert!(count(&|o| o.r_valid && o.r_resp == RESP_SLVERR) > 100);
    assert!(count(&|o| o.wo_stb.iter().any(|&s| s)) > 10);
    assert!(count(&|o| o.w1c.iter().any(|&v| v != 0)) > 10);
    assert!(out.iter().map(|o| o.bad_access).max().unwrap() > 20);
}
