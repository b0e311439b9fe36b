//! The packet the simulator carries: what switches read (addresses, EV, class, size, ECN,
//! trim) plus a transport body only endpoints read.
//!
//! Each transport owns its body variant; a transport may add fields to its own body struct,
//! never to another's. Switches never look inside [`Body`].

use super::Ps;

/// Index of a host (endpoint NIC) in the topology: hosts are nodes `0..hosts`.
pub type HostId = u32;

/// Bytes of a trimmed packet / a control packet on the wire (the notes: trim to 64-byte headers).
pub const HEADER_BYTES: u32 = 64;
/// Header bytes in front of a data payload (Eth + IPv6 + UDP + BTH + RETH + ICRC, rounded).
pub const DATA_HEADER_BYTES: u32 = 64;

/// Switch traffic class. `Control` is strict priority over `Data` at every output queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    Data,
    Control,
}

/// What a switch did to the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Trim {
    #[default]
    None,
    /// Trimmed inside the fabric: the receiver answers NACK TRIMMED.
    Fabric,
    /// Trimmed at the last switch (the egress port faces the destination host): NACK
    /// TRIMMED_LASTHOP (an incast, not a path problem: the EV is not skipped).
    LastHop,
}

/// One packet on the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct Packet {
    pub src: HostId,
    pub dst: HostId,
    /// Connection (queue pair) id, global to the run: the flow index. Both endpoints of the
    /// flow share it; the simulator delivers by (dst, qp).
    pub qp: u32,
    /// The NIC port / fabric plane the packet leaves on (0 on single-plane topologies). Set
    /// by the sender; the simulator sends it on `Topology::host_uplink(src, plane)`.
    pub plane: u8,
    /// Entropy value: switches hash it (ECMP) or read it as a source route.
    pub ev: u32,
    pub class: Class,
    /// Bytes on the wire, headers included. A trim sets it to [`HEADER_BYTES`].
    pub wire_bytes: u32,
    /// CE mark set by a switch at dequeue.
    pub ecn: bool,
    pub trim: Trim,
    /// Switches traversed so far (the simulator increments it).
    pub hops: u8,
    /// When the sender handed it to the NIC (the simulator does not touch it).
    pub sent_at: Ps,
    pub body: Body,
}

/// Transport payload. The simulator only moves it.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    MrcData(MrcData),
    MrcSack(MrcSack),
    MrcNack(MrcNack),
    MrcProbe(MrcProbe),
    RoceData(RoceData),
    RoceAck(RoceAck),
    /// DCQCN congestion notification packet (receiver -> sender).
    RoceCnp,
}

/// MRC RDMA WRITE data packet (BTH + RETH + METH + TSETH fields the model uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MrcData {
    /// 24-bit PSN.
    pub psn: u32,
    /// Message sequence number (METH MSN).
    pub msn: u32,
    /// Final virtual address of this packet's payload (the VA advances one PMTU per packet).
    pub va: u64,
    pub rkey: u32,
    /// Payload bytes.
    pub len: u32,
    /// Last packet of its message.
    pub last: bool,
    /// BTH `rtx`: a retransmission.
    pub rtx: bool,
    /// Ask the receiver for an immediate SACK.
    pub ackreq: bool,
}

/// MRC SACK (SETH + CC_STATE), the notes section 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MrcSack {
    /// Receiver's verdict on the path the triggering packet took (`M`: 0 NONE, 1 SKIP_ONCE,
    /// 2 ALWAYS_SKIP).
    pub m: u8,
    /// EV of the triggering packet, reflected.
    pub ev_echo: u32,
    /// Cumulative: every PSN up to and including it received.
    pub cack_psn: u32,
    /// Receive window in units of 128 PSNs.
    pub mpr: u8,
    /// Bitmap base relative to `cack_psn`.
    pub sack_offset: i16,
    /// Bit i: PSN `cack_psn + sack_offset + i` received.
    pub bitmap: u64,
    /// The triggering packet's `sent_at`, echoed (RTT sample).
    pub echo_ts: Ps,
    /// The triggering packet carried a CE mark.
    pub ecn_echo: bool,
    /// Out-of-order count (15 bits).
    pub ooo_count: u16,
    /// Receiver congestion penalty, 7 bits (0 none .. 127).
    pub rcv_cwnd_pen: u8,
    /// Bytes received since the QP started (24 bits, 256-byte units on the wire; kept in
    /// bytes here).
    pub rcvd_bytes: u64,
    /// Answer to a reliability probe with this id (None for an ordinary SACK).
    pub probe_id: Option<u32>,
}

/// MRC NACK (NETH).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MrcNack {
    /// Reason code (shared with UET): TRIMMED 0x01, TRIMMED_LASTHOP 0x02, PSN_OOR_WINDOW 0x0B, ...
    pub reason: u8,
    pub ev: u32,
    pub nack_psn: u32,
    pub echo_ts: Ps,
}

/// MRC reliability probe: consumes no PSN, elicits a SACK over the EV it was sent on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MrcProbe {
    pub probe_id: u32,
}

/// RoCEv2 RC data packet (go-back-N).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RoceData {
    pub psn: u32,
    pub len: u32,
    pub va: u64,
    pub last: bool,
    pub rtx: bool,
    pub ackreq: bool,
}

/// RoCEv2 ACK / NAK (AETH).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoceAck {
    /// Every PSN up to and including this one received in order.
    Ack { psn: u32 },
    /// PSN sequence error: the receiver expects this PSN next.
    Nak { epsn: u32 },
}
