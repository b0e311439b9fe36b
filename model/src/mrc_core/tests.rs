//! Model-level checks of the composition: two cores back to back (A sends on its QPs, B
//! receives), with loss and trims injected on the wire.

use super::*;
use crate::rng::SplitMix64 as Rng;
use std::collections::VecDeque;

fn cfg(qps: u32) -> NicConfig {
    NicConfig {
        qps,
        sack_window_bits: 64,
        planes: 2,
        evs_per_plane: 8,
        ev_min_active: 2,
        ..NicConfig::default()
    }
}

fn addr(c: &MrcCore, block: &str, reg: &str) -> u32 {
    c.csr().map().find(block, reg).expect("register").addr
}

/// One MMIO write, stepping until the response; returns the response code.
fn write(c: &mut MrcCore, block: &str, reg: &str, v: u32) -> u8 {
    let a = addr(c, block, reg);
    let mut x = CoreInputs::idle();
    x.wr_valid = true;
    x.wr_addr = a;
    x.wr_data = v;
    x.wr_strb = 0xF;
    let mut o = c.step(&x);
    while !o.b_valid {
        o = c.step(&CoreInputs::idle());
    }
    // The write's effect lands one clock after its response (the CSR's WO strobe is
    // registered); a PCIe master never reads back sooner.
    c.step(&CoreInputs::idle());
    o.b_resp
}

fn read(c: &mut MrcCore, block: &str, reg: &str) -> u32 {
    let a = addr(c, block, reg);
    let mut x = CoreInputs::idle();
    x.rd_valid = true;
    x.rd_addr = a;
    let mut o = c.step(&x);
    while !o.r_valid {
        o = c.step(&CoreInputs::idle());
    }
    o.r_data
}

/// A core after its reset (`CoreSim::reset`: the pulse and the clock it acts in).
fn core(c: &NicConfig) -> MrcCore {
    let mut m = MrcCore::new(c);
    m.reset();
    m
}

fn enable(c: &mut MrcCore, qp: u32) {
    assert_eq!(write(c, "QP", "QP_SEL", qp), 0);
    assert_eq!(write(c, "QP", "QP_CTRL", 1), 0);
}

/// A wire with a fixed delay (cycles) and a loss decision per header.
struct Wire<T> {
    q: VecDeque<(u64, T)>,
    delay: u64,
}

impl<T> Wire<T> {
    fn new(delay: u64) -> Self {
        Wire {
            q: VecDeque::new(),
            delay,
        }
    }
    fn push(&mut self, now: u64, v: T) {
        self.q.push_back((now + self.delay, v));
    }
    fn pop(&mut self, now: u64) -> Option<T> {
        if self.q.front().is_some_and(|(t, _)| *t <= now) {
            self.q.pop_front().map(|(_, v)| v)
        } else {
            None
        }
    }
}

struct Run {
    delivered: Vec<u32>,
    a: CoreCounters,
    b: CoreCounters,
    una: Vec<u32>,
    cycles: u64,
}

/// A sends `bytes` on each of its QPs to B; `loss` (per mille) drops data headers, `trim`
/// (per mille) trims them instead. Runs until every QP's una covers its packets.
fn transfer(qps: u32, bytes: u32, loss: u32, trim: u32, seed: u64) -> Run {
    let c = cfg(qps);
    let mut a = core(&c);
    let mut b = core(&c);
    for qp in 0..qps {
        enable(&mut a, qp);
        enable(&mut b, qp);
    }
    // Load the default EV profile.
    for (i, ev) in c.default_ev_profile().iter().enumerate() {
        write(&mut a, "EVT", "EV_INDEX", i as u32);
        write(&mut a, "EVT", "EV_VALUE", *ev);
        write(&mut a, "EVT", "EV_OP", 3);
    }
    let pkts = bytes.div_ceil(c.mtu);
    let mut rng = Rng::new(seed);
    let mut data: Wire<CoreInputs> = Wire::new(40);
    let mut acks: Wire<CoreInputs> = Wire::new(40);
    let mut delivered = vec![0u32; qps as usize];
    let mut posted = 0;
    let mut t = 0u64;
    let mut now_ns = 0u32;
    loop {
        let mut xa = CoreInputs::idle();
        let mut xb = CoreInputs::idle();
        now_ns = now_ns.wrapping_add(4);
        xa.now_ns = now_ns;
        xb.now_ns = now_ns;
        xa.tick = t.is_multiple_of(256);
        xb.tick = xa.tick;
        if posted < qps {
            xa.sq_valid = true;
            xa.sq_qp = posted as u8;
            xa.sq_bytes = bytes;
            posted += 1;
        }
        if let Some(h) = data.pop(t) {
            xb = CoreInputs {
                now_ns,
                tick: xb.tick,
                ..h
            };
        }
        if let Some(h) = acks.pop(t) {
            xa = CoreInputs {
                now_ns,
                tick: xa.tick,
                sq_valid: xa.sq_valid,
                sq_qp: xa.sq_qp,
                sq_bytes: xa.sq_bytes,
                ..h
            };
        }
        let oa = a.step(&xa);
        let ob = b.step(&xb);
        if oa.tx_valid {
            let r = rng.below(1000) as u32;
            if r >= loss {
                let len = if oa.tx_rtx { c.mtu as u16 } else { oa.tx_len };
                let trimmed = r < loss + trim;
                data.push(
                    t,
                    CoreInputs {
                        rx_valid: true,
                        rx_qp: oa.tx_qp,
                        rx_kind: RX_DATA,
                        rx_psn: oa.tx_psn,
                        rx_len: if trimmed { 0 } else { len },
                        rx_trimmed: trimmed,
                        rx_ev: oa.tx_ev,
                        rx_ackreq: oa.tx_last,
                        plane_ready: 0xFF,
                        ..Default::default()
                    },
                );
            }
        }
        if ob.ack_valid {
            let ev_idx = c
                .default_ev_profile()
                .iter()
                .position(|&e| e == ob.ack_ev)
                .unwrap_or(0) as u8;
            acks.push(
                t,
                CoreInputs {
                    rx_valid: true,
                    rx_qp: ob.ack_qp,
                    rx_kind: if ob.ack_nack { RX_NACK } else { RX_SACK },
                    rx_psn: if ob.ack_nack { ob.ack_psn } else { ob.ack_cack },
                    rx_offset: ob.ack_offset,
                    rx_bitmap: ob.ack_bitmap,
                    rx_m: ob.ack_m,
                    rx_rcvd_bytes: ob.ack_rcvd_bytes,
                    rx_reason: ob.ack_reason,
                    rx_ev_idx: ev_idx,
                    plane_ready: 0xFF,
                    ..Default::default()
                },
            );
        }
        for (qp, d) in delivered.iter_mut().enumerate() {
            *d = b.tracker(qp).outputs().cack_psn;
        }
        t += 1;
        if posted == qps && oa.una.iter().all(|&u| u == pkts) {
            return Run {
                delivered,
                a: *a.counters(),
                b: *b.counters(),
                una: oa.una,
                cycles: t,
            };
        }
        assert!(
            t < 3_000_000,
            "transfer did not finish: una {:?} a {:?} b {:?} fifo {} preq {} sb {:?}",
            oa.una,
            a.counters(),
            b.counters(),
            a.f_count,
            a.preq,
            a.scoreboard(0).outputs()
        );
    }
}

