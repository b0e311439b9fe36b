//! The MRC requester: one RDMA WRITE message, sprayed over the QP's EVs, repaired by SACK,
//! trim NACK, loss inference and RTO, paced by NSCC.
//!
//! ```text
//!            una                                   nxt              n_pkts
//!   acked     |  in flight / rtx pending / acked    |  not sent yet   |
//!   ----------+-------------------------------------+-----------------+
//!             <---- < min(W, receiver window) ----->
//!   slot = packet index mod W: ev_of, deadline; bitsets acked, rtx, hole
//!
//!   poll_transmit(now, plane):  probe due on an ASSUMED_BAD EV of the plane
//!                             > oldest rtx-pending packet   (cwnd gate, except una itself)
//!                             > next new packet              (cwnd, W and receiver window)
//! ```
//!
//! Scoreboard semantics are those of `sack_tx_scoreboard` (the cycle model in
//! [`crate::sack_tx_scoreboard`]), at the transaction level:
//! - a SACK acks `(.., cack]` and its bitmap bits; a PSN more than `rtx_ooo_threshold` below
//!   the highest SACKed PSN that is still unacked is a hole: marked for retransmission
//!   once (a retransmitted hole is not marked again by SACKs; the RTO covers it);
//! - a NACK for an outstanding, unacked PSN marks it for retransmission, whatever the
//!   reason; TRIMMED / TRIMMED_LASTHOP also give path feedback;
//! - the RTO is head-of-line, as in the block: each send stores a deadline `now + 2^e *
//!   1.024 us` (`e = rto_exp`, plus `head_timeouts - rto_linear_retries` when the packet is
//!   the head: linear retries, then doubling), and only the head (`una`) is checked. A fire
//!   marks the head for retransmission; the `rto_linear_retries + rto_backoff_retries + 1`-th
//!   fire without `una` moving fails the QP. Deadlines are exact picoseconds here (the
//!   block counts 1.024 us TICKs), so a timeout can fire up to one tick earlier than the
//!   block's.
//!
//! Where the endpoint departs from the block, and why:
//! - A *stale* SACK (cack behind una) is dropped whole by the block; here its bitmap, M
//!   field and probe answer are still used (bits behind una ignored). The reverse path
//!   reorders SACKs (each rides the EV of its trigger), and a dropped probe answer would
//!   keep a healed EV out of service for another probe interval.
//! - A hole inferred from SACKs counts as loss evidence on the EV the lost copy used: the
//!   spray policy gets `FeedbackKind::Timeout` for it (MRC: ASSUMED_BAD). The block gives no
//!   feedback for holes. Without this a silently dead path is only found by the head RTO,
//!   one packet per RTO, far from the "few tens of us" bypass the notes require; with it,
//!   the first packet lost on a dead EV retires the EV about one RTT later. A false
//!   positive (reordering deeper than the threshold) costs one probe interval on that EV.
//!   Inferred losses do not touch NSCC: silent loss means a failed path, not congestion.
//! - The head retransmission is exempt from the cwnd gate: otherwise a window filled by
//!   packets lost on a dead path (no SACKs come back, and only the head is timed) could
//!   hold the head back forever.
//! - Acked bytes for NSCC are the bytes this SACK newly acknowledged (per-PSN bookkeeping),
//!   not the `rcvd_bytes` delta the block forwards in 256-byte units.
//!
//! NSCC ([`Fixed`], the RTL's integer algorithm) sees: `Ack` per SACK (newly acked bytes,
//! RTT = now - echo_ts, ECN echo, receiver penalty; a probe answer carries no RTT sample),
//! `Nack` per valid trim NACK (the packet's bytes), `Rto` per retransmit timeout, `Tick`
//! every half base RTT while bytes acked since the last fulfill are pending (the model's
//! timed fulfill wants one at least once per base RTT, and a TICK does nothing otherwise).
//! Times are ns as wrapping u32.

