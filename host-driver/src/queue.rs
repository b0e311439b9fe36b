//! What the driver and the NIC's DMA / queue engine share: the descriptor layouts in host
//! memory and the doorbell page.
//!
//! **Descriptors** (little-endian, fixed size):
//!
//! ```text
//! SQ WQE, 32 bytes                          CQE, 16 bytes
//!  0  u8   opcode (1 = RDMA WRITE)           0  u64  wr_id
//!  1  u8   reserved, 0                       8  u16  qp
//!  2  u16  qp                               10  u8   status (CqeStatus)
//!  4  u32  length (bytes, > 0)              11  u8   flags: bit 0 = phase
//!  8  u64  remote VA                        12  u32  bytes (length on success, else 0)
//! 16  u32  rkey
//! 20  u32  reserved, 0
//! 24  u64  wr_id
//! ```
//!
//! **Rings**: one submission ring (SQ) of WQEs for every QP (the WQE names its QP) and one
//! completion ring (CQ), each a power-of-two number of entries at a host address. Indices are
//! free-running `u32`s (entry = index mod entries): the SQ is full when `pi - ci == entries`.
//! The driver owns the SQ producer index and tells the device with the `SQ_PI` doorbell; the
//! device owns the CQ producer index and writes each CQE with a **phase** bit (1 on the first
//! lap of the ring, 0 on the second, ...), so the driver sees a new CQE without reading an
//! index; it returns CQ space with the `CQ_CI` doorbell.
//!
//! **Doorbell page** ([`db`], at [`DB_BASE`]): the register map (`mrc-regmap`) has no
//! doorbell or ring registers, because the DMA / queue engine sits outside `mrc_core`. Until
//! the map gets a block for it (proposal: a `DB` block with exactly these registers), the page
//! lives at BAR offset [`DB_BASE`], past the 4 KiB window the CSR block decodes
//! (`mrc_model::mrc_csr::ADDR_BITS` = 12), and the cosim BAR model
//! ([`crate::cosim::CosimDevice`]) implements it. These are the only offsets written by hand
//! in the crate; they are defined here once.

use crate::{Access, Reg};

/// Bytes of one SQ work-queue entry.
pub const WQE_BYTES: usize = 32;
/// Bytes of one completion-queue entry.
pub const CQE_BYTES: usize = 16;
/// WQE opcode: RDMA WRITE (the only one the engine accepts).
pub const OP_RDMA_WRITE: u8 = 1;

/// BAR offset of the doorbell page (outside the CSR block's 12-bit decode).
pub const DB_BASE: u32 = 0x1000;
/// Bytes of the doorbell page; offsets past it are outside the cosim BAR.
pub const DB_PAGE_SIZE: u32 = 0x1000;

/// The doorbell page registers (not in the register map; see the module doc).
pub mod db {
    use super::{Access, Reg, DB_BASE};

    const fn r(offset: u32, name: &'static str, access: Access) -> Reg {
        Reg {
            block: "DB",
            name,
            offset: DB_BASE + offset,
            width: 32,
            access,
        }
    }
    /// Doorbell: the SQ producer index (free running). The engine fetches `SQ_CI..SQ_PI`.
    pub const SQ_PI: Reg = r(0x00, "SQ_PI", Access::Rw);
    /// Doorbell: the CQ consumer index (free running); returns CQ space to the engine.
    pub const CQ_CI: Reg = r(0x04, "CQ_CI", Access::Rw);
    /// SQ ring host address, low and high words.
    pub const SQ_BASE_LO: Reg = r(0x08, "SQ_BASE_LO", Access::Rw);
    pub const SQ_BASE_HI: Reg = r(0x0C, "SQ_BASE_HI", Access::Rw);
    /// SQ entries (a power of two; 0 turns the ring off). Writing it resets both SQ indices.
    pub const SQ_SIZE: Reg = r(0x10, "SQ_SIZE", Access::Rw);
    /// CQ ring host address, low and high words.
    pub const CQ_BASE_LO: Reg = r(0x14, "CQ_BASE_LO", Access::Rw);
    pub const CQ_BASE_HI: Reg = r(0x18, "CQ_BASE_HI", Access::Rw);
    /// CQ entries (a power of two; 0 turns the ring off). Writing it resets both CQ indices.
    pub const CQ_SIZE: Reg = r(0x1C, "CQ_SIZE", Access::Rw);
    /// SQ consumer index: WQEs the engine has fetched (their slots are free again).
    pub const SQ_CI: Reg = r(0x20, "SQ_CI", Access::Ro);
    /// CQ producer index: CQEs the engine has written.
    pub const CQ_PI: Reg = r(0x24, "CQ_PI", Access::Ro);
    /// WQEs refused with an error CQE (bad opcode, QP out of range or disabled, zero length).
    pub const WQE_ERRORS: Reg = r(0x28, "WQE_ERRORS", Access::Ro);
    /// Refused doorbells and ring set-ups (an SQ_PI more than SQ_SIZE ahead of SQ_CI, a CQ_CI
    /// ahead of CQ_PI, a size that is not a power of two) and failed DMA accesses.
    pub const DB_ERRORS: Reg = r(0x2C, "DB_ERRORS", Access::Ro);
    /// Every register of the page.
    pub const ALL: [Reg; 12] = [
        SQ_PI, CQ_CI, SQ_BASE_LO, SQ_BASE_HI, SQ_SIZE, CQ_BASE_LO, CQ_BASE_HI, CQ_SIZE, SQ_CI,
        CQ_PI, WQE_ERRORS, DB_ERRORS,
    ];
}

