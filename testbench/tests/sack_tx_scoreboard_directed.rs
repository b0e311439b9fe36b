//! Directed scenarios for `sack_tx_scoreboard`, each run on the RTL in lockstep with the
//! model (one cycle at a time, so the test can react to the outputs), then checked against the
//! property it is named after.

use mrc_config::NicConfig;
use mrc_model::ev_spray_arbiter::FeedbackKind;
use mrc_model::sack_tx_scoreboard::{
    TxInputs, TxOutputs, NACK_PSN_OOR_WINDOW, OP_NACK, OP_SACK, OP_SEND, OP_TICK,
};
use mrc_testbench::{tx_with_reset, TxRig};

const M24: u32 = 0xFF_FFFF;

struct Bench {
    rig: TxRig,
    base: TxInputs,
    last: TxOutputs,
    cycle: usize,
}

impl Bench {
    fn new(cfg: &NicConfig, init: u32, timers: (u8, u8, u8, u16)) -> Self {
        let mut base = TxInputs::idle(cfg);
        base.rto_exp = timers.0;
        base.rto_linear_retries = timers.1;
        base.rto_backoff_retries = timers.2;
        base.rtx_ooo_threshold = timers.3;
        let mut rig = TxRig::new(cfg);
        let out = rig.run(&tx_with_reset(base, init));
        Bench {
            rig,
            base,
            last: *out.last().unwrap(),
            cycle: 0,
        }
    }
    fn step(&mut self, x: TxInputs) -> TxOutputs {
        self.last = self.rig.run(&[x])[0];
        self.cycle += 1;
        self.last
    }
    fn idle(&mut self, n: usize) -> TxOutputs {
        for _ in 0..n {
            self.step(self.base);
        }
        self.last
    }
    fn send(&mut self, psn: u32, ev: u8) -> TxOutputs {
        self.step(TxInputs {
            op: OP_SEND,
            psn: psn & M24,
            ev_idx: ev,
            ..self.base
        })
    }
    fn sack(&mut self, cack: u32, offset: i16, bitmap: u64) -> TxOutputs {
        self.step(TxInputs {
            op: OP_SACK,
            cack: cack & M24,
            offset: offset as u16,
            bitmap,
            ev_idx: 9,
            ..self.base
        })
    }
    fn nack(&mut self, psn: u32, reason: u8) -> TxOutputs {
        self.step(TxInputs {
            op: OP_NACK,
            psn: psn & M24,
            reason,
            ..self.base
        })
    }
    fn tick(&mut self) -> TxOutputs {
        self.step(TxInputs {
            op: OP_TICK,
            ..self.base
        })
    }
}

