//! The MRC responder: receiver bitmap, SACK/NACK generation and placement, for one QP.
//!
//! The receive semantics are those of `sack_rx_tracker` (the cycle model in
//! [`crate::sack_rx_tracker`]), at the transaction level: one call per packet instead of one
//! per clock, so every packet sees the bitmap with the cumulative advance of all earlier
//! packets complete (the block reaches the same state once its advance loop has caught up,
//! i.e. with `cack_lag_bound(W)` idle clocks between packets — the equivalence test drives
//! both that way and compares every response).
//!
//! ```text
//!  data psn ---- malformed? (qp, len 0 or > mtu) ----------------------> dropped
//!     |   trimmed == no payload; else R_Key / bounds check ------------> writes_rejected
//!     v
//!  classify against cack (MPR window: valid psn in [cack+1, cack+lim], lim = window_limit)
//!     behind cack or bit set      DUP   -> SACK now (nothing written; dup_bytes)
//!     beyond cack+lim             OOW   -> NACK PSN_OOR_WINDOW
//!     in window, unseen, trimmed  TRIM  -> NACK TRIMMED / TRIMMED_LASTHOP (no bit set)
//!     in window, unseen           NEW   -> set bit, write memory, SACK if first / ECN /
//!                                          ackreq / coalescing bytes used up
//!  response (as the block builds it): cack = before this packet's own advance,
//!     base = max(psn - 63, cack + 1) for an in-window psn (cack + 1 otherwise),
//!     bitmap = 64 bits from base (this packet's bit included), M = SKIP_ONCE iff CE-marked
//!  then advance cack over the bitmap (trailing ones, word at a time)
//! ```
//!
//! Differences from the block, and why:
//! - The block's response cack is the snapshot at its commit stage, which with spaced
//!   packets is "before this packet's own advance"; the endpoint reproduces exactly that (an
//!   in-order packet q is answered cack = q - 1 with bit 0 set: the same information).
//! - The block answers a reliability probe nowhere (probes are handled by the NIC's control
//!   path): the endpoint answers it with a SACK of the current state carrying `probe_id`.
//! - A NACK carries no bitmap here (`MrcNack` has none); the block's NACK outputs also carry
//!   the SACK fields, which the wire format drops.
//! - Malformed packets and R_Key / bounds failures are refused before the tracker sees them
//!   (in the NIC the parser and the memory protection check sit in front of the tracker), so
//!   they set no bit and are never acknowledged.
//!
//! Responses leave on the plane the trigger arrived on and carry the trigger's EV, so the
//! reverse path is deterministic; they queue per plane until the simulator polls that plane.

use super::{MrcConfig, PSN_MASK};
use crate::netsim::endpoint::{EndpointStats, FlowSpec};
use crate::netsim::packet::{Body, Class, MrcData, MrcNack, MrcSack, Packet, Trim, HEADER_BYTES};
use crate::netsim::Ps;
use crate::sack_rx_tracker::{
    psn_add, psn_sub, window_limit, M_NONE, M_SKIP_ONCE, NACK_PSN_OOR_WINDOW, NACK_TRIMMED,
    NACK_TRIMMED_LASTHOP,
};
use crate::transport::memory::{MemoryRegion, WriteOutcome};
use std::collections::VecDeque;

fn negative24(x: u32) -> bool {
    x & 0x80_0000 != 0
}

/// The receive side of one MRC QP.
#[derive(Debug, Clone)]
pub struct MrcResponder {
    host: u32,
    peer: u32,
    qp: u32,
    mtu: u32,
    w: u32,
    /// Received PSNs in (cack, cack + W], slot = psn mod W.
    bits: Vec<u64>,
    cack: u32,
    lim: u32,
    mpr: u8,
    ooo: u16,
    rcvd_bytes: u64,
    coalesce_bytes: u32,
    remaining: u32,
    first: bool,
    mem: MemoryRegion,
    out: Vec<VecDeque<Packet>>,
    queued: usize,
    stats: EndpointStats,
    /// Packets the block's counters would show: accepted, duplicate, out of window, trimmed.
    pub counts: [u64; 4],
}

