//! What a run reports: per-flow outcomes, aggregate figures, time series, the fault
//! timeline, and a hash of it all (the determinism check).

use serde::Serialize;

/// min / p50 / p99 / max of a sample (nearest-rank percentiles).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Summary {
    pub count: usize,
    pub min: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

impl Summary {
    pub fn of(values: &[f64]) -> Summary {
        if values.is_empty() {
            return Summary::default();
        }
        let mut v = values.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        let rank = |q: f64| v[(((q * v.len() as f64).ceil() as usize).max(1) - 1).min(v.len() - 1)];
        Summary {
            count: v.len(),
            min: v[0],
            p50: rank(0.50),
            p99: rank(0.99),
            max: v[v.len() - 1],
            mean: v.iter().sum::<f64>() / v.len() as f64,
        }
    }
}

/// One flow's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowResult {
    pub id: u32,
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub start_ns: f64,
    /// Completion time (every byte acknowledged) minus start; None if unfinished.
    pub fct_us: Option<f64>,
    /// Ideal FCT: serialisation of every packet at the NIC rate plus the base RTT.
    pub ideal_fct_us: f64,
    pub bytes_delivered: u64,
    pub dup_bytes: u64,
    pub bytes_lost: u64,
    pub failed: bool,
    pub data_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub nacks: u64,
    pub trims: u64,
    /// Packets of this flow (data or control) lost to a down link.
    pub link_down_drops: u64,
}

/// Packets the network lost, by cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Drops {
    /// Queued on or sent to a link that was down.
    pub link_down: u64,
    /// Random loss on a lossy link.
    pub random_loss: u64,
    /// Data queue full without trimming, or control queue full.
    pub queue_full: u64,
}

impl Drops {
    pub fn total(&self) -> u64 {
        self.link_down + self.random_loss + self.queue_full
    }
}

/// The network's own packet ledger: every packet a NIC put on the wire was delivered to a
/// host, dropped (by cause, in [`Drops`]) or is still in the network when the run ends, so
/// `sent == delivered + drops.total() + in_flight`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Ledger {
    pub sent: u64,
    pub delivered: u64,
    pub in_flight: u64,
    /// CE marks switches set (at dequeue).
    pub ecn_marked: u64,
    /// Data packets switches trimmed to a header.
    pub trimmed: u64,
}

impl Ledger {
    /// Does every packet sent have an outcome?
    pub fn balances(&self, drops: &Drops) -> bool {
        self.sent == self.delivered + drops.total() + self.in_flight
    }
}

/// Time series sampled every `bucket_us`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Series {
    pub bucket_us: f64,
    /// Aggregate goodput (unique payload bytes delivered in the bucket), Gb/s.
    pub goodput_gbps: Vec<f64>,
    /// Data packets lost to down links in the bucket.
    pub data_link_down_drops: Vec<u64>,
    /// Per plane: fabric (switch-to-switch) link utilisation in the bucket, 0..1 (mean over
    /// the plane's fabric links that are up).
    pub plane_util: Vec<Vec<f64>>,
    /// Traced flows: (flow id, cwnd bytes per bucket, rate Mb/s per bucket).
    pub cwnd: Vec<(u32, Vec<u64>)>,
    pub rate_mbps: Vec<(u32, Vec<u64>)>,
    /// Per flow (index = flow id): goodput per bucket, Gb/s; empty for runs of more than
    /// `sim::FLOW_SERIES_MAX` flows. Not serialised (large); `report::recovery_of` uses it.
    #[serde(skip)]
    pub flow_goodput_gbps: Vec<Vec<f32>>,
}

/// Everything a run reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunResult {
    pub transport: String,
    pub seed: u64,
    pub hosts: u32,
    pub flows: Vec<FlowResult>,
    /// FCT over finished flows, µs.
    pub fct_us: Summary,
    /// FCT / ideal FCT over finished flows.
    pub fct_slowdown: Summary,
    pub finished: usize,
    pub failed: usize,
    /// Unique payload bytes delivered / (last completion - first start), Gb/s.
    pub goodput_gbps: f64,
    pub retransmits: u64,
    pub trims: u64,
    pub nacks: u64,
    pub timeouts: u64,
    pub bytes_lost: u64,
    pub drops: Drops,
    /// Packets sent / delivered / in flight, marks and trims, as the network counted them.
    pub ledger: Ledger,
    /// Packets that arrived at a host over a link that was down at the time (must be 0).
    pub delivered_over_down_link: u64,
    /// When the last data packet was lost to a down link, µs: after it the transport sent
    /// no more data into dead links (its bypass was complete).
    pub last_data_link_down_us: Option<f64>,
    /// Simulated time at the end, µs.
    pub end_us: f64,
    pub events: u64,
    /// Link traversals (a packet crossing one link).
    pub packet_hops: u64,
    /// (time µs, description) of every fault applied.
    pub timeline: Vec<(f64, String)>,
    pub series: Series,
    /// FNV-1a over the per-flow outcomes and counters: equal for equal runs.
    pub hash: u64,
}
