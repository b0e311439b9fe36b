//! Golden model of `mrc_core`: the MRC transport core. It composes the cycle models of
//! `ev_spray_arbiter` (one EV table, shared), `sack_tx_scoreboard`, `sack_rx_tracker` and
//! `nscc_window` (one scoreboard and tracker per QP, `NicConfig::qps` of them; one NSCC window
//! with a context per QP) and `mrc_csr`, with the glue
//! below; the RTL (`mrc_hdl::mrc_core`) is the same glue around the same blocks, and the cosim
//! proves the two equal every cycle.
//!
//! ```text
//!  sq_* (post bytes) --> pend[q] --segment by MTU--+            +--> tx_* header (qp, psn, ev,
//!                                                  v            |    plane, rtx, len, last)
//!  arbiter grants --> EV FIFO (8) ------------> TX pick --SEND--+--> scoreboard[q]
//!                                   (rtx first, then new; rotating over QPs; cwnd gate)
//!  rx_* header --> R stage --DATA--> tracker[q] --> ack_* (SACK / NACK out)
//!                          --SACK/NACK--> scoreboard[q] --fb--> arbiter, EV event queue
//!                                              | acked bytes, timeouts, trims
//!                                              v
//!                                 NSCC event slot[q] --> nscc_window (shared) --> cwnd[q]
//!  MMIO <--> mrc_csr: XPORT/EVT/QP registers drive the blocks; NSCC/CNT/EVQ read back
//! ```
//!
//! Cycle contract (as every block): `step(inputs)` is one rising edge, the outputs are the
//! registers after it. Inside a step every glue decision reads the blocks' *registered*
//! outputs (their `outputs()` before the edge), so the composition adds no combinational path
//! through a block. Rules, in the order they are decided each cycle:
//!
//! - **Receive.** An `rx_*` header is refused (counted in `RX_DROPPED`) if its QP is out of
//!   range or disabled or its kind is not DATA/SACK/NACK; otherwise it is registered (R stage)
//!   and, next cycle, goes to that QP's tracker (DATA) or scoreboard (SACK/NACK).
//! - **B stage.** Every scoreboard op (SACK/NACK, TICK, SEND) is decided from registered
//!   state and registered once more before the scoreboard's ports, so neither the transmit
//!   pick nor the receive decode runs into the scoreboard's S0 logic. A scoreboard therefore
//!   sees an op one cycle after the core decided it (the header goes out at the decision);
//!   `RTX_HOLD` and `SACK_TO_ACKED` count that cycle. An op decided while its QP is held in
//!   reset is dropped.
//! - **One scoreboard op per QP per cycle**, by priority: the R-stage SACK/NACK; else a TICK
//!   (only in a cycle with no SACK/NACK anywhere, lowest QP with a tick pending, so at most
//!   one feedback-producing op enters the scoreboards per cycle and their fixed-latency
//!   feedback never collides); else a SEND.
//! - **Transmit.** Needs an EV in the FIFO. A QP with `rtx_valid` (and no retransmit in the
//!   last `RTX_HOLD` cycles: the scoreboard's pick lags its SEND by a few cycles) goes first;
//!   else a QP with pending bytes whose scoreboard `can_send` and whose `inflight + len <= cwnd`
//!   (`inflight` = min(nxt - una, INFL_PKTS_CAP) x MTU, registered: the PSNs outstanding;
//!   0 from a QP reset until its blocks have left reset).
//!   That cwnd check is registered: it is formed from the previous cycle's inflight, pending
//!   bytes and cwnd, and a new send in that cycle counts as MTU more in flight and its length
//!   less pending; bytes posted in that cycle count one cycle later.
//!   Both picks rotate from the QP after the last one served. New data is segmented by the MTU;
//!   a retransmit header carries `len` 0 (the packet builder knows the message layout).
//! - **Spray.** The arbiter is asked for a grant whenever the FIFO plus requests in flight is
//!   below `EV_FIFO_DEPTH`; grants land in the FIFO. An EV retired after its grant can still
//!   leave with up to `EV_FIFO_DEPTH` packets.
//! - **Feedback** of the scoreboards goes to the arbiter. Every kind but ACK_GOOD and
//!   TRIMMED_LASTHOP is also pushed to the EV event queue (`EVQ_DEPTH`; when full the event is
//!   dropped, `EVQ_DROPS` counts it and `EVQ_STATUS.OVERFLOW` sets).
//! - **NSCC events**: one slot per QP in front of `nscc_window`. Candidates this cycle: RTO (a
//!   timeout feedback), trim NACK (`bytes` = MTU), ACK (a SACK's `acked_bytes` when the
//!   scoreboard reports them, with that SACK's ECN and RTT sample), TICK (`tick` input). The
//!   highest-priority candidate (RTO > trim > ACK > TICK) is registered (the losers counted
//!   with it) and offered to the slot the next clock (the candidates' sources and the slot,
//!   which sits by the window, are far apart on the die): an ACK merges
//!   into a waiting ACK (bytes add, ECN ORs, a non-zero RTT replaces); an ACK replaces a waiting
//!   TICK; a TICK only fills an empty slot; anything else that does not fit is dropped and
//!   counted in `NSCC_EV_DROPS` two clocks after the candidate's (a loser too; ticks are not
//!   counted).
//! - **The shared window**: one `nscc_window`, a context per QP. The glue's owner is the
//!   window's as of last clock. Its slot is offered when no other QP's slot waits, or when it
//!   has had no event since it was switched to; otherwise a switch to the first waiting QP
//!   after the owner is asked for (acted on from idle, two clocks). Each QP's cwnd, maxwnd and
//!   base RTT (the gate, the CSR readback) are copies loaded at the end of its events.
//! - **RTT samples**: one timed PSN per QP (set by a new send when none is timed, cancelled by
//!   its retransmission, Karn); a SACK whose cumulative ack covers it yields `now - sent`.
//! - **QP control** (`QP_CTRL` on `QP_SEL`): enable, disable, reset. A reset clears the QP's
//!   glue state at once and holds its blocks in reset the next cycle, with `QP_INIT_PSN` as of
//!   the reset's clock (latched: `reset_psn`), so nxt, una and the tracker's expected PSN
//!   agree however `QP_INIT_PSN` changes after it. A core `rst` resets everything (every QP
//!   to PSN 0) and disables every QP, a clock after it is sampled: the RTL registers it at
//!   the boundary into a copy per block (a reset tree).

