//! The "wire": headers the core emits (`tx_*` data headers, `ack_*` SACK / NACK headers),
//! collected per clock by [`super::CosimDevice`], and the receive header a caller injects
//! (`rx_*`), plus a fixed-delay link queue ([`Wire`]) for connecting two devices.

use mrc_model::mrc_core::{CoreInputs, CoreOutputs, RX_DATA, RX_NACK, RX_SACK};
use std::collections::VecDeque;

/// One data packet the core sent (its `tx_*` outputs), stamped with the device clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxHeader {
    pub cycle: u64,
    pub qp: u8,
    pub psn: u32,
    pub ev: u32,
    pub ev_idx: u8,
    pub plane: u8,
    pub rtx: bool,
    /// New data: payload bytes; retransmit: 0 (the packet builder knows the layout).
    pub len: u16,
    pub last: bool,
}

/// One SACK or NACK the core generated (its `ack_*` outputs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckHeader {
    pub cycle: u64,
    pub qp: u8,
    pub nack: bool,
    pub cack: u32,
    pub offset: u16,
    pub bitmap: u64,
    pub m: u8,
    pub ev: u32,
    pub rcvd_bytes: u32,
    pub reason: u8,
    pub psn: u32,
}

impl TxHeader {
    pub fn from_outputs(o: &CoreOutputs, cycle: u64) -> Option<Self> {
        o.tx_valid.then_some(TxHeader {
            cycle,
            qp: o.tx_qp,
            psn: o.tx_psn,
            ev: o.tx_ev,
            ev_idx: o.tx_ev_idx,
            plane: o.tx_plane,
            rtx: o.tx_rtx,
            len: o.tx_len,
            last: o.tx_last,
        })
    }
}

impl AckHeader {
    pub fn from_outputs(o: &CoreOutputs, cycle: u64) -> Option<Self> {
        o.ack_valid.then_some(AckHeader {
            cycle,
            qp: o.ack_qp,
            nack: o.ack_nack,
            cack: o.ack_cack,
            offset: o.ack_offset,
            bitmap: o.ack_bitmap,
            m: o.ack_m,
            ev: o.ack_ev,
            rcvd_bytes: o.ack_rcvd_bytes,
            reason: o.ack_reason,
            psn: o.ack_psn,
        })
    }
}

/// A parsed receive header for the core's `rx_*` inputs (field meanings as `CoreInputs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RxHeader {
    pub qp: u8,
    /// `RX_DATA`, `RX_SACK` or `RX_NACK` (anything else is refused by the core).
    pub kind: u8,
    pub psn: u32,
    pub len: u16,
    pub ecn: bool,
    pub trimmed: bool,
    pub lasthop: bool,
    pub ackreq: bool,
    pub ev: u32,
    pub ev_idx: u8,
    pub offset: u16,
    pub bitmap: u64,
    pub m: u8,
    pub rcvd_bytes: u32,
    pub reason: u8,
}

impl RxHeader {
    /// The DATA header the peer receives for `tx`: `len` is the payload on the wire (a
    /// retransmit's length comes from the caller, who knows the message layout); a trimmed
    /// packet arrives with no payload.
    pub fn data(tx: &TxHeader, len: u16, trimmed: bool) -> Self {
        RxHeader {
            qp: tx.qp,
            kind: RX_DATA,
            psn: tx.psn,
            len: if trimmed { 0 } else { len },
            trimmed,
            ackreq: tx.last,
            ev: tx.ev,
            ..Default::default()
        }
    }

    /// The SACK / NACK header the sender receives for `a`; `ev_idx` is the sender's EV table
    /// index of the EV the acknowledged packet carried (`a.ev`).
    pub fn ack(a: &AckHeader, ev_idx: u8) -> Self {
        RxHeader {
            qp: a.qp,
            kind: if a.nack { RX_NACK } else { RX_SACK },
            psn: if a.nack { a.psn } else { a.cack },
            offset: a.offset,
            bitmap: a.bitmap,
            m: a.m,
            rcvd_bytes: a.rcvd_bytes,
            reason: a.reason,
            ev_idx,
            ..Default::default()
        }
    }

    /// Drive the `rx_*` inputs of `x` with this header.
    pub fn apply(&self, x: &mut CoreInputs) {
        x.rx_valid = true;
        x.rx_qp = self.qp;
        x.rx_kind = self.kind;
        x.rx_psn = self.psn;
        x.rx_len = self.len;
        x.rx_ecn = self.ecn;
        x.rx_trimmed = self.trimmed;
        x.rx_lasthop = self.lasthop;
        x.rx_ackreq = self.ackreq;
        x.rx_ev = self.ev;
        x.rx_ev_idx = self.ev_idx;
        x.rx_offset = self.offset;
        x.rx_bitmap = self.bitmap;
        x.rx_m = self.m;
        x.rx_rcvd_bytes = self.rcvd_bytes;
        x.rx_reason = self.reason;
    }
}

/// A link with a fixed delay in cycles of the caller's clock: what is pushed at `now` pops
/// at `now + delay` or later, in order.
#[derive(Debug, Clone)]
pub struct Wire<T> {
    q: VecDeque<(u64, T)>,
    delay: u64,
}

impl<T> Wire<T> {
    pub fn new(delay: u64) -> Self {
        Wire {
            q: VecDeque::new(),
            delay,
        }
    }
    pub fn push(&mut self, now: u64, v: T) {
        self.q.push_back((now + self.delay, v));
    }
    /// The oldest entry due at `now`.
    pub fn pop(&mut self, now: u64) -> Option<T> {
        if self.q.front().is_some_and(|(t, _)| *t <= now) {
            self.q.pop_front().map(|(_, v)| v)
        } else {
            None
        }
    }
    pub fn len(&self) -> usize {
        self.q.len()
    }
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}
