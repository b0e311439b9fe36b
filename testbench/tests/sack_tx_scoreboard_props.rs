//! Property cosim of `sack_tx_scoreboard`: a reacting peer (ideal receiver, lossy reordering
//! network, malformed control packets, resets across the PSN wrap) drives RTL and model in
//! lockstep; the RTL must equal the model every cycle, and the outputs must keep the
//! scoreboard's promises.

use mrc_config::NicConfig;
use mrc_cosim::modules::sack_tx_scoreboard::{TxMix, TxPeer};
use mrc_model::sack_tx_scoreboard::{TxInputs, TxOutputs, OP_NACK, OP_SACK, OP_SEND, OP_TICK};
use mrc_testbench::TxRig;
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

const CYCLES: usize = 3_000;
/// Op at step t (its ports registered by the I stage, S0 at t + 1): feedback in the outputs
/// of step t + 4; a SACK's acks are in the flops after step t + 4, so `rtx_psn` / `una` of
/// step t + 5 on reflect them.
const FB_LATENCY: usize = 4;
const ACK_VISIBLE: usize = 5;
const M24: u32 = 0xFF_FFFF;

fn config(cases: u32) -> ProptestConfig {
    let rng_seed = if std::env::var_os("PROPTEST_RNG_SEED").is_some() {
        ProptestConfig::default().rng_seed
    } else {
        proptest::test_runner::RngSeed::Fixed(0x4D52_4332)
    };
    ProptestConfig {
        cases,
        failure_persistence: None,
        rng_seed,
        ..ProptestConfig::default()
    }
}

/// a > b in 24-bit serial arithmetic.
fn after(a: u32, b: u32) -> bool {
    let d = a.wrapping_sub(b) & M24;
    d != 0 && d < 1 << 23
}

/// Checks the outputs against the promises; returns a message on the first violation.
fn check(seq: &[TxInputs], out: &[TxOutputs]) -> Result<(), String> {
    // PSNs SACKed by good SACKs (per input step), the highest cack, EVs stored per PSN.
    let mut sacked_at: Vec<(usize, Vec<u32>, u32)> = Vec::new();
    let mut ev_of: HashMap<u32, Vec<(usize, u8)>> = HashMap::new();
    let mut acked: HashSet<u32> = HashSet::new();
    let mut max_cack: Option<u32> = None;
    let mut next_sack = 0;
    for t in 0..seq.len() {
        let x = &seq[t];
        if x.rst {
            sacked_at.clear();
            ev_of.clear();
            acked.clear();
            max_cack = None;
            next_sack = 0;
            continue;
        }
        // judge this step's op by its counters three steps later (S1, counted a clock late)
        if t + 3 < out.len() && !seq[t + 1..=t + 3].iter().any(|s| s.rst) {
            let (a, b) = (&out[t + 2], &out[t + 3]);
            if x.op == OP_SEND
                && (b.cnt_new_sends != a.cnt_new_sends || b.cnt_retransmits != a.cnt_retransmits)
            {
                if b.cnt_retransmits != a.cnt_retransmits {
                    let dead = max_cack.is_some_and(|c| !after(x.psn, c)) || acked.contains(&x.psn);
                    if dead {
                        return Err(format!(
                            "step {t}: retransmission of acked PSN {:#x}",
                            x.psn
                        ));
                    }
                }
                ev_of.entry(x.psn).or_default().push((t, x.ev_idx));
            }
            if x.op == OP_SACK
                && b.cnt_stale_sack == a.cnt_stale_sack
                && b.cnt_bad_sack == a.cnt_bad_sack
            {
                let base = x.cack.wrapping_add(x.offset as i16 as i32 as u32) & M24;
                let bits = (0..64)
                    .filter(|j| x.bitmap >> j & 1 == 1)
                    .map(|j| (base + j) & M24)
                    .collect();
                sacked_at.push((t, bits, x.cack));
            }
        }
        // SACKs whose acks are visible by now
        while next_sack < sacked_at.len() && sacked_at[next_sack].0 + ACK_VISIBLE <= t {
            let (_, bits, cack) = &sacked_at[next_sack];
            acked.extend(bits.iter().copied());
            if max_cack.is_none_or(|m| after(*cack, m)) {
                max_cack = Some(*cack);
            }
            next_sack += 1;
        }
        let y = &out[t];
        let is_acked = |p: u32| max_cack.is_some_and(|c| !after(p, c)) || acked.contains(&p);
        if y.rtx_valid && is_acked(y.rtx_psn) && !seq[t.saturating_sub(8)..=t].iter().any(|s| s.rst)
        {
            return Err(format!(
                "step {t}: rtx_psn {:#x} was already acked",
                y.rtx_psn
            ));
        }
        // una only advances over acked PSNs (acks visible one step before)
        if t > 0 && !seq[t.saturating_sub(8)..=t].iter().any(|s| s.rst) {
            let mut p = out[t - 1].una;
            while p != y.una {
                if !is_acked(p) {
                    return Err(format!("step {t}: una passed unacked PSN {p:#x}"));
                }
                p = (p + 1) & M24;
            }
        }
        // No timeout fires the clock after one (its head is marked): the RTL's retry-limit
        // flop (`lim_q`) skips head_tmo's + 1 for that clock and relies on it.
        if t >= 2
            && !seq[t - 2..=t].iter().any(|s| s.rst)
            && y.cnt_timeouts.wrapping_sub(out[t - 1].cnt_timeouts) == 1
            && out[t - 1]
                .cnt_timeouts
                .wrapping_sub(out[t - 2].cnt_timeouts)
                == 1
        {
            return Err(format!(
                "steps {} and {t}: timeouts on consecutive clocks",
                t - 1
            ));
        }
        // NACK / timeout feedback names the EV stored for that PSN
        if y.fb_valid && y.fb_kind >= 3 && t >= FB_LATENCY {
            let op = &seq[t - FB_LATENCY];
            let psn = match op.op {
                OP_NACK => op.psn,
                OP_TICK => out[t - FB_LATENCY + 1].una,
                _ => {
                    return Err(format!(
                        "step {t}: feedback kind {} from op {}",
                        y.fb_kind, op.op
                    ))
                }
            };
            // the EV RAM read happened at S1 of the op (step t - 2): sends from before
            // step t - 4 are in it (their S1 was at step t - 3 or earlier)
            let stored = ev_of
                .get(&psn)
                .and_then(|h| h.iter().rev().find(|e| e.0 < t - FB_LATENCY))
                .map(|e| e.1);
            if stored != Some(y.fb_idx) {
                return Err(format!(
                    "step {t}: feedback kind {} for PSN {psn:#x} names EV {} (stored {stored:?})",
                    y.fb_kind, y.fb_idx
                ));
            }
        }
    }
    Ok(())
}

