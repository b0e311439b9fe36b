//! The simulator with the real transports (`crate::transport`: MRC with every spray policy,
//! RoCEv2 with and without DCQCN), built from scenarios the way `mrcgen netsim` builds them:
//! `transport::make(choice, &scenario.nic_config_for(choice))` on
//! `scenario.sim_config_for(choice)`. The engine's own tests (`sim/tests.rs`) use tiny
//! test-only transports; these check what the endpoints and the network guarantee together.
//!
//! Per-flow byte accounting, as the endpoints implement it:
//! - `bytes_delivered` is the responder's count of *unique* payload bytes written (MRC: a PSN
//!   whose bitmap bit was already set, or behind the cumulative ack, counts in `dup_bytes`
//!   instead; RoCE: go-back-N writes only the expected PSN, so the write offset only grows).
//!   Hence `bytes_delivered <= bytes`, always.
//! - The responder acknowledges only what it wrote, so the requester's acked bytes never
//!   exceed `bytes_delivered`; a failed requester reports `bytes_lost = bytes - acked`. For a
//!   failed flow that gives `bytes_delivered + bytes_lost >= bytes` (">": bytes that landed
//!   but whose ACK never made it back are counted both delivered and lost), never "==".
//! - A finished flow has every byte acked: `bytes_delivered == bytes`, `bytes_lost == 0`.
//! - A flow that neither finished nor failed (stopped at `stop_at`, or never started because
//!   the flow it waits on failed) reports `bytes_lost == 0`.
//! - Every delivered or duplicate byte came from a data packet the requester sent, and a
//!   duplicate needs a retransmission: `bytes_delivered + dup_bytes <= data_sent * MTU` and
//!   `dup_bytes <= retransmits * MTU`.

use super::config::{Fault, FaultKind, SimConfig};
use super::endpoint::{FlowSpec, Transport};
use super::report;
use super::results::RunResult;
use super::scenario::{Scenario, TransportChoice, TRANSPORT_NAMES};
use super::sim::Sim;
use super::{Ps, US};
use crate::transport;

/// Payload bytes per data packet of every scenario here (the NicConfig default).
const MTU: u64 = 4096;

