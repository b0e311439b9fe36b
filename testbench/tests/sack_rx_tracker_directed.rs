//! Directed scenarios for `sack_rx_tracker`, each run on the RTL in lockstep with the model,
//! then checked against the protocol property it is named after.

use mrc_config::NicConfig;
use mrc_model::sack_rx_tracker::{
    cack_lag_bound, psn_add, window_limit, IdealReceiver, TrackerInputs, TrackerOutputs,
    INORDER_CACK_LATENCY, M_NONE, M_SKIP_ONCE, NACK_PSN_OOR_WINDOW, NACK_TRIMMED,
    NACK_TRIMMED_LASTHOP, RSP_LATENCY,
};
use mrc_testbench::{tracker_reset, TrackerRig};

fn cfg(w: u32) -> NicConfig {
    NicConfig {
        sack_window_bits: w,
        ..NicConfig::default()
    }
}

/// A sequence under construction: inputs plus the step index of each packet.
struct Seq {
    base: TrackerInputs,
    x: Vec<TrackerInputs>,
}

impl Seq {
    fn new(c: &NicConfig, init_psn: u32) -> Self {
        let base = TrackerInputs {
            init_psn,
            ..TrackerInputs::idle(c)
        };
        Seq {
            base,
            x: tracker_reset(base),
        }
    }
    fn pkt(&mut self, psn: u32, f: impl Fn(&mut TrackerInputs)) -> usize {
        let mut x = TrackerInputs {
            pkt_valid: true,
            pkt_psn: psn & 0xFF_FFFF,
            pkt_len: 1024,
            pkt_ev: psn.wrapping_mul(0x9E37_79B1),
            ..self.base
        };
        f(&mut x);
        self.x.push(x);
        self.x.len() - 1
    }
    fn idle(&mut self, n: usize) {
        self.x.extend(std::iter::repeat_n(self.base, n));
    }
    /// Run on the RTL + model; also check the ideal receiver's safety rules every step.
    fn run(&mut self, c: &NicConfig) -> Vec<TrackerOutputs> {
        self.idle(RSP_LATENCY + cack_lag_bound(c.sack_window_bits));
        let out = TrackerRig::new(c).run(&self.x);
        let mut ideal = IdealReceiver::default();
        for (s, (x, y)) in self.x.iter().zip(&out).enumerate() {
            ideal.observe(x);
            if let Err(e) = ideal.check(y) {
                panic!("step {s}: {e}");
            }
        }
        out
    }
}

#[test]
fn in_order_latencies_are_fixed() {
    let c = cfg(256);
    let mut s = Seq::new(&c, 500);
    let ts: Vec<_> = (0..300).map(|k| s.pkt(500 + k, |_| {})).collect();
    let out = s.run(&c);
    // the first packet is acked immediately, RSP_LATENCY steps later
    assert!(out[ts[0] + RSP_LATENCY].sack_valid);
    assert!(!out[ts[0] + RSP_LATENCY - 1].sack_valid);
    // snapshot taken as the packet commits: cack still 499, the packet is bitmap bit 0
    assert_eq!(out[ts[0] + RSP_LATENCY].cack_out, 499);
    assert_eq!(out[ts[0] + RSP_LATENCY].sack_bitmap & 1, 1);
    for (k, &t) in ts.iter().enumerate() {
        assert_eq!(out[t + INORDER_CACK_LATENCY].cack_psn, 500 + k as u32);
        assert_eq!(out[t + INORDER_CACK_LATENCY - 1].cack_psn, 499 + k as u32);
    }
    assert!(out.iter().all(|y| !y.nack_valid));
    let last = out.last().unwrap();
    assert_eq!(
        (
            last.cnt_accepted,
            last.cnt_duplicate,
            last.cnt_out_of_window,
            last.cnt_trimmed
        ),
        (300, 0, 0, 0)
    );
}

#[test]
fn worst_case_cack_lag_is_within_the_bound() {
    for w in [64u32, 256] {
        let c = cfg(w);
        for head in [0u32, 5] {
            let init = 0xFF_FFF0 + head;
            let mut s = Seq::new(&c, init);
            for k in 1..w {
                s.pkt(psn_add(init, k), |_| {});
            }
            let t = s.pkt(init, |_| {});
            let out = s.run(&c);
            let want = psn_add(init, w - 1);
            let reached = (t..out.len())
                .find(|&k| out[k].cack_psn == want)
                .expect("cack reaches the top of the window");
            assert!(
                reached - t <= cack_lag_bound(w),
                "W {w}: {} steps > bound {}",
                reached - t,
                cack_lag_bound(w)
            );
        }
    }
}