use super::{MrcConfig, PSN_MASK};
use crate::ev_spray_arbiter::FeedbackKind;
use crate::netsim::endpoint::{Endpoint, EndpointStats, FlowSpec};
use crate::netsim::packet::{
    Body, Class, MrcData, MrcNack, MrcProbe, MrcSack, Packet, Trim, DATA_HEADER_BYTES, HEADER_BYTES,
};
use crate::netsim::{Ps, NS};
use crate::nscc::{Fixed, NsccEvent, FIELD_MAX};
use crate::sack_rx_tracker::{psn_add, psn_sub, window_limit, NACK_TRIMMED, NACK_TRIMMED_LASTHOP};
use crate::sack_tx_scoreboard::EXP_CAP;
use crate::transport::spray::EvSprayer;

/// Sign-extend a 24-bit serial difference.
fn sext24(x: u32) -> i64 {
    let x = i64::from(x & PSN_MASK);
    if x >= 1 << 23 {
        x - (1 << 24)
    } else {
        x
    }
}

fn get(v: &[u64], s: usize) -> bool {
    v[s / 64] >> (s % 64) & 1 == 1
}
fn set(v: &mut [u64], s: usize) {
    v[s / 64] |= 1 << (s % 64);
}
fn clear(v: &mut [u64], s: usize) {
    v[s / 64] &= !(1 << (s % 64));
}

/// Requester counters beyond [`EndpointStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequesterCounters {
    /// SACKs refused (cumulative or bitmap beyond what was sent, offset < 1).
    pub bad_sacks: u64,
    /// SACKs whose cumulative part was behind una (used for bitmap / M / probe only).
    pub stale_sacks: u64,
    /// NACKs for a PSN not outstanding or already acked.
    pub bad_nacks: u64,
    /// NACK PSN_OOR_WINDOW received.
    pub nacks_oor_window: u64,
    /// Packets declared lost from SACK holes (the ooo threshold).
    pub holes: u64,
    /// Probe answers received.
    pub probe_answers: u64,
    /// Reliability probes sent at the tail to refresh a coalesced or lost SACK.
    pub tail_probes: u64,
    /// Packets a tail probe's answer showed lost (retransmitted without waiting for the RTO).
    pub tail_losses: u64,
}

/// What the requester did, for tests that compare it with the cycle models.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trace {
    /// Path feedback to the spray policy; `inferred` for SACK-hole loss evidence.
    Feedback {
        idx: usize,
        kind: FeedbackKind,
        inferred: bool,
    },
}

/// The send side of one MRC QP.
#[derive(Debug, Clone)]
pub struct MrcRequester {
    c: MrcConfig,
    flow: FlowSpec,
    mtu: u32,
    n_pkts: u64,
    w: u64,
    una: u64,
    nxt: u64,
    ev_of: Vec<u16>,
    deadline: Vec<Ps>,
    /// When each slot's packet last went on the wire (the tail probe's loss rule).
    sent_at: Vec<Ps>,
    acked: Vec<u64>,
    rtx: Vec<u64>,
    hole: Vec<u64>,
    rtx_pending: u32,
    /// No rtx-pending packet below this index.
    rtx_hint: u64,
    /// Every unacked packet below this index is already hole-marked.
    hole_scanned: u64,
    inflight: u64,
    rcv_lim: u64,
    spray: EvSprayer,
    nscc: Fixed,
    head_timeouts: u32,
    tick_at: Ps,
    last_timer: Ps,
    /// When the tail probe is due: every packet sent, none to retransmit, some unacked, and
    /// a base RTT since the last send / half of one since the last progress (a coalesced or
    /// lost SACK, or a lost last packet, would otherwise wait for the RTO).
    tail_probe_at: Ps,
    /// The outstanding tail probe: (probe id, when it was sent).
    tail_probe: Option<(u32, Ps)>,
    probe_seq: u32,
    started: bool,
    stats: EndpointStats,
    pub counters: RequesterCounters,
    #[cfg(test)]
    pub(crate) trace: Vec<Trace>,
    /// Scoreboard tests drive ops with no notion of RTT; NSCC would only get in the way.
    #[cfg(test)]
    pub(crate) ignore_cwnd: bool,
}