/// RTO: `rto_linear_retries` timeouts at 2^rto_exp ticks, then doubling, then the QP errors
/// (sticky, reported, every later op refused and counted, nothing offered, no hang).
#[test]
fn rto_is_linear_then_exponential_then_the_qp_errors() {
    let cfg = NicConfig::default();
    let init = 0xFF_FFFE; // across the 2^24 wrap
    let (exp, lin, back) = (3u8, 2u8, 3u8);
    let mut b = Bench::new(&cfg, init, (exp, lin, back, 16));
    b.send(init, 77);
    b.idle(3);
    let mut ticks = 0u32;
    let mut sent_at = 0u32;
    let mut intervals = Vec::new();
    for _ in 0..2000 {
        let y = b.tick();
        ticks += 1;
        if y.fb_valid {
            assert_eq!(y.fb_kind, FeedbackKind::Timeout as u8);
            assert_eq!(y.fb_idx, 77, "a timeout names the EV the packet used");
            intervals.push(ticks - sent_at);
        }
        if y.qp_error {
            break;
        }
        if y.rtx_valid {
            assert_eq!(y.rtx_psn, init);
            b.send(init, 77);
            sent_at = ticks;
            b.idle(3);
        }
    }
    let y = b.last;
    assert!(y.qp_error, "the QP must error after the retry limit");
    assert_eq!(y.err_psn, init);
    // the counters count a clock after the event
    let y = b.idle(1);
    assert_eq!(y.cnt_timeouts, u32::from(lin + back) + 1);
    assert_eq!(y.cnt_retransmits, u32::from(lin + back));
    // interval k (ticks from the (re)send to its timeout): 2^exp while head_tmo <= lin, then
    // doubling; the pipeline adds at most a couple of ticks.
    assert_eq!(intervals.len(), usize::from(lin + back) + 1);
    for (k, &iv) in intervals.iter().enumerate() {
        let e = u32::from(exp) + (k as u32).saturating_sub(u32::from(lin));
        let want = 1u32 << e;
        assert!(
            (want..=want + 3).contains(&iv),
            "timeout {k}: {iv} ticks, want 2^{e} = {want} (+ pipeline): {intervals:?}"
        );
    }
    // sticky error: ops refused and counted, no retransmit offered, outputs alive
    let before = b.last;
    b.send(init.wrapping_add(1) & M24, 1);
    b.nack(init, 1);
    b.sack(init, 1, 0);
    let y = b.idle(6);
    assert!(y.qp_error && !y.rtx_valid && !y.can_send);
    assert_eq!(y.cnt_bad_send, before.cnt_bad_send + 1);
    assert_eq!(y.cnt_bad_nack, before.cnt_bad_nack + 1);
    assert_eq!(y.cnt_bad_sack, before.cnt_bad_sack + 1);
    assert_eq!(y.nxt, before.nxt);
    // a reset recovers
    let out = b.rig.run(&tx_with_reset(b.base, 5));
    assert!(!out[1].qp_error && out[1].una == 5);
}

/// Malformed SACKs / NACKs / SENDs are ignored (no state change, no feedback) and counted.
#[test]
fn edge_inputs_are_ignored_and_counted() {
    let cfg = NicConfig::default();
    let init = 100;
    let mut b = Bench::new(&cfg, init, (20, 7, 25, 0));
    for i in 0..10 {
        b.send(init + i, i as u8);
    }
    b.sack(init + 4, 1, 0b101); // acks 100..=104, 105 and 107
    let y = b.idle(12);
    assert_eq!((y.una, y.nxt), (init + 6, init + 10));
    let c = y;
    let mut fb = 0;
    let mut run = |b: &mut Bench, f: &dyn Fn(&mut Bench) -> TxOutputs| {
        f(b);
        for _ in 0..6 {
            fb += b.step(b.base).fb_valid as u32;
        }
    };
    run(&mut b, &|b| b.sack(init + 2, 1, 0)); // cack backwards
    run(&mut b, &|b| b.sack(init + 10, 1, 0)); // cack >= nxt
    run(&mut b, &|b| b.sack(init + 6, 0, 1)); // offset < 1
    run(&mut b, &|b| b.sack(init + 6, -3, 1)); // negative offset
    run(&mut b, &|b| b.sack(init + 6, 1, 1 << 3)); // bitmap bit names PSN 110 (never sent)
    run(&mut b, &|b| b.sack(init + 6, 8, 1)); // bitmap starts past nxt (PSN 114)
    run(&mut b, &|b| b.nack(init + 2, 1)); // NACK for an acked (retired) PSN
    run(&mut b, &|b| b.nack(init + 7, 1)); // NACK for an acked PSN still in the window
    run(&mut b, &|b| b.nack(init + 30, 1)); // NACK beyond nxt
    run(&mut b, &|b| b.send(init + 8, 1)); // SEND of an outstanding, unmarked PSN
    run(&mut b, &|b| b.send(init + 30, 1)); // SEND beyond nxt
    let y = b.last;
    assert_eq!(fb, 0, "ignored inputs produce no feedback");
    assert_eq!(y.cnt_stale_sack, c.cnt_stale_sack + 1);
    assert_eq!(y.cnt_bad_sack, c.cnt_bad_sack + 5);
    assert_eq!(y.cnt_bad_nack, c.cnt_bad_nack + 3);
    assert_eq!(y.cnt_bad_send, c.cnt_bad_send + 2);
    assert_eq!((y.una, y.nxt), (c.una, c.nxt));
    assert!(!y.rtx_valid);
    assert_eq!(y.cnt_retransmits, 0);
    // the scoreboard still works: a valid SACK moves una
    b.sack(init + 9, 1, 0);
    let y = b.idle(8);
    assert_eq!(y.una, init + 10);
}