/// A submission-queue work request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wqe {
    pub opcode: u8,
    pub qp: u16,
    pub length: u32,
    pub remote_va: u64,
    pub rkey: u32,
    pub wr_id: u64,
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

impl Wqe {
    /// An RDMA WRITE request.
    pub fn write(qp: u16, length: u32, remote_va: u64, rkey: u32, wr_id: u64) -> Self {
        Wqe {
            opcode: OP_RDMA_WRITE,
            qp,
            length,
            remote_va,
            rkey,
            wr_id,
        }
    }
    pub fn encode(&self) -> [u8; WQE_BYTES] {
        let mut b = [0u8; WQE_BYTES];
        b[0] = self.opcode;
        b[2..4].copy_from_slice(&self.qp.to_le_bytes());
        b[4..8].copy_from_slice(&self.length.to_le_bytes());
        b[8..16].copy_from_slice(&self.remote_va.to_le_bytes());
        b[16..20].copy_from_slice(&self.rkey.to_le_bytes());
        b[24..32].copy_from_slice(&self.wr_id.to_le_bytes());
        b
    }
    pub fn decode(b: &[u8; WQE_BYTES]) -> Self {
        Wqe {
            opcode: b[0],
            qp: le16(b, 2),
            length: le32(b, 4),
            remote_va: le64(b, 8),
            rkey: le32(b, 16),
            wr_id: le64(b, 24),
        }
    }
}

/// CQE status codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CqeStatus {
    /// Every byte acknowledged by the peer (the QP's `una` passed the WR's last PSN).
    Ok = 0,
    /// The WQE's opcode is not RDMA WRITE.
    BadOpcode = 1,
    /// The WQE names a QP >= CSR.QPS.
    QpOutOfRange = 2,
    /// The WQE's QP was disabled when the engine fetched it.
    QpDisabled = 3,
    /// The WQE's length is 0.
    ZeroLength = 4,
    /// The QP was reset (QP_CTRL reset) before the WR completed.
    Flushed = 5,
}

impl CqeStatus {
    pub fn from_u8(v: u8) -> Option<Self> {
        use CqeStatus::*;
        [Ok, BadOpcode, QpOutOfRange, QpDisabled, ZeroLength, Flushed]
            .into_iter()
            .find(|s| *s as u8 == v)
    }
}

/// A completion-queue entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cqe {
    pub wr_id: u64,
    pub qp: u16,
    /// A [`CqeStatus`] code (kept raw so a corrupt entry is visible, not lost).
    pub status: u8,
    pub phase: bool,
    pub bytes: u32,
}

impl Cqe {
    pub fn encode(&self) -> [u8; CQE_BYTES] {
        let mut b = [0u8; CQE_BYTES];
        b[0..8].copy_from_slice(&self.wr_id.to_le_bytes());
        b[8..10].copy_from_slice(&self.qp.to_le_bytes());
        b[10] = self.status;
        b[11] = u8::from(self.phase);
        b[12..16].copy_from_slice(&self.bytes.to_le_bytes());
        b
    }
    pub fn decode(b: &[u8; CQE_BYTES]) -> Self {
        Cqe {
            wr_id: le64(b, 0),
            qp: le16(b, 8),
            status: b[10],
            phase: b[11] & 1 == 1,
            bytes: le32(b, 12),
        }
    }
}

/// The phase bit of CQ index `i` in a ring of `entries`: 1 on even laps.
pub fn cq_phase(i: u32, entries: u32) -> bool {
    (i / entries) & 1 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_round_trip_at_their_documented_offsets() {
        let w = Wqe::write(
            3,
            0x0102_0304,
            0x1122_3344_5566_7788,
            0xAABB_CCDD,
            u64::MAX - 5,
        );
        let b = w.encode();
        assert_eq!(b[0], OP_RDMA_WRITE);
        assert_eq!(&b[2..4], &[3, 0]);
        assert_eq!(&b[4..8], &[4, 3, 2, 1]);
        assert_eq!(b[8], 0x88);
        assert_eq!(&b[16..20], &[0xDD, 0xCC, 0xBB, 0xAA]);
        assert_eq!(&b[20..24], &[0; 4]);
        assert_eq!(Wqe::decode(&b), w);
        let c = Cqe {
            wr_id: 7,
            qp: 1,
            status: CqeStatus::Flushed as u8,
            phase: true,
            bytes: 9000,
        };
        let b = c.encode();
        assert_eq!((b[10], b[11]), (5, 1));
        assert_eq!(Cqe::decode(&b), c);
        assert_eq!(CqeStatus::from_u8(5), Some(CqeStatus::Flushed));
        assert_eq!(CqeStatus::from_u8(6), None);
        assert!(cq_phase(3, 4) && !cq_phase(4, 4) && cq_phase(8, 4));
    }

    #[test]
    fn the_doorbell_page_is_outside_the_register_map_and_the_csr_window() {
        const { assert!(DB_BASE >= crate::regs::BAR_SIZE) };
        for (i, r) in db::ALL.iter().enumerate() {
            assert_eq!(r.offset, DB_BASE + 4 * i as u32, "{}", r.name);
        }
    }
}
