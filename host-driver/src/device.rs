//! The driver API over a [`Backend`]: open / reset, QP set-up, the EV profile, transport
//! parameters, RDMA WRITE posting through the SQ ring and its doorbell, completion polling,
//! counters and the EV event queue. Register accesses use the generated [`crate::regs`]
//! constants (and the doorbell page's [`crate::queue::db`]); no offset is typed here.
//!
//! ```text
//! let mut dev = Device::open(CosimDevice::new(MrcCore::new(&cfg), CosimOptions::default()),
//!                            RingOptions::default())?;
//! dev.create_qp(0, 0)?;
//! dev.load_ev_profile(&cfg.default_ev_profile())?;
//! dev.post_write(0, 65_536, 0x1000, 0x42, 7)?;
//! dev.ring_doorbell()?;
//! // ... the device runs (cosim: the caller steps it) ...
//! for c in dev.poll_cq()? { assert_eq!(c.status, CqeStatus::Ok); }
//! ```

use crate::cosim::memory::MemError;
use crate::queue::{cq_phase, db, Cqe, CqeStatus, Wqe, CQE_BYTES, WQE_BYTES};
use crate::{
    check_blocks, read, read_field, regs, write, Bar, BusError, DriverError, FoundBlock, Reg,
};

/// What the driver needs from a device beyond MMIO: a reset, and host memory the device
/// reaches by DMA.
pub trait Backend: Bar {
    /// Pulse the device's reset (every block to its reset state, every QP disabled).
    fn reset_pulse(&self) -> Result<(), DriverError>;
    /// Read host memory (the driver's view of the DMA buffer).
    fn dma_read(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemError>;
    /// Write host memory.
    fn dma_write(&self, addr: u64, data: &[u8]) -> Result<(), MemError>;
    /// Bytes of host memory the device can reach.
    fn dma_size(&self) -> u64;
    /// Turn a failed access into the driver's error (a backend that can tell a timeout from
    /// a refusal says so here).
    fn classify(&self, e: BusError) -> DriverError {
        DriverError::Bus(e)
    }
}

/// Where the rings live in host memory and how big they are (entries: powers of two).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingOptions {
    pub sq_entries: u32,
    pub cq_entries: u32,
    /// Host address of the SQ ring; the CQ ring follows it.
    pub base: u64,
}

impl Default for RingOptions {
    fn default() -> Self {
        RingOptions {
            sq_entries: 64,
            cq_entries: 256,
            base: 0x1000,
        }
    }
}

/// The XPORT registers (transport parameters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XportParams {
    pub mpr: u32,
    pub rto_exp: u32,
    pub rto_linear_retries: u32,
    pub rto_backoff_retries: u32,
    pub rtx_ooo_threshold: u32,
    pub sack_coalesce_bytes: u32,
    pub spray_policy: u32,
    pub ev_min_active: u32,
}

/// Every CNT register, plus CSR.BAD_ACCESS, EVQ.EVQ_DROPS and the doorbell page's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub pkts_sent: u32,
    pub retransmits: u32,
    pub trims: u32,
    pub nack_trimmed: u32,
    pub nack_trimmed_lasthop: u32,
    pub nack_oor_window: u32,
    pub nack_other: u32,
    pub timeouts: u32,
    pub out_of_window: u32,
    pub rx_dropped: u32,
    pub refused_ops: u32,
    pub nscc_ev_drops: u32,
    pub acks_sent: u32,
    pub bad_access: u32,
    pub evq_drops: u32,
    pub wqe_errors: u32,
    pub db_errors: u32,
}

impl Counters {
    /// The CNT registers, in map order, with the struct field each fills.
    pub const CNT_REGS: [Reg; 13] = [
        regs::cnt::PKTS_SENT,
        regs::cnt::RETRANSMITS,
        regs::cnt::TRIMS,
        regs::cnt::NACK_TRIMMED,
        regs::cnt::NACK_TRIMMED_LASTHOP,
        regs::cnt::NACK_OOR_WINDOW,
        regs::cnt::NACK_OTHER,
        regs::cnt::TIMEOUTS,
        regs::cnt::OUT_OF_WINDOW,
        regs::cnt::RX_DROPPED,
        regs::cnt::REFUSED_OPS,
        regs::cnt::NSCC_EV_DROPS,
        regs::cnt::ACKS_SENT,
    ];