/// The SACK checks against `nxt - una` hold on the cycle right after a SEND moved nxt and
/// while una is advancing (the RTL subtracts una a cycle early, for both outcomes of the
/// SEND): a SACK naming the PSN sent the cycle before, cumulatively or as the bitmap's last
/// bit, is good; one naming the PSN after it is bad.
#[test]
fn sack_checks_see_the_send_of_the_cycle_before() {
    for w in [64u32, 256] {
        let cfg = NicConfig {
            sack_window_bits: w,
            ..NicConfig::default()
        };
        let init = M24 - 20;
        let p = |i: u32| (init + i) & M24;
        let mut b = Bench::new(&cfg, init, (20, 7, 25, 0));
        let mut next = 0u32;
        let mut bad = b.last.cnt_bad_sack;
        // (cack, bitmap, good): offsets relative to the PSN just sent
        let cases: [(i32, u64, bool); 4] = [
            (0, 0, true),
            (1, 0, false),
            (-1, 0b1, true),
            (-1, 0b11, false),
        ];
        // lead: none (una still), or the cycles between a 24-PSN SACK and the SEND, so that
        // una advances (8 per clock) at the checked SACK's S0 and S1 in some alignment;
        // gap: idle cycles between the SEND and the checked SACK.
        let leads = [None, Some(1), Some(2), Some(3), Some(4), Some(5)];
        for (lead, gap) in leads.iter().flat_map(|l| [(*l, 0), (*l, 1)]) {
            for &(dc, bm, good) in &cases {
                if let Some(d) = lead {
                    for _ in 0..24 {
                        b.send(p(next), 1);
                        next += 1;
                    }
                    b.idle(3);
                    b.sack(p(next - 1), 1, 0);
                    b.idle(d);
                }
                b.send(p(next), 2);
                next += 1;
                b.idle(gap);
                b.sack((p(next - 1) as i32 + dc) as u32, 1, bm);
                let y = b.idle(12);
                assert_eq!(y.nxt, p(next), "W = {w}: the SEND was new");
                if good {
                    assert_eq!(
                        y.una,
                        p(next),
                        "W = {w}, {dc} {bm:b} lead {lead:?} gap {gap}: good SACK acks up to nxt"
                    );
                    assert_eq!(y.cnt_bad_sack, bad);
                } else {
                    bad += 1;
                    assert_eq!(
                        y.cnt_bad_sack, bad,
                        "W = {w}, {dc} {bm:b} lead {lead:?} gap {gap}: names an unsent PSN"
                    );
                    assert_eq!(y.una, p(next - 1));
                    // ack what is outstanding before the next case
                    b.sack(p(next - 1), 1, 0);
                    assert_eq!(b.idle(12).una, p(next));
                }
            }
        }
    }
}