fn builtin(name: &str) -> Scenario {
    Scenario::load(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn inline(toml: &str) -> Scenario {
    Scenario::from_toml(toml).unwrap_or_else(|e| panic!("{e}\n{toml}"))
}

/// The transport named `name` and the scenario's network for it (RoCE gets the
/// non-trimming, deeper-buffered fabric), as the CLI builds them.
fn setup(s: &Scenario, name: &str) -> (Box<dyn Transport>, SimConfig) {
    let choice = TransportChoice::parse(name).unwrap_or_else(|| panic!("transport {name}"));
    let nic = s.nic_config_for(choice).expect("nic config");
    let cfg = s.sim_config_for(choice).expect("sim config");
    (transport::make(choice, &nic), cfg)
}

fn run(s: &Scenario, name: &str) -> RunResult {
    let (t, cfg) = setup(s, name);
    Sim::run_to_end(cfg, &*t)
}

fn is_mrc(name: &str) -> bool {
    matches!(TransportChoice::parse(name), Some(TransportChoice::Mrc(_)))
}

/// What the network and the endpoints guarantee together, for any transport and scenario.
fn check_conservation(r: &RunResult, what: &str) {
    assert!(
        r.ledger.balances(&r.drops),
        "{what}: ledger {:?} drops {:?}",
        r.ledger,
        r.drops
    );
    assert_eq!(r.delivered_over_down_link, 0, "{what}");
    for f in &r.flows {
        let ctx = || format!("{what}: flow {f:?}");
        assert!(f.bytes_delivered <= f.bytes, "{}", ctx());
        assert!(
            f.bytes_delivered + f.dup_bytes <= f.data_sent * MTU,
            "{}",
            ctx()
        );
        assert!(f.dup_bytes <= f.retransmits * MTU, "{}", ctx());
        match (f.fct_us.is_some(), f.failed) {
            (true, false) => {
                assert_eq!(f.bytes_delivered, f.bytes, "{}", ctx());
                assert_eq!(f.bytes_lost, 0, "{}", ctx());
            }
            (false, true) => {
                assert!(f.bytes_lost > 0, "{}", ctx());
                assert!(f.bytes_delivered + f.bytes_lost >= f.bytes, "{}", ctx());
            }
            (false, false) => assert_eq!(f.bytes_lost, 0, "{}", ctx()),
            (true, true) => panic!("finished and failed: {}", ctx()),
        }
    }
    let failed = r.flows.iter().filter(|f| f.failed).count();
    let finished = r.flows.iter().filter(|f| f.fct_us.is_some()).count();
    assert_eq!((r.finished, r.failed), (finished, failed), "{what}");
    let lost: u64 = r.flows.iter().map(|f| f.bytes_lost).sum();
    assert_eq!(r.bytes_lost, lost, "{what}");
}

/// `smoke` on more planes, with a T0-T1 link flapping and 0.5 % loss on every host link
/// (each data packet and each ACK crosses two lossy links).
const MULTI_PLANE_LOSSY: &str = r#"
name = "multi_plane_lossy"
seed = 11
stop_us = 20000
sample_us = 5

[topology]
kind = "multi_plane"
planes = 2
hosts = 16
t0_down = 4
t0_up = 4
link_gbps = 100
link_delay_ns = 500

[nic]
rtx_ooo_threshold = 64

[traffic]
pattern = "permutation"
flow_bytes = 262144

[[faults]]
kind = "flap"
at_us = 5
tier = "t0-t1"
links = [0]
down_us = 20
period_us = 40
count = 4

[[faults]]
kind = "loss"
at_us = 0
tier = "host"
all = true
rate = 0.005
"#;

#[test]
fn every_transport_conserves_bytes_and_packets_and_mrc_finishes_every_flow() {
    for s in [builtin("smoke"), inline(MULTI_PLANE_LOSSY)] {
        for &name in TRANSPORT_NAMES {
            let r = run(&s, name);
            let what = format!("{} / {name}", s.name);
            check_conservation(&r, &what);
            assert!(r.end_us < s.stop_us, "{what}: ran into stop_us");
            if is_mrc(name) {
                assert_eq!(r.failed, 0, "{what}: {:?}", r.flows);
                assert_eq!(r.finished, r.flows.len(), "{what}");
                assert_eq!(r.bytes_lost, 0, "{what}");
            }
        }
    }
}

#[test]
fn two_nic_ports_per_plane_carry_mrc_on_every_port_and_roce_on_one() {
    let toml = MULTI_PLANE_LOSSY
        .replace("t0_down = 4", "t0_down = 8\nports_per_plane = 2")
        .replace("rate = 0.005", "rate = 0.0");
    let s = inline(&toml);
    assert_eq!(s.nic_config().unwrap().planes, 4);
    assert_eq!(s.nic_gbps(), 400.0);
    for name in ["mrc", "roce"] {
        let r = run(&s, name);
        check_conservation(&r, name);
        assert_eq!(r.finished, r.flows.len(), "{name}");
    }
    // A 256 KB flow alone on 4 x 100G ports beats what one 100G port can do; RoCE uses one.
    let (mrc, roce) = (run(&s, "mrc"), run(&s, "roce"));
    assert!(mrc.fct_us.min < 21.0, "mrc {:?}", mrc.fct_us);
    assert!(roce.fct_us.min > 21.0, "roce {:?}", roce.fct_us);
}

#[test]
fn a_run_is_a_function_of_its_scenario_and_seed() {
    for s in [builtin("smoke"), inline(MULTI_PLANE_LOSSY)] {
        for name in ["mrc", "roce"] {
            let a = run(&s, name);
            let b = run(&s, name);
            assert_eq!(a.hash, b.hash, "{} / {name}", s.name);
            assert_eq!(a, b, "{} / {name}", s.name);
            // Another seed: another permutation (and other random losses).
            let mut s2 = s.clone();
            s2.seed += 1;
            let c = run(&s2, name);
            assert_ne!(a.hash, c.hash, "{} / {name}", s.name);
        }
    }
}

/// The headline counters of `smoke`, pinned: any change in transport or engine behaviour
/// shows up here as a diff. After an intended change, rerun with
/// `cargo test -p mrc-model --release smoke_counters_are_pinned -- --nocapture` and paste the
/// printed rows.
#[test]
fn smoke_counters_are_pinned() {
    // (transport, finished, failed, retransmits, trims, timeouts, bytes_lost,
    //  drops.link_down, FCT p99 in units of 0.1 us). A 64-packet MRC flow never has a SACKed
    // PSN more than rtx_ooo_threshold (64) above a hole, so its losses on the dead link are
    // found by the tail probe (a base RTT after the last send), not the RTO: 0 timeouts.
    type Row = (&'static str, usize, usize, u64, u64, u64, u64, u64, u64);
    let pinned: [Row; 2] = [
        ("mrc", 16, 0, 16, 0, 0, 0, 46, 1258),
        ("roce", 16, 0, 55, 0, 2, 0, 21, 3049),
    ];
    let s = builtin("smoke");
    let got: Vec<Row> = pinned
        .iter()
        .map(|p| {
            let r = run(&s, p.0);
            (
                p.0,
                r.finished,
                r.failed,
                r.retransmits,
                r.trims,
                r.timeouts,
                r.bytes_lost,
                r.drops.link_down,
                (r.fct_us.p99 * 10.0).round() as u64,
            )
        })
        .collect();
    for row in &got {
        println!("        {row:?},");
    }
    assert_eq!(got, pinned);
}

#[test]
fn an_incast_next_door_leaves_the_mrc_victim_near_line_rate_and_slows_roce() {
    let s = builtin("incast_victim");
    let line_gbps = s.topology.link_gbps;
    let victim = |name: &str| {
        let r = run(&s, name);
        check_conservation(&r, name);
        let id = r.flows.len() as u32 - 1; // the traffic generator adds the victim last
        assert_eq!(r.flows[id as usize].dst, 1, "the victim writes into host 1");
        report::flow_gbps(&r, id).expect("the victim finishes")
    };
    // At the time of writing: MRC 95.2 Gb/s, RoCE + DCQCN 46.1 Gb/s (no CC: 78.9).
    let (mrc, roce) = (victim("mrc"), victim("roce"));
    assert!(mrc >= 0.8 * line_gbps, "MRC victim at {mrc:.1} Gb/s");
    assert!(mrc > roce, "MRC victim {mrc:.1} Gb/s, RoCE {roce:.1} Gb/s");
}

/// `core_link_failure` (k = 8, two agg-core links fail for good at 300 us under a permutation
/// of 8 MB flows, static routes): MRC retires the EVs through the dead links and loses
/// nothing. RoCE hashes each flow onto one path for its whole life: the flows pinned on a
/// dead link retry the same path until `retry_cnt` runs out and fail, reporting their
/// unacknowledged bytes lost; the others finish.
#[test]
fn a_core_link_failure_costs_mrc_nothing_and_fails_the_roce_flows_pinned_on_it() {
    let s = builtin("core_link_failure");
    let mrc = run(&s, "mrc");
    check_conservation(&mrc, "mrc");
    assert_eq!((mrc.finished, mrc.failed), (mrc.flows.len(), 0));
    assert_eq!(mrc.bytes_lost, 0);
    assert!(mrc.drops.link_down > 0, "the failure was hit");

    let roce = run(&s, "roce");
    check_conservation(&roce, "roce");
    assert!(roce.failed > 0, "some RoCE flow hashed onto a dead link");
    assert!(roce.failed < roce.flows.len() / 4, "{} failed", roce.failed);
    assert_eq!(roce.finished + roce.failed, roce.flows.len());
    assert!(roce.bytes_lost > 0);
    for f in roce.flows.iter().filter(|f| f.failed) {
        // Pinned on the dead path: every retry timed out, none got an ACK back.
        assert_eq!(
            f.timeouts,
            u64::from(transport::roce::RETRY_CNT) + 1,
            "{f:?}"
        );
    }
}

mod props {
    use super::*;
    use crate::netsim::topology::Topology;
    use proptest::prelude::*;

    /// Fat tree k = 4 (16 hosts) or 2-4 planes of 8 or 16 hosts.
    fn topology_toml() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("kind = \"fat_tree\"\nk = 4".to_string()),
            (2u8..=4, prop_oneof![Just(8u32), Just(16)], 2u32..=4).prop_map(
                |(planes, hosts, up)| format!(
                    "kind = \"multi_plane\"\nplanes = {planes}\nhosts = {hosts}\nt0_down = 4\nt0_up = {up}"
                )
            ),
        ]
    }

    #[derive(Debug, Clone, Copy)]
    enum Hit {
        /// Down at `at`, up again this much later.
        Outage(Ps),
        Degrade(f64),
        Loss(f64),
    }

    fn hit() -> impl Strategy<Value = Hit> {
        prop_oneof![
            3 => (1u64..=150).prop_map(|d| Hit::Outage(d * US)),
            1 => (1u32..=9).prop_map(|x| Hit::Degrade(f64::from(x) / 10.0)),
            1 => (1u32..=20).prop_map(|x| Hit::Loss(f64::from(x) / 1000.0)),
        ]
    }

    #[derive(Debug, Clone)]
    struct Case {
        topology: String,
        /// (src, dst, bytes, start us): hosts modulo the topology's.
        flows: Vec<(u32, u32, u64, u64)>,
        /// (at us, where, what). Where: `(true, x)` a host port of a flow's source or
        /// destination (x picks flow, end and plane), so faults hit the traffic often;
        /// `(false, x)` any link, x modulo the topology's links.
        faults: Vec<(u64, (bool, u32), Hit)>,
        seed: u64,
    }

    fn case() -> impl Strategy<Value = Case> {
        (
            topology_toml(),
            prop::collection::vec((any::<u32>(), any::<u32>(), 16u64..=256, 0u64..20), 1..6),
            // Most flows end within ~60 us: faults land while they run.
            prop::collection::vec((0u64..40, (any::<bool>(), any::<u32>()), hit()), 0..5),
            any::<u64>(),
        )
            .prop_map(|(topology, flows, faults, seed)| Case {
                topology,
                flows: flows
                    .into_iter()
                    .map(|(s, d, kb, t)| (s, d, kb * 1024, t))
                    .collect(),
                faults,
                seed,
            })
    }

    const STOP_US: f64 = 20_000.0;

    fn scenario_of(c: &Case) -> Scenario {
        inline(&format!(
            "name = \"prop\"\nseed = {}\nstop_us = {STOP_US}\nsample_us = 10\n\
             [topology]\n{}\nlink_gbps = 100\n\
             [nic]\nrtx_ooo_threshold = 64\n\
             [traffic]\npattern = \"permutation\"\nflow_bytes = 4096\n",
            c.seed >> 1, // TOML integers are i64
            c.topology
        ))
    }

    /// The scenario's network for `name`, with the case's flows and faults.
    fn build(c: &Case, name: &str) -> (Box<dyn Transport>, SimConfig) {
        let (t, mut cfg) = setup(&scenario_of(c), name);
        let hosts = cfg.topology.hosts;
        let links = cfg.topology.links.len() as u32;
        cfg.flows = c
            .flows
            .iter()
            .enumerate()
            .map(|(i, &(s, d, bytes, start))| {
                let src = s % hosts;
                let dst = (src + 1 + d % (hosts - 1)) % hosts;
                FlowSpec {
                    id: i as u32,
                    src,
                    dst,
                    bytes,
                    start: start * US,
                    seed: c.seed ^ i as u64,
                    after: None,
                }
            })
            .collect();
        cfg.traced_flows = vec![0];
        cfg.faults = Vec::new();
        for &(at, (on_flow, x), hit) in &c.faults {
            let link = if on_flow {
                let f = &cfg.flows[x as usize % cfg.flows.len()];
                let host = if x & 1 == 0 { f.src } else { f.dst };
                cfg.topology
                    .host_uplink(host, (x >> 1) as u8 % cfg.topology.planes)
            } else {
                x % links
            };
            let at = at * US;
            match hit {
                Hit::Outage(d) => {
                    cfg.faults.push(Fault {
                        at,
                        link,
                        kind: FaultKind::Down,
                    });
                    cfg.faults.push(Fault {
                        at: at + d,
                        link,
                        kind: FaultKind::Up,
                    });
                }
                Hit::Degrade(f) => cfg.faults.push(Fault {
                    at,
                    link,
                    kind: FaultKind::Degrade(f),
                }),
                Hit::Loss(p) => cfg.faults.push(Fault {
                    at,
                    link,
                    kind: FaultKind::Loss(p),
                }),
            }
        }
        cfg.faults.sort_by_key(|f| f.at);
        (t, cfg)
    }

    fn run_case(c: &Case, name: &str) -> RunResult {
        let (t, cfg) = build(c, name);
        Sim::run_to_end(cfg, &*t)
    }

    #[test]
    fn the_property_cases_build_every_topology_kind() {
        // Guard against a strategy that silently stops producing a shape.
        let c = Case {
            topology: "kind = \"multi_plane\"\nplanes = 4\nhosts = 16\nt0_down = 4\nt0_up = 2"
                .into(),
            flows: vec![(0, 0, 16 * 1024, 0)],
            faults: vec![],
            seed: 1,
        };
        let (_, cfg) = build(&c, "mrc");
        let t: &Topology = &cfg.topology;
        assert_eq!((t.planes, t.hosts), (4, 16));
        assert_ne!(cfg.flows[0].src, cfg.flows[0].dst);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20, ..ProptestConfig::default() })]

        /// Random small fabrics, flows and bounded faults (every outage heals within 150 us,
        /// loss up to 2 %) with the real MRC and RoCE.
        #[test]
        fn real_transports_keep_the_invariants_under_random_faults(c in case()) {
            for name in ["mrc", "roce"] {
                let a = run_case(&c, name);
                check_conservation(&a, name);
                prop_assert!(a.end_us <= STOP_US);
                let all_done = a.flows.iter().all(|f| f.fct_us.is_some() || f.failed);
                // The run ends early only when every flow has ended; a flow still running at
                // the end means the run hit stop_at.
                prop_assert!(all_done || a.end_us == STOP_US, "{}: {:?}", name, a.flows);
                if is_mrc(name) {
                    // Outages are bounded and far shorter than MRC's retry budget: every flow
                    // finishes, with exactly its bytes.
                    prop_assert_eq!(a.failed, 0, "{:?}", a.flows);
                    prop_assert!(all_done);
                    for f in &a.flows {
                        prop_assert_eq!(f.bytes_delivered, f.bytes);
                    }
                }
                let b = run_case(&c, name);
                prop_assert_eq!(a.hash, b.hash);
                prop_assert_eq!(a, b);
            }
        }
    }
}