impl MrcResponder {
    /// The responder of `flow`, its memory region already registered.
    pub fn new(c: &MrcConfig, flow: &FlowSpec, mem: MemoryRegion) -> Self {
        let w = c.nic.sack_window_bits;
        MrcResponder {
            host: flow.dst,
            peer: flow.src,
            qp: flow.id,
            mtu: c.nic.mtu,
            w,
            bits: vec![0; (w / 64) as usize],
            cack: psn_sub(c.start_psn, 1),
            lim: window_limit(w, c.nic.mpr as u8),
            mpr: c.nic.mpr as u8,
            ooo: 0,
            rcvd_bytes: 0,
            coalesce_bytes: c.nic.sack_coalesce_bytes & PSN_MASK,
            remaining: c.nic.sack_coalesce_bytes & PSN_MASK,
            first: true,
            mem,
            out: vec![VecDeque::new(); c.planes as usize],
            queued: 0,
            stats: EndpointStats::default(),
            counts: [0; 4],
        }
    }

    /// The cumulative ack: every PSN up to it received.
    pub fn cack_psn(&self) -> u32 {
        self.cack
    }
    pub fn memory(&self) -> &MemoryRegion {
        &self.mem
    }

    fn bit(&self, psn: u32) -> bool {
        let s = (psn & (self.w - 1)) as usize;
        self.bits[s / 64] >> (s % 64) & 1 == 1
    }
    fn set_bit(&mut self, psn: u32) {
        let s = (psn & (self.w - 1)) as usize;
        self.bits[s / 64] |= 1 << (s % 64);
    }

    /// 64 bits of the circular bitmap from the slot of `base`.
    fn window64(&self, base: u32) -> u64 {
        let s = (base & (self.w - 1)) as usize;
        let nw = self.bits.len();
        let (k, r) = (s / 64, s % 64);
        if r == 0 {
            self.bits[k]
        } else {
            self.bits[k] >> r | self.bits[(k + 1) % nw] << (64 - r)
        }
    }

    /// Move cack over the received run above it, clearing the consumed bits.
    fn advance(&mut self) {
        loop {
            let next = psn_add(self.cack, 1);
            let s = (next & (self.w - 1)) as usize;
            let (k, r) = (s / 64, s % 64);
            let run = (self.bits[k] >> r).trailing_ones().min(64 - r as u32);
            if run == 0 {
                return;
            }
            let mask = if run == 64 {
                u64::MAX
            } else {
                ((1u64 << run) - 1) << r
            };
            self.bits[k] &= !mask;
            self.cack = psn_add(self.cack, run);
            self.ooo = self.ooo.wrapping_sub(run as u16) & 0x7FFF;
        }
    }

    fn queue(&mut self, plane: u8, pkt: Packet) {
        let p = (plane as usize).min(self.out.len() - 1);
        self.out[p].push_back(pkt);
        self.queued += 1;
    }

    fn control(&self, trigger: &Packet, body: Body) -> Packet {
        Packet {
            src: self.host,
            dst: self.peer,
            qp: self.qp,
            plane: trigger.plane,
            ev: trigger.ev,
            class: Class::Control,
            wire_bytes: HEADER_BYTES,
            ecn: false,
            trim: Trim::None,
            hops: 0,
            sent_at: 0,
            body,
        }
    }

    /// A SACK of the current state for a packet with `psn` (in window or not).
    fn sack(&self, trigger: &Packet, psn: u32, inwin: bool, probe_id: Option<u32>) -> Packet {
        let use_psn = inwin && !negative24(psn_sub(psn, psn_add(self.cack, 64)));
        let (offset, base) = if use_psn {
            (psn_sub(psn, psn_add(self.cack, 63)), psn_sub(psn, 63))
        } else {
            (1, psn_add(self.cack, 1))
        };
        self.control(
            trigger,
            Body::MrcSack(MrcSack {
                m: if trigger.ecn { M_SKIP_ONCE } else { M_NONE },
                ev_echo: trigger.ev,
                cack_psn: self.cack,
                mpr: self.mpr,
                sack_offset: offset as i16,
                bitmap: self.window64(base),
                echo_ts: trigger.sent_at,
                ecn_echo: trigger.ecn,
                ooo_count: self.ooo,
                rcv_cwnd_pen: 0,
                rcvd_bytes: self.rcvd_bytes,
                probe_id,
            }),
        )
    }

    fn nack(&self, trigger: &Packet, psn: u32, reason: u8) -> Packet {
        self.control(
            trigger,
            Body::MrcNack(MrcNack {
                reason,
                ev: trigger.ev,
                nack_psn: psn,
                echo_ts: trigger.sent_at,
            }),
        )
    }