/// Retransmissions are offered oldest first, never an acked PSN, across the PSN wrap, and
/// trimmed NACKs report the EV the packet used.
#[test]
fn retransmits_oldest_first() {
    for w in [64u32, 256] {
        let cfg = NicConfig {
            sack_window_bits: w,
            ..NicConfig::default()
        };
        let init = M24 - 3;
        let mut b = Bench::new(&cfg, init, (20, 7, 25, 0));
        for i in 0..12u32 {
            b.send(init + i, 40 + i as u8);
        }
        b.idle(2);
        let p = |i: u32| (init + i) & M24;
        let y = b.nack(p(7), 1);
        assert!(!y.fb_valid);
        b.nack(p(3), NACK_PSN_OOR_WINDOW);
        b.nack(p(5), 2);
        // (the I stage: feedback four edges after the op)
        let y = b.step(b.base);
        assert!(!y.fb_valid);
        let y = b.step(b.base);
        assert!(y.fb_valid && y.fb_kind == FeedbackKind::NackTrimmed as u8 && y.fb_idx == 47);
        let y = b.step(b.base);
        assert!(
            !y.fb_valid,
            "PSN_OOR_WINDOW retransmits without path feedback"
        );
        let y = b.step(b.base);
        assert!(
            y.fb_valid && y.fb_kind == FeedbackKind::NackTrimmedLastHop as u8 && y.fb_idx == 45
        );
        // PSN 5 gets SACKed before its retransmission: it must not be offered
        b.sack(p(1), 4, 1); // base = p(5)
        let mut order = Vec::new();
        for _ in 0..40 {
            let y = b.step(b.base);
            if y.rtx_valid {
                order.push(y.rtx_psn);
                b.send(y.rtx_psn, 1);
                b.idle(4);
            }
        }
        assert_eq!(order, vec![p(3), p(7)], "W={w}");
    }
}

/// Two ops on one PSN (one slot) at every spacing 0..=4, and a head timeout meeting a SEND,
/// NACK or SACK of the head at every alignment. The RTL reads a slot's flags a cycle early
/// and patches in the previous op's own update of that slot (and a timeout's mark), and reads
/// the head a cycle before its timeout check: this sweep puts every such pair in flight
/// together. Lockstep with the model, plus the promises that do not depend on the spacing.
#[test]
fn same_psn_ops_in_every_alignment() {
    let cfg = NicConfig::default();
    let init = 1000;
    let p = |i: u32| (init + i) & M24;
    type Op = fn(&mut Bench, u32) -> TxOutputs;
    let send: Op = |b, psn| b.send(psn, 3);
    let nack: Op = |b, psn| b.nack(psn, 1);
    // cumulative up to psn - 1, and psn itself by bitmap bit 0
    let sack: Op = |b, psn| b.sack(psn.wrapping_sub(1) & M24, 1, 1);
    // (name, first, second, PSN, marked first): p(8) is nxt, so a SEND of it is new.
    let pairs: [(&str, Op, Op, u32, bool); 6] = [
        ("nack, send", nack, send, 5, false),
        ("send, send", send, send, 5, true),
        ("nack, nack", nack, nack, 5, false),
        ("send, nack", send, nack, 8, false),
        ("sack, nack", sack, nack, 5, false),
        ("nack, sack", nack, sack, 5, false),
    ];
    for (name, first, second, i, marked) in pairs {
        for gap in 0..=4 {
            let mut b = Bench::new(&cfg, init, (20, 7, 25, 0));
            for i in 0..8 {
                b.send(p(i), i as u8);
            }
            b.idle(4);
            if marked {
                b.nack(p(i), 1); // a SEND of it is then a retransmit
                b.idle(4);
            }
            let before = b.last;
            first(&mut b, p(i));
            b.idle(gap);
            second(&mut b, p(i));
            let y = b.idle(8);
            if name == "send, nack" {
                assert_eq!(
                    (y.nxt, y.cnt_bad_nack),
                    (p(9), before.cnt_bad_nack),
                    "{name} gap {gap}: a NACK right after the new SEND is valid"
                );
            }
            if name == "nack, send" {
                assert_eq!(
                    y.cnt_retransmits,
                    before.cnt_retransmits + 1,
                    "{name} gap {gap}: the NACKed PSN is retransmitted"
                );
            }
            if name == "send, send" {
                assert_eq!(
                    (y.cnt_retransmits, y.cnt_bad_send),
                    (before.cnt_retransmits + 1, before.cnt_bad_send + 1),
                    "{name} gap {gap}: one retransmit, the second SEND refused"
                );
            }
        }
    }
    // A head timeout (rto 2^2 ticks) with a SEND / NACK / SACK of the head at every alignment.
    let head_ops: [(&str, Op); 3] = [("send", send), ("nack", nack), ("sack", sack)];
    for (name, op) in head_ops {
        for ticks in 2..=8 {
            for gap in 0..=3 {
                let mut b = Bench::new(&cfg, init, (2, 3, 3, 0));
                for i in 0..4 {
                    b.send(p(i), 10 + i as u8);
                }
                b.idle(2);
                for _ in 0..ticks {
                    b.tick();
                }
                b.idle(gap);
                op(&mut b, p(0));
                let y = b.idle(8);
                assert!(!y.qp_error, "{name}, {ticks} ticks, gap {gap}");
            }
        }
    }
}

