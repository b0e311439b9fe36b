//! The ECP5 branch of `arith::PipeMul` (`MRC_ECP5_DSP`, defined by `mrcgen synth`: explicit
//! MULT18X18D with the output register inside the DSP) against the model, with a behavioural
//! MULT18X18D (`testbench/verilog/MULT18X18D_sim.v`) standing in for the primitive. It checks
//! the instance wiring (bit order, zero extension, which register the DSP holds), so the
//! netlist Yosys builds computes what the portable branch computes under cosim.

use mrc_config::NicConfig;
use mrc_cosim::modules::nscc_window::{NsccMix, NsccModel, NsccPorts, NsccTraffic, MODULE};
use mrc_cosim::modules::{build_options, emit_sources};
use mrc_cosim::{run_lockstep, Dut, RunOptions, VerilatedLib};

#[test]
fn the_ecp5_dsp_branch_equals_the_model() {
    let sim = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("verilog/MULT18X18D_sim.v");
    for (path, seed) in [(None, 5u64), (Some("../configs/nscc_wide.toml"), 6)] {
        let cfg = match path {
            None => NicConfig::default(),
            Some(p) => NicConfig::load(std::path::Path::new(p)).unwrap(),
        };
        let (v, w) = emit_sources(MODULE, &cfg).unwrap();
        let text = std::fs::read_to_string(&v).unwrap();
        assert!(
            text.contains("`ifdef MRC_ECP5_DSP"),
            "the branch is emitted"
        );
        let mut opts = build_options(&w);
        opts.extra_args.push("-DMRC_ECP5_DSP".into());
        let lib = std::sync::Arc::new(
            VerilatedLib::build(&[v.clone(), sim.clone()], MODULE, &opts)
                .expect("the DSP branch builds"),
        );
        let ports = NsccPorts::new(lib.port_map()).unwrap();
        let mut dut = Dut::new(&lib);
        let mut model = NsccModel::new(&cfg, ports.clone());
        let mut t = NsccTraffic::new(&cfg, seed, NsccMix::default());
        let mut stim = |c: u64, words: &mut [u32]| ports.pack_inputs(&t.next_inputs(c), words);
        let run = RunOptions {
            module: MODULE.into(),
            ..RunOptions::default()
        };
        let report = run_lockstep(&mut dut, &mut model, 1_000_000, &mut stim, &run);
        assert_eq!(
            report.mismatches,
            0,
            "{:?}",
            report.divergence.map(|d| d.to_string())
        );
    }
}