    /// Every counter with its name.
    pub fn all(&self) -> [(&'static str, u32); 17] {
        [
            ("PKTS_SENT", self.pkts_sent),
            ("RETRANSMITS", self.retransmits),
            ("TRIMS", self.trims),
            ("NACK_TRIMMED", self.nack_trimmed),
            ("NACK_TRIMMED_LASTHOP", self.nack_trimmed_lasthop),
            ("NACK_OOR_WINDOW", self.nack_oor_window),
            ("NACK_OTHER", self.nack_other),
            ("TIMEOUTS", self.timeouts),
            ("OUT_OF_WINDOW", self.out_of_window),
            ("RX_DROPPED", self.rx_dropped),
            ("REFUSED_OPS", self.refused_ops),
            ("NSCC_EV_DROPS", self.nscc_ev_drops),
            ("ACKS_SENT", self.acks_sent),
            ("BAD_ACCESS", self.bad_access),
            ("EVQ_DROPS", self.evq_drops),
            ("WQE_ERRORS", self.wqe_errors),
            ("DB_ERRORS", self.db_errors),
        ]
    }
}

/// A completion read from the CQ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub wr_id: u64,
    pub qp: u16,
    pub status: CqeStatus,
    pub bytes: u32,
}

/// One EV event queue entry (EVQ.EVQ_HEAD decoded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvEvent {
    pub index: u8,
    /// State the feedback asks for: 0 GOOD, 1 SKIP, 2 ASSUMED_BAD.
    pub state: u8,
    /// The feedback kind (ev_spray_arbiter fb_kind; [`EvEvent::CAUSE_NACK_TRIMMED`], ...).
    pub cause: u8,
}

impl EvEvent {
    pub const CAUSE_SKIP_ONCE: u8 = 1;
    pub const CAUSE_ALWAYS_SKIP: u8 = 2;
    pub const CAUSE_NACK_TRIMMED: u8 = 3;
    pub const CAUSE_TIMEOUT: u8 = 5;
    pub const CAUSE_PROBE_NONE: u8 = 6;
    pub const CAUSE_PROBE_SKIP: u8 = 7;
}

/// EV_OP / QP_CTRL operation codes (the map's field docs).
const EV_OP_DENY: u32 = 1;
const EV_OP_ALLOW: u32 = 2;
const EV_OP_LOAD: u32 = 3;
const QP_OP_ENABLE: u32 = 1;
const QP_OP_DISABLE: u32 = 2;
const QP_OP_RESET: u32 = 3;
/// EVQ_HEAD reads a drain may take before it gives up (the queue holds 16; events keep
/// arriving while it drains).
const EVQ_DRAIN_LIMIT: usize = 256;

/// An opened device.
pub struct Device<P: Backend> {
    p: P,
    rings: RingOptions,
    qps: u32,
    ev_count: u32,
    ev_entries: u32,
    blocks: Vec<FoundBlock>,
    sq_pi: u32,
    /// Last SQ_CI read from the device (refreshed when the ring looks full).
    sq_ci: u32,
    cq_ci: u32,
}

fn bad(what: &'static str, value: u64) -> DriverError {
    DriverError::BadArgument { what, value }
}

impl<P: Backend> Device<P> {
    /// Reset the device, check its register blocks and set up the rings.
    pub fn open(backend: P, rings: RingOptions) -> Result<Self, DriverError> {
        for (what, n) in [
            ("sq_entries", rings.sq_entries),
            ("cq_entries", rings.cq_entries),
        ] {
            if n == 0 || !n.is_power_of_two() {
                return Err(bad(what, n.into()));
            }
        }
        let end = rings.base
            + u64::from(rings.sq_entries) * WQE_BYTES as u64
            + u64::from(rings.cq_entries) * CQE_BYTES as u64;
        if end > backend.dma_size() {
            return Err(bad("ring memory end", end));
        }
        let mut d = Device {
            p: backend,
            rings,
            qps: 0,
            ev_count: 0,
            ev_entries: 0,
            blocks: Vec::new(),
            sq_pi: 0,
            sq_ci: 0,
            cq_ci: 0,
        };
        d.reset()?;
        Ok(d)
    }

