//! The responder's registered memory region: where MRC places RDMA WRITE payloads.
//!
//! MRC data packets carry their final VA and the R_Key (notes section 1), so the receiver
//! places each packet on arrival, in any order, after two checks: the key matches the
//! region and `[va, va + len)` lies inside it. The region is divided into PMTU slots (the VA
//! advances one PMTU per packet); a bitmap of written slots makes placement exactly-once:
//!
//! ```text
//!   base                                             base + len
//!    |  slot 0  |  slot 1  |  slot 2  | ... | last (short) |
//!       written    -          written          -
//!   write(va, len, rkey):  key? bounds? slot-aligned, slot-sized?  -> Rejected (nothing written)
//!                          slot already written                    -> Duplicate (dup_bytes)
//!                          else set the bit                        -> Written (bytes_written)
//! ```
//!
//! A write must cover exactly one slot (a full PMTU, or the tail of the region for the last
//! one): the requester segments by the same PMTU, so anything else is malformed and refused
//! rather than half-counted.

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    /// First write of this slot: the bytes are now in memory.
    Written,
    /// The slot was already written: nothing changes (counted in `dup_bytes`).
    Duplicate,
    /// Refused; nothing written.
    Rejected(RejectReason),
}

/// Why a write was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectReason {
    BadKey,
    OutOfBounds,
    /// In bounds, but not exactly one PMTU slot (misaligned VA or wrong length).
    NotASlot,
}

/// A registered region: base VA, length, R_Key, and which PMTU slots were written.
#[derive(Debug, Clone)]
pub struct MemoryRegion {
    base: u64,
    len: u64,
    rkey: u32,
    slot_bytes: u32,
    written: Vec<u64>,
    bytes_written: u64,
    dup_bytes: u64,
    writes_rejected: u64,
}

impl MemoryRegion {
    /// A region of `len` bytes at `base`, reachable with `rkey`, written in `slot_bytes`
    /// (the PMTU) pieces. `slot_bytes > 0`.
    pub fn new(base: u64, len: u64, rkey: u32, slot_bytes: u32) -> Self {
        assert!(slot_bytes > 0, "a slot holds at least one byte");
        let slots = len.div_ceil(u64::from(slot_bytes));
        MemoryRegion {
            base,
            len,
            rkey,
            slot_bytes,
            written: vec![0; slots.div_ceil(64) as usize],
            bytes_written: 0,
            dup_bytes: 0,
            writes_rejected: 0,
        }
    }

    pub fn base(&self) -> u64 {
        self.base
    }
    pub fn len(&self) -> u64 {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn rkey(&self) -> u32 {
        self.rkey
    }

    /// Check and place one payload; see the module doc.
    pub fn write(&mut self, va: u64, len: u32, rkey: u32) -> WriteOutcome {
        let out = self.check(va, len, rkey);
        match out {
            Ok(slot) => {
                let (w, b) = (slot / 64, slot % 64);
                if self.written[w] >> b & 1 == 1 {
                    self.dup_bytes += u64::from(len);
                    WriteOutcome::Duplicate
                } else {
                    self.written[w] |= 1 << b;
                    self.bytes_written += u64::from(len);
                    WriteOutcome::Written
                }
            }
            Err(r) => {
                self.writes_rejected += 1;
                WriteOutcome::Rejected(r)
            }
        }
    }

    /// Would `write` place this payload (key and bounds good, exactly one slot)? Changes
    /// nothing; the slot may already be written.
    pub fn would_accept(&self, va: u64, len: u32, rkey: u32) -> bool {
        self.check(va, len, rkey).is_ok()
    }

    fn check(&self, va: u64, len: u32, rkey: u32) -> Result<usize, RejectReason> {
        if rkey != self.rkey {
            return Err(RejectReason::BadKey);
        }
        let off = va.checked_sub(self.base).ok_or(RejectReason::OutOfBounds)?;
        let end = off
            .checked_add(u64::from(len))
            .ok_or(RejectReason::OutOfBounds)?;
        if len == 0 || end > self.len {
            return Err(RejectReason::OutOfBounds);
        }
        let sb = u64::from(self.slot_bytes);
        let slot_len = sb.min(self.len - off);
        if off % sb != 0 || u64::from(len) != slot_len {
            return Err(RejectReason::NotASlot);
        }
        Ok((off / sb) as usize)
    }

    /// Was the slot holding byte offset `off` written?
    pub fn is_written(&self, off: u64) -> bool {
        let slot = (off / u64::from(self.slot_bytes)) as usize;
        self.written
            .get(slot / 64)
            .is_some_and(|w| w >> (slot % 64) & 1 == 1)
    }

    /// Unique bytes written (each slot counted once).
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }
    /// Bytes that arrived again for an already written slot.
    pub fn dup_bytes(&self) -> u64 {
        self.dup_bytes
    }
    pub fn writes_rejected(&self) -> u64 {
        self.writes_rejected
    }
    /// Every byte of the region written exactly once.
    pub fn is_complete(&self) -> bool {
        self.bytes_written == self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_once_and_counts_duplicates() {
        let mut m = MemoryRegion::new(0x1000, 10_000, 7, 4096);
        assert_eq!(m.write(0x1000 + 4096, 4096, 7), WriteOutcome::Written);
        assert_eq!(m.write(0x1000 + 4096, 4096, 7), WriteOutcome::Duplicate);
        assert_eq!(
            m.write(0x1000 + 8192, 10_000 - 8192, 7),
            WriteOutcome::Written
        );
        assert!(!m.is_complete());
        assert_eq!(m.write(0x1000, 4096, 7), WriteOutcome::Written);
        assert!(m.is_complete());
        assert_eq!(m.bytes_written(), 10_000);
        assert_eq!(m.dup_bytes(), 4096);
        assert!(m.is_written(5000) && m.is_written(9999));
    }

    #[test]
    fn rejects_bad_key_bounds_and_non_slots_writing_nothing() {
        let mut m = MemoryRegion::new(0x1000, 10_000, 7, 4096);
        let cases = [
            (0x1000, 4096, 8, RejectReason::BadKey),
            (0x0FFF, 4096, 7, RejectReason::OutOfBounds),
            (0x1000 + 8192, 4096, 7, RejectReason::OutOfBounds),
            (u64::MAX - 10, 4096, 7, RejectReason::OutOfBounds),
            (0x1000, 0, 7, RejectReason::OutOfBounds),
            (0x1001, 4096, 7, RejectReason::NotASlot),
            (0x1000, 100, 7, RejectReason::NotASlot),
        ];
        for (va, len, key, why) in cases {
            assert_eq!(
                m.write(va, len, key),
                WriteOutcome::Rejected(why),
                "{va:#x}"
            );
        }
        assert_eq!(m.writes_rejected(), cases.len() as u64);
        assert_eq!(m.bytes_written(), 0);
        assert!(!m.is_written(0) && !m.is_written(4096) && !m.is_written(8192));
    }
}
