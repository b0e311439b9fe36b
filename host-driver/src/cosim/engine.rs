//! The DMA / queue engine model: software standing in for the NIC logic outside `mrc_core`
//! that owns the rings. Per clock of the device:
//!
//! - **Fetch** ([`QueueEngine::fetch`], before the core's edge): if the `SQ_PI` doorbell is
//!   ahead of the SQ consumer index, read one WQE from host memory and validate it. A bad
//!   opcode, a QP out of range or disabled, or a zero length is refused with an error CQE
//!   (counted in `WQE_ERRORS`); a good WRITE is posted to the core as `sq_valid / sq_qp /
//!   sq_bytes` (at most one post per clock). A good WQE waits (the ring stalls) while its QP
//!   is settling after a `QP_CTRL` operation or while the core's pending-byte counter could
//!   overflow.
//! - **Track** ([`QueueEngine::after_edge`]): the core segments a QP's pending bytes by the
//!   MTU when it sends, so a packet may carry the tail of one WR and the head of the next. The
//!   engine keeps each QP's byte stream (`posted` / `sent`) and, from each new-data `tx_*`
//!   header (what the packet builder consumes anyway), records the PSN of the packet holding
//!   each WR's first and last byte. A WR completes (`Ok` CQE, `bytes` = its length) when the
//!   QP's `una` passes its last PSN (24-bit serial arithmetic), in order per QP.
//! - **Complete**: CQEs are written to the CQ ring with the phase bit while it has space
//!   (`CQ_CI` doorbell); otherwise they wait in order.
//!
//! The engine follows the QP state from the CSR writes it sees on the device's bus (QP_SEL,
//! QP_CTRL), as the real engine takes the CSR block's strobes: enable, disable, and reset,
//! which flushes the QP's outstanding WRs (`Flushed` CQEs). A core reset (`rst`) returns the
//! engine to power-on (rings off, nothing outstanding).

use super::memory::HostMemory;
use crate::queue::{
    cq_phase, db, Cqe, CqeStatus, Wqe, CQE_BYTES, DB_BASE, OP_RDMA_WRITE, WQE_BYTES,
};
use crate::regs;
use std::collections::VecDeque;

/// Clocks a QP's posts wait after a QP_CTRL response: the core applies the operation one clock
/// after the response and holds a reset QP's blocks in reset the clock after that.
pub const QP_SETTLE: u8 = 3;
const PSN_MASK: u32 = 0xFF_FFFF;

/// `una` has passed `psn` (24-bit serial: una - psn in [1, 2^23]).
pub fn psn_passed(una: u32, psn: u32) -> bool {
    let d = una.wrapping_sub(psn).wrapping_sub(1) & PSN_MASK;
    d < 0x80_0000
}

/// What the engine counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// WQEs read from the SQ ring.
    pub wqes_fetched: u64,
    /// Posts to the core.
    pub posts: u64,
    /// WQEs refused with an error CQE (`DB.WQE_ERRORS`).
    pub wqe_errors: u32,
    /// Refused doorbells / ring set-ups and DMA faults (`DB.DB_ERRORS`).
    pub db_errors: u32,
    /// CQEs written to the CQ ring.
    pub cqes_written: u64,
    /// `Flushed` completions (QP resets).
    pub flushed: u64,
}

/// One outstanding WR.
#[derive(Debug, Clone, Copy)]
struct Wr {
    wr_id: u64,
    length: u32,
    /// Its bytes in the QP's stream: [start, end).
    start: u64,
    end: u64,
    first_psn: Option<u32>,
    last_psn: Option<u32>,
}

#[derive(Debug, Clone, Default)]
struct QpState {
    en: bool,
    /// Clocks before a post to this QP may go (a QP_CTRL operation is landing).
    hold: u8,
    /// Clocks in which this QP's new-data headers predate its reset (not counted).
    resetting: u8,
    posted: u64,
    sent: u64,
    wrs: VecDeque<Wr>,
}

/// A completion waiting for CQ space.
#[derive(Debug, Clone, Copy)]
struct Done {
    wr_id: u64,
    qp: u16,
    status: CqeStatus,
    bytes: u32,
}

/// The engine's state.
#[derive(Debug, Clone)]
pub struct QueueEngine {
    qps: usize,
    sq_base: u64,
    sq_size: u32,
    sq_pi: u32,
    sq_ci: u32,
    /// A DMA fault on the SQ stops fetching until SQ_SIZE is written again.
    sq_fault: bool,
    cq_base: u64,
    cq_size: u32,
    cq_pi: u32,
    cq_ci: u32,
    cq_fault: bool,
    qp_sel: u32,
    qp: Vec<QpState>,
    done: VecDeque<Done>,
    stats: EngineStats,
}

impl QueueEngine {
    pub fn new(qps: usize) -> Self {
        QueueEngine {
            qps,
            sq_base: 0,
            sq_size: 0,
            sq_pi: 0,
            sq_ci: 0,
            sq_fault: false,
            cq_base: 0,
            cq_size: 0,
            cq_pi: 0,
            cq_ci: 0,
            cq_fault: false,
            qp_sel: 0,
            qp: vec![QpState::default(); qps],
            done: VecDeque::new(),
            stats: EngineStats::default(),
        }
    }