#[test]
fn psns_wrap_across_2_pow_24_with_holes() {
    let c = cfg(64);
    let init = 0xFF_FFE0;
    let mut s = Seq::new(&c, init);
    // 0..40 with 10 and 35 missing (10 sits before the wrap, 35 after it)
    for k in (0..40u32).filter(|k| *k != 10 && *k != 35) {
        s.pkt(psn_add(init, k), |_| {});
    }
    s.idle(12);
    // (a PSN arriving while a SACK is being built may already show in its bitmap, so the
    // fills wait until the SACKs are out)
    let t1 = s.pkt(psn_add(init, 39), |_| {}); // duplicate -> SACK
    s.idle(RSP_LATENCY);
    s.pkt(psn_add(init, 10), |_| {});
    s.idle(12);
    let t2 = s.pkt(psn_add(init, 39), |_| {});
    s.idle(RSP_LATENCY);
    s.pkt(psn_add(init, 35), |_| {});
    let out = s.run(&c);
    let y = out[t1 + RSP_LATENCY];
    assert!(y.sack_valid);
    assert_eq!(y.cack_out, psn_add(init, 9));
    assert_eq!(y.sack_offset, 1);
    // bitmap from PSN init+10: 11..39 received except 35
    let want: u64 = (1..30u64).filter(|j| *j != 25).map(|j| 1 << j).sum();
    assert_eq!(y.sack_bitmap, want);
    let y = out[t2 + RSP_LATENCY];
    assert_eq!(y.cack_out, psn_add(init, 34));
    assert_eq!(y.sack_bitmap, 0b1111 << 1);
    assert_eq!(out.last().unwrap().cack_psn, psn_add(init, 39));
    assert_eq!(out.last().unwrap().cnt_duplicate, 2);
}

#[test]
fn coalescing_sacks_every_16_kb_and_on_ecn_ackreq() {
    let c = cfg(256);
    let mut s = Seq::new(&c, 0);
    let ts: Vec<_> = (0..96u32).map(|k| s.pkt(k, |_| {})).collect();
    let t_ecn = s.pkt(96, |x| x.pkt_ecn = true);
    let t_req = s.pkt(97, |x| x.pkt_ackreq = true);
    let t_plain = s.pkt(98, |_| {});
    let out = s.run(&c);
    let sacked: Vec<usize> = (0..96)
        .filter(|&k| out[ts[k] + RSP_LATENCY].sack_valid)
        .collect();
    // the first packet, then every 16th 1 KB packet (16 KB since the last SACK)
    assert_eq!(sacked, vec![0, 16, 32, 48, 64, 80]);
    let y = out[ts[80] + RSP_LATENCY];
    assert_eq!(y.rcvd_bytes, 81 * 1024 / 256);
    assert_eq!(y.sack_m, M_NONE);
    let y = out[t_ecn + RSP_LATENCY];
    assert!(y.sack_valid);
    assert_eq!(y.sack_m, M_SKIP_ONCE);
    assert!(out[t_req + RSP_LATENCY].sack_valid);
    assert!(!out[t_plain + RSP_LATENCY].sack_valid);
    assert_eq!(
        out[t_req + RSP_LATENCY].rsp_ev,
        97u32.wrapping_mul(0x9E37_79B1)
    );
}

#[test]
fn out_of_window_at_the_mpr_and_w_edges() {
    for (w, mpr) in [(256u32, 255u8), (256, 1), (256, 2), (64, 255), (64, 1)] {
        let c = cfg(w);
        let lim = window_limit(w, mpr);
        let init = 0xFF_FF00;
        let mut s = Seq::new(&c, init);
        s.base.mpr = mpr;
        s.pkt(init, |x| x.mpr = mpr);
        s.idle(10);
        let t_in = s.pkt(psn_add(init, lim), |x| x.pkt_ackreq = true);
        let t_out = s.pkt(psn_add(init, lim + 1), |_| {});
        let t_far = s.pkt(psn_add(init, 0x40_0000), |_| {});
        let t_behind = s.pkt(psn_add(init, 0xFF_FFF0), |_| {});
        let out = s.run(&c);
        let y = out[t_in + RSP_LATENCY];
        assert!(
            y.sack_valid && !y.nack_valid,
            "W {w} mpr {mpr}: cack + lim is in"
        );
        assert_eq!(y.sack_bitmap >> 63, 1, "the top PSN is bitmap bit 63");
        for t in [t_out, t_far] {
            let y = out[t + RSP_LATENCY];
            assert!(y.nack_valid && !y.sack_valid);
            assert_eq!(y.nack_reason, NACK_PSN_OOR_WINDOW);
            assert_eq!(y.nack_psn, s.x[t].pkt_psn);
        }
        assert!(
            out[t_behind + RSP_LATENCY].sack_valid,
            "behind cack: duplicate"
        );
        let last = out.last().unwrap();
        assert_eq!(
            (
                last.cnt_accepted,
                last.cnt_duplicate,
                last.cnt_out_of_window
            ),
            (2, 1, 2)
        );
    }
}

