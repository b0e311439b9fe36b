//! RoCEv2-style go-back-N: the baseline the SACK blocks are measured against.
//!
//! Sans-IO, like every endpoint here: the caller owns time (`now`, in its own units: clock
//! cycles in the loss experiment, picoseconds in `transport::roce`) and the wire.
//!
//! ```text
//!   GbnSender --data(psn)--> [link] --> GbnReceiver
//!       ^                                   |
//!       +------- ACK(last in-order psn) ----+   coalesced per `coalesce_bytes`, at once on ackreq
//!       +------- NAK(epsn) -----------------+   once per gap: the first out-of-order packet
//! ```
//!
//! The receiver keeps no out-of-order state: it accepts only `epsn`, drops everything else,
//! and answers the first packet past a gap with a NAK (PSN sequence error) naming `epsn`; it
//! does not NAK again until `epsn` arrives. The sender, on a NAK or when its single
//! retransmit timer expires, rewinds `nxt` to the NAKed PSN (or to `una`) and sends
//! everything from there again: one lost packet costs a whole window of retransmissions.
//! PSNs are 24-bit and compared modulo 2^24, as on the wire.

use std::collections::VecDeque;

/// 24-bit PSN arithmetic.
pub const PSN_MASK: u32 = 0xFF_FFFF;

/// `a - b` as a signed serial distance (valid while |a - b| < 2^23).
pub fn psn_diff(a: u32, b: u32) -> i32 {
    (((a.wrapping_sub(b)) & PSN_MASK) << 8) as i32 >> 8
}

/// What the go-back-N receiver sends back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GbnAck {
    /// Every PSN up to and including this one was received in order.
    Ack(u32),
    /// Sequence error: the receiver expects this PSN next.
    Nak(u32),
}

/// One data packet as the sender emits it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GbnData {
    pub psn: u32,
    /// Packet index in the transfer (0-based, PSN minus the start PSN without the wrap): the
    /// caller maps it to a byte offset / VA.
    pub index: u64,
    /// Sent before: a retransmission.
    pub retransmit: bool,
    /// Ask for an immediate ACK (last packet of the transfer, or the window is now full).
    pub ackreq: bool,
}

/// The go-back-N sender of one QP, for a transfer of `packets` packets.
#[derive(Debug, Clone)]
pub struct GbnSender {
    start_psn: u32,
    packets: u64,
    window: u64,
    rto: u64,
    /// Index (not PSN) of the oldest unacknowledged packet.
    una: u64,
    /// Index of the next packet to send.
    nxt: u64,
    /// One past the highest index ever sent: anything below it is a retransmission.
    high: u64,
    deadline: Option<u64>,
    pub stats: GbnSenderStats,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GbnSenderStats {
    pub sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub naks: u64,
}

impl GbnSender {
    /// `window`: packets in flight at most; `rto`: retransmit timeout in the caller's units.
    pub fn new(start_psn: u32, packets: u64, window: u64, rto: u64) -> Self {
        assert!(
            (1..1 << 23).contains(&window),
            "window must fit the PSN space"
        );
        GbnSender {
            start_psn: start_psn & PSN_MASK,
            packets,
            window,
            rto,
            una: 0,
            nxt: 0,
            high: 0,
            deadline: None,
            stats: GbnSenderStats::default(),
        }
    }

    fn psn_of(&self, idx: u64) -> u32 {
        (self.start_psn as u64 + idx) as u32 & PSN_MASK
    }

    /// Every packet acknowledged.
    pub fn done(&self) -> bool {
        self.una >= self.packets
    }

    /// Packets acknowledged so far.
    pub fn acked(&self) -> u64 {
        self.una
    }

    /// Would `poll_transmit` return a packet now? (A side-effect-free peek, so a caller can
    /// hold a packet back behind a pacing gate without consuming it.)
    pub fn can_transmit(&self) -> bool {
        self.nxt < self.packets && self.nxt - self.una < self.window
    }

    /// Packets in the transfer.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Window in packets.
    pub fn window(&self) -> u64 {
        self.window
    }

    /// The next packet to put on the wire, if the window allows one.
    pub fn poll_transmit(&mut self, now: u64) -> Option<GbnData> {
        if self.nxt >= self.packets || self.nxt - self.una >= self.window {
            return None;
        }
        let idx = self.nxt;
        self.nxt += 1;
        let retransmit = idx < self.high;
        self.high = self.high.max(self.nxt);
        self.stats.sent += 1;
        if retransmit {
            self.stats.retransmits += 1;
        }
        if self.deadline.is_none() {
            self.deadline = Some(now + self.rto);
        }
        Some(GbnData {
            psn: self.psn_of(idx),
            index: idx,
            retransmit,
            ackreq: self.nxt == self.packets || self.nxt - self.una == self.window,
        })
    }

    /// Map a PSN the peer named to a packet index in `[una, high]`, if it is one.
    fn index_of(&self, psn: u32) -> Option<u64> {
        let d = psn_diff(psn, self.psn_of(self.una));
        (d >= 0 && self.una + d as u64 <= self.high).then(|| self.una + d as u64)
    }

    pub fn handle_ack(&mut self, now: u64, ack: GbnAck) {
        match ack {
            GbnAck::Ack(psn) => {
                // Cumulative: everything up to psn; stale or bogus ACKs name no index here.
                if let Some(i) = self.index_of(psn) {
                    if i < self.high {
                        self.advance(now, i + 1);
                    }
                }
            }
            GbnAck::Nak(epsn) => {
                if let Some(i) = self.index_of(epsn) {
                    self.stats.naks += 1;
                    self.advance(now, i);
                    // Go back: resend everything from the expected PSN.
                    self.nxt = i;
                }
            }
        }
    }