impl MrcRequester {
    pub fn new(c: &MrcConfig, flow: &FlowSpec) -> Self {
        let w = c.nic.sack_window_bits as usize;
        let words = w / 64;
        MrcRequester {
            c: c.clone(),
            flow: flow.clone(),
            mtu: c.nic.mtu,
            n_pkts: flow.bytes.div_ceil(u64::from(c.nic.mtu)),
            w: w as u64,
            una: 0,
            nxt: 0,
            ev_of: vec![0; w],
            deadline: vec![0; w],
            sent_at: vec![0; w],
            acked: vec![0; words],
            rtx: vec![0; words],
            hole: vec![0; words],
            rtx_pending: 0,
            rtx_hint: 0,
            hole_scanned: 0,
            inflight: 0,
            rcv_lim: u64::from(window_limit(w as u32, c.nic.mpr as u8)),
            spray: EvSprayer::new(&c.nic, c.mode, flow.seed, c.probe_interval),
            nscc: Fixed::new(&c.nic),
            head_timeouts: 0,
            tick_at: 0,
            last_timer: 0,
            tail_probe_at: Ps::MAX,
            tail_probe: None,
            probe_seq: 0,
            started: false,
            stats: EndpointStats::default(),
            counters: RequesterCounters::default(),
            #[cfg(test)]
            trace: Vec::new(),
            #[cfg(test)]
            ignore_cwnd: false,
        }
    }

    pub fn spray(&self) -> &EvSprayer {
        &self.spray
    }
    pub fn nscc(&self) -> &Fixed {
        &self.nscc
    }
    /// Oldest unacknowledged PSN.
    pub fn una_psn(&self) -> u32 {
        self.psn_of(self.una)
    }
    /// Next new PSN.
    pub fn nxt_psn(&self) -> u32 {
        self.psn_of(self.nxt)
    }
    pub fn bytes_in_flight(&self) -> u64 {
        self.inflight
    }
    /// Packets marked for retransmission and not yet resent.
    pub fn rtx_pending(&self) -> u32 {
        self.rtx_pending
    }
    /// The PSN the next retransmission would carry (the oldest marked packet), if any.
    pub fn next_retransmit_psn(&self) -> Option<u32> {
        if self.rtx_pending == 0 {
            return None;
        }
        (self.rtx_hint.max(self.una)..self.nxt)
            .find(|&i| get(&self.rtx, self.slot(i)))
            .map(|i| self.psn_of(i))
    }
    /// Has the QP finished (every byte acked) or failed?
    pub fn done(&self) -> bool {
        self.stats.failed || self.stats.completed_at.is_some()
    }

    fn psn_of(&self, idx: u64) -> u32 {
        psn_add(self.c.start_psn, idx as u32)
    }
    fn slot(&self, idx: u64) -> usize {
        (idx % self.w) as usize
    }
    fn len_of(&self, idx: u64) -> u32 {
        let off = idx * u64::from(self.mtu);
        (self.flow.bytes - off).min(u64::from(self.mtu)) as u32
    }
    /// Index of an outstanding PSN (in [una, nxt)).
    fn idx_of_psn(&self, psn: u32) -> Option<u64> {
        let rel = u64::from(psn_sub(psn, self.psn_of(self.una)));
        (rel < self.nxt - self.una).then_some(self.una + rel)
    }
    fn window(&self) -> u64 {
        self.w.min(self.rcv_lim)
    }
    fn cwnd_allows(&self, len: u32) -> bool {
        #[cfg(test)]
        if self.ignore_cwnd {
            return true;
        }
        self.inflight == 0 || self.inflight + u64::from(len) <= u64::from(self.nscc.cwnd)
    }
    fn head_in_flight(&self) -> bool {
        self.una < self.nxt && !get(&self.rtx, self.slot(self.una))
    }
    fn now_ns(now: Ps) -> u32 {
        (now / NS) as u32
    }