    /// Power-on state (the device's reset).
    pub fn reset(&mut self) {
        *self = QueueEngine::new(self.qps);
    }

    pub fn stats(&self) -> EngineStats {
        self.stats
    }

    /// WRs accepted and not yet completed, over every QP.
    pub fn outstanding(&self) -> usize {
        self.qp.iter().map(|q| q.wrs.len()).sum::<usize>() + self.done.len()
    }

    /// A doorbell-page read; `None` is a refused access (no register there).
    pub fn db_read(&self, offset: u32) -> Option<u32> {
        let v = match offset {
            o if o == db::SQ_PI.offset => self.sq_pi,
            o if o == db::CQ_CI.offset => self.cq_ci,
            o if o == db::SQ_BASE_LO.offset => self.sq_base as u32,
            o if o == db::SQ_BASE_HI.offset => (self.sq_base >> 32) as u32,
            o if o == db::SQ_SIZE.offset => self.sq_size,
            o if o == db::CQ_BASE_LO.offset => self.cq_base as u32,
            o if o == db::CQ_BASE_HI.offset => (self.cq_base >> 32) as u32,
            o if o == db::CQ_SIZE.offset => self.cq_size,
            o if o == db::SQ_CI.offset => self.sq_ci,
            o if o == db::CQ_PI.offset => self.cq_pi,
            o if o == db::WQE_ERRORS.offset => self.stats.wqe_errors,
            o if o == db::DB_ERRORS.offset => self.stats.db_errors,
            _ => return None,
        };
        Some(v)
    }

    /// A doorbell-page write; `false` is a refused access (no register, or a read-only one).
    /// A doorbell or size the engine cannot take is accepted on the bus, ignored and counted
    /// in `DB_ERRORS`.
    pub fn db_write(&mut self, offset: u32, v: u32) -> bool {
        let lo = |b: u64| (b & !0xFFFF_FFFF) | u64::from(v);
        let hi = |b: u64| (b & 0xFFFF_FFFF) | u64::from(v) << 32;
        let size_ok = v == 0 || v.is_power_of_two();
        match offset {
            o if o == db::SQ_PI.offset => {
                if self.sq_size == 0 || v.wrapping_sub(self.sq_ci) > self.sq_size {
                    self.stats.db_errors += 1;
                } else {
                    self.sq_pi = v;
                }
            }
            o if o == db::CQ_CI.offset => {
                if v.wrapping_sub(self.cq_ci) > self.cq_pi.wrapping_sub(self.cq_ci) {
                    self.stats.db_errors += 1;
                } else {
                    self.cq_ci = v;
                }
            }
            o if o == db::SQ_BASE_LO.offset => self.sq_base = lo(self.sq_base),
            o if o == db::SQ_BASE_HI.offset => self.sq_base = hi(self.sq_base),
            o if o == db::CQ_BASE_LO.offset => self.cq_base = lo(self.cq_base),
            o if o == db::CQ_BASE_HI.offset => self.cq_base = hi(self.cq_base),
            o if o == db::SQ_SIZE.offset => {
                if size_ok {
                    (self.sq_size, self.sq_pi, self.sq_ci, self.sq_fault) = (v, 0, 0, false);
                } else {
                    self.stats.db_errors += 1;
                }
            }
            o if o == db::CQ_SIZE.offset => {
                if size_ok {
                    (self.cq_size, self.cq_pi, self.cq_ci, self.cq_fault) = (v, 0, 0, false);
                } else {
                    self.stats.db_errors += 1;
                }
            }
            _ => return false,
        }
        true
    }

    /// Is `offset` in the doorbell page?
    pub fn claims(offset: u32) -> bool {
        (DB_BASE..DB_BASE + crate::queue::DB_PAGE_SIZE).contains(&offset)
    }

    /// A CSR write the core answered OKAY: follow QP_SEL / QP_CTRL.
    pub fn snoop_csr_write(&mut self, offset: u32, v: u32) {
        if offset == regs::qp::QP_SEL.offset {
            self.qp_sel = v & regs::qp::QP_SEL.mask();
        } else if offset == regs::qp::QP_CTRL.offset {
            let Some(s) = self.qp.get_mut(self.qp_sel as usize) else {
                return;
            };
            match v & 3 {
                1 => (s.en, s.hold) = (true, QP_SETTLE),
                2 => (s.en, s.hold) = (false, QP_SETTLE),
                3 => {
                    let q = self.qp_sel as u16;
                    for w in s.wrs.drain(..) {
                        self.done.push_back(Done {
                            wr_id: w.wr_id,
                            qp: q,
                            status: CqeStatus::Flushed,
                            bytes: 0,
                        });
                        self.stats.flushed += 1;
                    }
                    (s.posted, s.sent, s.hold, s.resetting) = (0, 0, QP_SETTLE, QP_SETTLE);
                }
                _ => {}
            }
        }
    }