    fn on_data(&mut self, pkt: &Packet, d: &MrcData) {
        let trimmed = pkt.trim != Trim::None;
        if d.len == 0 || d.len > self.mtu {
            self.stats.pkts_dropped += 1;
            return;
        }
        if pkt.ecn {
            self.stats.ecn_received += 1;
        }
        // A trimmed packet has no payload left to check; the header's PSN is still good.
        if !trimmed && !self.mem.would_accept(d.va, d.len, d.rkey) {
            self.mem.write(d.va, d.len, d.rkey); // counts the refusal, writes nothing
            return;
        }
        let psn = d.psn & PSN_MASK;
        let lo_ok = !negative24(psn_sub(psn, psn_add(self.cack, 1)));
        let hi_ok = negative24(psn_sub(psn, psn_add(psn_add(self.cack, 1), self.lim)));
        let inwin = lo_ok && hi_ok;
        let seen = inwin && self.bit(psn);
        let rsp = if lo_ok && !hi_ok {
            self.counts[2] += 1;
            self.stats.pkts_dropped += 1;
            Some(self.nack(pkt, psn, NACK_PSN_OOR_WINDOW))
        } else if !inwin || seen {
            self.counts[1] += 1;
            self.remaining = self.coalesce_bytes;
            if !trimmed {
                self.stats.dup_bytes += u64::from(d.len);
            }
            Some(self.sack(pkt, psn, inwin, None))
        } else if trimmed {
            self.counts[3] += 1;
            self.stats.trims_received += 1;
            let reason = if pkt.trim == Trim::LastHop {
                NACK_TRIMMED_LASTHOP
            } else {
                NACK_TRIMMED
            };
            Some(self.nack(pkt, psn, reason))
        } else {
            self.counts[0] += 1;
            let outcome = self.mem.write(d.va, d.len, d.rkey);
            debug_assert_eq!(outcome, WriteOutcome::Written, "a new PSN fills a new slot");
            self.set_bit(psn);
            self.ooo = self.ooo.wrapping_add(1) & 0x7FFF;
            self.rcvd_bytes += u64::from(d.len);
            let trig = self.first || pkt.ecn || d.ackreq || d.len >= self.remaining;
            self.first = false;
            let rsp = if trig {
                self.remaining = self.coalesce_bytes;
                Some(self.sack(pkt, psn, true, None))
            } else {
                self.remaining -= d.len;
                None
            };
            self.advance();
            rsp
        };
        if let Some(r) = rsp {
            match r.body {
                Body::MrcNack(_) => self.stats.nacks_sent += 1,
                _ => self.stats.acks_sent += 1,
            }
            self.queue(pkt.plane, r);
        }
    }
}

impl crate::netsim::endpoint::Endpoint for MrcResponder {
    fn handle_packet(&mut self, _now: Ps, pkt: Packet) {
        if pkt.qp != self.qp {
            self.stats.pkts_dropped += 1;
            return;
        }
        match pkt.body {
            Body::MrcData(d) => self.on_data(&pkt, &d),
            Body::MrcProbe(p) => {
                let r = self.sack(&pkt, psn_add(self.cack, 1), false, Some(p.probe_id));
                self.stats.acks_sent += 1;
                self.queue(pkt.plane, r);
            }
            _ => self.stats.pkts_dropped += 1,
        }
    }

    fn poll_transmit(&mut self, now: Ps, plane: u8) -> Option<Packet> {
        if self.queued == 0 {
            return None;
        }
        let mut p = self.out.get_mut(plane as usize)?.pop_front()?;
        self.queued -= 1;
        p.plane = plane;
        p.sent_at = now;
        Some(p)
    }

    fn wants_transmit(&self, _now: Ps) -> bool {
        self.queued > 0
    }

    fn poll_timeout(&self) -> Option<Ps> {
        None
    }

    fn handle_timeout(&mut self, _now: Ps) {}

    fn stats(&self) -> EndpointStats {
        EndpointStats {
            bytes_delivered: self.mem.bytes_written(),
            dup_bytes: self.stats.dup_bytes + self.mem.dup_bytes(),
            writes_rejected: self.mem.writes_rejected(),
            ..self.stats
        }
    }
}
