//! The RoCEv2 RC baseline MRC is compared against: one RDMA WRITE per flow, one ECMP path,
//! go-back-N, optional DCQCN rate control. Sans-IO endpoints for the network simulator.
//!
//! ```text
//!   RoceRequester (flow.src)                                  RoceResponder (flow.dst)
//!   GbnSender --[pacing gate: DCQCN Rc]--> data(psn, va, len) --> trimmed? drop (no trim support)
//!      ^         one EV, one plane          Class::Data           GbnReceiver: accept epsn only
//!      |                                                          CE mark -> DcqcnNp (<= 1 / 50 us)
//!      +---- ACK(psn) / NAK(epsn) / CNP <--- Class::Control, 64 B, same EV and plane
//!   DcqcnRp: CNP cuts Rc; timers / byte counter raise it
//! ```
//!
//! Model choices, each a deliberate simplification or a fact of RoCE:
//! - **One path.** The flow's EV is a hash of (src, dst, qp, seed), fixed for the whole flow:
//!   switches ECMP-hash it, so every packet takes the same path. With several planes RoCE does
//!   not spray either: the QP is bound to one NIC port, plane = hash % planes. Both endpoints
//!   derive the same (EV, plane), so ACKs/NAKs/CNPs use them too. `poll_transmit` on any other
//!   plane returns `None`. The initial PSN comes from the same hash (it exercises the 2^24 wrap).
//! - **Go-back-N** is [`crate::go_back_n`]: the responder accepts only the expected PSN,
//!   NAKs the first packet past a gap once, and the requester rewinds to the NAKed PSN or, on
//!   its single retransmit timer, to the oldest unacknowledged one. ACKs are coalesced per
//!   `sack_coalesce_bytes` and sent at once on AckReq.
//! - **RTO** = 2^`rto_exp` x 1.024 us (the config's ACK-timeout unit), fixed (no backoff).
//!   After [`RETRY_CNT`] (7, the IB maximum) consecutive timeouts without progress the QP
//!   fails: `failed`, and every byte not acknowledged is `bytes_lost`. Progress (any new ACK)
//!   resets the count. (IB also counts sequence-error NAKs against `retry_cnt`; this model
//!   counts only timeouts, as a NAK always comes with the responder still alive.)
//! - **Window**: RoCE has no congestion window, but a NIC bounds outstanding packets. The cap
//!   here is the path's bandwidth-delay product in full packets, `ceil(base_rtt x port rate /
//!   wire packet)`, plus one ACK-coalescing batch (so a lone flow is not throttled below line
//!   rate while the responder waits to coalesce), and at least [`MIN_WINDOW_PKTS`].
//! - **Pacing**: with DCQCN a data packet may leave only when the gate is open; the gate is
//!   `send time + wire bytes / Rc`. While DCQCN is released (Rc = line rate) there is no gate:
//!   the NIC port itself serialises at line rate. `poll_timeout` reports the gate time while a
//!   packet is waiting behind it.
//! - **AckReq**: besides the go-back-N sender's own (last packet, window full), a packet asks
//!   for an immediate ACK when, at the current rate, one coalescing batch would take longer
//!   than half an RTO to send: otherwise a heavily throttled QP times out spuriously while
//!   the responder waits for bytes that the pacer has not released yet.
//! - **Trimmed data**: RoCE has no trim support; a trimmed packet fails the ICRC and is
//!   discarded by the responder (`pkts_dropped`, `trims_received`), no NAK and no CNP even if
//!   CE-marked. Go-back-N recovers by the NAK the next packet triggers, or by the timeout if
//!   it was the last packet in flight.
//! - **Memory**: the responder writes a contiguous region starting at [`BASE_VA`]; go-back-N
//!   accepts a packet only if its PSN is the expected one, so the write offset only grows and
//!   each byte is written exactly once (a packet whose VA or length does not match the next
//!   write is refused: `writes_rejected`).
//!
//! Per packet: O(1), no allocation beyond the [`Packet`] itself.

use super::dcqcn::{pacing_gap, DcqcnNp, DcqcnParams, DcqcnRp};
use crate::go_back_n::{GbnAck, GbnReceiver, GbnSender, PSN_MASK};
use crate::netsim::endpoint::{Endpoint, EndpointStats, FlowSpec, PathInfo, Transport};
use crate::netsim::packet::{
    Body, Class, HostId, Packet, RoceAck, RoceData, Trim, DATA_HEADER_BYTES, HEADER_BYTES,
};
use crate::netsim::{Ps, NS};
use crate::rng::SplitMix64;
use mrc_config::NicConfig;