#[test]
fn trims_nack_and_set_no_bit_counters_add_up() {
    let c = cfg(256);
    let mut s = Seq::new(&c, 7);
    s.pkt(7, |_| {});
    let t_trim = s.pkt(9, |x| x.pkt_trimmed = true);
    let t_last = s.pkt(10, |x| {
        x.pkt_trimmed = true;
        x.pkt_lasthop = true;
    });
    let t_dup_trim = s.pkt(7, |x| x.pkt_trimmed = true); // duplicate wins over trimmed
    s.idle(8);
    let t_new = s.pkt(9, |x| x.pkt_ackreq = true); // the trimmed PSN is still new
    s.idle(RSP_LATENCY);
    s.pkt(8, |_| {});
    s.pkt(8, |_| {});
    let out = s.run(&c);
    let y = out[t_trim + RSP_LATENCY];
    assert!(y.nack_valid && y.nack_reason == NACK_TRIMMED && y.nack_psn == 9);
    let y = out[t_last + RSP_LATENCY];
    assert!(y.nack_valid && y.nack_reason == NACK_TRIMMED_LASTHOP && y.nack_psn == 10);
    assert!(out[t_dup_trim + RSP_LATENCY].sack_valid);
    let y = out[t_new + RSP_LATENCY];
    assert!(y.sack_valid);
    assert_eq!(y.cack_out, 7);
    assert_eq!(y.sack_bitmap, 0b10);
    assert_eq!(y.ooo_count, 1);
    let last = out.last().unwrap();
    assert_eq!(last.cack_psn, 9);
    assert_eq!(
        (
            last.cnt_accepted,
            last.cnt_duplicate,
            last.cnt_out_of_window,
            last.cnt_trimmed
        ),
        (3, 2, 0, 2)
    );
}

/// A SACK claims every PSN that arrived up to its trigger and that it can name (at or below
/// `cack_out`, or in the bitmap's 64). The cumulative loop consumes bitmap bits between the
/// snapshot of cack (R) and the bitmap read (E); a final SACK that left those out would leave
/// the sender waiting for its RTO (found by the core's clean-transfer test).
#[test]
fn a_sack_claims_every_psn_that_arrived_before_its_trigger() {
    for w in [64u32, 256] {
        let c = cfg(w);
        for (burst, gap, hole) in [
            (8u32, 0usize, None),
            (40, 0, None),
            (70, 1, None),
            (30, 0, Some(3u32)),
        ] {
            let init = 0xFF_FFE0;
            let mut s = Seq::new(&c, init);
            let mut arrivals: Vec<(usize, u32)> = Vec::new();
            for k in 0..burst {
                if Some(k) == hole {
                    continue;
                }
                let last = k + 1 == burst;
                let t = s.pkt(psn_add(init, k), |x| x.pkt_ackreq = last || k % 7 == 6);
                arrivals.push((t, psn_add(init, k)));
                s.idle(gap);
            }
            let out = s.run(&c);
            let mut sacks = 0;
            for (t_out, y) in out.iter().enumerate().filter(|(_, y)| y.sack_valid) {
                sacks += 1;
                let trig = t_out - RSP_LATENCY;
                // PSNs between cack_out and the base cannot be named (base = psn - 63).
                let in_bitmap = |q: u32| (q.wrapping_sub(y.sack_base()) & 0xFF_FFFF) < 64;
                let claimed = y.claimed_bitmap_psns();
                for &(t, q) in arrivals.iter().filter(|(t, _)| *t <= trig) {
                    let covered = !sign(y.cack_out.wrapping_sub(q)) || claimed.contains(&q);
                    assert!(
                        covered || !in_bitmap(q),
                        "W {w} burst {burst} gap {gap} hole {hole:?}: the SACK of step {t_out} \
                         (cack {:#x}, base {:#x}, bitmap {:#x}) leaves out PSN {q:#x} (step {t})",
                        y.cack_out,
                        y.sack_base(),
                        y.sack_bitmap
                    );
                }
            }
            assert!(sacks >= 2, "W {w} burst {burst}: {sacks} SACKs");
        }
    }
}

fn sign(x: u32) -> bool {
    x & 0x80_0000 != 0
}