    /// Pulse reset, walk and check the register blocks, read the config facts, clear the ring
    /// memory and program the rings. Outstanding work is lost (no completions).
    pub fn reset(&mut self) -> Result<&[FoundBlock], DriverError> {
        self.p.reset_pulse()?;
        self.blocks = check_blocks(&self.p).map_err(|e| self.fix(e))?;
        self.qps = self.rd(regs::csr::QPS)?;
        self.ev_count = self.rd(regs::evt::EV_COUNT)?;
        self.ev_entries = self.rd(regs::evt::EV_ENTRIES)?;
        let r = self.rings;
        let cq_base = self.cq_base();
        let zeros = vec![0u8; (cq_base - r.base) as usize + r.cq_entries as usize * CQE_BYTES];
        self.p.dma_write(r.base, &zeros)?;
        self.wr(db::SQ_BASE_LO, r.base as u32)?;
        self.wr(db::SQ_BASE_HI, (r.base >> 32) as u32)?;
        self.wr(db::SQ_SIZE, r.sq_entries)?;
        self.wr(db::CQ_BASE_LO, cq_base as u32)?;
        self.wr(db::CQ_BASE_HI, (cq_base >> 32) as u32)?;
        self.wr(db::CQ_SIZE, r.cq_entries)?;
        (self.sq_pi, self.sq_ci, self.cq_ci) = (0, 0, 0);
        Ok(&self.blocks)
    }

    fn cq_base(&self) -> u64 {
        self.rings.base + u64::from(self.rings.sq_entries) * WQE_BYTES as u64
    }

    /// A bus error through the backend's classification (timeout vs refusal).
    fn fix(&self, e: DriverError) -> DriverError {
        match e {
            DriverError::Bus(b) => self.p.classify(b),
            e => e,
        }
    }
    fn rd(&self, reg: Reg) -> Result<u32, DriverError> {
        read(&self.p, reg).map_err(|e| self.fix(e))
    }
    fn wr(&self, reg: Reg, v: u32) -> Result<(), DriverError> {
        write(&self.p, reg, v).map_err(|e| self.fix(e))
    }

    /// The backend (the cosim device: step it, drain its wire).
    pub fn backend(&self) -> &P {
        &self.p
    }
    /// QPs the device serves (CSR.QPS).
    pub fn qps(&self) -> u32 {
        self.qps
    }
    /// The blocks found by the last reset.
    pub fn blocks(&self) -> &[FoundBlock] {
        &self.blocks
    }

    fn check_qp(&self, qp: u32) -> Result<(), DriverError> {
        if qp >= self.qps {
            return Err(DriverError::QpOutOfRange { qp, qps: self.qps });
        }
        Ok(())
    }

    fn qp_op(&self, qp: u32, op: u32) -> Result<(), DriverError> {
        self.check_qp(qp)?;
        self.wr(regs::qp::QP_SEL, qp)?;
        self.wr(regs::qp::QP_CTRL, op)
    }

    /// Reset QP `qp` to `init_psn` (its next PSN to send and to expect) and enable it.
    pub fn create_qp(&self, qp: u32, init_psn: u32) -> Result<(), DriverError> {
        self.reset_qp(qp, init_psn)?;
        self.wr(regs::qp::QP_CTRL, QP_OP_ENABLE)
    }

    /// Reset QP `qp` to `init_psn`; its outstanding WRs complete as `Flushed`. Keeps its
    /// enable state.
    pub fn reset_qp(&self, qp: u32, init_psn: u32) -> Result<(), DriverError> {
        self.check_qp(qp)?;
        if init_psn > regs::qp::QP_INIT_PSN.mask() {
            return Err(bad("init_psn", init_psn.into()));
        }
        self.wr(regs::qp::QP_SEL, qp)?;
        self.wr(regs::qp::QP_INIT_PSN, init_psn)?;
        self.wr(regs::qp::QP_CTRL, QP_OP_RESET)
    }

    pub fn enable_qp(&self, qp: u32) -> Result<(), DriverError> {
        self.qp_op(qp, QP_OP_ENABLE)
    }

    /// Stop sending on `qp`; WQEs fetched while it is disabled complete as `QpDisabled`.
    pub fn disable_qp(&self, qp: u32) -> Result<(), DriverError> {
        self.qp_op(qp, QP_OP_DISABLE)
    }

    /// QP_STATUS of `qp`: (enabled, in reset, error).
    pub fn qp_status(&self, qp: u32) -> Result<(bool, bool, bool), DriverError> {
        self.check_qp(qp)?;
        self.wr(regs::qp::QP_SEL, qp)?;
        let s = self.rd(regs::qp::QP_STATUS)?;
        let f = |fl: crate::Field| fl.get(s) == 1;
        use regs::qp::qp_status::*;
        Ok((f(ENABLED), f(IN_RESET), f(ERROR)))
    }