/// RC `retry_cnt`: timeouts retried before the QP errors (3 bits in IB: at most 7).
pub const RETRY_CNT: u32 = 7;
/// Smallest outstanding-packet cap, whatever the path's BDP.
pub const MIN_WINDOW_PKTS: u64 = 4;
/// Virtual address of the responder's region (the VA of byte 0 of the WRITE).
pub const BASE_VA: u64 = 0x1_0000_0000;

/// Retransmit timeout from the config: 2^rto_exp ticks of 1.024 us.
pub fn rto(cfg: &NicConfig) -> Ps {
    (1u64 << cfg.rto_exp) * 1024 * NS
}

/// The flow's fixed (EV, plane, initial PSN): a hash of (src, dst, qp, seed). Both endpoints
/// compute it, so data and control packets share the path.
pub fn flow_path(flow: &FlowSpec, planes: u8) -> (u32, u8, u32) {
    let tuple = (u64::from(flow.src) << 32 | u64::from(flow.dst))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ u64::from(flow.id).rotate_left(29);
    let mut r = SplitMix64::new(flow.seed ^ tuple);
    let h = r.next_u64();
    let ev = h as u32;
    let plane = ((h >> 32) % u64::from(planes.max(1))) as u8;
    let psn = r.next_u64() as u32 & PSN_MASK;
    (ev, plane, psn)
}

/// Outstanding-packet cap for a path (see the module doc).
pub fn window_pkts(cfg: &NicConfig, path: &PathInfo) -> u64 {
    let (rtt, gbps) = if path.base_rtt > 0 && path.port_gbps > 0.0 {
        (path.base_rtt, path.port_gbps)
    } else {
        (u64::from(cfg.base_rtt_ns) * NS, f64::from(cfg.link_gbps))
    };
    // ps x Gb/s = 1e-3 bit.
    let bdp_bytes = (rtt as f64 * gbps / 8_000.0).ceil() as u64;
    let wire = u64::from(cfg.mtu + DATA_HEADER_BYTES);
    let batch = u64::from(cfg.sack_coalesce_bytes).div_ceil(u64::from(cfg.mtu));
    (bdp_bytes.div_ceil(wire) + batch).clamp(MIN_WINDOW_PKTS, (1 << 23) - 1)
}

/// The sender side of one RoCE RC QP: one RDMA WRITE of `flow.bytes`.
#[derive(Debug, Clone)]
pub struct RoceRequester {
    src: HostId,
    dst: HostId,
    qp: u32,
    bytes: u64,
    start: Ps,
    mtu: u32,
    ev: u32,
    plane: u8,
    /// AckReq when a coalescing batch at the current rate takes at least this long.
    ackreq_gap: Ps,
    batch_pkts: u64,
    tx: GbnSender,
    rp: Option<DcqcnRp>,
    /// Pacing gate: no data packet before this time (only while DCQCN limits the rate).
    next_send: Ps,
    /// `now` of the latest call: `poll_timeout` reports only future gate times.
    last_now: Ps,
    started: bool,
    /// Consecutive timeouts without progress.
    retries: u32,
    last_acked: u64,
    naks: u64,
    timeouts: u64,
    completed_at: Option<Ps>,
    failed: bool,
    bytes_lost: u64,
}

impl RoceRequester {
    /// `dcqcn`: DCQCN parameters, or `None` to send at line rate with no congestion control.
    pub fn new(
        cfg: &NicConfig,
        flow: &FlowSpec,
        path: &PathInfo,
        dcqcn: Option<DcqcnParams>,
    ) -> Self {
        let (ev, plane, start_psn) = flow_path(flow, path.planes);
        let packets = flow.bytes.div_ceil(u64::from(cfg.mtu));
        let window = window_pkts(cfg, path).min(packets.max(1));
        let line_mbps = (path.port_gbps * 1000.0).round().max(1.0) as u64;
        let rto = rto(cfg);
        RoceRequester {
            src: flow.src,
            dst: flow.dst,
            qp: flow.id,
            bytes: flow.bytes,
            start: flow.start,
            mtu: cfg.mtu,
            ev,
            plane,
            ackreq_gap: rto / 2,
            batch_pkts: u64::from(cfg.sack_coalesce_bytes)
                .div_ceil(u64::from(cfg.mtu))
                .max(1),
            tx: GbnSender::new(start_psn, packets, window, rto),
            rp: dcqcn.map(|p| DcqcnRp::new(line_mbps, p)),
            next_send: 0,
            last_now: 0,
            started: false,
            retries: 0,
            last_acked: 0,
            naks: 0,
            timeouts: 0,
            completed_at: None,
            failed: false,
            bytes_lost: 0,
        }
    }