use crate::ev_spray_arbiter::{ArbiterInputs, EvSprayArbiter, FeedbackKind, CTL_LOAD};
use crate::mrc_csr::{CsrInputs, MrcCsr};
use crate::nscc::{NsccWindow, WindowInputs, KIND_ACK, KIND_NACK, KIND_RTO, KIND_TICK};
use crate::sack_rx_tracker::{SackRxTracker, SharedRxTracker, TrackerInputs};
use crate::sack_tx_scoreboard::{
    SackTxScoreboard, TxInputs, NACK_PSN_OOR_WINDOW, NACK_TRIMMED, NACK_TRIMMED_LASTHOP, OP_NACK,
    OP_NOP, OP_SACK, OP_SEND, OP_TICK, PSN_MASK,
};
use mrc_config::NicConfig;

use mrc_config::core::{CORE_RO_REGS, CORE_RW_REGS};
pub use mrc_config::core::{
    EVQ_DEPTH, EV_FIFO_DEPTH, INFL_PKTS_CAP, RTX_HOLD, RX_DATA, RX_NACK, RX_SACK, SACK_TO_ACKED,
    WINDOW_MARGIN,
};

/// One cycle of inputs; field names are the RTL port names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CoreInputs {
    /// Synchronous and registered: the core resets in the clock after this one.
    pub rst: bool,
    // MMIO (the CSR block's AXI4-Lite-shaped port).
    pub wr_valid: bool,
    pub wr_addr: u32,
    pub wr_data: u32,
    pub wr_strb: u8,
    pub rd_valid: bool,
    pub rd_addr: u32,
    /// Free-running ns clock (NSCC time base and RTT samples).
    pub now_ns: u32,
    /// One pulse per scoreboard timer tick (1.024 us): TICK to every scoreboard and NSCC.
    pub tick: bool,
    /// Planes whose egress can take a packet (bit per plane).
    pub plane_ready: u8,
    /// Send queue: add `sq_bytes` to QP `sq_qp`'s pending bytes.
    pub sq_valid: bool,
    pub sq_qp: u8,
    pub sq_bytes: u32,
    /// Receive header path: one parsed header per clock.
    pub rx_valid: bool,
    pub rx_qp: u8,
    /// RX_DATA / RX_SACK / RX_NACK.
    pub rx_kind: u8,
    /// DATA: PSN; SACK: cumulative ack PSN; NACK: the NACKed PSN.
    pub rx_psn: u32,
    pub rx_len: u16,
    /// DATA: ECN-CE; SACK: ECN echo (for NSCC).
    pub rx_ecn: bool,
    pub rx_trimmed: bool,
    pub rx_lasthop: bool,
    pub rx_ackreq: bool,
    /// DATA: the EV value the packet carried.
    pub rx_ev: u32,
    /// SACK / NACK: the EV table index of the EV the acknowledged packet used.
    pub rx_ev_idx: u8,
    pub rx_offset: u16,
    pub rx_bitmap: u64,
    pub rx_m: u8,
    pub rx_rcvd_bytes: u32,
    pub rx_reason: u8,
}

impl CoreInputs {
    /// Nothing offered, every plane ready.
    pub fn idle() -> Self {
        CoreInputs {
            plane_ready: 0xFF,
            ..Default::default()
        }
    }
}

/// One cycle of outputs; field names are the RTL port names (`una` is a vector port, one per QP).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CoreOutputs {
    pub wr_ready: bool,
    pub rd_ready: bool,
    pub b_valid: bool,
    pub b_resp: u8,
    pub r_valid: bool,
    pub r_data: u32,
    pub r_resp: u8,
    /// Transmit header: one data packet to build and send.
    pub tx_valid: bool,
    pub tx_qp: u8,
    pub tx_psn: u32,
    pub tx_ev: u32,
    pub tx_ev_idx: u8,
    pub tx_plane: u8,
    pub tx_rtx: bool,
    /// New data: payload bytes; retransmit: 0.
    pub tx_len: u16,
    /// New data: the last segment of the bytes posted so far.
    pub tx_last: bool,
    /// ACK generation: a SACK or NACK to send for QP `ack_qp`.
    pub ack_valid: bool,
    pub ack_qp: u8,
    pub ack_nack: bool,
    pub ack_cack: u32,
    pub ack_offset: u16,
    pub ack_bitmap: u64,
    pub ack_m: u8,
    pub ack_ev: u32,
    pub ack_rcvd_bytes: u32,
    pub ack_reason: u8,
    pub ack_psn: u32,
    /// Per QP: oldest unacknowledged PSN (completions follow it).
    pub una: Vec<u32>,
}

/// Anything that steps like `mrc_core`: this model, or the Verilated RTL (the cosim crate),
/// or both in lockstep. The host driver's cosim backend and the network simulator's RTL
/// endpoint are written against it.
pub trait CoreSim {
    /// One rising clock edge; the outputs after it.
    fn step(&mut self, x: &CoreInputs) -> CoreOutputs;
    /// Queue pairs the core serves.
    fn qps(&self) -> usize;
    /// A reset pulse and the clock it acts in (`rst` is registered): afterwards the core is
    /// in its reset state and takes MMIO. The outputs after the second clock.
    fn reset(&mut self) -> CoreOutputs {
        self.step(&CoreInputs {
            rst: true,
            ..CoreInputs::idle()
        });
        self.step(&CoreInputs::idle())
    }
}

impl CoreSim for MrcCore {
    fn step(&mut self, x: &CoreInputs) -> CoreOutputs {
        MrcCore::step(self, x)
    }
    fn qps(&self) -> usize {
        self.q
    }
}

/// Two cores stepped together on the same inputs, every output compared each clock: the
/// Verilated RTL (`dut`) against the golden model (`model`), wherever a `CoreSim` goes (the
/// host driver's cosim backend, the network simulator's core endpoint). The outputs returned
/// are the DUT's; the first divergence is kept (and counted) for the caller to assert on.
pub struct Lockstep<D: CoreSim, M: CoreSim> {
    pub dut: D,
    pub model: M,
    pub cycle: u64,
    pub mismatches: u64,
    /// Transmit headers the RTL emitted (each compared with the model's).
    pub tx_headers: u64,
    pub first: Option<Box<CoreDivergence>>,
}

