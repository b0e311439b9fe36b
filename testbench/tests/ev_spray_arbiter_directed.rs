//! Directed scenarios for `ev_spray_arbiter`, each run on the RTL in lockstep with the model,
//! then checked against the protocol property it is named after.

use mrc_config::NicConfig;
use mrc_cosim::modules::ev_spray_arbiter::{ArbiterTraffic, TrafficMix};
use mrc_model::ev_spray_arbiter::{ArbiterInputs, EvState, FeedbackKind, CTL_DENY};
use mrc_testbench::{idle, with_reset, ArbiterRig};

/// A request at cycle t is answered in the outputs of cycle t + 4.
const GRANT_LATENCY: usize = 4;
/// Feedback and controller ops of cycle t change the table at the edge of cycle t + 1, so a
/// request from cycle t + 2 on sees them.
const EVENT_LATENCY: usize = 2;
/// `rd_idx` at cycle t shows on `rd_state` / `rd_pen` in the outputs of cycle t + 2.
const READ_LATENCY: usize = 2;
/// `active_count` is a pipelined popcount: settled this many cycles after the last change.
const COUNT_SETTLE: usize = 6;

fn fb(base: ArbiterInputs, idx: usize, kind: FeedbackKind) -> ArbiterInputs {
    ArbiterInputs {
        fb_valid: true,
        fb_idx: idx as u8,
        fb_kind: kind as u8,
        ..base
    }
}

fn readback(rig: &mut ArbiterRig, base: ArbiterInputs, n: usize) -> Vec<EvState> {
    let seq: Vec<_> = (0..n + READ_LATENCY)
        .map(|i| ArbiterInputs {
            rd_idx: i.min(n - 1) as u8,
            ..base
        })
        .collect();
    let out = rig.run(&seq);
    (0..n)
        .map(|i| EvState::from_bits(out[i + READ_LATENCY].rd_state))
        .collect()
}

#[test]
fn a_whole_plane_going_bad_leaves_the_other_planes_served() {
    let cfg = NicConfig::default();
    let (epp, planes) = (cfg.evs_per_plane as usize, cfg.planes as usize);
    let bad_plane = 3;
    let mut rig = ArbiterRig::new(&cfg);
    let base = idle(&cfg);
    let mut seq = with_reset(base);
    for e in bad_plane * epp..(bad_plane + 1) * epp {
        seq.push(fb(base, e, FeedbackKind::Timeout));
    }
    seq.extend(std::iter::repeat_n(base, EVENT_LATENCY));
    let start = seq.len();
    let requests = 4000;
    seq.extend(std::iter::repeat_n(
        ArbiterInputs { req: true, ..base },
        requests,
    ));
    seq.extend(std::iter::repeat_n(base, GRANT_LATENCY));
    let out = rig.run(&seq);

    let grants: Vec<_> = out[start + GRANT_LATENCY..]
        .iter()
        .filter(|o| o.grant_valid)
        .collect();
    assert_eq!(
        grants.len(),
        requests,
        "every request granted: the other planes are eligible"
    );
    assert!(out.iter().all(|o| !o.grant_none));
    let mut per_plane = vec![0usize; planes];
    for g in &grants {
        assert_eq!(
            g.grant_plane as usize,
            g.grant_idx as usize / epp,
            "plane matches the entry"
        );
        per_plane[g.grant_plane as usize] += 1;
    }
    assert_eq!(
        per_plane[bad_plane], 0,
        "the bad plane is never used: {per_plane:?}"
    );
    // Round-robin over the planes that still hold an eligible EV: shares equal to within one.
    let fair = requests / (planes - 1);
    for (p, &n) in per_plane
        .iter()
        .enumerate()
        .filter(|&(p, _)| p != bad_plane)
    {
        assert!(
            n.abs_diff(fair) <= 1,
            "plane {p} got {n}, fair share {fair}: {per_plane:?}"
        );
    }
    let states = readback(&mut rig, base, cfg.total_evs() as usize);
    for (e, s) in states.iter().enumerate() {
        let want = if e / epp == bad_plane {
            EvState::AssumedBad
        } else {
            EvState::Good
        };
        assert_eq!(*s, want, "EV {e}");
    }
}