    /// The flow's single EV.
    pub fn ev(&self) -> u32 {
        self.ev
    }

    /// The flow's single plane (NIC port).
    pub fn plane(&self) -> u8 {
        self.plane
    }

    /// The DCQCN reaction point, if enabled.
    pub fn dcqcn(&self) -> Option<&DcqcnRp> {
        self.rp.as_ref()
    }

    fn bytes_acked(&self) -> u64 {
        (self.tx.acked() * u64::from(self.mtu)).min(self.bytes)
    }

    /// Bookkeeping every call starts with: time, start of the flow, DCQCN timers.
    fn touch(&mut self, now: Ps) {
        self.last_now = now;
        if !self.started && now >= self.start {
            self.started = true;
            if self.tx.done() {
                self.completed_at = Some(self.start); // an empty WRITE
            }
        }
        if let Some(rp) = &mut self.rp {
            rp.advance(now);
        }
    }

    /// The pacing gate is closed at `now`.
    fn gated(&self, now: Ps) -> bool {
        self.rp.as_ref().is_some_and(|rp| rp.limited()) && now < self.next_send
    }

    fn fail(&mut self) {
        self.failed = true;
        self.bytes_lost = self.bytes - self.bytes_acked();
    }
}

impl Endpoint for RoceRequester {
    fn handle_packet(&mut self, now: Ps, pkt: Packet) {
        self.touch(now);
        if self.failed {
            return;
        }
        match pkt.body {
            Body::RoceAck(RoceAck::Ack { psn }) => self.tx.handle_ack(now, GbnAck::Ack(psn)),
            Body::RoceAck(RoceAck::Nak { epsn }) => {
                self.naks += 1;
                self.tx.handle_ack(now, GbnAck::Nak(epsn));
            }
            Body::RoceCnp => {
                if let Some(rp) = &mut self.rp {
                    rp.on_cnp(now);
                }
            }
            _ => {}
        }
        if self.tx.acked() > self.last_acked {
            self.last_acked = self.tx.acked();
            self.retries = 0;
            if self.tx.done() && self.completed_at.is_none() {
                self.completed_at = Some(now);
            }
        }
    }

    fn poll_transmit(&mut self, now: Ps, plane: u8) -> Option<Packet> {
        self.touch(now);
        if plane != self.plane || self.failed || !self.started || self.gated(now) {
            return None;
        }
        let d = self.tx.poll_transmit(now)?;
        let offset = d.index * u64::from(self.mtu);
        let len = (self.bytes - offset).min(u64::from(self.mtu)) as u32;
        let wire_bytes = len + DATA_HEADER_BYTES;
        let mut ackreq = d.ackreq;
        if let Some(rp) = &mut self.rp {
            rp.on_send(now, wire_bytes);
            if rp.limited() {
                let gap = pacing_gap(wire_bytes, rp.rate_mbps());
                self.next_send = now + gap;
                ackreq |= gap.saturating_mul(self.batch_pkts) >= self.ackreq_gap;
            }
        }
        Some(Packet {
            src: self.src,
            dst: self.dst,
            qp: self.qp,
            plane,
            ev: self.ev,
            class: Class::Data,
            wire_bytes,
            ecn: false,
            trim: Trim::None,
            hops: 0,
            sent_at: now,
            body: Body::RoceData(RoceData {
                psn: d.psn,
                len,
                va: BASE_VA + offset,
                last: d.index + 1 == self.tx.packets(),
                rtx: d.retransmit,
                ackreq,
            }),
        })
    }

    fn wants_transmit(&self, now: Ps) -> bool {
        !self.failed && now >= self.start && self.tx.can_transmit() && !self.gated(now)
    }