    /// Load `evs` into EV table entries 0.. (each LOAD leaves its entry GOOD).
    pub fn load_ev_profile(&self, evs: &[u32]) -> Result<(), DriverError> {
        if evs.is_empty() || evs.len() as u64 > u64::from(self.ev_count) {
            return Err(bad("EV profile length", evs.len() as u64));
        }
        for (i, &ev) in evs.iter().enumerate() {
            self.wr(regs::evt::EV_INDEX, i as u32)?;
            self.wr(regs::evt::EV_VALUE, ev)?;
            self.wr(regs::evt::EV_OP, EV_OP_LOAD)?;
        }
        Ok(())
    }

    fn ev_op(&self, idx: u32, op: u32) -> Result<(), DriverError> {
        if idx >= self.ev_count {
            return Err(bad("EV index", idx.into()));
        }
        self.wr(regs::evt::EV_INDEX, idx)?;
        self.wr(regs::evt::EV_OP, op)
    }

    /// Take EV table entry `idx` out of spraying (DENIED).
    pub fn deny_ev(&self, idx: u32) -> Result<(), DriverError> {
        self.ev_op(idx, EV_OP_DENY)
    }

    /// Return a DENIED entry to GOOD.
    pub fn allow_ev(&self, idx: u32) -> Result<(), DriverError> {
        self.ev_op(idx, EV_OP_ALLOW)
    }

    /// EV_STATE.STATE of entry `idx` (0 GOOD, 1 SKIP, 2 ASSUMED_BAD, 3 DENIED).
    pub fn ev_state(&self, idx: u32) -> Result<u32, DriverError> {
        if idx >= self.ev_entries {
            return Err(bad("EV index", idx.into()));
        }
        self.wr(regs::evt::EV_INDEX, idx)?;
        read_field(&self.p, regs::evt::EV_STATE, regs::evt::ev_state::STATE)
            .map_err(|e| self.fix(e))
    }

    const XPORT: [Reg; 8] = [
        regs::xport::MPR,
        regs::xport::RTO_EXP,
        regs::xport::RTO_LINEAR_RETRIES,
        regs::xport::RTO_BACKOFF_RETRIES,
        regs::xport::RTX_OOO_THRESHOLD,
        regs::xport::SACK_COALESCE_BYTES,
        regs::xport::SPRAY_POLICY,
        regs::xport::EV_MIN_ACTIVE,
    ];

    /// Write every XPORT register (a value wider than its register is refused before any
    /// write: `TooWide`).
    pub fn set_transport(&self, t: &XportParams) -> Result<(), DriverError> {
        let v = [
            t.mpr,
            t.rto_exp,
            t.rto_linear_retries,
            t.rto_backoff_retries,
            t.rtx_ooo_threshold,
            t.sack_coalesce_bytes,
            t.spray_policy,
            t.ev_min_active,
        ];
        for (r, &x) in Self::XPORT.iter().zip(&v) {
            if x & !r.mask() != 0 {
                return Err(DriverError::TooWide {
                    block: r.block,
                    reg: r.name,
                    value: x,
                    width: r.width,
                });
            }
        }
        for (r, &x) in Self::XPORT.iter().zip(&v) {
            self.wr(*r, x)?;
        }
        Ok(())
    }

    /// Read the XPORT registers back.
    pub fn transport(&self) -> Result<XportParams, DriverError> {
        let mut v = [0u32; 8];
        for (r, x) in Self::XPORT.iter().zip(v.iter_mut()) {
            *x = self.rd(*r)?;
        }
        Ok(XportParams {
            mpr: v[0],
            rto_exp: v[1],
            rto_linear_retries: v[2],
            rto_backoff_retries: v[3],
            rtx_ooo_threshold: v[4],
            sack_coalesce_bytes: v[5],
            spray_policy: v[6],
            ev_min_active: v[7],
        })
    }

    /// SQ slots free (reads SQ_CI from the device when the cached value says full).
    pub fn sq_free(&mut self) -> Result<u32, DriverError> {
        let n = self.rings.sq_entries;
        if self.sq_pi.wrapping_sub(self.sq_ci) >= n {
            self.sq_ci = self.rd(db::SQ_CI)?;
        }
        Ok(n - self.sq_pi.wrapping_sub(self.sq_ci).min(n))
    }

