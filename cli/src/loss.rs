//! `mrcgen loss`: the SACK vs go-back-N table (model level, no Verilator).

use crate::Fail;
use mrc_config::NicConfig;
use mrc_model::loss_experiment::{run, LossResult, LossSetup, Scheme};

/// One row per (loss, scheme); runs spread over the machine's cores.
pub fn loss_cmd(
    cfg: &NicConfig,
    losses: &[f64],
    packets: u64,
    seed: u64,
    json: bool,
) -> Result<(), Fail> {
    for &l in losses {
        if !(0.0..1.0).contains(&l) {
            return Err(Fail(2, format!("loss {l}: must be in [0, 1)")));
        }
    }
    if packets == 0 {
        return Err(Fail(2, "packets must be at least 1".into()));
    }
    let jobs: Vec<(f64, Scheme)> = losses
        .iter()
        .flat_map(|&l| [(l, Scheme::Sack), (l, Scheme::GoBackN)])
        .collect();
    let results: Vec<LossResult> = std::thread::scope(|sc| {
        let handles: Vec<_> = jobs
            .iter()
            .map(|&(loss, scheme)| {
                let mut s = LossSetup::new(loss, seed);
                s.packets = packets;
                s.cfg = cfg.clone();
                sc.spawn(move || run(scheme, &s))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("experiment thread panicked"))
            .collect()
    });
    if json {
        let rows: Vec<_> = results
            .iter()
            .map(|r| {
                serde_json::json!({
                    "scheme": r.scheme.name(), "loss": r.loss, "packets": r.packets,
                    "data_sent": r.data_sent, "dropped": r.dropped, "retransmits": r.retransmits,
                    "timeouts": r.timeouts, "cycles": r.cycles, "goodput": r.goodput,
                    "complete": r.complete,
                })
            })
            .collect();
        println!("{}", serde_json::Value::Array(rows));
    } else {
        let s = LossSetup::new(0.0, seed);
        println!(
            "{packets} packets of {} B, one path, {} cycles/packet at line rate, RTT {} cycles, \
             RTO {} cycles, window {} PSNs, seed {seed}",
            s.pkt_bytes,
            s.cycles_per_pkt,
            2 * s.one_way_cycles,
            {
                let mut t = s.clone();
                t.cfg = cfg.clone();
                t.rto_cycles()
            },
            cfg.sack_window_bits
        );
        println!(
            "{:>6}  {:<20} {:>8} {:>12} {:>10} {:>9} {:>8}  done",
            "loss", "scheme", "dropped", "retransmits", "rtx/drop", "timeouts", "goodput"
        );
        for r in &results {
            println!(
                "{:>5.1}%  {:<20} {:>8} {:>12} {:>10.1} {:>9} {:>7.1}%  {}",
                r.loss * 100.0,
                r.scheme.name(),
                r.dropped,
                r.retransmits,
                r.retransmits as f64 / r.dropped.max(1) as f64,
                r.timeouts,
                r.goodput * 100.0,
                if r.complete { "yes" } else { "NO" }
            );
        }
    }
    if let Some(r) = results.iter().find(|r| !r.complete) {
        return Err(Fail(
            1,
            format!(
                "{} at {:.1}% loss did not complete the transfer",
                r.scheme.name(),
                r.loss * 100.0
            ),
        ));
    }
    Ok(())
}