    fn poll_timeout(&self) -> Option<Ps> {
        if self.failed {
            return None;
        }
        if !self.started {
            return Some(self.start);
        }
        let gate = (self.rp.as_ref().is_some_and(|rp| rp.limited())
            && self.next_send > self.last_now
            && self.tx.can_transmit())
        .then_some(self.next_send);
        match (self.tx.poll_timeout(), gate) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn handle_timeout(&mut self, now: Ps) {
        self.touch(now);
        if self.failed {
            return;
        }
        if self.tx.poll_timeout().is_some_and(|d| now >= d) {
            self.timeouts += 1;
            if self.retries >= RETRY_CNT {
                self.fail();
            } else {
                self.retries += 1;
                self.tx.handle_timeout(now);
            }
        }
    }

    fn stats(&self) -> EndpointStats {
        EndpointStats {
            data_sent: self.tx.stats.sent,
            retransmits: self.tx.stats.retransmits,
            timeouts: self.timeouts,
            nacks_other: self.naks,
            bytes_acked: self.bytes_acked(),
            completed_at: self.completed_at,
            failed: self.failed,
            bytes_lost: self.bytes_lost,
            cwnd: self.tx.window() * u64::from(self.mtu),
            rate_mbps: self.rp.as_ref().map_or(0, |rp| rp.rate_mbps()),
            ..EndpointStats::default()
        }
    }
}

/// The receiver side of one RoCE RC QP.
#[derive(Debug, Clone)]
pub struct RoceResponder {
    /// This host (the flow's destination) and the requester's.
    host: HostId,
    peer: HostId,
    qp: u32,
    ev: u32,
    plane: u8,
    /// End of the registered region.
    end_va: u64,
    /// VA the next in-order payload must carry.
    next_va: u64,
    rx: GbnReceiver,
    np: Option<DcqcnNp>,
    /// Newest ACK/NAK not yet sent: the responder's state only moves forward, so a newer one
    /// carries everything an older one did (a NAK(epsn) also acknowledges epsn - 1).
    pending_ack: Option<RoceAck>,
    pending_cnp: bool,
    stats: EndpointStats,
}

impl RoceResponder {
    /// `cnp_interval`: DCQCN notification point interval, or `None` (no CNPs).
    pub fn new(
        cfg: &NicConfig,
        flow: &FlowSpec,
        path: &PathInfo,
        cnp_interval: Option<Ps>,
    ) -> Self {
        let (ev, plane, start_psn) = flow_path(flow, path.planes);
        RoceResponder {
            host: flow.dst,
            peer: flow.src,
            qp: flow.id,
            ev,
            plane,
            end_va: BASE_VA + flow.bytes,
            next_va: BASE_VA,
            rx: GbnReceiver::new(start_psn, u64::from(cfg.sack_coalesce_bytes)),
            np: cnp_interval.map(DcqcnNp::new),
            pending_ack: None,
            pending_cnp: false,
            stats: EndpointStats::default(),
        }
    }

    /// The DCQCN notification point, if enabled.
    pub fn dcqcn(&self) -> Option<&DcqcnNp> {
        self.np.as_ref()
    }

    fn control(&self, now: Ps, plane: u8, body: Body) -> Packet {
        Packet {
            src: self.host,
            dst: self.peer,
            qp: self.qp,
            plane,
            ev: self.ev,
            class: Class::Control,
            wire_bytes: HEADER_BYTES,
            ecn: false,
            trim: Trim::None,
            hops: 0,
            sent_at: now,
            body,
        }
    }
}

impl Endpoint for RoceResponder {
    fn handle_packet(&mut self, now: Ps, pkt: Packet) {
        let Body::RoceData(d) = pkt.body else {
            self.stats.pkts_dropped += 1;
            return;
        };
        if pkt.trim != Trim::None {
            // No trim support: the payload is gone and the ICRC fails. Silent drop.
            self.stats.trims_received += 1;
            self.stats.pkts_dropped += 1;
            return;
        }
        if pkt.ecn {
            self.stats.ecn_received += 1;
        }
        if let Some(np) = &mut self.np {
            self.pending_cnp |= np.on_data(now, pkt.ecn);
        }
        if d.psn == self.rx.epsn()
            && (d.va != self.next_va || d.va + u64::from(d.len) > self.end_va)
        {
            // The expected PSN but not the next write: refuse it rather than write twice.
            self.stats.writes_rejected += 1;
            self.stats.pkts_dropped += 1;
            return;
        }
        let before = self.rx.stats;
        let answer = self.rx.handle_data(d.psn, d.len, d.ackreq);
        // Only the PSN just handled can be in it; keep the queue empty (no growth, no alloc).
        self.rx.delivered.clear();
        if self.rx.stats.accepted > before.accepted {
            self.stats.bytes_delivered += u64::from(d.len);
            self.next_va += u64::from(d.len);
        } else if self.rx.stats.duplicates > before.duplicates {
            self.stats.dup_bytes += u64::from(d.len);
        } else {
            // Past a gap: go-back-N keeps no out-of-order state.
            self.stats.pkts_dropped += 1;
        }
        match answer {
            Some(GbnAck::Ack(psn)) => self.pending_ack = Some(RoceAck::Ack { psn }),
            Some(GbnAck::Nak(epsn)) => self.pending_ack = Some(RoceAck::Nak { epsn }),
            None => {}
        }
    }

