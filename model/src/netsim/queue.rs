//! Packets in the network and the switch output port that queues them.
//!
//! Every packet on a wire or in a queue lives in one [`Arena`] slot; events and queues hold
//! the slot's `u32` handle, so the event heap stays small and a packet is moved twice in its
//! life (into the arena when a NIC sends it, out when a host receives it) however many
//! hops it takes. A port's two FIFOs are intrusive lists threaded through the slots' `next`
//! field: a port costs 32 bytes whether it is empty or full, which matters on fabrics with
//! millions of links.
//!
//! ```text
//!                      +-- control FIFO (trimmed headers, ACKs, NACKs) --+  strict
//!  enqueue(pkt) ------>|                                                 |--> dequeue --> wire
//!   data, fits?  no -->+-- data FIFO (buffer_bytes)  ECN mark at dequeue +  priority
//!   trim (64 B header, class Control, Fabric / LastHop) or drop
//! ```

use super::config::QueueConfig;
use super::packet::{Class, Packet, Trim, HEADER_BYTES};
use super::Ps;
use crate::rng::SplitMix64;

/// "No slot": the end of a list, an empty queue.
pub const NIL: u32 = u32::MAX;

/// Where a packet is while the network holds it.
#[derive(Debug)]
struct Slot {
    pkt: Option<Packet>,
    /// Next packet in the same port FIFO.
    next: u32,
    /// The link it is being sent on (valid from the start of its transmission).
    link: u32,
    /// The link's down-epoch when the transmission started (`DOOMED` if it was down).
    epoch: u32,
    /// When its transmission on `link` started.
    tx_start: Ps,
}

/// Epoch of a packet put on a link that was already down: it never arrives.
pub const DOOMED: u32 = u32::MAX;

/// Slab of the packets the network holds; handles are reused after `remove`.
#[derive(Debug, Default)]
pub struct Arena {
    slots: Vec<Slot>,
    free: Vec<u32>,
    live: usize,
}

impl Arena {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, pkt: Packet) -> u32 {
        self.live += 1;
        if let Some(id) = self.free.pop() {
            let s = &mut self.slots[id as usize];
            s.pkt = Some(pkt);
            s.next = NIL;
            id
        } else {
            self.slots.push(Slot {
                pkt: Some(pkt),
                next: NIL,
                link: NIL,
                epoch: 0,
                tx_start: 0,
            });
            (self.slots.len() - 1) as u32
        }
    }

    pub fn remove(&mut self, id: u32) -> Packet {
        self.live -= 1;
        self.free.push(id);
        self.slots[id as usize].pkt.take().expect("live slot")
    }

    pub fn get(&self, id: u32) -> &Packet {
        self.slots[id as usize].pkt.as_ref().expect("live slot")
    }

    pub fn get_mut(&mut self, id: u32) -> &mut Packet {
        self.slots[id as usize].pkt.as_mut().expect("live slot")
    }

    /// Packets held (queued or on a wire).
    pub fn live(&self) -> usize {
        self.live
    }

    /// Record that `id` starts its transmission on `link` at `now` in down-epoch `epoch`.
    pub fn set_wire(&mut self, id: u32, link: u32, epoch: u32, now: Ps) {
        let s = &mut self.slots[id as usize];
        s.link = link;
        s.epoch = epoch;
        s.tx_start = now;
    }

    /// (link, epoch, tx_start) of the transmission `id` is in.
    pub fn wire(&self, id: u32) -> (u32, u32, Ps) {
        let s = &self.slots[id as usize];
        (s.link, s.epoch, s.tx_start)
    }
}

/// What `enqueue` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enqueued {
    Queued,
    /// The data queue was full: the packet is now a header on the control class.
    Trimmed,
    /// No room: the caller removes it from the arena and counts it.
    Dropped,
}

/// ECN marking probability with `data_bytes` of data queued: 0 up to `kmin`, linear to 1 at
/// `kmax`.
pub fn ecn_probability(data_bytes: u64, q: &QueueConfig) -> f64 {
    if data_bytes <= q.kmin_bytes {
        0.0
    } else if data_bytes >= q.kmax_bytes {
        1.0
    } else {
        (data_bytes - q.kmin_bytes) as f64 / (q.kmax_bytes - q.kmin_bytes) as f64
    }
}

