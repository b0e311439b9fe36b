//! The suite can fail: a deliberately wrong model (NACK_TRIMMED_LASTHOP handled as NACK_TRIMMED,
//! a plausible misreading of the notes) must be caught, with a divergence report and a VCD; and
//! a deliberately wrong `nscc_window` Verilog (eta off by one byte) must be caught by the
//! lockstep run on the harness's default NSCC traffic.

use mrc_config::NicConfig;
use mrc_cosim::modules::ev_spray_arbiter::{ArbiterTraffic, TrafficMix};
use mrc_testbench::ArbiterRig;

#[test]
fn a_wrong_model_is_reported_with_cycle_inputs_and_vcd() {
    let cfg = NicConfig::default();
    let mut rig = ArbiterRig::new(&cfg);
    rig.model.tamper = Some(Box::new(|x| {
        if x.fb_kind == 4 {
            x.fb_kind = 3;
        }
    }));
    let mut t = ArbiterTraffic::new(&cfg, 3, TrafficMix::default());
    let seq: Vec<_> = (0..20_000).map(|c| t.next_inputs(c)).collect();
    let (report, _) = rig.run_report(&seq);
    assert_eq!(report.mismatches, 1, "the mutant must diverge");
    let d = report.divergence.expect("divergence details");
    let text = d.to_string();
    assert!(text.contains(&format!("cycle {}", d.cycle)), "{text}");
    assert!(text.contains("expected"), "{text}");
    let vcd_path = d.vcd_path.clone().expect("a VCD is written");
    let vcd_text = std::fs::read_to_string(&vcd_path).unwrap();
    let mut parser = vcd::Parser::new(vcd_text.as_bytes());
    let header = parser.parse_header().expect("VCD parses");
    let names: Vec<String> = header
        .items
        .iter()
        .flat_map(|i| match i {
            vcd::ScopeItem::Scope(s) => s
                .items
                .iter()
                .filter_map(|j| match j {
                    vcd::ScopeItem::Var(v) => Some(v.reference.clone()),
                    _ => None,
                })
                .collect::<Vec<_>>(),
            vcd::ScopeItem::Var(v) => vec![v.reference.clone()],
            _ => vec![],
        })
        .collect();
    assert!(
        names.iter().any(|n| n == "grant_idx__expected"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "fb_kind"), "{names:?}");
}

#[test]
fn the_untampered_model_passes_the_same_traffic() {
    let cfg = NicConfig::default();
    let mut rig = ArbiterRig::new(&cfg);
    let mut t = ArbiterTraffic::new(&cfg, 3, TrafficMix::default());
    let seq: Vec<_> = (0..20_000).map(|c| t.next_inputs(c)).collect();
    let (report, _) = rig.run_report(&seq);
    assert!(
        report.divergence.is_none(),
        "{}",
        report.divergence.unwrap()
    );
}

/// `text` with every `<width>'h<eta>` literal (not followed by another hex digit) replaced by
/// eta + 1; how many were replaced.
fn bump_hex_literal(text: &str, value: u32) -> (String, usize) {
    let lit = format!("'h{value:x}");
    let bumped = format!("'h{:x}", value + 1);
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut n = 0;
    while let Some(i) = rest.find(&lit) {
        let after = &rest[i + lit.len()..];
        let whole = !after.starts_with(|c: char| c.is_ascii_hexdigit() || c == '_');
        out.push_str(&rest[..i]);
        out.push_str(if whole { &bumped } else { &lit });
        n += usize::from(whole);
        rest = after;
    }
    out.push_str(rest);
    (out, n)
}

#[test]
fn a_mutated_nscc_window_verilog_is_caught() {
    use mrc_config::nscc::NsccFixed;
    use mrc_cosim::modules::nscc_window::{NsccMix, NsccModel, NsccPorts, NsccTraffic, MODULE};
    use mrc_cosim::modules::{build_options, emit_sources};
    use mrc_cosim::{run_lockstep, Dut, RunOptions, VerilatedLib};

    let cfg = NicConfig::default();
    let k = NsccFixed::new(&cfg);
    let (v, w) = emit_sources(MODULE, &cfg).unwrap();
    let text = std::fs::read_to_string(&v).unwrap();
    let (mutant, n) = bump_hex_literal(&text, k.eta);
    assert!(
        n >= 1,
        "eta ({:#x}) not found as a literal in {}",
        k.eta,
        v.display()
    );
    let dir = mrc_cosim::verilator::target_dir().join("cosim-mutant-nscc");
    std::fs::create_dir_all(&dir).unwrap();
    let mv = dir.join(format!("{MODULE}.v"));
    std::fs::write(&mv, &mutant).unwrap();
    let lib = std::sync::Arc::new(
        VerilatedLib::build(&[mv], MODULE, &build_options(&w)).expect("mutant builds"),
    );
    let ports = NsccPorts::new(lib.port_map()).unwrap();
    let mut dut = Dut::new(&lib);
    let mut model = NsccModel::new(&cfg, ports.clone());
    let mut t = NsccTraffic::new(&cfg, 3, NsccMix::default());
    let mut stim = |c: u64, words: &mut [u32]| ports.pack_inputs(&t.next_inputs(c), words);
    let opts = RunOptions {
        module: MODULE.into(),
        ..RunOptions::default()
    };
    let report = run_lockstep(&mut dut, &mut model, 200_000, &mut stim, &opts);
    assert_eq!(report.mismatches, 1, "the eta + 1 mutant must diverge");
    let d = report.divergence.expect("divergence details");
    let text = d.to_string();
    assert!(text.contains("cwnd"), "{text}");
}

#[test]
fn bump_hex_literal_replaces_whole_literals_only() {
    let (s, n) = bump_hex_literal("a = 13'h1333; b = 16'h13334; c = 32'h1333;", 0x1333);
    assert_eq!(s, "a = 13'h1334; b = 16'h13334; c = 32'h1334;");
    assert_eq!(n, 2);
}