/// Where lockstep first disagreed.
#[derive(Debug, Clone)]
pub struct CoreDivergence {
    pub cycle: u64,
    pub inputs: CoreInputs,
    pub dut: CoreOutputs,
    pub model: CoreOutputs,
}

impl std::fmt::Display for CoreDivergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "mrc_core diverged at cycle {}", self.cycle)?;
        writeln!(f, "  inputs: {:?}", self.inputs)?;
        writeln!(f, "  rtl:    {:?}", self.dut)?;
        write!(f, "  model:  {:?}", self.model)
    }
}

impl<D: CoreSim, M: CoreSim> Lockstep<D, M> {
    pub fn new(dut: D, model: M) -> Self {
        assert_eq!(
            dut.qps(),
            model.qps(),
            "lockstep cores of different QP counts"
        );
        Lockstep {
            dut,
            model,
            cycle: 0,
            mismatches: 0,
            tx_headers: 0,
            first: None,
        }
    }
}

impl<D: CoreSim, M: CoreSim> CoreSim for Lockstep<D, M> {
    fn step(&mut self, x: &CoreInputs) -> CoreOutputs {
        let d = self.dut.step(x);
        let m = self.model.step(x);
        if d != m {
            self.mismatches += 1;
            if self.first.is_none() {
                self.first = Some(Box::new(CoreDivergence {
                    cycle: self.cycle,
                    inputs: *x,
                    dut: d.clone(),
                    model: m,
                }));
            }
        }
        self.cycle += 1;
        self.tx_headers += u64::from(d.tx_valid);
        d
    }
    fn qps(&self) -> usize {
        self.dut.qps()
    }
}

impl<T: CoreSim + ?Sized> CoreSim for Box<T> {
    fn step(&mut self, x: &CoreInputs) -> CoreOutputs {
        (**self).step(x)
    }
    fn qps(&self) -> usize {
        (**self).qps()
    }
}

/// A waiting NSCC event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Slot {
    valid: bool,
    kind: u8,
    bytes: u32,
    rtt: u32,
    ecn: bool,
}

/// Per-QP glue state.
#[derive(Debug, Clone, Copy, Default)]
struct QpGlue {
    en: bool,
    /// The QP's blocks are in reset this cycle (a QP_CTRL reset last cycle).
    rst_q: bool,
    pend: u32,
    /// Next new PSN (the scoreboard's `nxt` output lags a SEND by two cycles).
    nxt: u32,
    infl: u32,
    samp_v: bool,
    samp_psn: u32,
    samp_t: u32,
    slot: Slot,
    /// The slot's candidate, registered a clock before the slot takes it, and how many
    /// candidates lost to it that clock.
    cand: Slot,
    cand_dn: u32,
    hold: u8,
    tick_pend: bool,
    /// The window check for this cycle, registered last cycle (see the pick).
    win_ok: bool,
    /// The cwnd check for this cycle, registered last cycle (see the per-QP updates).
    fit: bool,
}

/// The registered receive header (R stage).
#[derive(Debug, Clone, Copy, Default)]
struct RxStage {
    valid: bool,
    x: CoreInputs,
}

/// A SACK on its way to its `acked_bytes`.
#[derive(Debug, Clone, Copy, Default)]
struct AckLine {
    valid: bool,
    qp: u8,
    ecn: bool,
    rtt: u32,
}

/// Core counters (the CNT block's RO registers the core owns).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CoreCounters {
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
    pub evq_drops: u32,
}

/// Vector indices of the CSR ports the core uses, looked up by register name.
#[derive(Debug, Clone)]
struct CsrIdx {
    rw: [usize; 12],
    ro: [usize; 22],
    wo_qp_ctrl: usize,
    wo_ev_op: usize,
    wo_evq_pop: usize,
    w1c_evq_status: usize,
}

/// Index into [`CORE_RW_REGS`].
mod rw {
    pub const QP_SEL: usize = 0;
    pub const QP_INIT_PSN: usize = 1;
    pub const MPR: usize = 2;
    pub const RTO_EXP: usize = 3;
    pub const RTO_LIN: usize = 4;
    pub const RTO_BACK: usize = 5;
    pub const RTX_THR: usize = 6;
    pub const COALESCE: usize = 7;
    pub const POLICY: usize = 8;
    pub const MIN_ACTIVE: usize = 9;
    pub const EV_INDEX: usize = 10;
    pub const EV_VALUE: usize = 11;
}

impl CsrIdx {
    fn new(csr: &MrcCsr) -> Self {
        let p = csr.ports();
        let find = |v: &[(&str, &str)], key: (&str, &str)| {
            v.iter()
                .position(|&k| k == key)
                .unwrap_or_else(|| panic!("register {}.{} missing from the map", key.0, key.1))
        };
        let mut rw = [0; 12];
        for (i, k) in CORE_RW_REGS.iter().enumerate() {
            rw[i] = find(&p.rw, *k);
        }
        let mut ro = [0; 22];
        for (i, k) in CORE_RO_REGS.iter().enumerate() {
            ro[i] = find(&p.ro, *k);
        }
        assert_eq!(
            p.ro.len(),
            22,
            "every RO register of the map is driven by the core"
        );
        CsrIdx {
            rw,
            ro,
            wo_qp_ctrl: find(&p.wo, ("QP", "QP_CTRL")),
            wo_ev_op: find(&p.wo, ("EVT", "EV_OP")),
            wo_evq_pop: find(&p.wo, ("EVQ", "EVQ_POP")),
            w1c_evq_status: find(&p.w1c, ("EVQ", "EVQ_STATUS")),
        }
    }
}