    fn poll_transmit(&mut self, now: Ps, plane: u8) -> Option<Packet> {
        if plane != self.plane {
            return None;
        }
        // The CNP first: it is the time-critical one.
        if self.pending_cnp {
            self.pending_cnp = false;
            return Some(self.control(now, plane, Body::RoceCnp));
        }
        let ack = self.pending_ack.take()?;
        match ack {
            RoceAck::Ack { .. } => self.stats.acks_sent += 1,
            RoceAck::Nak { .. } => self.stats.nacks_sent += 1,
        }
        Some(self.control(now, plane, Body::RoceAck(ack)))
    }

    fn wants_transmit(&self, _now: Ps) -> bool {
        self.pending_cnp || self.pending_ack.is_some()
    }

    fn poll_timeout(&self) -> Option<Ps> {
        None
    }

    fn handle_timeout(&mut self, _now: Ps) {}

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}

/// Builds RoCE endpoint pairs from a [`NicConfig`].
#[derive(Debug, Clone)]
pub struct RoceTransport {
    cfg: NicConfig,
    dcqcn: Option<DcqcnParams>,
}

impl RoceTransport {
    /// RoCEv2 RC with DCQCN (default parameters) when `dcqcn`, else with no rate control.
    /// RoCEv2 RC, with DCQCN as the UEC reference simulator runs it when `dcqcn` (scaled to
    /// one NIC port: RoCE sends on one).
    pub fn new(cfg: &NicConfig, dcqcn: bool) -> Self {
        let port_mbps = u64::from(cfg.link_gbps) * 1000 / u64::from(cfg.planes.max(1));
        Self::with_dcqcn(
            cfg,
            dcqcn.then(|| DcqcnParams::reference_simulator(port_mbps)),
        )
    }

    /// RoCEv2 RC with the given DCQCN parameters (`None`: no rate control).
    pub fn with_dcqcn(cfg: &NicConfig, dcqcn: Option<DcqcnParams>) -> Self {
        RoceTransport {
            cfg: cfg.clone(),
            dcqcn,
        }
    }
}

impl Transport for RoceTransport {
    /// "roce" (with DCQCN, the standard deployment) or "roce-nocc" (no rate control), so both
    /// can appear in one results table.
    fn name(&self) -> String {
        if self.dcqcn.is_some() {
            "roce"
        } else {
            "roce-nocc"
        }
        .to_string()
    }

    fn connect(&self, flow: &FlowSpec, path: &PathInfo) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        (
            Box::new(RoceRequester::new(&self.cfg, flow, path, self.dcqcn)),
            Box::new(RoceResponder::new(
                &self.cfg,
                flow,
                path,
                self.dcqcn.map(|p| p.cnp_interval),
            )),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netsim::{tx_time, US};
    use std::collections::{BTreeSet, VecDeque};

    const GBPS: f64 = 800.0;
    const ONE_WAY: Ps = 5 * US;

    /// What the line does to one data packet (the n-th sent, 0-based).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Fate {
        Keep,
        Drop,
        Mark,
        Trim,
    }

    fn path(planes: u8) -> PathInfo {
        let rtt =
            2 * ONE_WAY + tx_time(4096 + DATA_HEADER_BYTES, GBPS) + tx_time(HEADER_BYTES, GBPS);
        PathInfo {
            planes,
            port_gbps: GBPS,
            base_rtt: rtt,
            paths_per_plane: 16,
        }
    }

    fn flow(bytes: u64, seed: u64) -> FlowSpec {
        FlowSpec {
            id: 3,
            src: 1,
            dst: 2,
            bytes,
            start: 10 * US,
            seed,
            after: None,
        }
    }

    /// Requester and responder joined by two constant-delay lines (each side's NIC port
    /// serialises at `GBPS`), driven in time order through the `Endpoint` trait only.
    struct Harness<F: FnMut(u64, &Packet) -> Fate> {
        req: Box<dyn Endpoint>,
        rsp: Box<dyn Endpoint>,
        planes: u8,
        fwd: VecDeque<(Ps, Packet)>,
        rev: VecDeque<(Ps, Packet)>,
        req_free: Ps,
        rsp_free: Ps,
        now: Ps,
        fate: F,
        data_sent: u64,
        cnps: Vec<Ps>,
        /// (ev, plane) of every packet either side sent.
        paths: BTreeSet<(u32, u8)>,
        min_rate: u64,
    }