/// A uniform draw in [0, 1) from 53 random bits.
pub fn unit(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// One switch output port: a control FIFO with strict priority over a data FIFO.
#[derive(Debug, Clone, Copy)]
pub struct PortQueue {
    /// Index 0: control, 1: data.
    head: [u32; 2],
    tail: [u32; 2],
    bytes: [u64; 2],
}

impl Default for PortQueue {
    fn default() -> Self {
        PortQueue {
            head: [NIL; 2],
            tail: [NIL; 2],
            bytes: [0; 2],
        }
    }
}

const CTRL: usize = 0;
const DATA: usize = 1;

impl PortQueue {
    pub fn is_empty(&self) -> bool {
        self.head[CTRL] == NIL && self.head[DATA] == NIL
    }

    /// Wire bytes queued on the data class.
    pub fn data_bytes(&self) -> u64 {
        self.bytes[DATA]
    }

    /// Wire bytes queued on the control class.
    pub fn control_bytes(&self) -> u64 {
        self.bytes[CTRL]
    }

    fn push(&mut self, arena: &mut Arena, c: usize, id: u32, bytes: u32) {
        arena.slots[id as usize].next = NIL;
        if self.tail[c] == NIL {
            self.head[c] = id;
        } else {
            arena.slots[self.tail[c] as usize].next = id;
        }
        self.tail[c] = id;
        self.bytes[c] += bytes as u64;
    }

    fn pop(&mut self, arena: &mut Arena, c: usize) -> Option<u32> {
        let id = self.head[c];
        if id == NIL {
            return None;
        }
        let s = &arena.slots[id as usize];
        self.head[c] = s.next;
        if s.next == NIL {
            self.tail[c] = NIL;
        }
        self.bytes[c] -= s.pkt.as_ref().expect("queued slot").wire_bytes as u64;
        Some(id)
    }

    /// Queue packet `id` (already in `arena`). `to_host`: this port faces a host, so a trim
    /// here is the last-hop flavour.
    pub fn enqueue(
        &mut self,
        arena: &mut Arena,
        id: u32,
        q: &QueueConfig,
        to_host: bool,
    ) -> Enqueued {
        let pkt = arena.get_mut(id);
        let mut result = Enqueued::Queued;
        if pkt.class == Class::Data {
            if self.bytes[DATA] + pkt.wire_bytes as u64 <= q.buffer_bytes {
                let b = pkt.wire_bytes;
                self.push(arena, DATA, id, b);
                return Enqueued::Queued;
            }
            if !q.trimming {
                return Enqueued::Dropped;
            }
            pkt.wire_bytes = HEADER_BYTES;
            pkt.class = Class::Control;
            pkt.trim = if to_host { Trim::LastHop } else { Trim::Fabric };
            result = Enqueued::Trimmed;
        }
        let b = pkt.wire_bytes;
        if self.bytes[CTRL] + b as u64 > q.control_buffer_bytes {
            return Enqueued::Dropped;
        }
        self.push(arena, CTRL, id, b);
        result
    }

    /// The next packet to send: control first. A data packet is CE-marked with
    /// [`ecn_probability`] of the data bytes queued (itself included) unless the port faces a
    /// host and `ecn_last_hop` is off. Returns (slot, marked now).
    pub fn dequeue(
        &mut self,
        arena: &mut Arena,
        q: &QueueConfig,
        to_host: bool,
        rng: &mut SplitMix64,
    ) -> Option<(u32, bool)> {
        if let Some(id) = self.pop(arena, CTRL) {
            return Some((id, false));
        }
        let queued = self.bytes[DATA];
        let id = self.pop(arena, DATA)?;
        let mut marked = false;
        if !to_host || q.ecn_last_hop {
            let p = ecn_probability(queued, q);
            // Draw only in the linear band, so the random stream advances only where it
            // decides something.
            marked = p >= 1.0 || (p > 0.0 && unit(rng) < p);
            if marked {
                arena.get_mut(id).ecn = true;
            }
        }
        Some((id, marked))
    }

    /// Empty the port (its link went down), calling `f` with each slot, control first.
    pub fn drain(&mut self, arena: &mut Arena, mut f: impl FnMut(&mut Arena, u32)) {
        for c in [CTRL, DATA] {
            while let Some(id) = self.pop(arena, c) {
                f(arena, id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netsim::packet::{Body, RoceAck};

    fn cfg(trimming: bool) -> QueueConfig {
        QueueConfig {
            buffer_bytes: 10_000,
            kmin_bytes: 2_000,
            kmax_bytes: 8_000,
            trimming,
            ecn_last_hop: false,
            control_buffer_bytes: 200,
        }
    }

    fn pkt(class: Class, wire_bytes: u32, ev: u32) -> Packet {
        Packet {
            src: 0,
            dst: 1,
            qp: 0,
            plane: 0,
            ev,
            class,
            wire_bytes,
            ecn: false,
            trim: Trim::None,
            hops: 0,
            sent_at: 0,
            body: Body::RoceAck(RoceAck::Ack { psn: 0 }),
        }
    }

    #[test]
    fn control_has_strict_priority_and_each_class_is_fifo() {
        let (mut a, mut q, c) = (Arena::new(), PortQueue::default(), cfg(true));
        let mut rng = SplitMix64::new(1);
        for (i, class) in [Class::Data, Class::Control, Class::Data, Class::Control]
            .into_iter()
            .enumerate()
        {
            let id = a.insert(pkt(class, 64, i as u32));
            assert_eq!(q.enqueue(&mut a, id, &c, false), Enqueued::Queued);
        }
        let mut order = Vec::new();
        while let Some((id, _)) = q.dequeue(&mut a, &c, false, &mut rng) {
            order.push(a.remove(id).ev);
        }
        assert_eq!(order, [1, 3, 0, 2]);
        assert!(q.is_empty());
        assert_eq!((q.data_bytes(), q.control_bytes(), a.live()), (0, 0, 0));
    }

    #[test]
    fn a_full_data_queue_trims_with_the_right_flavour_and_bytes_add_up() {
        let (mut a, c) = (Arena::new(), cfg(true));
        for to_host in [false, true] {
            let mut q = PortQueue::default();
            for _ in 0..2 {
                let id = a.insert(pkt(Class::Data, 4_160, 0));
                assert_eq!(q.enqueue(&mut a, id, &c, to_host), Enqueued::Queued);
            }
            assert_eq!(q.data_bytes(), 8_320);
            let id = a.insert(pkt(Class::Data, 4_160, 0));
            assert_eq!(q.enqueue(&mut a, id, &c, to_host), Enqueued::Trimmed);
            let p = a.get(id);
            assert_eq!((p.wire_bytes, p.class), (HEADER_BYTES, Class::Control));
            let want = if to_host { Trim::LastHop } else { Trim::Fabric };
            assert_eq!(p.trim, want);
            assert_eq!((q.data_bytes(), q.control_bytes()), (8_320, 64));
            // A small data packet that still fits is queued, not trimmed.
            let id = a.insert(pkt(Class::Data, 1_000, 0));
            assert_eq!(q.enqueue(&mut a, id, &c, to_host), Enqueued::Queued);
            assert_eq!(q.data_bytes(), 9_320);
            // The control buffer (200 B) holds three headers; the fourth is dropped.
            for want in [Enqueued::Trimmed, Enqueued::Trimmed, Enqueued::Dropped] {
                let id = a.insert(pkt(Class::Data, 4_160, 0));
                assert_eq!(q.enqueue(&mut a, id, &c, to_host), want);
            }
            assert_eq!(q.control_bytes(), 192);
            let mut n = 0;
            q.drain(&mut a, |_, _| n += 1);
            assert_eq!(n, 6);
            assert_eq!((q.data_bytes(), q.control_bytes()), (0, 0));
        }
    }

    #[test]
    fn without_trimming_a_full_data_queue_drops() {
        let (mut a, mut q, c) = (Arena::new(), PortQueue::default(), cfg(false));
        for want in [Enqueued::Queued, Enqueued::Queued, Enqueued::Dropped] {
            let id = a.insert(pkt(Class::Data, 4_160, 0));
            assert_eq!(q.enqueue(&mut a, id, &c, false), want);
        }
        assert_eq!((q.data_bytes(), q.control_bytes()), (8_320, 0));
    }

    #[test]
    fn ecn_probability_is_zero_below_kmin_one_above_kmax_and_linear_between() {
        let c = cfg(true);
        assert_eq!(ecn_probability(0, &c), 0.0);
        assert_eq!(ecn_probability(2_000, &c), 0.0);
        assert_eq!(ecn_probability(5_000, &c), 0.5);
        assert_eq!(ecn_probability(8_000, &c), 1.0);
        assert_eq!(ecn_probability(50_000, &c), 1.0);
        // Measured marking rate at a fixed occupancy (the packet leaving included).
        let rate = |occupancy: u32, to_host: bool, c: &QueueConfig| {
            let (mut a, mut rng) = (Arena::new(), SplitMix64::new(7));
            let mut marks = 0;
            for _ in 0..4_000 {
                let mut q = PortQueue::default();
                let id = a.insert(pkt(Class::Data, occupancy, 0));
                q.enqueue(&mut a, id, c, to_host);
                let (id, m) = q.dequeue(&mut a, c, to_host, &mut rng).unwrap();
                assert_eq!(a.remove(id).ecn, m);
                marks += m as u32;
            }
            marks as f64 / 4_000.0
        };
        assert_eq!(rate(1_500, false, &c), 0.0);
        assert_eq!(rate(9_000, false, &c), 1.0);
        for (occ, p) in [(3_500, 0.25), (5_000, 0.5), (6_500, 0.75)] {
            let r = rate(occ, false, &c);
            assert!((r - p).abs() < 0.03, "occupancy {occ}: {r} vs {p}");
        }
        // Host-facing ports do not mark unless asked to.
        assert_eq!(rate(9_000, true, &c), 0.0);
        let last_hop = QueueConfig {
            ecn_last_hop: true,
            ..c
        };
        assert_eq!(rate(9_000, true, &last_hop), 1.0);
    }

    #[test]
    fn arena_reuses_slots() {
        let mut a = Arena::new();
        let x = a.insert(pkt(Class::Data, 100, 1));
        let y = a.insert(pkt(Class::Data, 100, 2));
        assert_eq!(a.remove(x).ev, 1);
        let z = a.insert(pkt(Class::Data, 100, 3));
        assert_eq!(z, x);
        assert_eq!(a.get(y).ev, 2);
        assert_eq!(a.live(), 2);
    }
}