/// A retransmit of the new head whose S1 comes just after una moved onto it takes the RTO of a
/// head whose timeout count that move cleared (S0 forms the exponent for head_tmo kept, + 1
/// and cleared, and the edge's una advance picks). The SEND is tried at every offset around
/// the advance; RTL and model must agree on when the retransmit times out.
#[test]
fn head_retransmit_as_una_moves_gets_the_cleared_backoff() {
    let cfg = NicConfig {
        sack_window_bits: 64,
        ..NicConfig::default()
    };
    let mut at_exact_edge = 0;
    for d in 0..10 {
        // rto_exp 1, no linear retries: head_tmo adds straight to the exponent
        let mut b = Bench::new(&cfg, 100, (1, 0, 8, 0));
        b.send(100, 1);
        b.send(101, 2);
        b.idle(3);
        b.nack(101, 1);
        b.idle(3);
        // the head (100) times out, is retransmitted, times out again: head_tmo 2
        while b.last.cnt_timeouts < 2 {
            let t = b.last.cnt_timeouts;
            b.tick();
            let y = b.idle(4);
            if y.cnt_timeouts != t {
                b.send(100, 1);
                b.idle(3);
            }
            assert!(b.cycle < 400, "the head never timed out twice");
        }
        b.idle(4);
        b.sack(100, 1, 0);
        b.idle(d);
        let before = b.last.cnt_retransmits;
        // outputs after the I, S0 and S1 edges of the SEND
        let y_i = b.send(101, 3);
        let y_s0 = b.idle(1);
        b.idle(1);
        // counted a clock after S1
        let y_c = b.idle(1);
        assert_eq!(
            y_c.cnt_retransmits,
            before + 1,
            "d = {d}: 101 not retransmitted"
        );
        // una moved onto 101 at the S0 edge: S1 sees the new head and head_tmo cleared
        if y_i.una == 100 && y_s0.una == 101 {
            at_exact_edge += 1;
        }
        // long enough for a deadline of 2^(1 + 2) ticks; each TICK is checked in lockstep
        for _ in 0..12 {
            b.tick();
            b.idle(1);
        }
    }
    assert!(at_exact_edge > 0, "no offset met the una advance");
}