    /// Post an RDMA WRITE of `len` bytes to `remote_va` / `rkey` on `qp` (written to the SQ
    /// ring; the device sees it at the next [`Device::ring_doorbell`]). Refuses a QP out of
    /// range, a zero length, and a full ring (`RingFull`).
    pub fn post_write(
        &mut self,
        qp: u32,
        len: u32,
        remote_va: u64,
        rkey: u32,
        wr_id: u64,
    ) -> Result<(), DriverError> {
        self.check_qp(qp)?;
        if len == 0 {
            return Err(bad("length", 0));
        }
        self.post_wqe(&Wqe::write(qp as u16, len, remote_va, rkey, wr_id))
    }

    /// Write any WQE to the SQ ring, unchecked (the device validates it and answers a bad one
    /// with an error CQE). Refuses only a full ring.
    pub fn post_wqe(&mut self, w: &Wqe) -> Result<(), DriverError> {
        if self.sq_free()? == 0 {
            return Err(DriverError::RingFull {
                ring: "SQ",
                entries: self.rings.sq_entries,
            });
        }
        let slot = self.sq_pi & (self.rings.sq_entries - 1);
        let addr = self.rings.base + u64::from(slot) * WQE_BYTES as u64;
        self.p.dma_write(addr, &w.encode())?;
        self.sq_pi = self.sq_pi.wrapping_add(1);
        Ok(())
    }

    /// Tell the device the SQ producer index.
    pub fn ring_doorbell(&self) -> Result<(), DriverError> {
        self.wr(db::SQ_PI, self.sq_pi)
    }

    /// WQEs written to the SQ ring since open (free-running).
    pub fn sq_producer(&self) -> u32 {
        self.sq_pi
    }

    /// Every new CQE (phase bit of the current lap), in ring order; returns the space to the
    /// device with the CQ_CI doorbell when any was taken. A status code the driver does not
    /// know is `BadCqe`.
    pub fn poll_cq(&mut self) -> Result<Vec<Completion>, DriverError> {
        let mut out = Vec::new();
        let n = self.rings.cq_entries;
        loop {
            let slot = self.cq_ci & (n - 1);
            let mut b = [0u8; CQE_BYTES];
            self.p
                .dma_read(self.cq_base() + u64::from(slot) * CQE_BYTES as u64, &mut b)?;
            let c = Cqe::decode(&b);
            if c.phase != cq_phase(self.cq_ci, n) {
                break;
            }
            let status = CqeStatus::from_u8(c.status).ok_or(DriverError::BadCqe {
                index: self.cq_ci,
                status: c.status,
            })?;
            out.push(Completion {
                wr_id: c.wr_id,
                qp: c.qp,
                status,
                bytes: c.bytes,
            });
            self.cq_ci = self.cq_ci.wrapping_add(1);
            if out.len() as u32 == n {
                break;
            }
        }
        if !out.is_empty() {
            self.wr(db::CQ_CI, self.cq_ci)?;
        }
        Ok(out)
    }

    /// Every counter, read over MMIO.
    pub fn read_counters(&self) -> Result<Counters, DriverError> {
        let mut v = [0u32; 13];
        for (r, x) in Counters::CNT_REGS.iter().zip(v.iter_mut()) {
            *x = self.rd(*r)?;
        }
        Ok(Counters {
            pkts_sent: v[0],
            retransmits: v[1],
            trims: v[2],
            nack_trimmed: v[3],
            nack_trimmed_lasthop: v[4],
            nack_oor_window: v[5],
            nack_other: v[6],
            timeouts: v[7],
            out_of_window: v[8],
            rx_dropped: v[9],
            refused_ops: v[10],
            nscc_ev_drops: v[11],
            acks_sent: v[12],
            bad_access: self.rd(regs::csr::BAD_ACCESS)?,
            evq_drops: self.rd(regs::evq::EVQ_DROPS)?,
            wqe_errors: self.rd(db::WQE_ERRORS)?,
            db_errors: self.rd(db::DB_ERRORS)?,
        })
    }

    /// Pop and decode EV event queue entries until EVQ_HEAD reads not VALID.
    pub fn drain_ev_events(&self) -> Result<Vec<EvEvent>, DriverError> {
        use regs::evq::evq_head::*;
        let mut out = Vec::new();
        for _ in 0..EVQ_DRAIN_LIMIT {
            let h = self.rd(regs::evq::EVQ_HEAD)?;
            if VALID.get(h) == 0 {
                break;
            }
            out.push(EvEvent {
                index: EV_INDEX.get(h) as u8,
                state: STATE.get(h) as u8,
                cause: CAUSE.get(h) as u8,
            });
            self.wr(regs::evq::EVQ_POP, 1)?;
        }
        Ok(out)
    }
}