fn run_case(
    cfg: &NicConfig,
    seed: u64,
    mix: TxMix,
    timers: (u8, u8, u8, u16),
) -> Result<Vec<TxOutputs>, TestCaseError> {
    let mut rig = TxRig::new(cfg);
    let mut peer = TxPeer::new(cfg, seed, mix).with_timers(timers.0, timers.1, timers.2, timers.3);
    let seq: Vec<_> = (0..CYCLES as u64).map(|c| peer.next_inputs(c)).collect();
    let (report, out) = rig.run_report(&seq);
    if let Some(d) = report.divergence {
        return Err(TestCaseError::fail(format!(
            "RTL diverged from the model:\n{d}"
        )));
    }
    check(&seq, &out).map_err(TestCaseError::fail)?;
    Ok(out)
}

fn mix() -> impl Strategy<Value = TxMix> {
    (
        20u64..=100,
        0u64..=30,
        0u64..=15,
        0u64..=10,
        0u64..=10,
        5u64..=100,
        1u64..=120,
        0u64..=10,
        0u64..=2000,
    )
        .prop_map(
            |(
                send_pct,
                tick_pct,
                loss_pct,
                trim_pct,
                dup_pct,
                sack_pct,
                max_delay,
                malformed_pct,
                resets_per_million,
            )| TxMix {
                send_pct,
                tick_pct,
                loss_pct,
                trim_pct,
                dup_pct,
                sack_pct,
                max_delay,
                malformed_pct,
                resets_per_million,
            },
        )
}

fn sack64() -> NicConfig {
    NicConfig {
        sack_window_bits: 64,
        ..NicConfig::default()
    }
}

proptest! {
    #![proptest_config(config(24))]

    /// W = 256 and W = 64, random peers and timer settings.
    #[test]
    fn rtl_equals_model_and_keeps_its_promises(seed in any::<u64>(), mix in mix(), small in any::<bool>(),
        rto_exp in 0u8..=8, lin in 0u8..=7, back in 0u8..=6, thr in 0u16..=40) {
        let cfg = if small { sack64() } else { NicConfig::default() };
        run_case(&cfg, seed, mix, (rto_exp, lin, back, thr))?;
    }
}

proptest! {
    #![proptest_config(config(6))]

    /// No loss, no trimming, no malformed input, long RTO, hole threshold above the reordering
    /// depth: nothing is ever retransmitted.
    #[test]
    fn without_loss_nothing_is_retransmitted(seed in any::<u64>(), small in any::<bool>()) {
        let cfg = if small { sack64() } else { NicConfig::default() };
        let mix = TxMix { loss_pct: 0, trim_pct: 0, malformed_pct: 0, resets_per_million: 0, max_delay: 30, ..TxMix::default() };
        let out = run_case(&cfg, seed, mix, (20, 7, 25, 100))?;
        let last = out.last().unwrap();
        prop_assert!(last.cnt_new_sends > 200, "too little traffic: {last:?}");
        prop_assert_eq!(last.cnt_retransmits, 0);
        prop_assert_eq!(last.cnt_timeouts, 0);
        prop_assert!(out.iter().all(|y| !y.rtx_valid));
    }
}