    impl<F: FnMut(u64, &Packet) -> Fate> Harness<F> {
        fn new(t: &RoceTransport, f: &FlowSpec, planes: u8, fate: F) -> Self {
            let (req, rsp) = t.connect(f, &path(planes));
            Harness {
                req,
                rsp,
                planes,
                fwd: VecDeque::new(),
                rev: VecDeque::new(),
                req_free: 0,
                rsp_free: 0,
                now: 0,
                fate,
                data_sent: 0,
                cnps: Vec::new(),
                paths: BTreeSet::new(),
                min_rate: u64::MAX,
            }
        }

        /// Run until nothing is left to happen (or `limit`); returns the final time.
        fn run(&mut self, limit: Ps) -> Ps {
            for _ in 0..50_000_000u64 {
                let mut t = Ps::MAX;
                for q in [&self.fwd, &self.rev] {
                    if let Some((a, _)) = q.front() {
                        t = t.min(*a);
                    }
                }
                for e in [&self.req, &self.rsp] {
                    if let Some(d) = e.poll_timeout() {
                        t = t.min(d);
                    }
                }
                if self.req_free > self.now && self.req.wants_transmit(self.req_free) {
                    t = t.min(self.req_free);
                }
                if self.rsp_free > self.now && self.rsp.wants_transmit(self.rsp_free) {
                    t = t.min(self.rsp_free);
                }
                if t == Ps::MAX || t > limit {
                    return self.now;
                }
                assert!(t >= self.now, "time never goes back");
                self.now = t;
                let now = t;
                while self.fwd.front().is_some_and(|(a, _)| *a <= now) {
                    let (_, p) = self.fwd.pop_front().unwrap();
                    self.rsp.handle_packet(now, p);
                }
                while self.rev.front().is_some_and(|(a, _)| *a <= now) {
                    let (_, p) = self.rev.pop_front().unwrap();
                    if p.body == Body::RoceCnp {
                        self.cnps.push(now);
                    }
                    self.req.handle_packet(now, p);
                }
                if self.req.poll_timeout().is_some_and(|d| d <= now) {
                    self.req.handle_timeout(now);
                }
                if self.req_free <= now {
                    if let Some(mut p) =
                        (0..self.planes).find_map(|pl| self.req.poll_transmit(now, pl))
                    {
                        assert_eq!((p.class, p.src, p.dst, p.sent_at), (Class::Data, 1, 2, now));
                        self.paths.insert((p.ev, p.plane));
                        self.req_free = now + tx_time(p.wire_bytes, GBPS);
                        let n = self.data_sent;
                        self.data_sent += 1;
                        match (self.fate)(n, &p) {
                            Fate::Keep => self.fwd.push_back((self.req_free + ONE_WAY, p)),
                            Fate::Drop => {}
                            Fate::Mark => {
                                p.ecn = true;
                                self.fwd.push_back((self.req_free + ONE_WAY, p));
                            }
                            Fate::Trim => {
                                p.trim = Trim::Fabric;
                                p.wire_bytes = HEADER_BYTES;
                                p.class = Class::Control;
                                self.fwd.push_back((self.req_free + ONE_WAY, p));
                            }
                        }
                    }
                }
                if self.rsp_free <= now {
                    if let Some(p) = (0..self.planes).find_map(|pl| self.rsp.poll_transmit(now, pl))
                    {
                        assert_eq!(
                            (p.class, p.src, p.dst, p.wire_bytes),
                            (Class::Control, 2, 1, HEADER_BYTES)
                        );
                        self.paths.insert((p.ev, p.plane));
                        self.rsp_free = now + tx_time(p.wire_bytes, GBPS);
                        self.rev.push_back((self.rsp_free + ONE_WAY, p));
                    }
                }
                let r = self.req.stats().rate_mbps;
                if r > 0 {
                    self.min_rate = self.min_rate.min(r);
                }
            }
            panic!("harness did not settle");
        }
    }

    fn cfg() -> NicConfig {
        NicConfig::default()
    }