    fn feedback(&mut self, now: Ps, idx: usize, kind: FeedbackKind, inferred: bool) {
        #[cfg(test)]
        self.trace.push(Trace::Feedback {
            idx,
            kind,
            inferred,
        });
        let _ = inferred;
        self.spray.feedback(now, idx, kind);
    }

    /// Start of the flow (first call at or after `start`); false while not sendable.
    fn begin(&mut self, now: Ps) -> bool {
        if self.done() || now < self.flow.start {
            return false;
        }
        if !self.started {
            self.started = true;
            self.tick_at = now + self.c.tick_interval;
            if self.n_pkts == 0 {
                self.stats.completed_at = Some(now);
                return false;
            }
        }
        true
    }

    /// Deadline of a (re)send of `idx` at `now` (the block's rule: backoff only for the head).
    fn deadline_for(&self, now: Ps, idx: u64) -> Ps {
        let extra = if idx == self.una {
            self.head_timeouts
                .saturating_sub(self.c.nic.rto_linear_retries)
        } else {
            0
        };
        let e = (self.c.nic.rto_exp + extra).min(EXP_CAP);
        now + (1u64 << e) * 1024 * NS
    }

    fn mark_rtx(&mut self, idx: u64) -> bool {
        let s = self.slot(idx);
        if get(&self.rtx, s) {
            return false;
        }
        set(&mut self.rtx, s);
        self.rtx_pending += 1;
        self.inflight -= u64::from(self.len_of(idx));
        self.rtx_hint = self.rtx_hint.min(idx);
        true
    }

    fn oldest_rtx(&mut self) -> u64 {
        let mut i = self.rtx_hint.max(self.una);
        while !get(&self.rtx, self.slot(i)) {
            i += 1;
        }
        self.rtx_hint = i;
        i
    }

    fn data_packet(&mut self, now: Ps, plane: u8, idx: u64, ev: usize, rtx: bool) -> Packet {
        self.tail_probe_at = now + self.c.base_rtt;
        let s = self.slot(idx);
        self.sent_at[s] = now;
        let len = self.len_of(idx);
        self.ev_of[s] = ev as u16;
        self.deadline[s] = self.deadline_for(now, idx);
        self.inflight += u64::from(len);
        self.stats.data_sent += 1;
        let last = idx + 1 == self.n_pkts;
        // The notes: ask for an ACK when the backlog is empty or the window is full (the next
        // packet would not fit), so a coalescing receiver never sits on the last SACK.
        let backlog_empty = self.rtx_pending == 0 && self.nxt == self.n_pkts;
        let full = self.nxt - self.una >= self.window()
            || self.inflight + u64::from(self.mtu) > u64::from(self.nscc.cwnd);
        Packet {
            src: self.flow.src,
            dst: self.flow.dst,
            qp: self.flow.id,
            plane,
            ev: self.spray.ev(ev),
            class: Class::Data,
            wire_bytes: len + DATA_HEADER_BYTES,
            ecn: false,
            trim: Trim::None,
            hops: 0,
            sent_at: now,
            body: Body::MrcData(MrcData {
                psn: self.psn_of(idx),
                msn: 0,
                va: self.c.base_va + idx * u64::from(self.mtu),
                rkey: self.c.rkey,
                len,
                last,
                rtx,
                ackreq: last || backlog_empty || full,
            }),
        }
    }

    fn fail(&mut self) {
        self.stats.failed = true;
        self.stats.bytes_lost = self.flow.bytes - self.stats.bytes_acked;
    }

    /// Newly acknowledge packet `idx`; returns its bytes (0 if it was acked already).
    fn ack(&mut self, idx: u64, trigger_ev: Option<usize>, ecn: bool) -> u64 {
        let s = self.slot(idx);
        if get(&self.acked, s) {
            return 0;
        }
        set(&mut self.acked, s);
        let len = u64::from(self.len_of(idx));
        if get(&self.rtx, s) {
            clear(&mut self.rtx, s);
            self.rtx_pending -= 1;
        } else {
            self.inflight -= len;
        }
        let ev = self.ev_of[s] as usize;
        // The receiver answers a CE-marked packet at once, so in a coalesced SACK only the
        // trigger can have been marked.
        if !(ecn && trigger_ev == Some(ev)) {
            self.spray.on_acked(ev);
        }
        len
    }

