//! System cosim: the host driver (`mrc-host-driver`, its cosim backend: BAR model, host
//! memory, descriptor rings, doorbells, the DMA/queue engine) configures and drives the
//! Verilated `mrc_core`, and in lockstep the golden model of the same core: every output of
//! every clock is compared (every emitted transmit and ACK header, every MMIO response, so
//! every counter the driver reads). Two devices back to back (`cosim::loopback`), clean and
//! with loss and trims, and a property test over random driver-operation sequences.
//!
//! Config: `configs/core_small.toml` (3 QPs, 3 planes x 5 EVs, W = 64), the core CI builds.

use mrc_host_driver::cosim::loopback::{
    check_completions, pair, post_all, run_driver_ops, run_until, Dev, Link, Op,
};
use mrc_model::mrc_core::{CoreSim, Lockstep};
use mrc_testbench::{core_lockstep, example_config};
use proptest::prelude::*;

fn cfg() -> mrc_config::NicConfig {
    example_config("core_small")
}

/// No clock of the device's core differed between RTL and model; returns (clocks, tx headers).
fn in_lockstep<D: CoreSim, M: CoreSim>(d: &Dev<Lockstep<D, M>>, who: &str) -> (u64, u64) {
    d.backend().with_core(|l| {
        assert_eq!(
            l.mismatches,
            0,
            "{who}: {}",
            l.first.as_ref().map(|f| f.to_string()).unwrap_or_default()
        );
        (l.cycle, l.tx_headers)
    })
}

#[test]
fn the_driver_drives_the_rtl_through_clean_and_lossy_loopbacks() {
    let c = cfg();
    let wrs = [
        (0, 20_000),
        (1, 4_096),
        (2, 33_000),
        (0, 100),
        (1, 50_000),
        (2, 7),
    ];
    for (loss, trim, seed) in [(0, 0, 1), (30, 100, 2)] {
        let (mut a, b) = pair(&c, core_lockstep);
        let mut link = Link::new(&c, 40, loss, trim, seed);
        post_all(&mut a, &wrs);
        let mut evs = Vec::new();
        let done = run_until(&mut link, &mut a, &b, wrs.len(), Some(&mut evs));
        check_completions(&done, &wrs);
        let ka = a.read_counters().unwrap();
        let kb = b.read_counters().unwrap();
        // The counters read over MMIO (compared RTL vs model in every read) match the wire.
        assert_eq!(ka.pkts_sent, link.sent, "loss {loss}");
        assert_eq!(ka.retransmits, link.rtx);
        assert_eq!(kb.acks_sent, link.acks_seen);
        assert_eq!(kb.trims, link.trimmed);
        assert_eq!((ka.rx_dropped, kb.rx_dropped, ka.wqe_errors), (0, 0, 0));
        if loss > 0 {
            assert!(ka.retransmits > 0 && ka.nack_trimmed > 0, "{ka:?}");
            assert!(evs.iter().any(|e| e.cause == 3), "trim feedback in the EVQ");
        }
        // (The two devices' clocks differ: MMIO steps one device alone.)
        let (ca, ta) = in_lockstep(&a, "A");
        let (cb, _) = in_lockstep(&b, "B");
        assert!(ta >= u64::from(link.sent) && ca > 1_000 && cb > 1_000);
        eprintln!(
            "loss {loss}/1000 trim {trim}/1000: A {ca} clocks, {ta} transmit headers; B {cb} \
             clocks; 0 mismatches"
        );
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..3u32, 1..40_000u32).prop_map(|(qp, len)| Op::Post { qp, len }),
        2 => Just(Op::Doorbell),
        1 => (0..15u32).prop_map(Op::Deny),
        1 => (0..15u32).prop_map(Op::Allow),
        1 => Just(Op::Read),
        2 => (1..2000u32).prop_map(Op::Run),
        1 => (0..3u32).prop_map(Op::QuiesceReset),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    /// Random driver operations (posts, doorbells, EV deny/allow, counter reads, idle runs,
    /// QP resets) over a wire with random drops and trims: every accepted WR completes once,
    /// in order, the counters never go down, and the RTL equals the model every clock.
    #[test]
    fn random_driver_sequences_on_the_rtl_equal_the_model(
        ops in prop::collection::vec(op(), 1..16),
        loss in 0..30u32,
        trim in 0..40u32,
        seed in 0..1000u64,
    ) {
        let c = cfg();
        let (mut a, b) = pair(&c, core_lockstep);
        let mut link = Link::new(&c, 30, loss, trim, seed);
        let r = run_driver_ops(&mut a, &b, &mut link, &ops);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        in_lockstep(&a, "A");
        in_lockstep(&b, "B");
    }
}