#[test]
fn a_clean_transfer_completes_and_is_delivered_in_order() {
    let r = transfer(1, 256 * 1024, 0, 0, 1);
    assert_eq!(r.una, vec![64]);
    // cack_psn is the last in-order PSN received (init 0 - 1).
    assert_eq!(r.delivered, vec![63]);
    assert_eq!(r.a.pkts_sent, 64);
    assert_eq!(r.a.retransmits, 0);
    assert!(r.b.acks_sent > 0);
    assert_eq!(r.a.rx_dropped + r.b.rx_dropped, 0);
}

#[test]
fn loss_and_trims_are_repaired_on_every_qp() {
    for seed in 1..4 {
        let r = transfer(3, 200 * 1024, 20, 20, seed);
        assert_eq!(r.una, vec![50; 3], "seed {seed}");
        assert!(r.a.retransmits > 0, "seed {seed}: {:?}", r.a);
        assert!(r.b.trims > 0);
        assert!(r.a.nack_trimmed > 0);
        assert!(r.cycles > 0);
    }
}

#[test]
fn bad_requests_are_counted_and_dropped() {
    let c = cfg(2);
    let mut a = core(&c);
    // QP_CTRL on a QP that does not exist.
    write(&mut a, "QP", "QP_SEL", 5);
    write(&mut a, "QP", "QP_CTRL", 1);
    // A post to a disabled QP, a header for a QP out of range and one of an unknown kind.
    let mut x = CoreInputs::idle();
    x.sq_valid = true;
    x.sq_qp = 1;
    x.sq_bytes = 100;
    a.step(&x);
    let mut x = CoreInputs::idle();
    x.rx_valid = true;
    x.rx_qp = 7;
    x.rx_kind = RX_DATA;
    a.step(&x);
    enable(&mut a, 0);
    let mut x = CoreInputs::idle();
    x.rx_valid = true;
    x.rx_kind = 6;
    a.step(&x);
    for _ in 0..4 {
        a.step(&CoreInputs::idle());
    }
    assert_eq!(a.counters().refused_ops, 2);
    assert_eq!(a.counters().rx_dropped, 2);
    assert_eq!(read(&mut a, "CNT", "REFUSED_OPS"), 2);
    assert_eq!(read(&mut a, "CNT", "RX_DROPPED"), 2);
    // Nothing was sent and nothing reached a block.
    assert_eq!(a.counters().pkts_sent, 0);
    assert_eq!(a.tracker(0).outputs().cnt_accepted, 0);
}

#[test]
fn qp_status_and_reset_follow_qp_ctrl() {
    let c = cfg(2);
    let mut a = core(&c);
    write(&mut a, "QP", "QP_SEL", 1);
    assert_eq!(read(&mut a, "QP", "QP_STATUS"), 0);
    write(&mut a, "QP", "QP_CTRL", 1);
    assert_eq!(read(&mut a, "QP", "QP_STATUS"), 1);
    write(&mut a, "QP", "QP_INIT_PSN", 1000);
    write(&mut a, "QP", "QP_CTRL", 3);
    for _ in 0..3 {
        a.step(&CoreInputs::idle());
    }
    assert_eq!(a.scoreboard(1).outputs().nxt, 1000);
    assert_eq!(a.scoreboard(0).outputs().nxt, 0);
    assert!(a.enabled(1));
    write(&mut a, "QP", "QP_CTRL", 2);
    assert_eq!(read(&mut a, "QP", "QP_STATUS"), 0);
}