    fn on_sack(&mut self, now: Ps, s: &MrcSack) {
        let una_psn = self.psn_of(self.una);
        let n_out = self.nxt - self.una;
        let ca = psn_sub(psn_add(s.cack_psn, 1), una_psn);
        let stale = sext24(ca) < 0;
        if (!stale && u64::from(ca) > n_out) || s.sack_offset < 1 {
            self.counters.bad_sacks += 1;
            return;
        }
        let cum = if stale { 0 } else { u64::from(ca) };
        let base = psn_add(s.cack_psn, s.sack_offset as u16 as u32);
        let base_rel = sext24(psn_sub(base, una_psn));
        let msb = 63 - i64::from(s.bitmap.leading_zeros());
        if s.bitmap != 0 && base_rel + msb >= n_out as i64 {
            self.counters.bad_sacks += 1;
            return;
        }
        if stale {
            self.counters.stale_sacks += 1;
        }
        let trigger = self.spray.index_of(s.ev_echo);
        if let Some(i) = trigger {
            let kind = match (s.probe_id.is_some(), s.m) {
                (false, 0) => FeedbackKind::AckGood,
                (false, 1) => FeedbackKind::SkipOnce,
                (true, 0) => FeedbackKind::ProbeNone,
                (true, 1) => FeedbackKind::ProbeSkip,
                _ => FeedbackKind::AlwaysSkip,
            };
            self.feedback(now, i, kind, false);
        }
        if s.probe_id.is_some() {
            self.counters.probe_answers += 1;
        }
        if s.mpr != 0 {
            self.rcv_lim = u64::from(window_limit(self.w as u32, s.mpr));
        }

        let una0 = self.una;
        let mut newly = 0u64;
        for idx in una0..una0 + cum {
            newly += self.ack(idx, trigger, s.ecn_echo);
        }
        let mut bm = s.bitmap;
        while bm != 0 {
            let j = i64::from(bm.trailing_zeros());
            bm &= bm - 1;
            if base_rel + j >= 0 {
                newly += self.ack(una0 + (base_rel + j) as u64, trigger, s.ecn_echo);
            }
        }

        // Tail loss: the answer to a tail probe was sent after the probe arrived, so a packet
        // sent a base RTT or more before the probe and still not received is lost (TCP's tail
        // loss probe). Small flows never reach the hole threshold; this is their fast repair.
        if let (Some(id), Some((tid, sent))) = (s.probe_id, self.tail_probe) {
            if id == tid {
                self.tail_probe = None;
                for idx in una0..self.nxt {
                    let sl = self.slot(idx);
                    if get(&self.acked, sl)
                        || get(&self.rtx, sl)
                        || self.sent_at[sl] + self.c.base_rtt > sent
                    {
                        continue;
                    }
                    if self.mark_rtx(idx) {
                        self.counters.tail_losses += 1;
                        let ev = self.ev_of[sl] as usize;
                        self.feedback(now, ev, FeedbackKind::Timeout, true);
                    }
                }
            }
        }

        // Holes: unacked packets more than the threshold below the highest SACKed PSN.
        let thr = i64::from(self.c.nic.rtx_ooo_threshold);
        let high_rel = if s.bitmap != 0 {
            base_rel + msb
        } else {
            cum as i64 - 1
        };
        if thr != 0 && high_rel > thr {
            let end = una0 + (high_rel - thr) as u64;
            for idx in self.hole_scanned.max(una0)..end {
                let sl = self.slot(idx);
                if get(&self.acked, sl) || get(&self.hole, sl) {
                    continue;
                }
                set(&mut self.hole, sl);
                if self.mark_rtx(idx) {
                    self.counters.holes += 1;
                    let ev = self.ev_of[sl] as usize;
                    self.feedback(now, ev, FeedbackKind::Timeout, true);
                }
            }
            self.hole_scanned = self.hole_scanned.max(end);
        }

        while self.una < self.nxt && get(&self.acked, self.slot(self.una)) {
            let sl = self.slot(self.una);
            clear(&mut self.acked, sl);
            clear(&mut self.hole, sl);
            self.una += 1;
        }
        if self.una != una0 {
            self.head_timeouts = 0;
        }

        self.stats.bytes_acked += newly;
        if newly > 0 {
            self.tail_probe_at = self.tail_probe_at.max(now + self.c.base_rtt / 2);
        }
        if s.probe_id.is_none() || newly > 0 {
            let rtt_ns = if s.probe_id.is_some() {
                0
            } else {
                (now.saturating_sub(s.echo_ts) / NS).clamp(1, u64::from(FIELD_MAX)) as u32
            };
            self.nscc.apply(&NsccEvent::Ack {
                now: Self::now_ns(now),
                bytes: newly.min(u64::from(FIELD_MAX)) as u32,
                rtt_ns,
                ecn: s.ecn_echo,
                penalty: s.rcv_cwnd_pen,
            });
        }
        if self.una == self.n_pkts {
            self.stats.completed_at = Some(now);
        }
    }