#[test]
fn denied_never_recovers_by_itself() {
    let cfg = NicConfig::default();
    let victim = 5usize;
    let mut rig = ArbiterRig::new(&cfg);
    let base = idle(&cfg);
    let mut seq = with_reset(base);
    seq.push(ArbiterInputs {
        ctl_op: CTL_DENY,
        ctl_idx: victim as u8,
        ..base
    });
    let start = seq.len();
    // Feedback of every kind, probes included, much of it aimed at the victim; no controller.
    let mix = TrafficMix {
        ctl_pct: 0,
        resets_per_million: 0,
        bad_idx_pct: 0,
        ..TrafficMix::default()
    };
    let mut traffic = ArbiterTraffic::new(&cfg, 11, mix);
    for c in 0..20_000u64 {
        let mut x = traffic.next_inputs(c + 2);
        if c % 3 == 0 {
            x.fb_valid = true;
            x.fb_idx = victim as u8;
            x.fb_kind = (c / 3 % 8) as u8;
        }
        x.rd_idx = victim as u8;
        seq.push(x);
    }
    let out = rig.run(&seq);
    for (c, o) in out.iter().enumerate().skip(start + EVENT_LATENCY) {
        assert_eq!(EvState::from_bits(o.rd_state), EvState::Denied, "cycle {c}");
    }
    for (c, o) in out
        .iter()
        .enumerate()
        .skip(start + EVENT_LATENCY + GRANT_LATENCY)
    {
        assert!(
            !(o.grant_valid && o.grant_idx as usize == victim),
            "denied EV granted at cycle {c}"
        );
    }
}

#[test]
fn ev_min_active_holds_against_a_storm_of_retirements() {
    let cfg = NicConfig::default();
    let min = cfg.ev_min_active as usize;
    let n = cfg.total_evs() as usize;
    let mut rig = ArbiterRig::new(&cfg);
    let base = idle(&cfg);
    let mut seq = with_reset(base);
    // Three passes of TIMEOUT / ALWAYS_SKIP over every EV, requests flowing meanwhile.
    for pass in 0..3 {
        for e in 0..n {
            let kind = if (e + pass) % 2 == 0 {
                FeedbackKind::Timeout
            } else {
                FeedbackKind::AlwaysSkip
            };
            seq.push(ArbiterInputs {
                req: true,
                ..fb(base, (e * 37 + pass) % n, kind)
            });
        }
    }
    seq.extend(std::iter::repeat_n(ArbiterInputs { req: true, ..base }, 64));
    let out = rig.run(&seq);
    assert!(
        out[2..].iter().all(|o| o.active_count as usize >= min),
        "active count fell below min_active"
    );
    assert_eq!(
        out.last().unwrap().active_count as usize,
        min,
        "everything retirable was retired"
    );
    let held = out.iter().filter(|o| o.retire_held).count();
    assert!(
        held > 0,
        "retirements beyond the minimum are held and reported"
    );
    assert!(
        out[out.len() - 32..].iter().all(|o| o.grant_valid),
        "the survivors keep serving"
    );

    // Probes bring the retired EVs back.
    let mut seq = Vec::new();
    for e in 0..n {
        seq.push(fb(base, e, FeedbackKind::ProbeNone));
    }
    seq.extend(std::iter::repeat_n(base, COUNT_SETTLE));
    let out = rig.run(&seq);
    assert_eq!(out.last().unwrap().active_count as usize, n);
}