    /// Before the core's edge: fetch at most one WQE; a good one is returned as the post
    /// `(qp, bytes)` of this clock.
    pub fn fetch(&mut self, mem: &HostMemory) -> Option<(u8, u32)> {
        if self.sq_size == 0 || self.sq_fault || self.sq_ci == self.sq_pi {
            return None;
        }
        let addr = self.sq_base + u64::from(self.sq_ci & (self.sq_size - 1)) * WQE_BYTES as u64;
        let mut b = [0u8; WQE_BYTES];
        if mem.read(addr, &mut b).is_err() {
            self.sq_fault = true;
            self.stats.db_errors += 1;
            return None;
        }
        let w = Wqe::decode(&b);
        let q = w.qp as usize;
        let status = if w.opcode != OP_RDMA_WRITE {
            CqeStatus::BadOpcode
        } else if q >= self.qps {
            CqeStatus::QpOutOfRange
        } else if !self.qp[q].en {
            CqeStatus::QpDisabled
        } else if w.length == 0 {
            CqeStatus::ZeroLength
        } else {
            CqeStatus::Ok
        };
        if status != CqeStatus::Ok {
            self.sq_ci = self.sq_ci.wrapping_add(1);
            self.stats.wqes_fetched += 1;
            self.stats.wqe_errors += 1;
            self.done.push_back(Done {
                wr_id: w.wr_id,
                qp: w.qp,
                status,
                bytes: 0,
            });
            return None;
        }
        let s = &mut self.qp[q];
        if s.hold > 0 || s.posted - s.sent + u64::from(w.length) > u64::from(u32::MAX) {
            return None;
        }
        s.wrs.push_back(Wr {
            wr_id: w.wr_id,
            length: w.length,
            start: s.posted,
            end: s.posted + u64::from(w.length),
            first_psn: None,
            last_psn: None,
        });
        s.posted += u64::from(w.length);
        self.sq_ci = self.sq_ci.wrapping_add(1);
        self.stats.wqes_fetched += 1;
        self.stats.posts += 1;
        Some((w.qp as u8, w.length))
    }

    /// After the core's edge: account new-data headers, complete WRs whose last PSN `una`
    /// passed, write CQEs while the CQ has space.
    pub fn after_edge(&mut self, tx: Option<(u8, u32, u16)>, una: &[u32], mem: &mut HostMemory) {
        if let Some((q, psn, len)) = tx {
            if let Some(s) = self.qp.get_mut(q as usize).filter(|s| s.resetting == 0) {
                let after = s.sent + u64::from(len);
                for w in s.wrs.iter_mut() {
                    if w.start >= after {
                        break;
                    }
                    w.first_psn.get_or_insert(psn);
                    if w.last_psn.is_none() && w.end <= after {
                        w.last_psn = Some(psn);
                    }
                }
                s.sent = after;
            }
        }
        for (q, s) in self.qp.iter_mut().enumerate() {
            s.hold = s.hold.saturating_sub(1);
            s.resetting = s.resetting.saturating_sub(1);
            let Some(&u) = una.get(q) else { continue };
            while let Some(w) = s.wrs.front() {
                match w.last_psn {
                    Some(l) if psn_passed(u, l) => {
                        self.done.push_back(Done {
                            wr_id: w.wr_id,
                            qp: q as u16,
                            status: CqeStatus::Ok,
                            bytes: w.length,
                        });
                        s.wrs.pop_front();
                    }
                    _ => break,
                }
            }
        }
        while self.cq_size != 0 && !self.cq_fault {
            if self.cq_pi.wrapping_sub(self.cq_ci) >= self.cq_size {
                break;
            }
            let Some(d) = self.done.front() else { break };
            let c = Cqe {
                wr_id: d.wr_id,
                qp: d.qp,
                status: d.status as u8,
                phase: cq_phase(self.cq_pi, self.cq_size),
                bytes: d.bytes,
            };
            let addr = self.cq_base + u64::from(self.cq_pi & (self.cq_size - 1)) * CQE_BYTES as u64;
            if mem.write(addr, &c.encode()).is_err() {
                self.cq_fault = true;
                self.stats.db_errors += 1;
                break;
            }
            self.done.pop_front();
            self.cq_pi = self.cq_pi.wrapping_add(1);
            self.stats.cqes_written += 1;
        }
    }

    /// The PSN range `(first, last)` of each outstanding WR of `qp` (`None` until sent), for
    /// tests and debugging.
    pub fn psn_ranges(&self, qp: usize) -> Vec<(u64, Option<u32>, Option<u32>)> {
        self.qp.get(qp).map_or(Vec::new(), |s| {
            s.wrs
                .iter()
                .map(|w| (w.wr_id, w.first_psn, w.last_psn))
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_psn_comparison_wraps_at_24_bits() {
        assert!(psn_passed(5, 4));
        assert!(!psn_passed(4, 4));
        assert!(!psn_passed(3, 4));
        assert!(psn_passed(0, 0xFF_FFFF));
        assert!(psn_passed(0x80_0000, 0));
        assert!(!psn_passed(0x80_0001, 0));
    }
}