    fn on_nack(&mut self, now: Ps, n: &MrcNack) {
        let trimmed = n.reason == NACK_TRIMMED || n.reason == NACK_TRIMMED_LASTHOP;
        if trimmed {
            self.stats.nacks_trimmed += 1;
        } else {
            self.stats.nacks_other += 1;
            if n.reason == crate::sack_rx_tracker::NACK_PSN_OOR_WINDOW {
                self.counters.nacks_oor_window += 1;
            }
        }
        let Some(idx) = self.idx_of_psn(n.nack_psn) else {
            self.counters.bad_nacks += 1;
            return;
        };
        let sl = self.slot(idx);
        if get(&self.acked, sl) {
            self.counters.bad_nacks += 1;
            return;
        }
        self.mark_rtx(idx);
        if trimmed {
            let len = self.len_of(idx);
            self.nscc.apply(&NsccEvent::Nack {
                now: Self::now_ns(now),
                bytes: len,
            });
            let ev = self.spray.index_of(n.ev).unwrap_or(self.ev_of[sl] as usize);
            let kind = if n.reason == NACK_TRIMMED {
                FeedbackKind::NackTrimmed
            } else {
                FeedbackKind::NackTrimmedLastHop
            };
            self.feedback(now, ev, kind, false);
        }
    }

    /// Everything sent, nothing marked for retransmission, something unacknowledged: only a
    /// SACK can move the QP on, and one may have been coalesced away or lost.
    fn tail_waiting(&self) -> bool {
        self.nxt >= self.n_pkts && self.rtx_pending == 0 && self.una < self.n_pkts
    }

    fn probe(&mut self, now: Ps, plane: u8, ev: usize) -> Packet {
        self.probe_seq = self.probe_seq.wrapping_add(1);
        self.stats.probes_sent += 1;
        Packet {
            src: self.flow.src,
            dst: self.flow.dst,
            qp: self.flow.id,
            plane,
            ev: self.spray.ev(ev),
            class: Class::Control,
            wire_bytes: HEADER_BYTES,
            ecn: false,
            trim: Trim::None,
            hops: 0,
            sent_at: now,
            body: Body::MrcProbe(MrcProbe {
                probe_id: self.probe_seq << 8 | ev as u32 & 0xFF,
            }),
        }
    }
}

impl Endpoint for MrcRequester {
    fn handle_packet(&mut self, now: Ps, pkt: Packet) {
        if pkt.qp != self.flow.id || self.done() {
            return;
        }
        match pkt.body {
            Body::MrcSack(s) => self.on_sack(now, &s),
            Body::MrcNack(n) => self.on_nack(now, &n),
            _ => {}
        }
    }

