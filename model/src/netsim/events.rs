//! The event queue: a calendar queue that pops in exact (time, sequence) order.
//!
//! A packet network schedules almost every event a few hundred ns to a few µs ahead
//! (serialisation + propagation), and a big run keeps 10^5 events pending; a binary heap
//! that large pays a cache miss per level on every pop. Here time is cut into buckets of
//! 2^`SHIFT` ps; the next `SLOTS` buckets are a ring of vectors, the current bucket is
//! sorted once when the clock reaches it (synchronous traffic puts thousands of ties in one
//! bucket; one sort beats that many heap pops), and anything beyond the ring's horizon (RTOs, faults, flow starts) waits in
//! a far heap until the ring reaches it.
//!
//! ```text
//!   near (bucket == cur,      <- ring[cur+1 .. cur+SLOTS) (unsorted Vecs, bitmap of
//!    sorted, popped from the end)                         non-empty slots)
//!                             <- far heap (bucket >= cur + SLOTS)
//! ```
//!
//! Invariants: every pending event of bucket `cur` is in `near`; every ring event's bucket
//! is in (cur, cur + SLOTS); every far event's bucket is >= cur + SLOTS. So `near` alone
//! decides the next event, ties included.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Ps;

/// One scheduled event: ordered by time, then by the order it was scheduled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Event {
    pub at: Ps,
    pub seq: u64,
    /// What to do (the simulator's encoding).
    pub what: u64,
}

/// Bucket width 2^10 ps ~ 1 ns: a few dozen events per bucket in a 1024-host run.
const SHIFT: u32 = 10;
/// Ring of 2^13 buckets: an 8 µs horizon.
const SLOTS: u64 = 1 << 13;
const MASK: u64 = SLOTS - 1;

pub struct EventQueue {
    ring: Vec<Vec<Event>>,
    /// Bit s set: `ring[s]` is not empty.
    occupied: Vec<u64>,
    ring_len: usize,
    cur: u64,
    /// Bucket `cur`, sorted by (time, seq) from `head` on (popped from the front).
    near: Vec<Event>,
    head: usize,
    far: BinaryHeap<Reverse<Event>>,
    seq: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            ring: (0..SLOTS).map(|_| Vec::new()).collect(),
            occupied: vec![0; (SLOTS / 64) as usize],
            ring_len: 0,
            cur: 0,
            near: Vec::new(),
            head: 0,
            far: BinaryHeap::new(),
            seq: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.near.len() - self.head + self.ring_len + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Schedule `what` at `at`, which must not be earlier than the last event popped.
    pub fn push(&mut self, at: Ps, what: u64) {
        self.seq += 1;
        self.insert(Event {
            at,
            seq: self.seq,
            what,
        });
    }

    fn insert(&mut self, ev: Event) {
        let b = ev.at >> SHIFT;
        debug_assert!(b >= self.cur, "event scheduled in the past");
        if b <= self.cur {
            // Rare: only delays under a bucket width land here. `ev` has the largest seq,
            // so it goes after everything it ties with.
            let i = self.head + self.near[self.head..].partition_point(|e| e.at <= ev.at);
            self.near.insert(i, ev);
        } else if b - self.cur < SLOTS {
            let s = (b & MASK) as usize;
            self.ring[s].push(ev);
            self.occupied[s / 64] |= 1 << (s % 64);
            self.ring_len += 1;
        } else {
            self.far.push(Reverse(ev));
        }
    }