/// The cycle model.
#[derive(Debug, Clone)]
pub struct MrcCore {
    cfg: NicConfig,
    q: usize,
    idx: CsrIdx,
    csr: MrcCsr,
    arb: EvSprayArbiter,
    sb: Vec<SackTxScoreboard>,
    /// NSCC event drops of the last cycle, added to `NSCC_EV_DROPS` in this one.
    nscc_drops_q: u32,
    /// A post refused last cycle, added to `REFUSED_OPS` in this one.
    sq_refused_q: bool,
    /// The window's owner last cycle, and "the owner has not had an event since it was
    /// switched to" (so a switch is always followed by one of its events: no livelock when
    /// every slot waits).
    cc_own_d: usize,
    cc_fresh: bool,
    rx: SharedRxTracker,
    /// One window for every QP: a context per QP (see `NsccWindow`).
    cc: NsccWindow,
    glue: Vec<QpGlue>,
    r: RxStage,
    line: [AckLine; SACK_TO_ACKED],
    /// EV FIFO: (idx, plane, ev), circular.
    fifo: [(u8, u8, u32); EV_FIFO_DEPTH],
    f_head: usize,
    f_count: usize,
    /// Arbiter requests whose grant has not come back.
    preq: usize,
    rr: usize,
    evq: [u32; EVQ_DEPTH],
    e_head: usize,
    e_count: usize,
    /// Shadow of the EV values loaded, for EV_READ_VALUE (a 256 x 32 RAM, read registered).
    shadow: Vec<u32>,
    evrd: u32,
    cnt: CoreCounters,
    out: CoreOutputs,
    /// `rst` as sampled last clock: the reset that acts in this one.
    rst_in: bool,
    /// The PSN a reset restores (every block's `init_psn`): QP_INIT_PSN as of the clock a
    /// QP_CTRL reset is taken in (nxt takes it then too), 0 from the clock `rst` is sampled
    /// in. So a QP leaves reset with nxt, una and the tracker's cack + 1 equal, even if
    /// QP_INIT_PSN is rewritten while it is in reset.
    reset_psn: u32,
}

fn sign24(x: u32) -> bool {
    x & 0x80_0000 != 0
}

impl MrcCore {
    pub fn new(cfg: &NicConfig) -> Self {
        let q = cfg.qps as usize;
        let csr = MrcCsr::new(cfg);
        let idx = CsrIdx::new(&csr);
        MrcCore {
            cfg: cfg.clone(),
            q,
            idx,
            csr,
            arb: EvSprayArbiter::new(cfg),
            sb: (0..q).map(|_| SackTxScoreboard::new(cfg)).collect(),
            nscc_drops_q: 0,
            sq_refused_q: false,
            cc_own_d: 0,
            cc_fresh: false,
            rx: SharedRxTracker::new(cfg),
            cc: NsccWindow::new(cfg),
            glue: vec![QpGlue::default(); q],
            r: RxStage::default(),
            line: [AckLine::default(); SACK_TO_ACKED],
            fifo: [(0, 0, 0); EV_FIFO_DEPTH],
            f_head: 0,
            f_count: 0,
            preq: 0,
            rr: 0,
            evq: [0; EVQ_DEPTH],
            e_head: 0,
            e_count: 0,
            shadow: vec![0; 256],
            evrd: 0,
            cnt: CoreCounters::default(),
            out: CoreOutputs {
                una: vec![0; q],
                rd_ready: true,
                wr_ready: true,
                ..Default::default()
            },
            rst_in: false,
            reset_psn: 0,
        }
    }

    pub fn qps(&self) -> usize {
        self.q
    }

    pub fn outputs(&self) -> &CoreOutputs {
        &self.out
    }

    pub fn counters(&self) -> &CoreCounters {
        &self.cnt
    }

    /// The register map this core's CSR block decodes.
    pub fn csr(&self) -> &MrcCsr {
        &self.csr
    }

    /// Per-QP blocks, for tests that look inside.
    pub fn scoreboard(&self, qp: usize) -> &SackTxScoreboard {
        &self.sb[qp]
    }
    pub fn tracker(&self, qp: usize) -> &SackRxTracker {
        self.rx.context(qp)
    }
    /// The NSCC window every QP shares.
    pub fn window(&self) -> &NsccWindow {
        &self.cc
    }
    /// The EV event queue's head slot and length.
    pub fn evq_state(&self) -> (usize, usize) {
        (self.e_head, self.e_count)
    }
    pub fn enabled(&self, qp: usize) -> bool {
        self.glue[qp].en
    }

    fn rotating_first(&self, elig: &[bool]) -> Option<usize> {
        (self.rr..self.q)
            .find(|&i| elig[i])
            .or_else(|| (0..self.rr).find(|&i| elig[i]))
    }

    /// One rising clock edge.
    pub fn step(&mut self, x: &CoreInputs) -> CoreOutputs {
        let xi = CoreInputs {
            rst: self.rst_in,
            ..*x
        };
        let o = self.edge(&xi);
        self.rst_in = x.rst;
        if x.rst {
            self.reset_psn = 0;
        }
        o
    }

