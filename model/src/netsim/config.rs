//! What one simulation run is given: the built topology, queues, faults (already resolved to
//! links), flows, and what to record. `scenario.rs` builds it from a TOML scenario.

use super::endpoint::FlowSpec;
use super::topology::{LinkId, Routing, Topology};
use super::Ps;

/// Output-queue behaviour of every switch port (the notes, section 5).
#[derive(Debug, Clone, PartialEq)]
pub struct QueueConfig {
    /// Data-class buffer per output port, bytes. A data packet that does not fit is trimmed
    /// (when `trimming`) or dropped.
    pub buffer_bytes: u64,
    /// ECN marking at dequeue: probability 0 at `kmin_bytes` of queued data, rising linearly
    /// to 1 at `kmax_bytes`.
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    /// Trim to a header on the control class instead of dropping when the data queue is full.
    pub trimming: bool,
    /// Mark on ports that face a host too (the notes: MRC disables ECN on the last hop).
    pub ecn_last_hop: bool,
    /// Control-class buffer per port, bytes (trimmed headers, ACKs, NACKs, probes).
    pub control_buffer_bytes: u64,
}

/// A fault on one link (both directions), at a time. Flaps and switch reboots are expanded
/// into these by the scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    pub at: Ps,
    pub link: LinkId,
    pub kind: FaultKind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FaultKind {
    /// Everything queued on the link and everything arriving for it is lost.
    Down,
    Up,
    /// The link runs at this fraction of its rate (1.0 restores it).
    Degrade(f64),
    /// Each packet crossing the link is lost with this probability (0 clears it).
    Loss(f64),
}

/// One run's inputs (besides the transport).
#[derive(Debug, Clone)]
pub struct SimConfig {
    pub topology: Topology,
    pub routing: Routing,
    pub queues: QueueConfig,
    /// Sorted by time (ties: in the order given).
    pub faults: Vec<Fault>,
    pub flows: Vec<FlowSpec>,
    /// Seed of the simulator's own randomness (ECN marking, random loss).
    pub seed: u64,
    /// Stop here even if flows are still running (they are reported unfinished).
    pub stop_at: Ps,
    /// Time-series bucket: throughput, per-plane utilisation, cwnd samples.
    pub sample_interval: Ps,
    /// Flows whose cwnd / rate is sampled every `sample_interval` (plots).
    pub traced_flows: Vec<u32>,
    /// ECMP switches drop a down link from their group this long after it fails (None: static
    /// routing, as MRC's fabric; a route never changes).
    pub reroute_after: Option<Ps>,
}