    pub fn pop(&mut self) -> Option<Event> {
        loop {
            if let Some(&e) = self.near.get(self.head) {
                self.head += 1;
                return Some(e);
            }
            self.near.clear();
            self.head = 0;
            if self.ring_len > 0 {
                self.cur += self.next_occupied_distance();
            } else {
                let Reverse(f) = self.far.peek()?;
                self.cur = f.at >> SHIFT;
            }
            let s = (self.cur & MASK) as usize;
            if self.occupied[s / 64] & (1 << (s % 64)) != 0 {
                self.occupied[s / 64] &= !(1 << (s % 64));
                self.ring_len -= self.ring[s].len();
                self.near.append(&mut self.ring[s]);
            }
            // Far events now inside the horizon move to the ring (or straight to `near`).
            while let Some(&Reverse(f)) = self.far.peek() {
                let b = f.at >> SHIFT;
                if b - self.cur >= SLOTS {
                    break;
                }
                self.far.pop();
                if b == self.cur {
                    self.near.push(f);
                } else {
                    self.insert(f);
                }
            }
            // Stable and run-adaptive: a slot fills in scheduling order, mostly in time order.
            self.near.sort_by_key(|e| (e.at, e.seq));
        }
    }

    /// Buckets from `cur` to the next non-empty ring slot (the ring is not empty, and the
    /// current slot is: its events live in `near`).
    fn next_occupied_distance(&self) -> u64 {
        let words = self.occupied.len();
        let start = ((self.cur + 1) & MASK) as usize;
        let (w0, b0) = (start / 64, start % 64);
        // The first word from `start`'s bit up, then whole words around the ring, then the
        // first word's low bits.
        let first = self.occupied[w0] & (!0u64 << b0);
        let slot = if first != 0 {
            w0 * 64 + first.trailing_zeros() as usize
        } else {
            let mut found = None;
            for i in 1..=words {
                let w = (w0 + i) % words;
                let bits = if i == words {
                    self.occupied[w] & !(!0u64 << b0)
                } else {
                    self.occupied[w]
                };
                if bits != 0 {
                    found = Some(w * 64 + bits.trailing_zeros() as usize);
                    break;
                }
            }
            found.expect("ring_len > 0 but no slot occupied")
        };
        (slot as u64).wrapping_sub(self.cur) & MASK
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// Interleaved pushes and pops with the delays a network produces (mostly short, some
    /// far, many ties) pop exactly as a binary heap on (time, seq) does.
    #[test]
    fn pops_in_the_same_order_as_a_binary_heap() {
        for seed in 0..20 {
            let mut rng = SplitMix64::new(seed);
            let (mut q, mut h) = (EventQueue::new(), BinaryHeap::new());
            let (mut now, mut seq, mut popped) = (0u64, 0u64, 0);
            for _ in 0..20_000 {
                if rng.chance(3, 5) || h.is_empty() {
                    let delay = match rng.below(10) {
                        0 => 0,
                        1..=6 => rng.below(2_000_000),
                        7 | 8 => rng.below(1 << 10) * 1024,
                        _ => rng.below(100_000_000),
                    };
                    seq += 1;
                    q.push(now + delay, seq);
                    h.push(Reverse(Event {
                        at: now + delay,
                        seq,
                        what: seq,
                    }));
                } else {
                    let Reverse(want) = h.pop().unwrap();
                    let got = q.pop().unwrap();
                    assert_eq!((got.at, got.seq, got.what), (want.at, want.seq, want.what));
                    now = got.at;
                    popped += 1;
                }
                assert_eq!(q.len(), h.len());
            }
            while let Some(Reverse(want)) = h.pop() {
                assert_eq!(q.pop().unwrap(), want);
            }
            assert!(q.pop().is_none() && q.is_empty());
            assert!(popped > 1000);
        }
    }

    #[test]
    fn a_lone_far_event_is_reached_by_jumping() {
        let mut q = EventQueue::new();
        q.push(5, 1);
        q.push(1 << 50, 2);
        q.push(1 << 50, 3);
        assert_eq!(q.pop().unwrap().what, 1);
        assert_eq!(q.pop().unwrap().what, 2);
        q.push((1 << 50) + 3 * SLOTS * 1024, 4);
        q.push(1 << 50, 5);
        assert_eq!(q.pop().unwrap().what, 3);
        assert_eq!(q.pop().unwrap().what, 5);
        assert_eq!(q.pop().unwrap().what, 4);
        assert!(q.pop().is_none());
    }
}