    fn poll_transmit(&mut self, now: Ps, plane: u8) -> Option<Packet> {
        if !self.begin(now) {
            return None;
        }
        if self.c.mode.probes() {
            if let Some(ev) = self.spray.probe_due(now, plane) {
                return Some(self.probe(now, plane, ev));
            }
        }
        if self.tail_waiting() && now >= self.tail_probe_at {
            if let Some(ev) = self.spray.pick(now, plane) {
                self.tail_probe_at = now + self.c.probe_interval;
                self.counters.tail_probes += 1;
                let p = self.probe(now, plane, ev);
                if let Body::MrcProbe(MrcProbe { probe_id }) = p.body {
                    self.tail_probe = Some((probe_id, now));
                }
                return Some(p);
            }
        }
        if self.rtx_pending > 0 {
            let idx = self.oldest_rtx();
            if idx != self.una && !self.cwnd_allows(self.len_of(idx)) {
                return None;
            }
            let ev = self.spray.pick(now, plane)?;
            let s = self.slot(idx);
            clear(&mut self.rtx, s);
            self.rtx_pending -= 1;
            self.rtx_hint = idx + 1;
            self.stats.retransmits += 1;
            return Some(self.data_packet(now, plane, idx, ev, true));
        }
        if self.nxt < self.n_pkts
            && self.nxt - self.una < self.window()
            && self.cwnd_allows(self.len_of(self.nxt))
        {
            let ev = self.spray.pick(now, plane)?;
            let idx = self.nxt;
            self.nxt += 1;
            return Some(self.data_packet(now, plane, idx, ev, false));
        }
        None
    }

    fn wants_transmit(&self, now: Ps) -> bool {
        !self.done()
            && now >= self.flow.start
            && (self.rtx_pending > 0
                || self.nxt < self.n_pkts
                || self.spray.next_probe_at().is_some_and(|t| t <= now)
                || (self.tail_waiting() && now >= self.tail_probe_at))
    }

    fn poll_timeout(&self) -> Option<Ps> {
        if self.done() {
            return None;
        }
        if !self.started {
            return Some(self.flow.start);
        }
        // The TICK only matters when bytes were acked since the last fulfill (the model's
        // TICK does nothing otherwise): no timer events for idle or stalled QPs.
        let mut t = if self.nscc.received > 0 {
            self.tick_at
        } else {
            Ps::MAX
        };
        if self.head_in_flight() {
            t = t.min(self.deadline[self.slot(self.una)]);
        }
        // A due probe waits for its plane's port, which the simulator polls on its own: report
        // only probe times after the last timer call, or the timer would spin.
        if let Some(p) = self.spray.next_probe_at() {
            if p > self.last_timer {
                t = t.min(p);
            }
        }
        if self.tail_waiting() && self.tail_probe_at > self.last_timer {
            t = t.min(self.tail_probe_at);
        }
        (t != Ps::MAX).then_some(t)
    }

    fn handle_timeout(&mut self, now: Ps) {
        self.last_timer = self.last_timer.max(now);
        if !self.begin(now) {
            return;
        }
        if now >= self.tick_at && self.nscc.received > 0 {
            self.nscc.apply(&NsccEvent::Tick {
                now: Self::now_ns(now),
            });
            self.tick_at = now + self.c.tick_interval;
        }
        if self.head_in_flight() && now >= self.deadline[self.slot(self.una)] {
            self.stats.timeouts += 1;
            let ev = self.ev_of[self.slot(self.una)] as usize;
            self.feedback(now, ev, FeedbackKind::Timeout, false);
            let limit = self.c.nic.rto_linear_retries + self.c.nic.rto_backoff_retries;
            if self.head_timeouts >= limit {
                self.fail();
            } else {
                self.head_timeouts += 1;
                self.mark_rtx(self.una);
                self.nscc.apply(&NsccEvent::Rto {
                    now: Self::now_ns(now),
                });
            }
        }
    }

    fn stats(&self) -> EndpointStats {
        EndpointStats {
            cwnd: u64::from(self.nscc.cwnd),
            ..self.stats
        }
    }
}
