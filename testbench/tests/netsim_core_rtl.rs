//! RTL in the loop: the Verilated `mrc_core` (QP 0 of `configs/core_small.toml`) is the
//! sending endpoint of flow 0 inside the packet-level network simulator, in the `smoke`
//! scenario (k = 4 fat tree, 16 hosts, 256 KB permutation, an agg-core link down from 20 to
//! 120 us). The RTL runs in lockstep with its golden model, so each of its transmit decisions
//! (PSN, EV, plane, retransmit flag, every clock) equals the model's; and the whole run, packet
//! for packet, equals a run with the model core alone (same result hash).

use mrc_model::mrc_core::{CoreInputs, CoreOutputs, CoreSim, MrcCore};
use mrc_model::netsim::scenario::{Scenario, TransportChoice};
use mrc_model::netsim::sim::Sim;
use mrc_model::transport::core_ep::CoreTransport;
use mrc_model::transport::mrc::MrcTransport;
use mrc_model::transport::spray::SprayMode;
use mrc_testbench::{core_lockstep, example_config};
use std::cell::RefCell;
use std::rc::Rc;

/// A core the test keeps a handle on while the simulator owns it.
struct Shared<C>(Rc<RefCell<C>>);

impl<C: CoreSim> CoreSim for Shared<C> {
    fn step(&mut self, x: &CoreInputs) -> CoreOutputs {
        self.0.borrow_mut().step(x)
    }
    fn qps(&self) -> usize {
        self.0.borrow().qps()
    }
}

#[test]
fn the_rtl_sends_flow_0_of_the_smoke_scenario_exactly_as_the_model() {
    let sc = Scenario::load("smoke").unwrap();
    let choice = TransportChoice::Mrc("mrc");
    let nic = sc.nic_config_for(choice).unwrap();
    let core_cfg = example_config("core_small");

    // The model core alone.
    let model_run = Sim::run_to_end(
        sc.sim_config_for(choice).unwrap(),
        &CoreTransport {
            inner: MrcTransport::new(nic.clone(), SprayMode::Mrc),
            core_flow: 0,
            core_cfg: core_cfg.clone(),
            factory: Box::new(|c| Box::new(MrcCore::new(c))),
        },
    );

    // The RTL, in lockstep with the model.
    let cores = Rc::new(RefCell::new(Vec::new()));
    let keep = cores.clone();
    let rtl_run = Sim::run_to_end(
        sc.sim_config_for(choice).unwrap(),
        &CoreTransport {
            inner: MrcTransport::new(nic, SprayMode::Mrc),
            core_flow: 0,
            core_cfg,
            factory: Box::new(move |c| {
                let l = Rc::new(RefCell::new(core_lockstep(c)));
                keep.borrow_mut().push(l.clone());
                Box::new(Shared(l))
            }),
        },
    );

    let cores = cores.borrow();
    assert_eq!(cores.len(), 1, "one flow has the core as its requester");
    let l = cores[0].borrow();
    assert_eq!(
        l.mismatches,
        0,
        "{}",
        l.first.as_ref().map(|f| f.to_string()).unwrap_or_default()
    );
    let f0 = &rtl_run.flows[0];
    assert!(f0.fct_us.is_some(), "flow 0 did not complete: {f0:?}");
    assert_eq!((f0.bytes_lost, f0.bytes_delivered), (0, f0.bytes));
    assert!(l.tx_headers >= f0.data_sent && f0.data_sent >= 64, "{f0:?}");
    assert!(
        f0.link_down_drops > 0,
        "the failure should hit flow 0 (else pick another flow): {f0:?}"
    );
    assert_eq!(
        rtl_run.flows.iter().filter(|f| f.fct_us.is_none()).count(),
        0
    );
    // Packet for packet: the whole network run equals the model core's.
    assert_eq!(rtl_run.hash, model_run.hash);
    assert_eq!(rtl_run.flows, model_run.flows);
    eprintln!(
        "flow 0: {} data packets ({} retransmits, {} lost to the down link), FCT {:.1} us; \
         {} core clocks, {} transmit headers compared",
        f0.data_sent,
        f0.retransmits,
        f0.link_down_drops,
        f0.fct_us.unwrap(),
        l.cycle,
        l.tx_headers
    );
}