/// Every EV that stays eligible is granted within 2N - 1 consecutive requests (N = table
/// entries): the rotation pointer visits every entry once per N requests, and an eligible
/// entry under the pointer is granted.
#[test]
fn every_good_ev_is_granted_within_2n_minus_1_requests() {
    for cfg in [
        NicConfig::default(),
        NicConfig {
            planes: 3,
            evs_per_plane: 5,
            ev_min_active: 2,
            ..NicConfig::default()
        },
    ] {
        let n_entries = cfg.ev_table_entries() as usize;
        let bound = 2 * n_entries - 1;
        let total = cfg.total_evs() as usize;
        let epp = cfg.evs_per_plane as usize;
        let mut rig = ArbiterRig::new(&cfg);
        let base = idle(&cfg);
        let mut seq = with_reset(base);
        // Plane 0 always ready and untouched by feedback; everything else churns.
        let mut traffic = ArbiterTraffic::new(
            &cfg,
            5,
            TrafficMix {
                req_pct: 100,
                ctl_pct: 0,
                resets_per_million: 0,
                policy_flips_per_million: 0,
                ..TrafficMix::default()
            },
        );
        let cycles = 40 * n_entries;
        for c in 0..cycles as u64 {
            let mut x = traffic.next_inputs(c + 2);
            x.plane_ready |= 1;
            if (x.fb_idx as usize) < epp {
                x.fb_valid = false;
            }
            seq.push(x);
        }
        let out = rig.run(&seq);
        let grants: Vec<Option<usize>> = out[2 + GRANT_LATENCY..]
            .iter()
            .map(|o| o.grant_valid.then_some(o.grant_idx as usize))
            .collect();
        for e in 0..epp.min(total) {
            let at: Vec<usize> = grants
                .iter()
                .enumerate()
                .filter(|(_, g)| **g == Some(e))
                .map(|(i, _)| i)
                .collect();
            assert!(!at.is_empty(), "EV {e} never granted");
            assert!(
                at[0] < bound,
                "EV {e} first granted after {} requests (bound {bound})",
                at[0]
            );
            for w in at.windows(2) {
                assert!(
                    w[1] - w[0] <= bound,
                    "EV {e}: {} requests between grants (bound {bound})",
                    w[1] - w[0]
                );
            }
        }
    }
}

#[test]
fn bitmap_penalty_keeps_an_ev_out_until_it_decays() {
    let cfg = NicConfig {
        spray_policy: mrc_config::SprayPolicy::Bitmap,
        ..NicConfig::default()
    };
    let n = cfg.ev_table_entries() as usize;
    let victim = 9usize;
    let mut rig = ArbiterRig::new(&cfg);
    let base = idle(&cfg);
    let mut seq = with_reset(base);
    seq.push(fb(base, victim, FeedbackKind::Timeout));
    let reading = ArbiterInputs {
        rd_idx: victim as u8,
        ..base
    };
    // Read while the event lands: the last readback output shows the table after it.
    seq.extend(std::iter::repeat_n(
        reading,
        EVENT_LATENCY + READ_LATENCY - 1,
    ));
    let start = seq.len();
    seq.extend(std::iter::repeat_n(
        ArbiterInputs { req: true, ..base },
        20 * n,
    ));
    let out = rig.run(&seq);
    assert_eq!(
        out[start - 1].rd_pen,
        15,
        "TIMEOUT sets the penalty to its maximum"
    );
    let first = out[start..]
        .iter()
        .position(|o| o.grant_valid && o.grant_idx as usize == victim)
        .expect("victim returns");
    // 15 landings of the rotation (one per N requests) must pass before it is eligible again.
    assert!(first >= 14 * n, "victim back after only {first} requests");
}

#[test]
fn out_of_profile_feedback_and_controller_ops_are_counted_and_dropped() {
    let cfg = NicConfig {
        planes: 3,
        evs_per_plane: 5,
        ev_min_active: 2,
        ..NicConfig::default()
    };
    let mut rig = ArbiterRig::new(&cfg);
    let base = idle(&cfg);
    let mut seq = with_reset(base);
    seq.push(fb(base, 15, FeedbackKind::ProbeNone)); // entry 15 is padding
    seq.push(ArbiterInputs {
        ctl_op: 2,
        ctl_idx: 200,
        ..base
    }); // ALLOW beyond the table
    seq.push(ArbiterInputs { req: true, ..base });
    seq.extend(std::iter::repeat_n(ArbiterInputs { req: true, ..base }, 64));
    let out = rig.run(&seq);
    assert!(out[2].fb_drop && !out[2].ctl_drop);
    assert!(out[3].ctl_drop && !out[3].fb_drop);
    assert_eq!(out[3].active_count, 15, "padding never becomes active");
    assert!(
        out.iter()
            .filter(|o| o.grant_valid)
            .all(|o| (o.grant_idx as usize) < 15),
        "padding never granted"
    );
}
