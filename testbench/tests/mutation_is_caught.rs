//! The suite can fail: a deliberately wrong model (NACK_TRIMMED_LASTHOP handled as NACK_TRIMMED,
//! a plausible misreading of the notes) must be caught, with a divergence report and a VCD.

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