    #[test]
    fn transfer_completes_exactly_once_under_loss() {
        let bytes = 4 * 1024 * 1024 + 1000; // a short last packet
        let t = RoceTransport::new(&cfg(), true);
        let mut h = Harness::new(&t, &flow(bytes, 7), 1, |n, _| {
            if n % 97 == 13 || n == 200 || n == 201 {
                Fate::Drop
            } else {
                Fate::Keep
            }
        });
        h.run(Ps::MAX);
        let (s, r) = (h.req.stats(), h.rsp.stats());
        assert!(!s.failed);
        assert!(s.completed_at.is_some());
        assert_eq!(s.bytes_acked, bytes);
        assert_eq!(r.bytes_delivered, bytes, "every byte written once");
        assert_eq!(r.writes_rejected, 0);
        assert!(s.retransmits > 0 && s.nacks_other > 0 && r.nacks_sent > 0);
        assert!(r.dup_bytes > 0 || r.pkts_dropped > 0);
        assert_eq!(s.data_sent, h.data_sent);
        assert_eq!(s.rate_mbps, 800_000, "no marks: DCQCN never engaged");
        assert!(s.cwnd > 0);
    }

    #[test]
    fn deterministic() {
        let run = |seed| {
            let t = RoceTransport::new(&cfg(), true);
            let mut h = Harness::new(&t, &flow(1 << 20, seed), 4, |n, _| match n % 31 {
                5 => Fate::Drop,
                9 => Fate::Mark,
                _ => Fate::Keep,
            });
            let end = h.run(Ps::MAX);
            (end, h.req.stats(), h.rsp.stats(), h.paths.clone())
        };
        assert_eq!(run(11), run(11));
        assert_ne!(run(11).3, run(12).3, "another seed, another path");
    }

    #[test]
    fn ecn_marks_bring_cnps_and_cut_the_rate() {
        let bytes = 8 << 20;
        let t = RoceTransport::new(&cfg(), true);
        let mut h = Harness::new(&t, &flow(bytes, 1), 1, |_, _| Fate::Mark);
        let end = h.run(Ps::MAX);
        let (s, r) = (h.req.stats(), h.rsp.stats());
        assert_eq!(r.bytes_delivered, bytes);
        assert_eq!(
            r.ecn_received,
            r.bytes_delivered.div_ceil(4096) + r.dup_bytes.div_ceil(4096) + r.pkts_dropped
        );
        assert!(h.cnps.len() >= 2);
        for w in h.cnps.windows(2) {
            assert!(w[1] - w[0] >= 50 * US, "NP: at most one CNP per 50 us");
        }
        assert!(h.cnps.len() as u64 <= (end - 10 * US) / (50 * US) + 1);
        assert!(s.rate_mbps < 800_000 / 2, "rate cut: {}", s.rate_mbps);
        // The same marks without DCQCN: no CNP, no pacing, and a much shorter transfer.
        let t = RoceTransport::new(&cfg(), false);
        assert_eq!(t.name(), "roce-nocc");
        let mut h0 = Harness::new(&t, &flow(bytes, 1), 1, |_, _| Fate::Mark);
        let end0 = h0.run(Ps::MAX);
        assert!(h0.cnps.is_empty());
        assert_eq!(h0.req.stats().rate_mbps, 0);
        assert!(end0 < end);
    }

    #[test]
    fn without_marks_the_rate_recovers_to_line_rate() {
        let bytes = 256 << 20;
        let t = RoceTransport::new(&cfg(), true);
        assert_eq!(t.name(), "roce");
        let mut h = Harness::new(&t, &flow(bytes, 1), 1, |n, _| {
            if n == 0 {
                Fate::Mark
            } else {
                Fate::Keep
            }
        });
        h.run(Ps::MAX);
        let s = h.req.stats();
        assert_eq!(h.cnps.len(), 1);
        assert_eq!(
            h.min_rate, 400_000,
            "one CNP with alpha = 1 halves the rate"
        );
        assert_eq!(s.rate_mbps, 800_000, "back at line rate");
        assert_eq!(s.retransmits, 0, "pacing caused no spurious timeout");
        assert_eq!(h.rsp.stats().bytes_delivered, bytes);
    }