    /// The edge with the registered reset in `x.rst`. (Indexed loops: each QP's blocks, glue
    /// and vectors line up.)
    #[allow(clippy::needless_range_loop)]
    fn edge(&mut self, x: &CoreInputs) -> CoreOutputs {
        let q = self.q;
        let mtu = self.cfg.mtu;
        let csr_o = self.csr.outputs().clone();
        let arb_o = *self.arb.outputs();
        let sb_o: Vec<_> = self.sb.iter().map(|b| *b.outputs()).collect();
        let rx_o = *self.rx.outputs();
        let cc_ready = self.cc.ready();
        let cc_owner = self.cc.owner();
        // Each QP's window as of its last event (the RTL keeps a copy per QP), before the step.
        let cwnd: Vec<u32> = (0..q).map(|i| self.cc.shown_ctx(i).cwnd).collect();
        // NSCC readback (CWND, MAXWND, BASE_RTT) from the registered copies, before the step.
        let cc_show: Vec<[u32; 3]> = (0..q)
            .map(|i| {
                let s = self.cc.shown_ctx(i);
                [s.cwnd, s.maxwnd, s.base_rtt]
            })
            .collect();
        let rwv = |i: usize| csr_o.rw[self.idx.rw[i]];
        let qp_sel = rwv(rw::QP_SEL) as usize;
        let sel_ok = qp_sel < q;
        let init_psn = rwv(rw::QP_INIT_PSN) & PSN_MASK;
        let reset_psn = self.reset_psn;
        let ev_index = rwv(rw::EV_INDEX) as u8;
        let ev_value = rwv(rw::EV_VALUE);
        let mut g = self.glue.clone();
        let mut cnt = self.cnt;

        // ---- QP control (the CSR's registered WO strobe) --------------------------------
        for gl in g.iter_mut() {
            gl.rst_q = false;
        }
        let ctrl_stb = csr_o.wo_stb[self.idx.wo_qp_ctrl];
        let ctrl_op = csr_o.wo_data[self.idx.wo_qp_ctrl] & 3;
        if ctrl_stb && ctrl_op != 0 && !sel_ok {
            cnt.refused_ops = cnt.refused_ops.wrapping_add(1);
        }
        let sub_rst: Vec<bool> = (0..q).map(|i| x.rst || self.glue[i].rst_q).collect();

        // ---- receive: the R stage feeds the blocks; the input is checked and registered ---
        let r = self.r;
        let rx_op = r.valid && (r.x.rx_kind == RX_SACK || r.x.rx_kind == RX_NACK);
        let a_qp = r.x.rx_qp as usize;
        let rx_ok = x.rx_valid
            && (x.rx_qp as usize) < q
            && (RX_DATA..=RX_NACK).contains(&x.rx_kind)
            && self.glue[(x.rx_qp as usize).min(q - 1)].en;
        if x.rx_valid && !rx_ok {
            cnt.rx_dropped = cnt.rx_dropped.wrapping_add(1);
        }
        if r.valid && r.x.rx_kind == RX_DATA && r.x.rx_trimmed {
            cnt.trims = cnt.trims.wrapping_add(1);
        }
        let is_nack = r.valid && r.x.rx_kind == RX_NACK;
        let trim_nack =
            is_nack && (r.x.rx_reason == NACK_TRIMMED || r.x.rx_reason == NACK_TRIMMED_LASTHOP);
        if is_nack {
            let c = match r.x.rx_reason {
                NACK_TRIMMED => &mut cnt.nack_trimmed,
                NACK_TRIMMED_LASTHOP => &mut cnt.nack_trimmed_lasthop,
                NACK_PSN_OOR_WINDOW => &mut cnt.nack_oor_window,
                _ => &mut cnt.nack_other,
            };
            *c = c.wrapping_add(1);
        }

        // ---- scoreboard ops: rx op > tick > send ------------------------------------------
        let tick_qp = if rx_op {
            None
        } else {
            (0..q).find(|&i| self.glue[i].tick_pend)
        };
        let busy = |i: usize| (rx_op && a_qp == i) || tick_qp == Some(i);
        let len: Vec<u32> = (0..q).map(|i| self.glue[i].pend.min(mtu)).collect();
        let have_ev = self.f_count > 0;
        // The scoreboard refuses a SEND past its window, checked at its S1 against the una
        // of two steps before: with the B stage in between, that is the una seen here, so
        // the core's own check (with its margin) never sends what the scoreboard refuses.
        // That check is registered (`win_ok`, formed last cycle one PSN tighter: nxt grows
        // by at most one a cycle and una never falls), off the pick's path.
        let win_limit = self.cfg.sack_window_bits - WINDOW_MARGIN;
        let elig_rtx: Vec<bool> = (0..q)
            .map(|i| {
                let gl = &self.glue[i];
                have_ev
                    && gl.en
                    && !gl.rst_q
                    && !sb_o[i].qp_error
                    && sb_o[i].rtx_valid
                    && gl.hold == 0
                    && !busy(i)
            })
            .collect();
        let elig_new: Vec<bool> = (0..q)
            .map(|i| {
                let gl = &self.glue[i];
                have_ev
                    && gl.en
                    && !gl.rst_q
                    && !sb_o[i].qp_error
                    && gl.pend != 0
                    && sb_o[i].can_send
                    && gl.win_ok
                    && gl.fit
                    && !busy(i)
            })
            .collect();
        let (send_qp, send_rtx) = match self.rotating_first(&elig_rtx) {
            Some(i) => (Some(i), true),
            None => (self.rotating_first(&elig_new), false),
        };
        let (h_idx, h_plane, h_ev) = self.fifo[self.f_head];
        let send_psn = match send_qp {
            Some(i) if send_rtx => sb_o[i].rtx_psn,
            Some(i) => self.glue[i].nxt,
            None => 0,
        };

        // ---- feedback mux (at most one scoreboard reports per cycle) --------------------
        let fb_qp = (0..q).find(|&i| sb_o[i].fb_valid);
        let (fb_valid, fb_idx, fb_kind) = match fb_qp {
            Some(i) => (true, sb_o[i].fb_idx, sb_o[i].fb_kind),
            None => (false, 0, 0),
        };
        let timeout_qp = fb_qp.filter(|_| fb_kind == FeedbackKind::Timeout as u8);
        if timeout_qp.is_some() {
            cnt.timeouts = cnt.timeouts.wrapping_add(1);
        }

        // ---- step the scoreboards: this cycle's op enters their I stage (the B stage) -------
        for i in 0..q {
            let op = if rx_op && a_qp == i {
                if r.x.rx_kind == RX_SACK {
                    OP_SACK
                } else {
                    OP_NACK
                }
            } else if tick_qp == Some(i) {
                OP_TICK
            } else if send_qp == Some(i) {
                OP_SEND
            } else {
                OP_NOP
            };
            // An op decided while the QP is held in reset is dropped, as its blocks would.
            let tx = TxInputs {
                rst: sub_rst[i],
                init_psn: reset_psn,
                op: if sub_rst[i] { OP_NOP } else { op },
                psn: if op == OP_SEND {
                    send_psn
                } else {
                    r.x.rx_psn & PSN_MASK
                },
                ev_idx: if op == OP_SEND { h_idx } else { r.x.rx_ev_idx },
                cack: r.x.rx_psn & PSN_MASK,
                offset: r.x.rx_offset,
                bitmap: r.x.rx_bitmap,
                m: r.x.rx_m,
                rcvd_bytes: r.x.rx_rcvd_bytes & PSN_MASK,
                reason: r.x.rx_reason,
                rto_exp: rwv(rw::RTO_EXP) as u8,
                rto_linear_retries: rwv(rw::RTO_LIN) as u8,
                rto_backoff_retries: rwv(rw::RTO_BACK) as u8,
                rtx_ooo_threshold: rwv(rw::RTX_THR) as u16,
            };
            // The scoreboard's I stage registers the op (the B stage): it acts next cycle.
            self.sb[i].step(&tx);
        }

        // ---- step the receive tracker (one for every QP); the ACK path -----------------------
        let rx_data = r.valid && r.x.rx_kind == RX_DATA && a_qp < q;
        self.rx.step(&TrackerInputs {
            rst: x.rst,
            init_psn: reset_psn,
            pkt_valid: rx_data,
            pkt_psn: r.x.rx_psn & PSN_MASK,
            pkt_len: r.x.rx_len,
            pkt_ecn: r.x.rx_ecn,
            pkt_trimmed: r.x.rx_trimmed,
            pkt_lasthop: r.x.rx_lasthop,
            pkt_ackreq: r.x.rx_ackreq,
            pkt_ev: r.x.rx_ev,
            mpr: rwv(rw::MPR) as u8,
            ack_bytes: rwv(rw::COALESCE),
            pkt_qp: if rx_data { a_qp as u8 } else { 0 },
            qp_rst: (0..q).fold(0u16, |m, i| m | u16::from(sub_rst[i]) << i),
        });
        let ack_qp = (rx_o.sack_valid || rx_o.nack_valid).then_some(usize::from(rx_o.rsp_qp));
        if ack_qp.is_some() {
            cnt.acks_sent = cnt.acks_sent.wrapping_add(1);
        }
        cnt.out_of_window = rx_o.cnt_out_of_window;

        // ---- RTT sample of a SACK; the SACK -> acked_bytes line --------------------------
        let mut new_line = AckLine::default();
        if rx_op && r.x.rx_kind == RX_SACK {
            let gl = &mut g[a_qp];
            let mut rtt = 0;
            if gl.samp_v && !sign24(r.x.rx_psn.wrapping_sub(gl.samp_psn) & PSN_MASK) {
                rtt = x.now_ns.wrapping_sub(gl.samp_t);
                gl.samp_v = false;
            }
            new_line = AckLine {
                valid: true,
                qp: a_qp as u8,
                ecn: r.x.rx_ecn,
                rtt,
            };
        }
        let arrived = self.line[SACK_TO_ACKED - 1];

        // ---- NSCC event slots ------------------------------------------------------------
        // The shared window takes the owner's slot when no other QP's slot waits, or when the
        // owner has had no event since it was switched to; otherwise it switches (from idle)
        // to the next waiting QP after the owner. So QPs with waiting events take turns, one
        // event each, and a busy QP cannot starve the others (its ACKs merge meanwhile).
        // The glue's owner is the window's as of last clock (`cc_own_d`, as the RTL): it
        // differs only in the clock after a switch, when the window is loading and takes
        // nothing.
        let gown = self.cc_own_d;
        debug_assert!(gown == cc_owner || !cc_ready);
        let own = &self.glue[gown].slot;
        let others = (0..q).any(|i| i != gown && self.glue[i].slot.valid);
        let offer = own.valid && (!others || self.cc_fresh);
        let sw_to = (gown + 1..q)
            .chain(0..gown)
            .find(|&i| self.glue[i].slot.valid);
        let cc_in = WindowInputs {
            rst: x.rst,
            ev_valid: offer,
            ev_kind: own.kind,
            ev_bytes: own.bytes,
            ev_rtt_ns: own.rtt,
            ev_ecn: own.ecn,
            ev_penalty: 0,
            now_ns: x.now_ns,
            // (The core gates on its own registered cwnd check, not the window's can_send.)
            inflight: 0,
            next_len: 0,
            sw_valid: others,
            sw_ctx: sw_to.unwrap_or(0) as u8,
            ctx_clr: (0..q).fold(0, |m, i| m | u16::from(self.glue[i].rst_q) << i),
        };
        let mut drops = 0u32;
        for i in 0..q {
            let gl = &mut g[i];
            let taken = i == gown && offer && cc_ready;
            let mut slot = if taken { Slot::default() } else { gl.slot };
            let c_rto = timeout_qp == Some(i);
            let c_trim = trim_nack && a_qp == i;
            let acked = sb_o[i].acked_bytes;
            debug_assert!(
                acked == 0 || (arrived.valid && arrived.qp as usize == i),
                "acked_bytes of QP {i} without its SACK on the line (SACK_TO_ACKED)"
            );
            let c_ack = arrived.valid && arrived.qp as usize == i && acked != 0;
            let c_tick = x.tick;
            // Lower-priority non-TICK candidates lose this cycle; the winner is registered
            // (`cand`) and reaches the slot next clock.
            let n_hi = c_rto as u32 + c_trim as u32 + c_ack as u32;
            let cand = if c_rto {
                Slot {
                    valid: true,
                    kind: KIND_RTO,
                    ..Default::default()
                }
            } else if c_trim {
                Slot {
                    valid: true,
                    kind: KIND_NACK,
                    bytes: mtu,
                    ..Default::default()
                }
            } else if c_ack {
                Slot {
                    valid: true,
                    kind: KIND_ACK,
                    bytes: acked,
                    rtt: arrived.rtt,
                    ecn: arrived.ecn,
                }
            } else if c_tick {
                Slot {
                    valid: true,
                    kind: KIND_TICK,
                    ..Default::default()
                }
            } else {
                Slot::default()
            };
            // Last clock's candidate into the slot.
            let c = gl.cand;
            drops += gl.cand_dn;
            if c.valid {
                let free = !slot.valid || slot.kind == KIND_TICK;
                if c.kind == KIND_TICK {
                    if !slot.valid {
                        slot = c;
                    }
                } else if c.kind == KIND_ACK && slot.valid && slot.kind == KIND_ACK {
                    slot.bytes = slot.bytes.saturating_add(c.bytes).min(0xFF_FFFF);
                    slot.ecn |= c.ecn;
                    if c.rtt != 0 {
                        slot.rtt = c.rtt;
                    }
                } else if free {
                    slot = c;
                } else {
                    drops += 1;
                }
            }
            gl.slot = slot;
            gl.cand = cand;
            gl.cand_dn = n_hi.saturating_sub(1);
        }
        // Counted a clock late (the RTL registers each QP's drops, then sums them into the
        // counter), so the per-QP candidate logic does not run into a 32-bit add.
        cnt.nscc_ev_drops = cnt.nscc_ev_drops.wrapping_add(self.nscc_drops_q);
        let nscc_drops_n = drops;
        self.cc.step(&cc_in);

        // ---- per-QP glue updates -----------------------------------------------------------
        let sq_ok = x.sq_valid
            && (x.sq_qp as usize) < q
            && self.glue[(x.sq_qp as usize).min(q - 1)].en
            && !self.glue[(x.sq_qp as usize).min(q - 1)].rst_q
            && u64::from(self.glue[(x.sq_qp as usize).min(q - 1)].pend) + u64::from(x.sq_bytes)
                <= u64::from(u32::MAX);
        // A refused post is counted a clock late (the RTL registers the refusal, then adds
        // it), so the post's overflow check (pend + bytes, a carry chain) ends at one flop
        // beside it, not at the 32-bit counter.
        cnt.refused_ops = cnt.refused_ops.wrapping_add(u32::from(self.sq_refused_q));
        let sq_refused_n = x.sq_valid && !sq_ok;
        for i in 0..q {
            let old = self.glue[i];
            let gl = &mut g[i];
            let sent_new = send_qp == Some(i) && !send_rtx;
            let sent_rtx = send_qp == Some(i) && send_rtx;
            let sent_len = if sent_new { len[i] } else { 0 };
            gl.pend = old.pend - sent_len
                + if sq_ok && x.sq_qp as usize == i {
                    x.sq_bytes
                } else {
                    0
                };
            if sent_new {
                gl.nxt = (old.nxt + 1) & PSN_MASK;
            }
            // False while the QP is reset (nxt and una jump back to the initial PSN).
            gl.win_ok = !old.rst_q && old.nxt.wrapping_sub(sb_o[i].una) & PSN_MASK < win_limit - 1;
            // Next cycle's cwnd check, from this cycle's registers (so the pick reads a flop):
            // inflight + len <= cwnd, or after a new send now, inflight + MTU + the next
            // packet's length (pending less this packet) <= cwnd. Bytes posted now count from
            // the cycle after.
            let room = u64::from(cwnd[i]);
            gl.fit = if sent_new {
                u64::from(old.infl)
                    + u64::from(mtu)
                    + u64::from(old.pend.saturating_sub(mtu).min(mtu))
                    <= room
            } else {
                u64::from(old.infl) + u64::from(len[i]) <= room
            };
            // Bytes in flight from the PSNs outstanding (the last packet counts as a full MTU):
            // no accounting to drift, and nothing in flight reads 0. While the QP is reset
            // (its una and nxt jumping back to the initial PSN) nothing is in flight: 0, not the
            // difference of the jump's two halves (the new nxt against the old una).
            let out_pkts = (gl.nxt.wrapping_sub(sb_o[i].una) & PSN_MASK).min(INFL_PKTS_CAP);
            gl.infl = if old.rst_q { 0 } else { out_pkts * mtu };
            if sent_new && !gl.samp_v {
                gl.samp_v = true;
                gl.samp_psn = send_psn;
                gl.samp_t = x.now_ns;
            }
            if sent_rtx && gl.samp_v && gl.samp_psn == send_psn {
                gl.samp_v = false;
            }
            gl.hold = if sent_rtx {
                RTX_HOLD
            } else {
                old.hold.saturating_sub(1)
            };
            gl.tick_pend = (old.tick_pend && tick_qp != Some(i)) || x.tick;
            if ctrl_stb && sel_ok && qp_sel == i {
                match ctrl_op {
                    1 => gl.en = true,
                    2 => gl.en = false,
                    3 => {
                        self.reset_psn = init_psn;
                        *gl = QpGlue {
                            en: gl.en,
                            rst_q: true,
                            nxt: init_psn,
                            ..Default::default()
                        }
                    }
                    _ => {}
                }
            }
        }

        // ---- arbiter, EV FIFO ----------------------------------------------------------------
        let req = self.f_count + self.preq < EV_FIFO_DEPTH;
        let ev_op_stb = csr_o.wo_stb[self.idx.wo_ev_op];
        let ev_op = (csr_o.wo_data[self.idx.wo_ev_op] & 3) as u8;
        let ai = ArbiterInputs {
            rst: x.rst,
            req,
            plane_ready: x.plane_ready,
            fb_valid,
            fb_idx,
            fb_kind,
            ctl_op: if ev_op_stb { ev_op } else { 0 },
            ctl_idx: ev_index,
            ctl_ev: ev_value,
            policy: rwv(rw::POLICY) & 1 == 1,
            min_active: rwv(rw::MIN_ACTIVE) as u16,
            seed: self.cfg.qp_spray_seed(0),
            rd_idx: ev_index,
        };
        self.arb.step(&ai);
        let back = arb_o.grant_valid || arb_o.grant_none;
        let n_preq = self.preq + req as usize - back as usize;
        let popped = send_qp.is_some();
        let mut f_head = self.f_head;
        let mut f_count = self.f_count;
        if popped {
            f_head = (f_head + 1) % EV_FIFO_DEPTH;
            f_count -= 1;
        }
        if arb_o.grant_valid {
            let tail = (self.f_head + self.f_count) % EV_FIFO_DEPTH;
            self.fifo[tail] = (arb_o.grant_idx, arb_o.grant_plane, arb_o.grant_ev);
            f_count += 1;
        }

        // ---- EV event queue ------------------------------------------------------------------
        // (EVQ_HEAD shows the registered head: read it before this edge's push can reuse the slot.)
        let evq_head = if self.e_count > 0 {
            self.evq[self.e_head] | 1 << 31
        } else {
            0
        };
        let pop = csr_o.wo_stb[self.idx.wo_evq_pop]
            && csr_o.wo_data[self.idx.wo_evq_pop] & 1 == 1
            && self.e_count > 0;
        let kind = FeedbackKind::from_bits(fb_kind);
        let push = fb_valid
            && !matches!(
                kind,
                FeedbackKind::AckGood | FeedbackKind::NackTrimmedLastHop
            );
        let want = match kind {
            FeedbackKind::AlwaysSkip | FeedbackKind::Timeout => 2,
            FeedbackKind::ProbeNone => 0,
            _ => 1,
        };
        let mut e_head = self.e_head;
        let mut e_count = self.e_count;
        if pop {
            e_head = (e_head + 1) % EVQ_DEPTH;
            e_count -= 1;
        }
        let mut evq_drop = false;
        if push {
            if e_count < EVQ_DEPTH {
                let tail = (e_head + e_count) % EVQ_DEPTH;
                self.evq[tail] = u32::from(fb_idx) | want << 8 | u32::from(fb_kind) << 12;
                e_count += 1;
            } else {
                evq_drop = true;
                cnt.evq_drops = cnt.evq_drops.wrapping_add(1);
            }
        }

        // ---- EV value shadow (read registered, read-first) --------------------------------
        let n_evrd = self.shadow[ev_index as usize];
        if ev_op_stb && ev_op == CTL_LOAD && u32::from(ev_index) < self.cfg.total_evs() {
            self.shadow[ev_index as usize] = ev_value;
        }

        // ---- CSR: RO values from the registered state ------------------------------------
        let mut ci: CsrInputs = self.csr.idle_inputs();
        ci.rst = x.rst;
        ci.wr_valid = x.wr_valid;
        ci.wr_addr = x.wr_addr;
        ci.wr_data = x.wr_data;
        ci.wr_strb = x.wr_strb;
        ci.rd_valid = x.rd_valid;
        ci.rd_addr = x.rd_addr;
        let c = &self.cnt;
        let sel = |f: &dyn Fn(usize) -> u32| if sel_ok { f(qp_sel) } else { 0 };
        let status = sel(&|i| {
            u32::from(self.glue[i].en)
                | u32::from(self.glue[i].rst_q) << 1
                | u32::from(sb_o[i].qp_error) << 2
        });
        let ro_vals: [u32; 22] = [
            status,
            u32::from(arb_o.rd_state) | u32::from(arb_o.rd_pen) << 8,
            self.evrd,
            sel(&|i| cc_show[i][0]),
            sel(&|i| cc_show[i][1]),
            sel(&|i| cc_show[i][2]),
            c.pkts_sent,
            c.retransmits,
            c.trims,
            c.nack_trimmed,
            c.nack_trimmed_lasthop,
            c.nack_oor_window,
            c.nack_other,
            c.timeouts,
            c.out_of_window,
            c.rx_dropped,
            c.refused_ops,
            c.nscc_ev_drops,
            c.acks_sent,
            evq_head,
            self.e_count as u32,
            c.evq_drops,
        ];
        for (k, v) in ro_vals.iter().enumerate() {
            ci.ro[self.idx.ro[k]] = *v;
        }
        ci.w1c_set[self.idx.w1c_evq_status] = u32::from(evq_drop);
        let co = self.csr.step(&ci);

        // ---- counters of the transmit decision, outputs ---------------------------------------
        if send_qp.is_some() {
            cnt.pkts_sent = cnt.pkts_sent.wrapping_add(1);
            if send_rtx {
                cnt.retransmits = cnt.retransmits.wrapping_add(1);
            }
        }
        let mut o = CoreOutputs {
            wr_ready: co.wr_ready,
            rd_ready: co.rd_ready,
            b_valid: co.b_valid,
            b_resp: co.b_resp,
            r_valid: co.r_valid,
            r_data: co.r_data,
            r_resp: co.r_resp,
            una: self.sb.iter().map(|b| b.outputs().una).collect(),
            ..Default::default()
        };
        if let Some(i) = send_qp {
            o.tx_valid = true;
            o.tx_qp = i as u8;
            o.tx_psn = send_psn;
            o.tx_ev = h_ev;
            o.tx_ev_idx = h_idx;
            o.tx_plane = h_plane;
            o.tx_rtx = send_rtx;
            o.tx_len = if send_rtx { 0 } else { len[i] as u16 };
            o.tx_last = !send_rtx && len[i] == self.glue[i].pend;
        }
        if let Some(i) = ack_qp {
            let a = &rx_o;
            o.ack_valid = true;
            o.ack_qp = i as u8;
            o.ack_nack = a.nack_valid;
            o.ack_cack = a.cack_out;
            o.ack_offset = a.sack_offset;
            o.ack_bitmap = a.sack_bitmap;
            o.ack_m = a.sack_m;
            o.ack_ev = a.rsp_ev;
            o.ack_rcvd_bytes = a.rcvd_bytes;
            o.ack_reason = a.nack_reason;
            o.ack_psn = a.nack_psn;
        }

        // ---- commit ----------------------------------------------------------------------------
        let next_send = send_qp.map(|i| (i + 1) % q);
        self.line.rotate_right(1);
        self.line[0] = new_line;
        if x.rst {
            // Everything but the blocks (reset through their own `rst`) to power-on values.
            let csr = std::mem::replace(&mut self.csr, MrcCsr::new(&self.cfg));
            let arb = std::mem::replace(&mut self.arb, EvSprayArbiter::new(&self.cfg));
            let sb = std::mem::take(&mut self.sb);
            let rx = std::mem::take(&mut self.rx);
            let cc = std::mem::replace(&mut self.cc, NsccWindow::new(&self.cfg));
            let shadow = std::mem::take(&mut self.shadow);
            *self = MrcCore::new(&self.cfg);
            self.csr = csr;
            self.arb = arb;
            self.sb = sb;
            self.rx = rx;
            self.cc = cc;
            self.shadow = shadow;
            self.evrd = n_evrd;
            o = CoreOutputs {
                wr_ready: co.wr_ready,
                rd_ready: co.rd_ready,
                b_valid: co.b_valid,
                b_resp: co.b_resp,
                r_valid: co.r_valid,
                r_data: co.r_data,
                r_resp: co.r_resp,
                una: o.una,
                ..Default::default()
            };
            self.out = o.clone();
            return o;
        }
        self.glue = g;
        self.nscc_drops_q = nscc_drops_n;
        self.sq_refused_q = sq_refused_n;
        self.cc_fresh = (self.cc_fresh || cc_owner != self.cc_own_d) && !(offer && cc_ready);
        self.cc_own_d = cc_owner;
        self.r = RxStage {
            valid: rx_ok,
            x: *x,
        };
        self.f_head = f_head;
        self.f_count = f_count;
        self.preq = n_preq;
        if let Some(n) = next_send {
            self.rr = n;
        }
        self.e_head = e_head;
        self.e_count = e_count;
        self.evrd = n_evrd;
        self.cnt = cnt;
        self.out = o.clone();
        o
    }
}

#[cfg(test)]
mod tests;