/// Ops are checked against una as S1 will see it: the una loop's advance at the op's S0 edge
/// (up to 8 PSNs a clock) is already counted. A SACK whose cumulative ack is nxt (one past
/// the last PSN sent) is refused whenever it arrives, also when una moves at its S0 edge
/// (`cack + 1 - una <= nxt - una` must subtract the same una on both sides); a NACK for a PSN
/// una has passed by its S1 is refused too (the PSN is retired). Swept over the op's offset from
/// the SACK that starts the advance, so that for some offsets the advance lands exactly on
/// the op's S0 edge (asserted); every cycle in lockstep with the model. Random traffic rarely
/// puts an op there: `nxt - una` taken without that edge's advance passed 300 k cycles of
/// compare at W = 256 and at `configs/small.toml` and diverged after 70 k at W = 64; this
/// test catches it on the first offset that meets the edge.
#[test]
fn ops_are_checked_against_una_as_it_moves_at_their_s0_edge() {
    let cfg = NicConfig {
        sack_window_bits: 64,
        ..NicConfig::default()
    };
    let init = 100;
    let (mut sack_at_edge, mut nack_at_edge) = (0, 0);
    for d in 0..12 {
        for nack in [false, true] {
            let mut b = Bench::new(&cfg, init, (20, 7, 25, 0));
            for i in 0..24 {
                b.send(init + i, 1);
            }
            b.idle(3);
            // acks 100..=119: the loop walks una over them, 8 a clock
            b.sack(init + 19, 1, 0);
            b.idle(d);
            let c = b.last;
            let psn = init + 12;
            let y_i = if nack {
                b.nack(psn, 1)
            } else {
                b.sack(init + 24, 1, 0) // cack = nxt: names a PSN never sent
            };
            let y_s0 = b.idle(1);
            let y = b.idle(8);
            assert_eq!(y.una, init + 20, "d = {d}: una");
            if nack {
                nack_at_edge += (y_i.una <= psn && y_s0.una > psn) as u32;
                // Once S1 sees una past it the PSN is retired; earlier, the NACK may be
                // taken (lockstep decides).
                if y_s0.una > psn {
                    assert_eq!(y.cnt_bad_nack, c.cnt_bad_nack + 1, "d = {d}: NACK taken");
                }
            } else {
                sack_at_edge += (y_i.una != y_s0.una) as u32;
                assert_eq!(y.cnt_bad_sack, c.cnt_bad_sack + 1, "d = {d}: SACK taken");
            }
        }
    }
    assert!(
        sack_at_edge > 0,
        "no offset put una's advance on the SACK's S0 edge"
    );
    assert!(
        nack_at_edge > 0,
        "no offset put una's advance on the NACK's S0 edge"
    );
}

/// TICKs right behind a SEND read its deadline from the RAM's bypass (the write lands after
/// their read), and with a short RTO they can find it passed there: for rto_exp 0 to 3 and
/// each gap between the SEND and a train of TICKs, RTL and model must time the head out on
/// the same clock. Random compare (200 k cycles, three configs) passed a bypass age test a
/// tick early at rto_exp 2 (tried on branch `wip/sb-bypass-age-bits`); this test fails it.
#[test]
fn a_short_rto_expires_on_the_deadline_still_in_the_ram_bypass() {
    let cfg = NicConfig::default();
    let mut timeouts = 0;
    for exp in 0..=3u8 {
        for gap in 0..3 {
            let mut b = Bench::new(&cfg, 500, (exp, 7, 0, 0));
            b.idle(2);
            b.send(500, 4);
            b.idle(gap);
            let before = b.last.cnt_timeouts;
            for _ in 0..12 {
                b.tick();
            }
            timeouts += b.idle(4).cnt_timeouts - before;
        }
    }
    assert!(timeouts > 0, "no timeout fired");
}

/// A SEND of the head whose S1 comes just after a timeout fired on it is a retransmit (the
/// mark is patched in at S1) whose RTO is that of head_tmo + 1: S0 formed that exponent
/// beside the kept one, and the timeout picks. Swept over the number of TICKs before the
/// SEND, so that one of them puts its S1 on the clock after the fire; RTL and model must then
/// time the retransmit out on the same clock. Random traffic rarely meets that clock: the
/// head_tmo + 1 exponent formed as the kept one passed 200 k compare cycles.
#[test]
fn head_resent_just_after_its_timeout_takes_the_next_backoff() {
    let cfg = NicConfig::default();
    let mut retransmitted = 0;
    for n in 0..24 {
        // rto_exp 1, no linear retries: each timeout doubles the next RTO
        let mut b = Bench::new(&cfg, 100, (1, 0, 8, 0));
        b.idle(2);
        b.send(100, 1);
        b.idle(3);
        for _ in 0..n {
            b.tick();
        }
        let before = b.last.cnt_retransmits;
        b.send(100, 2);
        for _ in 0..24 {
            b.tick();
        }
        retransmitted += usize::from(b.idle(4).cnt_retransmits != before);
    }
    assert!(retransmitted > 0, "the head was never resent");
}