    #[test]
    fn trimmed_packet_is_recovered_by_go_back_n() {
        let bytes = 1 << 20; // 256 packets
        let t = RoceTransport::new(&cfg(), true);
        let mut h = Harness::new(&t, &flow(bytes, 5), 1, |n, _| {
            if n == 10 {
                Fate::Trim
            } else {
                Fate::Keep
            }
        });
        h.run(Ps::MAX);
        let (s, r) = (h.req.stats(), h.rsp.stats());
        assert_eq!(r.trims_received, 1);
        assert!(r.pkts_dropped >= 1);
        assert_eq!(r.bytes_delivered, bytes);
        assert!(s.nacks_other >= 1 && s.retransmits >= 1);
        assert_eq!(s.timeouts, 0, "the next packet's NAK recovered it");
        // The last packet trimmed: nothing follows it, so only the timer recovers it.
        let mut h = Harness::new(&t, &flow(bytes, 5), 1, |n, _| {
            if n == 255 {
                Fate::Trim
            } else {
                Fate::Keep
            }
        });
        h.run(Ps::MAX);
        let (s, r) = (h.req.stats(), h.rsp.stats());
        assert_eq!(s.timeouts, 1);
        assert_eq!(r.bytes_delivered, bytes);
        assert_eq!(s.bytes_acked, bytes);
    }

    #[test]
    fn dead_path_exhausts_retries_and_fails() {
        let c = cfg();
        let bytes = 1 << 20;
        let f = flow(bytes, 9);
        let t = RoceTransport::new(&c, true);
        let mut h = Harness::new(&t, &f, 1, |_, _| Fate::Drop);
        let end = h.run(Ps::MAX);
        let s = h.req.stats();
        assert!(s.failed);
        assert_eq!(s.completed_at, None);
        assert_eq!(s.bytes_lost, bytes);
        assert_eq!(s.bytes_acked, 0);
        assert_eq!(s.timeouts, u64::from(RETRY_CNT) + 1);
        let w = window_pkts(&c, &path(1));
        assert_eq!(
            s.data_sent,
            w * (u64::from(RETRY_CNT) + 1),
            "the window, 8 times"
        );
        assert_eq!(h.req.poll_timeout(), None, "a failed QP asks for nothing");
        // First send at the start, then 8 RTOs (the timer restarts at each timeout).
        assert_eq!(end, f.start + (u64::from(RETRY_CNT) + 1) * rto(&c));
        assert_eq!(h.rsp.stats(), EndpointStats::default());
    }

    #[test]
    fn one_ev_and_one_plane_for_the_whole_flow() {
        let t = RoceTransport::new(&cfg(), true);
        let f = flow(2 << 20, 21);
        let mut h = Harness::new(&t, &f, 4, |n, _| match n % 53 {
            7 => Fate::Drop,
            8 => Fate::Mark,
            _ => Fate::Keep,
        });
        h.run(Ps::MAX);
        assert!(h.req.stats().retransmits > 0 && !h.cnps.is_empty());
        let (ev, plane, _) = flow_path(&f, 4);
        assert_eq!(h.paths.into_iter().collect::<Vec<_>>(), [(ev, plane)]);
        // Across flows the hash spreads over the planes (RoCE's only "load balancing").
        let planes: BTreeSet<u8> = (0..64).map(|s| flow_path(&flow(1, s), 4).1).collect();
        assert_eq!(planes.len(), 4);
    }

    #[test]
    fn not_before_start_and_not_on_other_planes() {
        let c = cfg();
        let f = flow(1 << 16, 2);
        let mut req = RoceRequester::new(&c, &f, &path(2), Some(DcqcnParams::default()));
        assert_eq!(req.poll_timeout(), Some(f.start));
        assert!(!req.wants_transmit(0));
        assert!(req.poll_transmit(0, req.plane()).is_none());
        let other = 1 - req.plane();
        assert!(req.poll_transmit(f.start, other).is_none());
        let p = req.poll_transmit(f.start, req.plane()).unwrap();
        let Body::RoceData(d) = p.body else { panic!() };
        assert_eq!((d.va, d.len, d.rtx), (BASE_VA, 4096, false));
        assert_eq!(p.wire_bytes, 4096 + DATA_HEADER_BYTES);
    }

    #[test]
    fn rto_and_window_follow_the_config() {
        let c = cfg();
        assert_eq!(rto(&c), 16 * 1024 * NS);
        // 800 Gb/s x ~10.05 us = ~1005 KB = 242 wire packets, + 4 for one ACK batch.
        let p = path(1);
        let bdp = (p.base_rtt as f64 * 800.0 / 8000.0).ceil() as u64;
        assert_eq!(window_pkts(&c, &p), bdp.div_ceil(4160) + 4);
        let tiny = PathInfo {
            base_rtt: 1000,
            ..p
        };
        assert_eq!(window_pkts(&c, &tiny), MIN_WINDOW_PKTS + 1);
    }
}