    fn advance(&mut self, now: u64, new_una: u64) {
        if new_una > self.una {
            self.una = new_una;
            self.nxt = self.nxt.max(self.una);
            self.deadline = (self.una < self.high).then_some(now + self.rto);
        }
    }

    /// When the retransmit timer fires, if it is armed.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.deadline
    }

    /// The timer fired: go back to the oldest unacknowledged packet.
    pub fn handle_timeout(&mut self, now: u64) {
        match self.deadline {
            Some(d) if now >= d && self.una < self.high => {
                self.stats.timeouts += 1;
                self.nxt = self.una;
                self.deadline = Some(now + self.rto);
            }
            _ => {}
        }
    }
}

/// The go-back-N receiver of one QP.
#[derive(Debug, Clone)]
pub struct GbnReceiver {
    epsn: u32,
    nak_outstanding: bool,
    coalesce_bytes: u64,
    bytes_since_ack: u64,
    pub stats: GbnReceiverStats,
    /// PSNs delivered in order, for the caller's conservation checks (drained by it).
    pub delivered: VecDeque<u32>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GbnReceiverStats {
    pub accepted: u64,
    pub duplicates: u64,
    pub dropped_out_of_order: u64,
}

impl GbnReceiver {
    pub fn new(start_psn: u32, coalesce_bytes: u64) -> Self {
        GbnReceiver {
            epsn: start_psn & PSN_MASK,
            nak_outstanding: false,
            coalesce_bytes,
            bytes_since_ack: 0,
            stats: GbnReceiverStats::default(),
            delivered: VecDeque::new(),
        }
    }

    /// The next PSN this receiver will accept.
    pub fn epsn(&self) -> u32 {
        self.epsn
    }

    /// One data packet arrives; the answer to send back, if any.
    pub fn handle_data(&mut self, psn: u32, len: u32, ackreq: bool) -> Option<GbnAck> {
        let d = psn_diff(psn, self.epsn);
        let last = self.epsn.wrapping_sub(1) & PSN_MASK;
        if d < 0 {
            // Behind: a duplicate; re-ACK so a sender that lost our ACK moves on.
            self.stats.duplicates += 1;
            return Some(GbnAck::Ack(last));
        }
        if d > 0 {
            self.stats.dropped_out_of_order += 1;
            if self.nak_outstanding {
                return None;
            }
            self.nak_outstanding = true;
            return Some(GbnAck::Nak(self.epsn));
        }
        self.stats.accepted += 1;
        self.delivered.push_back(psn);
        self.nak_outstanding = false;
        self.epsn = (self.epsn + 1) & PSN_MASK;
        self.bytes_since_ack += u64::from(len);
        if ackreq || self.bytes_since_ack >= self.coalesce_bytes {
            self.bytes_since_ack = 0;
            return Some(GbnAck::Ack(psn));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_distance_wraps() {
        assert_eq!(psn_diff(2, PSN_MASK - 1), 4);
        assert_eq!(psn_diff(PSN_MASK - 1, 2), -4);
        assert_eq!(psn_diff(7, 7), 0);
    }

    #[test]
    fn receiver_accepts_in_order_and_naks_once_per_gap() {
        let start = PSN_MASK - 1; // wraps after two packets
        let mut r = GbnReceiver::new(start, 3 * 4096);
        assert_eq!(r.handle_data(start, 4096, false), None);
        assert_eq!(
            r.handle_data((start + 2) & PSN_MASK, 4096, false),
            Some(GbnAck::Nak(PSN_MASK))
        );
        assert_eq!(
            r.handle_data((start + 3) & PSN_MASK, 4096, false),
            None,
            "one NAK per gap"
        );
        assert_eq!(r.handle_data(PSN_MASK, 4096, false), None);
        assert_eq!(
            r.handle_data(0, 4096, false),
            Some(GbnAck::Ack(0)),
            "coalesced at 3 packets"
        );
        assert_eq!(
            r.handle_data(start, 4096, false),
            Some(GbnAck::Ack(0)),
            "duplicate re-ACKed"
        );
        assert_eq!(r.stats.accepted, 3);
        assert_eq!(r.stats.dropped_out_of_order, 2);
        assert_eq!(r.delivered, [start, PSN_MASK, 0]);
    }

    #[test]
    fn sender_goes_back_on_nak_and_on_timeout() {
        let mut s = GbnSender::new(10, 8, 4, 100);
        let sent: Vec<u32> = (0..5)
            .filter_map(|_| s.poll_transmit(0))
            .map(|d| d.psn)
            .collect();
        assert_eq!(sent, [10, 11, 12, 13], "window of 4");
        s.handle_ack(5, GbnAck::Nak(11));
        assert_eq!(s.acked(), 1);
        let again = s.poll_transmit(6).unwrap();
        assert_eq!((again.psn, again.retransmit), (11, true));
        assert_eq!(s.poll_timeout(), Some(105));
        s.handle_timeout(105);
        assert_eq!(s.stats.timeouts, 1);
        assert_eq!(s.poll_transmit(106).unwrap().psn, 11, "rewound to una");
        s.handle_ack(110, GbnAck::Ack(30)); // names no sent packet: ignored
        assert_eq!(s.acked(), 1);
        s.handle_ack(110, GbnAck::Ack(13));
        assert_eq!(s.acked(), 4);
        assert!(!s.done());
    }
}
