//! The contract between the simulator and a transport: sans-IO endpoints.
//!
//! Every flow (one RDMA WRITE transfer of `bytes` from `src` to `dst`) is one connection
//! with two endpoints: the requester (sender) on `src` and the responder (receiver) on
//! `dst`. The simulator owns time and the wire; an endpoint only answers calls:
//!
//! ```text
//!   sim                                   endpoint
//!   handle_packet(now, pkt)  ---------->  update state (may queue ACKs / data)
//!   poll_transmit(now, plane) --------->  Some(pkt) if one may leave on that plane now
//!   poll_timeout()           ---------->  earliest time it wants handle_timeout (timers,
//!                                         pacing); re-read after every call
//!   handle_timeout(now)      ---------->  RTO, probes, pacing gate opens
//! ```
//!
//! Rules the simulator relies on:
//! - `poll_transmit` is called only when the NIC port of `plane` is idle; the endpoint sets
//!   `pkt.plane = plane`, `pkt.src`, `pkt.dst`, `pkt.qp`, `pkt.sent_at = now`.
//! - An endpoint with nothing to send now returns `None` and reports, through
//!   `poll_timeout`, when that may change without a packet arriving (pacing); the simulator
//!   polls a host's endpoints again after every packet arrival and every timer of that host.
//! - `wants_transmit(now)` is a cheap hint (may be conservative: `true` when unsure).
//! - Deterministic: no clocks, no threads, no global RNG (seed from [`FlowSpec::seed`]).

use super::packet::{HostId, Packet};
use super::Ps;

/// One transfer, as the traffic generator creates it.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSpec {
    /// Flow index = connection id (`Packet::qp`).
    pub id: u32,
    pub src: HostId,
    pub dst: HostId,
    /// Bytes to write (one message; segmented by the transport's MTU).
    pub bytes: u64,
    /// When the application posts the WRITE.
    pub start: Ps,
    /// Per-flow seed for the endpoint's own choices (EV permutation, ...).
    pub seed: u64,
    /// Data dependency: the flow is posted only once this flow's data has all arrived (and
    /// not before `start`). Ring all-reduce steps use it.
    pub after: Option<u32>,
}

/// What the network looks like from one flow, for transports that need it at setup.
#[derive(Debug, Clone, PartialEq)]
pub struct PathInfo {
    /// NIC ports: fabric planes x ports per plane (1 on a plain fat tree). The `plane` of
    /// `poll_transmit` and `Packet::plane` name a port; port k is on plane k / ports per plane.
    pub planes: u8,
    /// Rate of each NIC port in Gb/s.
    pub port_gbps: f64,
    /// Unloaded round-trip time of a full data packet out and a control packet back, in ps.
    pub base_rtt: Ps,
    /// Distinct switch paths between src and dst per plane (for information; EVs are 32-bit).
    pub paths_per_plane: u32,
}

/// Counters every endpoint reports; a field that does not apply stays 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EndpointStats {
    // requester side
    /// Data packets put on the wire, first transmissions and retransmissions.
    pub data_sent: u64,
    pub retransmits: u64,
    /// Retransmit timeouts that fired.
    pub timeouts: u64,
    /// NACKs received, by kind.
    pub nacks_trimmed: u64,
    pub nacks_other: u64,
    pub probes_sent: u64,
    /// Payload bytes the responder has acknowledged (cumulatively or by SACK).
    pub bytes_acked: u64,
    /// When every byte was acknowledged (the flow completion time is this minus `start`).
    pub completed_at: Option<Ps>,
    /// The QP gave up (retries exhausted): these bytes are reported lost.
    pub failed: bool,
    pub bytes_lost: u64,
    /// Congestion window in bytes (0 when the transport has none).
    pub cwnd: u64,
    /// Sending rate limit in Mb/s (0 when the transport does not pace).
    pub rate_mbps: u64,
    // responder side
    /// Unique payload bytes written into the memory region.
    pub bytes_delivered: u64,
    /// Payload bytes that arrived again for a PSN already written (not written twice).
    pub dup_bytes: u64,
    /// Writes refused: bad R_Key or outside the registered region (nothing written).
    pub writes_rejected: u64,
    /// Packets dropped as malformed or out of window (counted, never accepted).
    pub pkts_dropped: u64,
    /// Trimmed packets that arrived (NACKed).
    pub trims_received: u64,
    pub acks_sent: u64,
    pub nacks_sent: u64,
    /// Data packets that arrived with a CE mark.
    pub ecn_received: u64,
}

/// A sans-IO transport endpoint (one side of one connection).
pub trait Endpoint {
    fn handle_packet(&mut self, now: Ps, pkt: Packet);
    fn poll_transmit(&mut self, now: Ps, plane: u8) -> Option<Packet>;
    /// Cheap hint: might `poll_transmit(now, plane)` return a packet for some plane?
    fn wants_transmit(&self, now: Ps) -> bool;
    fn poll_timeout(&self) -> Option<Ps>;
    fn handle_timeout(&mut self, now: Ps);
    fn stats(&self) -> EndpointStats;
}

/// Builds the two endpoints of a flow. One per transport under test (MRC, RoCEv2).
pub trait Transport {
    /// Short name for tables and files: "mrc", "roce", "mrc-oblivious", ...
    fn name(&self) -> String;
    /// (requester on `flow.src`, responder on `flow.dst`).
    fn connect(&self, flow: &FlowSpec, path: &PathInfo) -> (Box<dyn Endpoint>, Box<dyn Endpoint>);
}
