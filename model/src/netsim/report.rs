//! Figures derived from a [`RunResult`]: the experiments' headline numbers.

use super::results::{RunResult, Series};
use serde::Serialize;

/// How aggregate goodput came back after a fault.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Recovery {
    /// Mean goodput over the window before the fault, Gb/s.
    pub before_gbps: f64,
    /// Lowest goodput (two-bucket mean) after the fault, Gb/s.
    pub dip_gbps: f64,
    /// From the fault to the start of the first two-bucket window back at >= `frac` of
    /// `before_gbps`; 0 when it never dropped below; None when it never came back.
    pub after_us: Option<f64>,
}

/// Goodput recovery after a fault at `at_us`: the pre-fault level is the mean over
/// `window_us` before it. The goodput (two-bucket means) is watched for `window_us` after the
/// fault: if it never falls below `frac` of the level, recovery is 0; otherwise it is the time
/// from the fault to the first two-bucket mean back at or above `frac` after the first one
/// below (None if it never comes back). `dip` is the lowest two-bucket mean in that window
/// (and until recovery, if later).
pub fn recovery(series: &Series, at_us: f64, window_us: f64, frac: f64) -> Option<Recovery> {
    let b = series.bucket_us;
    let g = &series.goodput_gbps;
    if b <= 0.0 || g.len() < 3 {
        return None;
    }
    let first = ((at_us - window_us) / b).ceil().max(0.0) as usize;
    let last = (at_us / b).floor() as usize; // buckets [first, last) end at or before the fault
    if last <= first || last + 1 >= g.len() {
        return None;
    }
    let before = g[first..last].iter().sum::<f64>() / (last - first) as f64;
    let thr = frac * before;
    let watch_end = ((at_us + window_us) / b).ceil() as usize;
    let mean = |i: usize| (g[i] + g[i + 1]) / 2.0;
    let mut dip = f64::INFINITY;
    let mut fell = false;
    let mut after = None;
    for i in last..g.len() - 1 {
        let m = mean(i);
        if i <= watch_end || (fell && after.is_none()) {
            dip = dip.min(m);
        }
        if !fell {
            if m < thr {
                fell = true;
            } else if i > watch_end {
                break;
            }
        } else if after.is_none() && m >= thr {
            after = Some(((i as f64 * b) - at_us).max(0.0));
            if i > watch_end {
                break;
            }
        }
    }
    if !fell {
        after = Some(0.0);
    }
    Some(Recovery {
        before_gbps: before,
        dip_gbps: if dip.is_finite() { dip } else { before },
        after_us: after,
    })
}

/// Goodput recovery of a subset of flows (e.g. those that lost packets to the failed link),
/// from the per-flow series; None when the run kept no per-flow series or `flows` is empty.
pub fn recovery_of(
    r: &RunResult,
    flows: &[u32],
    at_us: f64,
    window_us: f64,
    frac: f64,
) -> Option<Recovery> {
    let per = &r.series.flow_goodput_gbps;
    if per.is_empty() || flows.is_empty() {
        return None;
    }
    let n = per.iter().map(Vec::len).max().unwrap_or(0);
    let mut sum = vec![0.0f64; n];
    for &f in flows {
        for (i, &g) in per.get(f as usize)?.iter().enumerate() {
            sum[i] += f64::from(g);
        }
    }
    let s = Series {
        bucket_us: r.series.bucket_us,
        goodput_gbps: sum,
        ..Default::default()
    };
    recovery(&s, at_us, window_us, frac)
}

/// Flows that lost at least one packet to a down link.
pub fn hit_by_link_faults(r: &RunResult) -> Vec<u32> {
    r.flows
        .iter()
        .filter(|f| f.link_down_drops > 0)
        .map(|f| f.id)
        .collect()
}

/// Time from `at_us` until `frac` of the data packets lost to down links after it had been
/// lost (bucket resolution): how long the transport kept sending into dead paths.
pub fn link_down_loss_span(series: &Series, at_us: f64, frac: f64) -> Option<f64> {
    let b = series.bucket_us;
    let first = (at_us / b).floor() as usize;
    let v = series.data_link_down_drops.get(first..)?;
    let total: u64 = v.iter().sum();
    if total == 0 {
        return None;
    }
    let mut acc = 0;
    for (i, &n) in v.iter().enumerate() {
        acc += n;
        if acc as f64 >= frac * total as f64 {
            return Some(((first + i + 1) as f64 * b - at_us).max(0.0));
        }
    }
    None
}

/// Throughput of one flow over its lifetime, Gb/s (None if unfinished).
pub fn flow_gbps(r: &RunResult, id: u32) -> Option<f64> {
    let f = r.flows.iter().find(|f| f.id == id)?;
    f.fct_us.map(|t| f.bytes as f64 * 8.0 / (t * 1e3))
}

/// Mean per-flow throughput over finished flows, Gb/s.
pub fn mean_flow_gbps(r: &RunResult) -> f64 {
    let v: Vec<f64> = r
        .flows
        .iter()
        .filter_map(|f| f.fct_us.map(|t| f.bytes as f64 * 8.0 / (t * 1e3)))
        .collect();
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(g: &[f64]) -> Series {
        Series {
            bucket_us: 10.0,
            goodput_gbps: g.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn recovery_finds_the_first_window_back_above_the_threshold() {
        // Fault at 50 us; 100 before, dips to 40, back at bucket 8 (80 us).
        let s = series(&[
            100.0, 100.0, 100.0, 100.0, 100.0, 40.0, 50.0, 60.0, 96.0, 100.0, 100.0,
        ]);
        let r = recovery(&s, 50.0, 50.0, 0.95).unwrap();
        assert_eq!(r.before_gbps, 100.0);
        assert_eq!(r.dip_gbps, 45.0);
        assert_eq!(r.after_us, Some(30.0));
        let flat = series(&[100.0; 10]);
        assert_eq!(
            recovery(&flat, 50.0, 50.0, 0.95).unwrap().after_us,
            Some(0.0)
        );
        let dead = series(&[100.0, 100.0, 100.0, 0.0, 0.0, 0.0]);
        assert_eq!(recovery(&dead, 30.0, 30.0, 0.95).unwrap().after_us, None);
        assert!(recovery(&flat, 0.0, 50.0, 0.95).is_none());
    }
}
