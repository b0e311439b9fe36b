//! `mrc_core`: the MRC transport core. The four blocks (`ev_spray_arbiter`, one shared;
//! `sack_tx_scoreboard`, one per QP; `sack_rx_tracker` and `nscc_window`, one each with a
//! context per QP) and `mrc_csr`,
//! with the glue of `model/src/mrc_core.rs` (its module doc is the contract: receive stage, one
//! scoreboard op per QP per cycle, transmit pick, EV FIFO, feedback, NSCC event slots, RTT
//! samples, QP control, EV event queue, counters). The cosim proves the two equal every cycle.
//!
//! Every scoreboard op goes straight to the scoreboard's ports, where its I stage registers it
//! (the B stage of the model's contract): the transmit pick and the receive decode end at a
//! flop instead of running on into the scoreboard's S0 slot decode, and the scoreboard decodes
//! the op's slot from that register.
//!
//! Every glue decision reads the sub-blocks' registered outputs; the core's own outputs are
//! registered (`tx_*`, `ack_*`) or a sub-block's registered output passed through (`una$i`,
//! the MMIO responses; `wr_ready`/`rd_ready` are the CSR block's decode of this clock's
//! `wr_valid`). The CSR ports the core uses are looked up by register name at elaboration
//! (`mrc_regmap::build`, in map order per access class, as `mrc_csr` numbers them) and selected
//! with one-iteration loops (`for j in k..k + 1`), so no runtime index is involved.
//!
//! The core's `rst` is registered at the boundary, a copy per block it resets (a reset tree:
//! arbiter, tracker, window, CSR, glue, each scoreboard), so the core resets in the clock after
//! `rst` is sampled. One flop had driven every set/reset pin of the core across the die
//! (seeds 1 and 3 at e6dfbf3: 11.5 ns, 10 ns of it routing). The copies are active high:
//! ECP5 flops take only an active-high set/reset, and Yosys made the inverted copies' resets
//! of enabled flops (the counters, the arbiter's) logic: +3,570 LUT4 at fe42fb0.

use crate::arith::{OverCapStep, SubSum24};
use crate::ev_spray_arbiter::EvSprayArbiter;
use crate::lut_ram::LutRam;
use crate::mrc_csr::MrcCsr;
use crate::nscc_window::NsccWindow;
use crate::sack_rx_tracker::SackRxTracker;
use crate::sack_tx_scoreboard::SackTxScoreboard;
use mrc_config::NicConfig;
use mrc_regmap::Access;
use rust_hdl::prelude::*;

use mrc_config::core::{CORE_RO_REGS, CORE_RW_REGS};
/// log2(INFL_PKTS_CAP + 1): the inflight product's cap compares read outs' bits.
const INFL_CAP_LOG2: u32 = 11;
const _: () = assert!(INFL_PKTS_CAP == (1 << INFL_CAP_LOG2) - 1);

pub use mrc_config::core::{
    EVQ_DEPTH, EV_FIFO_DEPTH, INFL_PKTS_CAP, RTX_HOLD, SACK_TO_ACKED, WINDOW_MARGIN,
};

#[derive(LogicBlock)]
pub struct MrcCore {
    pub clock: Signal<In, Clock>,
    /// Synchronous, registered: acts a clock after it is sampled (see the module doc).
    pub rst: Signal<In, Bit>,
    // MMIO.
    pub wr_valid: Signal<In, Bit>,
    pub wr_addr: Signal<In, Bits<12>>,
    pub wr_data: Signal<In, Bits<32>>,
    pub wr_strb: Signal<In, Bits<4>>,
    pub rd_valid: Signal<In, Bit>,
    pub rd_addr: Signal<In, Bits<12>>,
    pub now_ns: Signal<In, Bits<32>>,
    pub tick: Signal<In, Bit>,
    pub plane_ready: Signal<In, Bits<8>>,
    pub sq_valid: Signal<In, Bit>,
    pub sq_qp: Signal<In, Bits<8>>,
    pub sq_bytes: Signal<In, Bits<32>>,
    pub rx_valid: Signal<In, Bit>,
    pub rx_qp: Signal<In, Bits<8>>,
    pub rx_kind: Signal<In, Bits<8>>,
    pub rx_psn: Signal<In, Bits<24>>,
    pub rx_len: Signal<In, Bits<16>>,
    pub rx_ecn: Signal<In, Bit>,
    pub rx_trimmed: Signal<In, Bit>,
    pub rx_lasthop: Signal<In, Bit>,
    pub rx_ackreq: Signal<In, Bit>,
    pub rx_ev: Signal<In, Bits<32>>,
    pub rx_ev_idx: Signal<In, Bits<8>>,
    pub rx_offset: Signal<In, Bits<16>>,
    pub rx_bitmap: Signal<In, Bits<64>>,
    pub rx_m: Signal<In, Bits<2>>,
    pub rx_rcvd_bytes: Signal<In, Bits<24>>,
    pub rx_reason: Signal<In, Bits<8>>,

    pub wr_ready: Signal<Out, Bit>,
    pub rd_ready: Signal<Out, Bit>,
    pub b_valid: Signal<Out, Bit>,
    pub b_resp: Signal<Out, Bits<2>>,
    pub r_valid: Signal<Out, Bit>,
    pub r_data: Signal<Out, Bits<32>>,
    pub r_resp: Signal<Out, Bits<2>>,
    pub tx_valid: Signal<Out, Bit>,
    pub tx_qp: Signal<Out, Bits<8>>,
    pub tx_psn: Signal<Out, Bits<24>>,
    pub tx_ev: Signal<Out, Bits<32>>,
    pub tx_ev_idx: Signal<Out, Bits<8>>,
    pub tx_plane: Signal<Out, Bits<3>>,
    pub tx_rtx: Signal<Out, Bit>,
    pub tx_len: Signal<Out, Bits<16>>,
    pub tx_last: Signal<Out, Bit>,
    pub ack_valid: Signal<Out, Bit>,
    pub ack_qp: Signal<Out, Bits<8>>,
    pub ack_nack: Signal<Out, Bit>,
    pub ack_cack: Signal<Out, Bits<24>>,
    pub ack_offset: Signal<Out, Bits<16>>,
    pub ack_bitmap: Signal<Out, Bits<64>>,
    pub ack_m: Signal<Out, Bits<2>>,
    pub ack_ev: Signal<Out, Bits<32>>,
    pub ack_rcvd_bytes: Signal<Out, Bits<24>>,
    pub ack_reason: Signal<Out, Bits<8>>,
    pub ack_psn: Signal<Out, Bits<24>>,
    pub una: Vec<Signal<Out, Bits<24>>>,

    // Blocks.
    csr: MrcCsr,
    arb: EvSprayArbiter,
    sb: Vec<SackTxScoreboard>,
    /// The receive side of every QP: one pipeline, a context per QP.
    rx: SackRxTracker,
    /// One NSCC window for every QP (a context per QP, switched by the glue below).
    cc: NsccWindow,
    /// Per QP: its window as of its last event (`nx_*` when that QP owned the window), for
    /// the cwnd gate and the CSR readback.
    sh_cw: Vec<DFFWithInit<Bits<32>>>,
    sh_mw: Vec<DFFWithInit<Bits<32>>>,
    sh_base: Vec<DFFWithInit<Bits<24>>>,
    /// Bit i set (ctx_clr).
    qbit16: Vec<Constant<Bits<16>>>,
    k_init_cwnd: Constant<Bits<32>>,
    k_init_base: Constant<Bits<24>>,
    l_own: Signal<Local, Bits<8>>,
    /// The window's owner last cycle: the owner the glue uses (see the offer).
    cc_own_d: DFF<Bits<4>>,
    /// The owner has had no event since it was switched to.
    cc_fresh: DFF<Bit>,
    /// The slots' valid bits as one register (bit i: `s_valid[i]`), so the window's offer is
    /// one expression of registers: a Local assigned in a loop feeding the window's
    /// `ev_valid` made Verilator see the window's always block in a combinational loop
    /// with the glue's (UNOPTFLAT), as the window's `ev_ready` is read back here.
    s_vb: DFF<Bits<16>>,
    l_own4: Signal<Local, Bits<4>>,
    l_vsh: Signal<Local, Bits<16>>,
    l_ownb4: Signal<Local, Bits<4>>,
    l_ownb: Signal<Local, Bits<8>>,
    l_vshb: Signal<Local, Bits<16>>,
    l_othb: Signal<Local, Bit>,
    l_offerb: Signal<Local, Bit>,
    l_others: Signal<Local, Bit>,
    l_offer: Signal<Local, Bit>,
    l_ok: Signal<Local, Bits<2>>,
    l_ob: Signal<Local, Bits<32>>,
    l_or: Signal<Local, Bits<32>>,
    l_oe: Signal<Local, Bit>,
    l_sw_hf: Signal<Local, Bit>,
    l_sw_h: Signal<Local, Bits<8>>,
    l_sw_lf: Signal<Local, Bit>,
    l_sw_l: Signal<Local, Bits<8>>,
    l_sw_to: Signal<Local, Bits<8>>,
    l_clr: Signal<Local, Bits<16>>,
    /// EV values loaded (EV_READ_VALUE): 256 x 32, read registered, read-first.
    // LUT RAM: a block RAM's ~5.8 ns clock-to-out (no output register with Yosys 0.23)
    // started the CSR read path; see lut_ram.rs.
    shadow: LutRam<Bits<32>, 8>,
    /// EV_INDEX < total, a clock old. Equal to this clock's compare whenever an EV_OP strobe
    /// is up: the strobe comes two edges after its write's decode and EV_INDEX changes one
    /// edge after its own, and one write is decoded a clock, so EV_INDEX cannot change at
    /// the edge that raises the strobe. The shadow's write enable then starts at flops
    /// instead of behind the index's range compare (a carry chain the arbiter shares).
    ev_idx_ok: DFF<Bit>,
    /// EV_INDEX a clock old, the arbiter's control index (equal to EV_INDEX whenever its
    /// EV_OP strobe is up, as for `ev_idx_ok`): the arbiter's own range check then starts at
    /// a flop of its own (kept whole, so Yosys neither merges it with the read index's
    /// register nor shares the compare with `ev_idx_ok`), not at the CSR register across
    /// the die (seed 2 at 98f28be: EV_INDEX -> the shared compare -> `thr_q`, 11.6 ns).
    ev_idx_rep: DFF<Bits<8>>,
    /// now_ns, a clock old: the send time of a sample started at the last edge.
    now_d: DFF<Bits<32>>,
    /// The PSN a reset restores, every block's `init_psn`: QP_INIT_PSN as of the edge that
    /// takes a QP_CTRL reset (nxt loads it at that edge too), 0 from the edge that samples
    /// `rst` (the core reset restores nxt = una = 0). So a QP leaves reset with nxt, its
    /// scoreboard's una and its tracker's cack + 1 equal even if QP_INIT_PSN is rewritten in
    /// the reset's clock, `nxt - una` is 0 under either reset (a constant, not a subtract
    /// from the CSR register across the die: `csr rw_q -> outs -> o_gt`, 9.2-9.9 ns), and the
    /// blocks' reset values come from a flop beside them.
    reset_psn: DFF<Bits<24>>,

    // Elaboration constants.
    k_q8: Constant<Bits<8>>,
    k_q16: Constant<Bits<16>>,
    k_mtu: Constant<Bits<32>>,
    k_mtu2: Constant<Bits<32>>,
    /// -MTU mod 2^32 (pend - MTU as an add, so it can join a carry-save stage).
    k_neg_mtu: Constant<Bits<32>>,
    k_win1: Constant<Bits<24>>,
    k_total: Constant<Bits<9>>,
    k_seed: Constant<Bits<16>>,
    k_sat24: Constant<Bits<33>>,
    k_bit31: Constant<Bits<32>>,
    k_rtx_hold: Constant<Bits<3>>,
    /// The MTU's bits (inflight = outstanding packets x MTU, as shift-and-add).
    k_mtu_bit: Vec<Constant<Bit>>,
    k_infl_cap: Constant<Bits<24>>,
    k_sh: Vec<Constant<Bits<5>>>,
    qi8: Vec<Constant<Bits<8>>>,
    qi16: Vec<Constant<Bits<16>>>,
    qnext: Vec<Constant<Bits<8>>>,
    fi: Vec<Constant<Bits<3>>>,
    ei: Vec<Constant<Bits<4>>>,

    /// The reset tree: `rst` a clock old, one copy per block (kept apart: `_rep`).
    rst_arb_rep: DFF<Bit>,
    rst_rx_rep: DFF<Bit>,
    rst_cc_rep: DFF<Bit>,
    rst_csr_rep: DFF<Bit>,
    rst_glue_rep: DFF<Bit>,
    rst_sb_rep: Vec<DFF<Bit>>,
    /// With one QP, the receive tracker's only reset: `rst` and the QP's reset ORed a clock
    /// early, so every synchronous reset in the tracker hangs off this flop's net, not off a
    /// LUT of two flops that the placer drags to the centre of its ~2,000 loads (the board
    /// flow's critical path, 13.0 ns with two 5 ns routes). One context treats the two alike
    /// (the model resets a context on `rst | qp_rst[q]`), so this is exact.
    rst_rx1_rep: DFF<Bit>,
    /// One QP: the tracker takes `rst_rx1_rep` as `rst` and no `qp_rst`.
    k_one_qp: Constant<Bit>,
    /// The glue's reset (its copy).
    rst_g: Signal<Local, Bit>,

    // Per-QP glue.
    en: Vec<DFF<Bit>>,
    rst_q: Vec<DFF<Bit>>,
    /// Copies of rst_q, one per reset it feeds (kept apart: `_rep`): the scoreboard's, the
    /// tracker's context kill, and the NSCC context clear with the window shadow. Shared,
    /// `rst | rst_q` was one LUT driving set/reset pins across the die (seed 3 at 1d22186:
    /// 4.4 ns from that LUT to the tracker's byte counters, 11.7 ns in all).
    rq_sb_rep: Vec<DFF<Bit>>,
    rq_rx_rep: Vec<DFF<Bit>>,
    rq_cc_rep: Vec<DFF<Bit>>,
    /// QP_SEL addresses this QP (and is < QPS), a clock old. Equal to this clock's compare
    /// whenever a QP_CTRL strobe is up (QP_SEL cannot change at the edge that raises it: see
    /// `ev_idx_ok`). The QP reset's clears share one block with the core's reset, which
    /// synthesis maps to the flops' set/reset pins: behind the 16-bit compare, that net
    /// was the critical path (12.5-13.6 ns).
    sel_hit: Vec<DFF<Bit>>,
    pend: Vec<DFF<Bits<32>>>,
    nxt: Vec<DFF<Bits<24>>>,
    /// `nxt + 1`, kept beside nxt so the send path and outs' difference for a send start
    /// at a flop instead of behind an increment's carry chain.
    nxt1: Vec<DFF<Bits<24>>>,
    infl: Vec<DFF<Bits<32>>>,
    /// `nxt - una` (the PSNs outstanding), registered from both next values so the
    /// inflight product and the window check start at a flop.
    outs: Vec<DFF<Bits<24>>>,
    /// outs > INFL_PKTS_CAP, formed for each of outs' next values and selected as outs is,
    /// so the inflight product starts at flops instead of behind a 13-bit OR of outs.
    o_gt: Vec<DFF<Bit>>,
    /// The test for each next value of outs: (n)xt, (n)xt + (1).
    l_oc_gn: Signal<Local, Bit>,
    l_oc_g1: Signal<Local, Bit>,
    /// outs' differences for both una' (nxt, nxt + 1, minus una + una_adv).
    os_nxt: Vec<SubSum24>,
    os_nxt1: Vec<SubSum24>,
    /// o_gt' outside the resets from the registered outs and o_gt and the step (a send,
    /// una_adv), not from outs' (seeds 1-3 at 33fa61c: una_adv -> outs' carry chain -> the
    /// 13-bit OR -> o_gt, 11.1-11.7 ns, the core's critical path).
    oc_step: Vec<OverCapStep>,
    samp_v: Vec<DFF<Bit>>,
    samp_psn: Vec<DFF<Bits<24>>>,
    /// The sample's send time, loaded the clock after the send from `now_d` (enable:
    /// `samp_ld`, a flop), so the send decision does not drive 32 clock enables across the
    /// die (seed 2 at 1d22186: f_nz -> ... -> samp_t CE, a 3.6 ns route); a SACK in that
    /// clock reads `now_d` instead. Read only while samp_v, so neither reset clears it.
    samp_t: Vec<DFF<Bits<32>>>,
    s_valid: Vec<DFF<Bit>>,
    s_kind: Vec<DFF<Bits<2>>>,
    s_bytes: Vec<DFF<Bits<32>>>,
    s_rtt: Vec<DFF<Bits<32>>>,
    s_ecn: Vec<DFF<Bit>>,
    /// The slot's candidate, registered a clock before the slot takes it (valid, kind,
    /// bytes, RTT, ECN, and how many candidates lost to it): the candidates come from the
    /// scoreboard's feedback, the R stage and the ACK line, the slot sits by the window, and
    /// the two are far apart on the die. Bytes, RTT and ECN load every clock with no clear
    /// (bytes: the trim's MTU, else the ACK's bytes; RTT and ECN: the ACK line's): a clear
    /// would put the candidate pick (the ACK line's QP compare, its bytes != 0) on their
    /// set/reset pins (seed 1 at fe42fb0: `ln_qp -> l_c_ack -> cq_r` LSR, 10.8 ns). So a
    /// slot of another kind holds junk where the model holds 0, in fields nothing reads: the
    /// window reads bytes for an ACK or a NACK (the MTU), RTT and ECN for an ACK only, and
    /// only an ACK slot is merged into; a slot of any kind is replaced whole.
    cq_v: Vec<DFF<Bit>>,
    cq_k: Vec<DFF<Bits<2>>>,
    cq_b: Vec<DFF<Bits<32>>>,
    cq_r: Vec<DFF<Bits<32>>>,
    cq_e: Vec<DFF<Bit>>,
    cq_dn: Vec<DFF<Bits<2>>>,
    hold: Vec<DFF<Bits<3>>>,
    tick_pend: Vec<DFF<Bit>>,
    /// The pick's "this QP is busy" (the R stage's op or the TICK is this QP's) and
    /// "hold != 0", registered from their inputs' next values, so the send decision starts
    /// at two flops instead of two LUT levels over six (seed 2 of 7eabfef with the scoreboard
    /// of branch wip/sb-arm-and-lag: hold -> hold == 0 & rtx_valid -> l_er -> busy -> the
    /// send -> pend's CE, 10.3 ns, 8.6 of it routing).
    busy_q: Vec<DFF<Bit>>,
    hold_nz: Vec<DFF<Bit>>,
    /// The TICK pick over the next values (for `busy_q`).
    l_tf_n: Signal<Local, Bit>,

    // R stage.
    rs_valid: DFF<Bit>,
    // The R op is a scoreboard op (SACK / NACK), and per QP whether it is this QP's: decoded
    // as the input is registered, so the pick's "QP busy" starts from flops, not from a kind
    // decode and an 8-bit QP compare.
    rs_op: DFF<Bit>,
    rs_hit: Vec<DFF<Bit>>,
    /// The R stage holds a trim NACK (reason 1 or 2) for this QP: decoded from the ports
    /// beside rs_hit, so the NSCC candidate's pick (whose zeroing of `cq_b` synthesis puts
    /// on the flops' set/reset net) does not wait for the kind, reason and QP compares.
    rs_tn: Vec<DFF<Bit>>,
    /// The R stage holds a SACK for this QP, decoded beside rs_hit: the RTT sample's clear
    /// (and through it the sample's load enable, 32 flops) starts from this flop, not from
    /// the R stage's kind and QP compares.
    rs_sk: Vec<DFF<Bit>>,
    // The RTT sample's "cack >= sampled PSN", compared as the header is registered: against
    // the sampled PSN (o) and against the PSN a sample started at that edge would hold, this
    // QP's nxt (n); `samp_ld` says a sample started there, and picks.
    rs_sge_o: Vec<DFF<Bit>>,
    rs_sge_n: Vec<DFF<Bit>>,
    samp_ld: Vec<DFF<Bit>>,
    rs_qp: DFF<Bits<8>>,
    rs_kind: DFF<Bits<8>>,
    rs_psn: DFF<Bits<24>>,
    rs_len: DFF<Bits<16>>,
    rs_ecn: DFF<Bit>,
    rs_trimmed: DFF<Bit>,
    rs_lasthop: DFF<Bit>,
    rs_ackreq: DFF<Bit>,
    rs_ev: DFF<Bits<32>>,
    rs_ev_idx: DFF<Bits<8>>,
    rs_offset: DFF<Bits<16>>,
    rs_bitmap: DFF<Bits<64>>,
    rs_m: DFF<Bits<2>>,
    rs_rcvd: DFF<Bits<24>>,
    rs_reason: DFF<Bits<8>>,

    // SACK -> acked_bytes line.
    ln_v: Vec<DFF<Bit>>,
    ln_qp: Vec<DFF<Bits<8>>>,
    ln_ecn: Vec<DFF<Bit>>,
    ln_rtt: Vec<DFF<Bits<32>>>,

    // EV FIFO and its request credit; round-robin pointer.
    f_idx: Vec<DFF<Bits<8>>>,
    f_plane: Vec<DFF<Bits<3>>>,
    f_ev: Vec<DFF<Bits<32>>>,
    f_head: DFF<Bits<3>>,
    f_count: DFF<Bits<4>>,
    // f_count != 0, kept as its own flop so the pick's "an EV is waiting" is a register
    // output, not a compare behind the FIFO count.
    f_nz: DFF<Bit>,
    preq: DFF<Bits<4>>,
    // f_count + preq >= EV_FIFO_DEPTH (no grant may be requested), a flop: the arbiter's
    // request starts at a register, not behind the add and the compare. Kept inverted so
    // its power-on 0 is the empty FIFO's "request".
    req_full: DFF<Bit>,
    rr: DFF<Bits<8>>,

    // EV event queue: {kind[14:12], want[9:8], idx[7:0]}.
    e_ent: Vec<DFF<Bits<16>>>,
    e_head: DFF<Bits<4>>,
    e_count: DFF<Bits<5>>,
    // e_count == 16 and != 0 as flops: the pop, the drop and the push's accept read them.
    e_full: DFF<Bit>,
    e_nz: DFF<Bit>,

    // Counters.
    c_pkts: DFF<Bits<32>>,
    c_rtx: DFF<Bits<32>>,
    c_trims: DFF<Bits<32>>,
    c_ntrim: DFF<Bits<32>>,
    c_ntrim_lh: DFF<Bits<32>>,
    c_noor: DFF<Bits<32>>,
    c_nother: DFF<Bits<32>>,
    c_tmo: DFF<Bits<32>>,
    c_oow: DFF<Bits<32>>,
    c_rxdrop: DFF<Bits<32>>,
    c_refused: DFF<Bits<32>>,
    /// A post refused last clock: REFUSED_OPS counts it now (the model's rule), so the post's
    /// overflow check (pend + sq_bytes, a carry chain) ends at this flop, not at the counter's
    /// 32 (seeds 1 and 3 at 76892bf: 10.9-11.5 ns, a 2.7 ns route to the counter).
    sq_ref_q: DFF<Bit>,
    c_nsccdrop: DFF<Bits<32>>,
    // Each QP's NSCC event drops of this cycle (0..=3), summed into c_nsccdrop the next.
    dq: Vec<DFF<Bits<2>>>,
    // The pick's window check, registered (see `wok` below).
    wok: Vec<DFF<Bit>>,
    // The pick's cwnd check, registered (see `fit` below).
    fit: Vec<DFF<Bit>>,
    // "pending bytes are non-zero", its own flop, so the pick does not OR 32 bits of pend.
    pnz: Vec<DFF<Bit>>,
    c_acks: DFF<Bits<32>>,
    c_evqdrop: DFF<Bits<32>>,

    // Output registers.
    o_tx_valid: DFF<Bit>,
    o_tx_qp: DFF<Bits<8>>,
    o_tx_psn: DFF<Bits<24>>,
    o_tx_ev: DFF<Bits<32>>,
    o_tx_ev_idx: DFF<Bits<8>>,
    o_tx_plane: DFF<Bits<3>>,
    o_tx_rtx: DFF<Bit>,
    o_tx_len: DFF<Bits<16>>,
    o_tx_last: DFF<Bit>,
    o_ack_valid: DFF<Bit>,
    o_ack_qp: DFF<Bits<8>>,
    o_ack_nack: DFF<Bit>,
    o_ack_cack: DFF<Bits<24>>,
    o_ack_offset: DFF<Bits<16>>,
    o_ack_bitmap: DFF<Bits<64>>,
    o_ack_m: DFF<Bits<2>>,
    o_ack_ev: DFF<Bits<32>>,
    o_ack_rcvd: DFF<Bits<24>>,
    o_ack_reason: DFF<Bits<8>>,
    o_ack_psn: DFF<Bits<24>>,

    // Intermediates.
    l_qp_sel: Signal<Local, Bits<16>>,
    l_sel_ok: Signal<Local, Bit>,
    l_init_psn: Signal<Local, Bits<24>>,
    /// QP_CTRL's strobe hits this QP (the loop's i).
    l_qp_hit: Signal<Local, Bit>,
    l_ev_index: Signal<Local, Bits<8>>,
    l_ev_value: Signal<Local, Bits<32>>,
    l_ctrl_stb: Signal<Local, Bit>,
    l_ctrl_op: Signal<Local, Bits<2>>,
    l_ev_op_stb: Signal<Local, Bit>,
    l_ev_op: Signal<Local, Bits<2>>,
    l_rx_op: Signal<Local, Bit>,
    l_rx_sack: Signal<Local, Bit>,
    l_rxq_en: Signal<Local, Bit>,
    l_rx_ok: Signal<Local, Bit>,
    l_is_nack: Signal<Local, Bit>,
    l_tick_f: Signal<Local, Bit>,
    l_tick_qp: Signal<Local, Bits<8>>,
    l_have_ev: Signal<Local, Bit>,
    l_len: Signal<Local, Bits<32>>,
    l_busy: Signal<Local, Bit>,
    l_base: Signal<Local, Bit>,
    l_csx: Signal<Local, Bits<34>>,
    l_csp: Signal<Local, Bits<34>>,
    l_csm: Signal<Local, Bits<34>>,
    l_csm2: Signal<Local, Bits<34>>,
    l_csz: Signal<Local, Bits<34>>,
    l_isum: Signal<Local, Bits<34>>,
    l_isum_m: Signal<Local, Bits<34>>,
    l_isum_m2: Signal<Local, Bits<34>>,
    l_fit: Signal<Local, Bit>,
    l_sq_nz: Signal<Local, Bit>,
    l_fit_s: Signal<Local, Bit>,
    l_p32: Signal<Local, Bits<32>>,
    l_er: Signal<Local, Bit>,
    l_en: Signal<Local, Bit>,
    l_rh_f: Signal<Local, Bit>,
    l_rh: Signal<Local, Bits<8>>,
    l_ra_f: Signal<Local, Bit>,
    l_ra: Signal<Local, Bits<8>>,
    l_nh_f: Signal<Local, Bit>,
    l_nh: Signal<Local, Bits<8>>,
    l_na_f: Signal<Local, Bit>,
    l_na: Signal<Local, Bits<8>>,
    l_send: Signal<Local, Bit>,
    l_send_rtx: Signal<Local, Bit>,
    l_send_qp: Signal<Local, Bits<8>>,
    l_send_psn: Signal<Local, Bits<24>>,
    l_send_len: Signal<Local, Bits<32>>,
    l_send_last: Signal<Local, Bit>,
    l_h_idx: Signal<Local, Bits<8>>,
    l_h_plane: Signal<Local, Bits<3>>,
    l_h_ev: Signal<Local, Bits<32>>,
    l_fb_valid: Signal<Local, Bit>,
    l_fb_qp: Signal<Local, Bits<8>>,
    l_fb_idx: Signal<Local, Bits<8>>,
    l_fb_kind: Signal<Local, Bits<3>>,
    l_timeout: Signal<Local, Bit>,
    l_op: Signal<Local, Bits<3>>,
    l_ack_f: Signal<Local, Bit>,
    l_rxq: Signal<Local, Bit>,
    l_rxm: Signal<Local, Bits<16>>,
    l_oow: Signal<Local, Bits<32>>,
    l_clr1: Signal<Local, Bit>,
    l_clr_qp: Signal<Local, Bits<16>>,
    l_a_st: Signal<Local, Bits<32>>,
    l_sdiff: Signal<Local, Bits<24>>,
    l_sdiff_n: Signal<Local, Bits<24>>,
    l_sge: Signal<Local, Bit>,
    l_samp_clr: Signal<Local, Bit>,
    l_rtt: Signal<Local, Bits<32>>,
    l_drops: Signal<Local, Bits<8>>,
    l_dn: Signal<Local, Bits<2>>,
    l_dqv: Signal<Local, Bits<2>>,
    // The SACK line's last entry (its SACK's acked_bytes are at the scoreboard's outputs now).
    l_lv: Signal<Local, Bit>,
    l_lq: Signal<Local, Bits<8>>,
    l_le: Signal<Local, Bit>,
    l_lr: Signal<Local, Bits<32>>,
    l_taken: Signal<Local, Bit>,
    l_sv: Signal<Local, Bit>,
    l_sk: Signal<Local, Bits<2>>,
    l_sb: Signal<Local, Bits<32>>,
    l_sr: Signal<Local, Bits<32>>,
    l_se: Signal<Local, Bit>,
    l_c_rto: Signal<Local, Bit>,
    l_c_trim: Signal<Local, Bit>,
    l_c_ack: Signal<Local, Bit>,
    l_free: Signal<Local, Bit>,
    l_msum: Signal<Local, Bits<33>>,
    l_sqe: Signal<Local, Bit>,
    l_sq_rst: Signal<Local, Bit>,
    l_sq_sum: Signal<Local, Bits<33>>,
    l_sq_ovf: Signal<Local, Bit>,
    l_sq_p: Signal<Local, Bits<32>>,
    l_sq_ok: Signal<Local, Bit>,
    l_is_send: Signal<Local, Bit>,
    l_sent_new: Signal<Local, Bit>,
    l_sent_rtx: Signal<Local, Bit>,
    l_nxt_new: Signal<Local, Bits<24>>,
    l_outp: Signal<Local, Bits<24>>,
    l_una_adv: Signal<Local, Bits<4>>,
    l_outs0: Signal<Local, Bits<24>>,
    l_outs1: Signal<Local, Bits<24>>,
    l_outc: Signal<Local, Bits<32>>,
    l_infl_acc: Signal<Local, Bits<32>>,
    l_infl_b: Signal<Local, Bits<32>>,
    l_pend1: Signal<Local, Bits<32>>,
    l_gt: Signal<Local, Bit>,
    l_rx_sbop: Signal<Local, Bit>,
    l_pm: Signal<Local, Bits<32>>,
    l_cs_s: Signal<Local, Bits<32>>,
    l_cs_c: Signal<Local, Bits<32>>,
    l_pms: Signal<Local, Bits<32>>,
    l_pend2: Signal<Local, Bits<32>>,
    l_pend3: Signal<Local, Bits<32>>,
    l_sq_here: Signal<Local, Bit>,
    l_gsv: Signal<Local, Bit>,
    l_req: Signal<Local, Bit>,
    l_fsum: Signal<Local, Bits<5>>,
    l_rq_up: Signal<Local, Bit>,
    l_rq_dn: Signal<Local, Bit>,
    l_ge7: Signal<Local, Bit>,
    l_ge8: Signal<Local, Bit>,
    l_ge9: Signal<Local, Bit>,
    l_ge10: Signal<Local, Bit>,
    l_rq_a: Signal<Local, Bit>,
    l_rq_b: Signal<Local, Bit>,
    l_back: Signal<Local, Bit>,
    l_preq: Signal<Local, Bits<4>>,
    l_fhead: Signal<Local, Bits<3>>,
    l_fcount: Signal<Local, Bits<4>>,
    l_ftail: Signal<Local, Bits<3>>,
    l_pop: Signal<Local, Bit>,
    l_push: Signal<Local, Bit>,
    l_want: Signal<Local, Bits<2>>,
    l_ent: Signal<Local, Bits<16>>,
    l_ehead: Signal<Local, Bits<4>>,
    l_ecount: Signal<Local, Bits<5>>,
    l_etail: Signal<Local, Bits<4>>,
    l_evq_drop: Signal<Local, Bit>,
    l_efull: Signal<Local, Bit>,
    l_eacc: Signal<Local, Bit>,
    l_evq_head: Signal<Local, Bits<32>>,
    l_status: Signal<Local, Bits<32>>,
    l_cwnd: Signal<Local, Bits<32>>,
    l_maxwnd: Signal<Local, Bits<32>>,
    l_base_rtt: Signal<Local, Bits<32>>,
    l_refused: Signal<Local, Bits<32>>,
    l_ref1: Signal<Local, Bits<32>>,
    l_ref2: Signal<Local, Bits<32>>,
    l_rr_next: Signal<Local, Bits<8>>,
    l_x32: Signal<Local, Bits<32>>,
    l_y32: Signal<Local, Bits<32>>,
    l_st_en: Signal<Local, Bit>,
    l_st_rst: Signal<Local, Bit>,
    l_st_err: Signal<Local, Bit>,
    l_brtt: Signal<Local, Bits<24>>,
    l_hent: Signal<Local, Bits<16>>,

    // Elaboration-only: loop bounds and CSR vector indices.
    _q: usize,
    /// SACK_TO_ACKED, and its last index (the HDL macro takes fields, not consts).
    _ln: usize,
    _lk: usize,
    _n_w1c: usize,
    _rw: [usize; 12],
    _ro: [usize; 22],
    _wo_qp_ctrl: usize,
    _wo_ev_op: usize,
    _wo_evq_pop: usize,
    _w1c_evq_status: usize,
    // One past each index (loop ends: `for j in k..k_e` selects entry k).
    _rw_e: [usize; 12],
    _ro_e: [usize; 22],
    _wo_qp_ctrl_e: usize,
    _wo_ev_op_e: usize,
    _wo_evq_pop_e: usize,
    _w1c_evq_status_e: usize,
}

impl MrcCore {
    pub fn new(cfg: &NicConfig) -> Self {
        let q = cfg.qps as usize;
        // A new send's inflight is (outs + 1) x MTU with no cap or wrap case: outs < W then.
        assert!(
            cfg.sack_window_bits < INFL_PKTS_CAP,
            "a SACK window below the inflight cap"
        );
        // the per-clock NSCC drop count (l_drops, 8 bits) holds at most 3 per QP
        assert!(
            q <= 16,
            "mrc_core: qps {q} > 16 (the config validation bounds it)"
        );
        let map = mrc_regmap::build(cfg);
        let class = |acc: Access| -> Vec<(&'static str, &'static str)> {
            map.registers()
                .filter(|l| l.reg.access == acc)
                .map(|l| (l.block.name, l.reg.name))
                .collect()
        };
        let (ro, rw, w1c, wo) = (
            class(Access::Ro),
            class(Access::Rw),
            class(Access::W1c),
            class(Access::Wo),
        );
        let find = |v: &[(&str, &str)], key: (&str, &str)| {
            v.iter()
                .position(|&k| k == key)
                .unwrap_or_else(|| panic!("register {}.{} missing from the map", key.0, key.1))
        };
        assert_eq!(
            ro.len(),
            CORE_RO_REGS.len(),
            "every RO register of the map is driven by the core"
        );
        let mut rw_i = [0; 12];
        for (k, n) in CORE_RW_REGS.iter().enumerate() {
            rw_i[k] = find(&rw, *n);
        }
        let mut ro_i = [0; 22];
        for (k, n) in CORE_RO_REGS.iter().enumerate() {
            ro_i[k] = find(&ro, *n);
        }
        let wo_qp_ctrl = find(&wo, ("QP", "QP_CTRL"));
        let wo_ev_op = find(&wo, ("EVT", "EV_OP"));
        let wo_evq_pop = find(&wo, ("EVQ", "EVQ_POP"));
        let w1c_evq_status = find(&w1c, ("EVQ", "EVQ_STATUS"));
        let nk = mrc_config::nscc::NsccFixed::new(cfg);
        fn dffs<T: Synth>(n: usize) -> Vec<DFF<T>> {
            (0..n).map(|_| Default::default()).collect()
        }
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            Constant::new(v.into())
        }
        MrcCore {
            clock: Default::default(),
            rst: Default::default(),
            rst_arb_rep: Default::default(),
            rst_rx_rep: Default::default(),
            rst_rx1_rep: Default::default(),
            k_one_qp: Constant::new(q == 1),
            rst_cc_rep: Default::default(),
            rst_csr_rep: Default::default(),
            rst_glue_rep: Default::default(),
            rst_sb_rep: dffs(q),
            rst_g: Default::default(),
            wr_valid: Default::default(),
            wr_addr: Default::default(),
            wr_data: Default::default(),
            wr_strb: Default::default(),
            rd_valid: Default::default(),
            rd_addr: Default::default(),
            now_ns: Default::default(),
            tick: Default::default(),
            plane_ready: Default::default(),
            sq_valid: Default::default(),
            sq_qp: Default::default(),
            sq_bytes: Default::default(),
            rx_valid: Default::default(),
            rx_qp: Default::default(),
            rx_kind: Default::default(),
            rx_psn: Default::default(),
            rx_len: Default::default(),
            rx_ecn: Default::default(),
            rx_trimmed: Default::default(),
            rx_lasthop: Default::default(),
            rx_ackreq: Default::default(),
            rx_ev: Default::default(),
            rx_ev_idx: Default::default(),
            rx_offset: Default::default(),
            rx_bitmap: Default::default(),
            rx_m: Default::default(),
            rx_rcvd_bytes: Default::default(),
            rx_reason: Default::default(),
            wr_ready: Default::default(),
            rd_ready: Default::default(),
            b_valid: Default::default(),
            b_resp: Default::default(),
            r_valid: Default::default(),
            r_data: Default::default(),
            r_resp: Default::default(),
            tx_valid: Default::default(),
            tx_qp: Default::default(),
            tx_psn: Default::default(),
            tx_ev: Default::default(),
            tx_ev_idx: Default::default(),
            tx_plane: Default::default(),
            tx_rtx: Default::default(),
            tx_len: Default::default(),
            tx_last: Default::default(),
            ack_valid: Default::default(),
            ack_qp: Default::default(),
            ack_nack: Default::default(),
            ack_cack: Default::default(),
            ack_offset: Default::default(),
            ack_bitmap: Default::default(),
            ack_m: Default::default(),
            ack_ev: Default::default(),
            ack_rcvd_bytes: Default::default(),
            ack_reason: Default::default(),
            ack_psn: Default::default(),
            una: (0..q).map(|_| Default::default()).collect(),
            csr: MrcCsr::new(cfg),
            arb: EvSprayArbiter::new(cfg),
            sb: (0..q).map(|_| SackTxScoreboard::new(cfg)).collect(),
            rx: SackRxTracker::new(cfg),
            cc: NsccWindow::new(cfg),
            sh_cw: (0..q)
                .map(|_| DFFWithInit::new(u64::from(nk.init_cwnd).to_bits()))
                .collect(),
            sh_mw: (0..q)
                .map(|_| DFFWithInit::new(u64::from(nk.init_cwnd).to_bits()))
                .collect(),
            sh_base: (0..q)
                .map(|_| DFFWithInit::new(u64::from(nk.base_rtt_ns).to_bits()))
                .collect(),
            qbit16: (0..q).map(|i| c(1 << i)).collect(),
            k_init_cwnd: c(nk.init_cwnd.into()),
            k_init_base: c(nk.base_rtt_ns.into()),
            l_own: Default::default(),
            cc_own_d: Default::default(),
            cc_fresh: Default::default(),
            s_vb: Default::default(),
            l_own4: Default::default(),
            l_vsh: Default::default(),
            l_ownb4: Default::default(),
            l_ownb: Default::default(),
            l_vshb: Default::default(),
            l_othb: Default::default(),
            l_offerb: Default::default(),
            l_others: Default::default(),
            l_offer: Default::default(),
            l_ok: Default::default(),
            l_ob: Default::default(),
            l_or: Default::default(),
            l_oe: Default::default(),
            l_sw_hf: Default::default(),
            l_sw_h: Default::default(),
            l_sw_lf: Default::default(),
            l_sw_l: Default::default(),
            l_sw_to: Default::default(),
            l_clr: Default::default(),
            shadow: LutRam::new(
                (0..256u64)
                    .map(|a| (a.into(), Bits::<32>::from(0u64)))
                    .collect(),
            ),
            ev_idx_ok: Default::default(),
            ev_idx_rep: Default::default(),
            now_d: Default::default(),
            reset_psn: Default::default(),
            k_q8: c(q as u64),
            k_q16: c(q as u64),
            k_mtu: c(u64::from(cfg.mtu)),
            k_mtu2: c(2 * u64::from(cfg.mtu)),
            k_neg_mtu: c(((1u64 << 32) - u64::from(cfg.mtu)) & 0xFFFF_FFFF),
            k_win1: c(u64::from(cfg.sack_window_bits - WINDOW_MARGIN - 1)),
            k_total: c(u64::from(cfg.total_evs())),
            k_seed: c(u64::from(cfg.qp_spray_seed(0))),
            k_sat24: c(0xFF_FFFF),
            k_bit31: c(1 << 31),
            k_rtx_hold: c(u64::from(RTX_HOLD)),
            k_mtu_bit: (0..14)
                .map(|k| Constant::new(cfg.mtu >> k & 1 == 1))
                .collect(),
            k_infl_cap: c(u64::from(INFL_PKTS_CAP)),
            k_sh: (0..14).map(c).collect(),
            qi8: (0..q as u64).map(c).collect(),
            qi16: (0..q as u64).map(c).collect(),
            qnext: (0..q).map(|i| c(((i + 1) % q) as u64)).collect(),
            fi: (0..EV_FIFO_DEPTH as u64).map(c).collect(),
            ei: (0..EVQ_DEPTH as u64).map(c).collect(),
            en: dffs(q),
            rst_q: dffs(q),
            rq_sb_rep: dffs(q),
            rq_rx_rep: dffs(q),
            rq_cc_rep: dffs(q),
            sel_hit: dffs(q),
            pend: dffs(q),
            nxt: dffs(q),
            nxt1: dffs(q),
            infl: dffs(q),
            outs: dffs(q),
            o_gt: dffs(q),
            l_oc_gn: Default::default(),
            l_oc_g1: Default::default(),
            os_nxt: (0..q).map(|_| SubSum24::default()).collect(),
            os_nxt1: (0..q).map(|_| SubSum24::default()).collect(),
            oc_step: (0..q).map(|_| OverCapStep::default()).collect(),
            samp_v: dffs(q),
            samp_psn: dffs(q),
            samp_t: dffs(q),
            s_valid: dffs(q),
            s_kind: dffs(q),
            s_bytes: dffs(q),
            s_rtt: dffs(q),
            s_ecn: dffs(q),
            cq_v: dffs(q),
            cq_k: dffs(q),
            cq_b: dffs(q),
            cq_r: dffs(q),
            cq_e: dffs(q),
            cq_dn: dffs(q),
            hold: dffs(q),
            busy_q: dffs(q),
            hold_nz: dffs(q),
            l_tf_n: Default::default(),
            tick_pend: dffs(q),
            rs_valid: Default::default(),
            rs_op: Default::default(),
            rs_hit: dffs(q),
            rs_tn: dffs(q),
            rs_sk: dffs(q),
            rs_sge_o: dffs(q),
            rs_sge_n: dffs(q),
            samp_ld: dffs(q),
            rs_qp: Default::default(),
            rs_kind: Default::default(),
            rs_psn: Default::default(),
            rs_len: Default::default(),
            rs_ecn: Default::default(),
            rs_trimmed: Default::default(),
            rs_lasthop: Default::default(),
            rs_ackreq: Default::default(),
            rs_ev: Default::default(),
            rs_ev_idx: Default::default(),
            rs_offset: Default::default(),
            rs_bitmap: Default::default(),
            rs_m: Default::default(),
            rs_rcvd: Default::default(),
            rs_reason: Default::default(),
            ln_v: dffs(SACK_TO_ACKED),
            ln_qp: dffs(SACK_TO_ACKED),
            ln_ecn: dffs(SACK_TO_ACKED),
            ln_rtt: dffs(SACK_TO_ACKED),
            f_idx: dffs(EV_FIFO_DEPTH),
            f_plane: dffs(EV_FIFO_DEPTH),
            f_ev: dffs(EV_FIFO_DEPTH),
            f_head: Default::default(),
            f_count: Default::default(),
            f_nz: Default::default(),
            preq: Default::default(),
            req_full: Default::default(),
            rr: Default::default(),
            e_ent: dffs(EVQ_DEPTH),
            e_head: Default::default(),
            e_count: Default::default(),
            e_full: Default::default(),
            e_nz: Default::default(),
            c_pkts: Default::default(),
            c_rtx: Default::default(),
            c_trims: Default::default(),
            c_ntrim: Default::default(),
            c_ntrim_lh: Default::default(),
            c_noor: Default::default(),
            c_nother: Default::default(),
            c_tmo: Default::default(),
            c_oow: Default::default(),
            c_rxdrop: Default::default(),
            c_refused: Default::default(),
            sq_ref_q: Default::default(),
            c_nsccdrop: Default::default(),
            dq: dffs(q),
            wok: dffs(q),
            fit: dffs(q),
            pnz: dffs(q),
            c_acks: Default::default(),
            c_evqdrop: Default::default(),
            o_tx_valid: Default::default(),
            o_tx_qp: Default::default(),
            o_tx_psn: Default::default(),
            o_tx_ev: Default::default(),
            o_tx_ev_idx: Default::default(),
            o_tx_plane: Default::default(),
            o_tx_rtx: Default::default(),
            o_tx_len: Default::default(),
            o_tx_last: Default::default(),
            o_ack_valid: Default::default(),
            o_ack_qp: Default::default(),
            o_ack_nack: Default::default(),
            o_ack_cack: Default::default(),
            o_ack_offset: Default::default(),
            o_ack_bitmap: Default::default(),
            o_ack_m: Default::default(),
            o_ack_ev: Default::default(),
            o_ack_rcvd: Default::default(),
            o_ack_reason: Default::default(),
            o_ack_psn: Default::default(),
            l_qp_sel: Default::default(),
            l_sel_ok: Default::default(),
            l_init_psn: Default::default(),
            l_qp_hit: Default::default(),
            l_ev_index: Default::default(),
            l_ev_value: Default::default(),
            l_ctrl_stb: Default::default(),
            l_ctrl_op: Default::default(),
            l_ev_op_stb: Default::default(),
            l_ev_op: Default::default(),
            l_rx_op: Default::default(),
            l_rx_sack: Default::default(),
            l_rxq_en: Default::default(),
            l_rx_ok: Default::default(),
            l_is_nack: Default::default(),
            l_tick_f: Default::default(),
            l_tick_qp: Default::default(),
            l_have_ev: Default::default(),
            l_len: Default::default(),
            l_busy: Default::default(),
            l_base: Default::default(),
            l_csx: Default::default(),
            l_csp: Default::default(),
            l_csm: Default::default(),
            l_csm2: Default::default(),
            l_csz: Default::default(),
            l_isum: Default::default(),
            l_isum_m: Default::default(),
            l_isum_m2: Default::default(),
            l_fit: Default::default(),
            l_sq_nz: Default::default(),
            l_fit_s: Default::default(),
            l_p32: Default::default(),
            l_er: Default::default(),
            l_en: Default::default(),
            l_rh_f: Default::default(),
            l_rh: Default::default(),
            l_ra_f: Default::default(),
            l_ra: Default::default(),
            l_nh_f: Default::default(),
            l_nh: Default::default(),
            l_na_f: Default::default(),
            l_na: Default::default(),
            l_send: Default::default(),
            l_send_rtx: Default::default(),
            l_send_qp: Default::default(),
            l_send_psn: Default::default(),
            l_send_len: Default::default(),
            l_send_last: Default::default(),
            l_h_idx: Default::default(),
            l_h_plane: Default::default(),
            l_h_ev: Default::default(),
            l_fb_valid: Default::default(),
            l_fb_qp: Default::default(),
            l_fb_idx: Default::default(),
            l_fb_kind: Default::default(),
            l_timeout: Default::default(),
            l_op: Default::default(),
            l_ack_f: Default::default(),
            l_rxq: Default::default(),
            l_rxm: Default::default(),
            l_oow: Default::default(),
            l_clr1: Default::default(),
            l_clr_qp: Default::default(),
            l_a_st: Default::default(),
            l_sdiff: Default::default(),
            l_sdiff_n: Default::default(),
            l_sge: Default::default(),
            l_samp_clr: Default::default(),
            l_rtt: Default::default(),
            l_drops: Default::default(),
            l_dn: Default::default(),
            l_dqv: Default::default(),
            l_lv: Default::default(),
            l_lq: Default::default(),
            l_le: Default::default(),
            l_lr: Default::default(),
            l_taken: Default::default(),
            l_sv: Default::default(),
            l_sk: Default::default(),
            l_sb: Default::default(),
            l_sr: Default::default(),
            l_se: Default::default(),
            l_c_rto: Default::default(),
            l_c_trim: Default::default(),
            l_c_ack: Default::default(),
            l_free: Default::default(),
            l_msum: Default::default(),
            l_sqe: Default::default(),
            l_sq_rst: Default::default(),
            l_sq_sum: Default::default(),
            l_sq_ovf: Default::default(),
            l_sq_p: Default::default(),
            l_sq_ok: Default::default(),
            l_is_send: Default::default(),
            l_sent_new: Default::default(),
            l_sent_rtx: Default::default(),
            l_nxt_new: Default::default(),
            l_outp: Default::default(),
            l_una_adv: Default::default(),
            l_outs0: Default::default(),
            l_outs1: Default::default(),
            l_outc: Default::default(),
            l_infl_acc: Default::default(),
            l_infl_b: Default::default(),
            l_pend1: Default::default(),
            l_gt: Default::default(),
            l_rx_sbop: Default::default(),
            l_pm: Default::default(),
            l_cs_s: Default::default(),
            l_cs_c: Default::default(),
            l_pms: Default::default(),
            l_pend2: Default::default(),
            l_pend3: Default::default(),
            l_sq_here: Default::default(),
            l_gsv: Default::default(),
            l_req: Default::default(),
            l_fsum: Default::default(),
            l_rq_up: Default::default(),
            l_rq_dn: Default::default(),
            l_ge7: Default::default(),
            l_ge8: Default::default(),
            l_ge9: Default::default(),
            l_ge10: Default::default(),
            l_rq_a: Default::default(),
            l_rq_b: Default::default(),
            l_back: Default::default(),
            l_preq: Default::default(),
            l_fhead: Default::default(),
            l_fcount: Default::default(),
            l_ftail: Default::default(),
            l_pop: Default::default(),
            l_push: Default::default(),
            l_want: Default::default(),
            l_ent: Default::default(),
            l_ehead: Default::default(),
            l_ecount: Default::default(),
            l_etail: Default::default(),
            l_evq_drop: Default::default(),
            l_efull: Default::default(),
            l_eacc: Default::default(),
            l_evq_head: Default::default(),
            l_status: Default::default(),
            l_cwnd: Default::default(),
            l_maxwnd: Default::default(),
            l_base_rtt: Default::default(),
            l_refused: Default::default(),
            l_ref1: Default::default(),
            l_ref2: Default::default(),
            l_rr_next: Default::default(),
            l_x32: Default::default(),
            l_y32: Default::default(),
            l_st_en: Default::default(),
            l_st_rst: Default::default(),
            l_st_err: Default::default(),
            l_brtt: Default::default(),
            l_hent: Default::default(),
            _q: q,
            _ln: SACK_TO_ACKED,
            _lk: SACK_TO_ACKED - 1,
            _n_w1c: w1c.len(),
            _rw: rw_i,
            _ro: ro_i,
            _wo_qp_ctrl: wo_qp_ctrl,
            _wo_ev_op: wo_ev_op,
            _wo_evq_pop: wo_evq_pop,
            _w1c_evq_status: w1c_evq_status,
            _rw_e: rw_i.map(|k| k + 1),
            _ro_e: ro_i.map(|k| k + 1),
            _wo_qp_ctrl_e: wo_qp_ctrl + 1,
            _wo_ev_op_e: wo_ev_op + 1,
            _wo_evq_pop_e: wo_evq_pop + 1,
            _w1c_evq_status_e: w1c_evq_status + 1,
        }
    }
}

impl Logic for MrcCore {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            rs_valid,
            rs_op,
            rs_qp,
            rs_kind,
            rs_psn,
            rs_len,
            rs_ecn,
            rs_trimmed,
            rs_lasthop,
            rs_ackreq,
            rs_ev,
            rs_ev_idx,
            rs_offset,
            rs_bitmap,
            rs_m,
            rs_rcvd,
            rs_reason,
            f_head,
            f_count,
            f_nz,
            ev_idx_ok,
            ev_idx_rep,
            now_d,
            reset_psn,
            preq,
            req_full,
            rr,
            e_head,
            e_count,
            e_full,
            e_nz,
            c_pkts,
            c_rtx,
            c_trims,
            c_ntrim,
            c_ntrim_lh,
            c_noor,
            c_nother,
            c_tmo,
            c_oow,
            c_rxdrop,
            c_refused,
            sq_ref_q,
            c_nsccdrop,
            c_acks,
            c_evqdrop,
            o_tx_valid,
            o_tx_qp,
            o_tx_psn,
            o_tx_ev,
            o_tx_ev_idx,
            o_tx_plane,
            o_tx_rtx,
            o_tx_len,
            o_tx_last,
            o_ack_valid,
            o_ack_qp,
            o_ack_nack,
            o_ack_cack,
            o_ack_offset,
            o_ack_bitmap,
            o_ack_m,
            o_ack_ev,
            o_ack_rcvd,
            o_ack_reason,
            o_ack_psn,
            rst_arb_rep,
            rst_rx_rep,
            rst_rx1_rep,
            rst_cc_rep,
            rst_csr_rep,
            rst_glue_rep
        );
        self.rst_arb_rep.d.next = self.rst.val();
        self.rst_rx_rep.d.next = self.rst.val();
        self.rst_cc_rep.d.next = self.rst.val();
        self.rst_csr_rep.d.next = self.rst.val();
        self.rst_glue_rep.d.next = self.rst.val();
        self.rst_g.next = self.rst_glue_rep.q.val();
        for i in 0..self._q {
            self.rst_sb_rep[i].clock.next = self.clock.val();
            self.rst_sb_rep[i].d.next = self.rst.val();
        }
        self.csr.clock.next = self.clock.val();
        self.arb.clock.next = self.clock.val();
        self.shadow.read_clock.next = self.clock.val();
        self.shadow.write_clock.next = self.clock.val();

        // ---- CSR registers the glue reads (registered outputs of the CSR block) ----------
        self.l_qp_sel.next = 0.into();
        for j in self._rw[0]..self._rw_e[0] {
            self.l_qp_sel.next = self.csr.rw[j].val().get_bits::<16>(0);
        }
        self.l_sel_ok.next = self.l_qp_sel.val() < self.k_q16.val();
        self.l_init_psn.next = 0.into();
        for j in self._rw[1]..self._rw_e[1] {
            self.l_init_psn.next = self.csr.rw[j].val().get_bits::<24>(0);
        }
        self.l_ev_index.next = 0.into();
        for j in self._rw[10]..self._rw_e[10] {
            self.l_ev_index.next = self.csr.rw[j].val().get_bits::<8>(0);
        }
        self.l_ev_value.next = 0.into();
        for j in self._rw[11]..self._rw_e[11] {
            self.l_ev_value.next = self.csr.rw[j].val();
        }
        self.l_ctrl_stb.next = false;
        self.l_ctrl_op.next = 0.into();
        for j in self._wo_qp_ctrl..self._wo_qp_ctrl_e {
            self.l_ctrl_stb.next = self.csr.wo_stb[j].val();
            self.l_ctrl_op.next = self.csr.wo_data[j].val().get_bits::<2>(0);
        }
        self.l_ev_op_stb.next = false;
        self.l_ev_op.next = 0.into();
        for j in self._wo_ev_op..self._wo_ev_op_e {
            self.l_ev_op_stb.next = self.csr.wo_stb[j].val();
            self.l_ev_op.next = self.csr.wo_data[j].val().get_bits::<2>(0);
        }
        self.l_pop.next = false;
        for j in self._wo_evq_pop..self._wo_evq_pop_e {
            self.l_pop.next =
                self.csr.wo_stb[j].val() & self.csr.wo_data[j].val().get_bit(0) & self.e_nz.q.val();
        }

        // ---- receive: R stage op; the input checked --------------------------------------
        self.l_rx_op.next = self.rs_op.q.val();
        self.l_rx_sack.next = self.rs_valid.q.val() & (self.rs_kind.q.val() == 2);
        self.l_rxq_en.next = false;
        self.l_sqe.next = false;
        self.l_sq_rst.next = false;
        self.l_sq_ovf.next = false;
        for i in 0..self._q {
            if self.rx_qp.val() == self.qi8[i].val() {
                self.l_rxq_en.next = self.en[i].q.val();
            }
            // Every QP's pending + posted bytes, so the carry chain starts at registers and
            // the posted QP only selects its carry out (not a pend mux feeding the adder).
            self.l_sq_p.next = self.pend[i].q.val();
            self.l_sq_sum.next =
                bit_cast::<33, 32>(self.l_sq_p.val()) + bit_cast::<33, 32>(self.sq_bytes.val());
            if self.sq_qp.val() == self.qi8[i].val() {
                self.l_sqe.next = self.en[i].q.val();
                self.l_sq_rst.next = self.rst_q[i].q.val();
                self.l_sq_ovf.next = self.l_sq_sum.val().get_bit(32);
            }
        }
        self.l_rx_ok.next = self.rx_valid.val()
            & (self.rx_qp.val() < self.k_q8.val())
            & (self.rx_kind.val() >= 1)
            & (self.rx_kind.val() <= 3)
            & self.l_rxq_en.val();
        self.l_is_nack.next = self.rs_valid.q.val() & (self.rs_kind.q.val() == 3);

        // ---- scoreboard ops: rx op > tick > send -----------------------------------------
        self.l_tick_f.next = false;
        self.l_tick_qp.next = 0.into();
        for i in 0..self._q {
            if self.tick_pend[i].q.val() & !self.l_rx_op.val() & !self.l_tick_f.val() {
                self.l_tick_f.next = true;
                self.l_tick_qp.next = self.qi8[i].val();
            }
        }
        self.l_have_ev.next = self.f_nz.q.val();
        self.l_rh_f.next = false;
        self.l_rh.next = 0.into();
        self.l_ra_f.next = false;
        self.l_ra.next = 0.into();
        self.l_nh_f.next = false;
        self.l_nh.next = 0.into();
        self.l_na_f.next = false;
        self.l_na.next = 0.into();
        for i in 0..self._q {
            self.l_busy.next = self.busy_q[i].q.val();
            self.l_base.next = self.l_have_ev.val()
                & self.en[i].q.val()
                & !self.rst_q[i].q.val()
                & !self.sb[i].qp_error.val()
                & !self.l_busy.val();
            self.l_er.next =
                self.l_base.val() & self.sb[i].rtx_valid.val() & !self.hold_nz[i].q.val();
            self.l_en.next = self.l_base.val()
                & self.pnz[i].q.val()
                & self.sb[i].can_send.val()
                & self.wok[i].q.val()
                & self.fit[i].q.val();
            if self.l_er.val() & !self.l_ra_f.val() {
                self.l_ra_f.next = true;
                self.l_ra.next = self.qi8[i].val();
            }
            if self.l_er.val() & !self.l_rh_f.val() & (self.qi8[i].val() >= self.rr.q.val()) {
                self.l_rh_f.next = true;
                self.l_rh.next = self.qi8[i].val();
            }
            if self.l_en.val() & !self.l_na_f.val() {
                self.l_na_f.next = true;
                self.l_na.next = self.qi8[i].val();
            }
            if self.l_en.val() & !self.l_nh_f.val() & (self.qi8[i].val() >= self.rr.q.val()) {
                self.l_nh_f.next = true;
                self.l_nh.next = self.qi8[i].val();
            }
        }
        self.l_send.next = self.l_ra_f.val() | self.l_na_f.val();
        self.l_send_rtx.next = self.l_ra_f.val();
        self.l_send_qp.next = self.l_na.val();
        if self.l_nh_f.val() {
            self.l_send_qp.next = self.l_nh.val();
        }
        if self.l_ra_f.val() {
            self.l_send_qp.next = self.l_ra.val();
            if self.l_rh_f.val() {
                self.l_send_qp.next = self.l_rh.val();
            }
        }
        // The picked QP's PSN, length, pending bytes; the next round-robin start.
        self.l_send_psn.next = 0.into();
        self.l_send_len.next = 0.into();
        self.l_send_last.next = false;
        self.l_rr_next.next = self.rr.q.val();
        for i in 0..self._q {
            if self.l_send.val() & (self.l_send_qp.val() == self.qi8[i].val()) {
                self.l_send_len.next = self.pend[i].q.val();
                if self.pend[i].q.val() > self.k_mtu.val() {
                    self.l_send_len.next = self.k_mtu.val();
                }
                // the last packet of the pending bytes: min(pend, MTU) == pend
                self.l_send_last.next = self.pend[i].q.val() <= self.k_mtu.val();
                self.l_send_psn.next = self.nxt[i].q.val();
                if self.l_send_rtx.val() {
                    self.l_send_psn.next = self.sb[i].rtx_psn.val();
                }
                self.l_rr_next.next = self.qnext[i].val();
            }
        }
        // FIFO head.
        self.l_h_idx.next = 0.into();
        self.l_h_plane.next = 0.into();
        self.l_h_ev.next = 0.into();
        for k in 0..8 {
            if self.f_head.q.val() == self.fi[k].val() {
                self.l_h_idx.next = self.f_idx[k].q.val();
                self.l_h_plane.next = self.f_plane[k].q.val();
                self.l_h_ev.next = self.f_ev[k].q.val();
            }
        }

        // ---- feedback mux (at most one scoreboard reports per cycle) ---------------------
        self.l_fb_valid.next = false;
        self.l_fb_qp.next = 0.into();
        self.l_fb_idx.next = 0.into();
        self.l_fb_kind.next = 0.into();
        for i in 0..self._q {
            if self.sb[i].fb_valid.val() & !self.l_fb_valid.val() {
                self.l_fb_valid.next = true;
                self.l_fb_qp.next = self.qi8[i].val();
                self.l_fb_idx.next = self.sb[i].fb_idx.val();
                self.l_fb_kind.next = self.sb[i].fb_kind.val();
            }
        }
        self.l_timeout.next = self.l_fb_valid.val() & (self.l_fb_kind.val() == 5);

        // ---- scoreboards, trackers -------------------------------------------------------
        self.l_oow.next = 0.into();
        for i in 0..self._q {
            self.l_op.next = 0.into();
            if self.l_send.val() & (self.l_send_qp.val() == self.qi8[i].val()) {
                self.l_op.next = 1.into();
            }
            if self.l_tick_f.val() & (self.l_tick_qp.val() == self.qi8[i].val()) {
                self.l_op.next = 4.into();
            }
            if self.rs_hit[i].q.val() {
                self.l_op.next = 3.into();
                if self.rs_kind.q.val() == 2 {
                    self.l_op.next = 2.into();
                }
            }
            self.sb[i].clock.next = self.clock.val();
            self.sb[i].rst.next = self.rst_sb_rep[i].q.val() | self.rq_sb_rep[i].q.val();
            self.sb[i].init_psn.next = self.reset_psn.q.val();
            // This cycle's op (decided from registered state) goes to the scoreboard's I
            // stage, which registers it (and drops it while the QP is held in reset).
            self.sb[i].op.next = self.l_op.val();
            // The PSN this QP would send if picked (the retransmit candidate when it may
            // retransmit, else nxt): a TICK or an idle cycle ignores the PSN, and a picked QP
            // retransmits exactly when it has a candidate and no hold (the pick prefers
            // retransmits).
            self.sb[i].psn.next = self.nxt[i].q.val();
            if self.sb[i].rtx_valid.val() & !self.hold_nz[i].q.val() {
                self.sb[i].psn.next = self.sb[i].rtx_psn.val();
            }
            self.sb[i].ev_idx.next = self.l_h_idx.val();
            if self.rs_hit[i].q.val() {
                self.sb[i].psn.next = self.rs_psn.q.val();
                self.sb[i].ev_idx.next = self.rs_ev_idx.q.val();
            }
            self.sb[i].cack.next = self.rs_psn.q.val();
            self.sb[i].offset.next = self.rs_offset.q.val();
            self.sb[i].bitmap.next = self.rs_bitmap.q.val();
            self.sb[i].m.next = self.rs_m.q.val();
            self.sb[i].rcvd_bytes.next = self.rs_rcvd.q.val();
            self.sb[i].reason.next = self.rs_reason.q.val();
            self.sb[i].rto_exp.next = 0.into();
            self.sb[i].rto_linear_retries.next = 0.into();
            self.sb[i].rto_backoff_retries.next = 0.into();
            self.sb[i].rtx_ooo_threshold.next = 0.into();
            for j in self._rw[3]..self._rw_e[3] {
                self.sb[i].rto_exp.next = self.csr.rw[j].val().get_bits::<5>(0);
            }
            for j in self._rw[4]..self._rw_e[4] {
                self.sb[i].rto_linear_retries.next = self.csr.rw[j].val().get_bits::<3>(0);
            }
            for j in self._rw[5]..self._rw_e[5] {
                self.sb[i].rto_backoff_retries.next = self.csr.rw[j].val().get_bits::<5>(0);
            }
            for j in self._rw[6]..self._rw_e[6] {
                self.sb[i].rtx_ooo_threshold.next = self.csr.rw[j].val().get_bits::<10>(0);
            }
            self.una[i].next = self.sb[i].una.val();
        }

        // ---- the receive tracker: one for every QP (its contexts) ----------------------------
        self.l_rxq.next = false;
        self.l_rxm.next = 0.into();
        for i in 0..self._q {
            if self.rs_qp.q.val() == self.qi8[i].val() {
                self.l_rxq.next = true;
            }
            if self.rq_rx_rep[i].q.val() {
                self.l_rxm.next = self.l_rxm.val() | self.qbit16[i].val();
            }
        }
        self.rx.clock.next = self.clock.val();
        self.rx.rst.next = (self.rst_rx_rep.q.val() & !self.k_one_qp.val())
            | (self.rst_rx1_rep.q.val() & self.k_one_qp.val());
        self.rx.qp_rst.next = self.l_rxm.val();
        if self.k_one_qp.val() {
            self.rx.qp_rst.next = 0.into();
        }
        self.rx.init_psn.next = self.reset_psn.q.val();
        self.rx.pkt_valid.next =
            self.rs_valid.q.val() & (self.rs_kind.q.val() == 1) & self.l_rxq.val();
        self.rx.pkt_qp.next = bit_cast::<4, 8>(self.rs_qp.q.val());
        self.rx.pkt_psn.next = self.rs_psn.q.val();
        self.rx.pkt_len.next = self.rs_len.q.val();
        self.rx.pkt_ecn.next = self.rs_ecn.q.val();
        self.rx.pkt_trimmed.next = self.rs_trimmed.q.val();
        self.rx.pkt_lasthop.next = self.rs_lasthop.q.val();
        self.rx.pkt_ackreq.next = self.rs_ackreq.q.val();
        self.rx.pkt_ev.next = self.rs_ev.q.val();
        self.rx.mpr.next = 0.into();
        self.rx.ack_bytes.next = 0.into();
        for j in self._rw[2]..self._rw_e[2] {
            self.rx.mpr.next = self.csr.rw[j].val().get_bits::<8>(0);
        }
        for j in self._rw[7]..self._rw_e[7] {
            self.rx.ack_bytes.next = self.csr.rw[j].val().get_bits::<24>(0);
        }
        self.l_oow.next = self.rx.cnt_out_of_window.val();
        // The ACK path: the tracker's response, tagged with its QP. As on the transmit
        // header, the fields load every clock, with no enable and no clear, and the ports
        // are masked by ack_valid: cleared by "no response", synthesis put the valid's
        // decode on the set/reset pins of some 200 flops.
        self.l_ack_f.next = self.rx.sack_valid.val() | self.rx.nack_valid.val();
        self.o_ack_valid.d.next = self.l_ack_f.val();
        self.o_ack_qp.d.next = bit_cast::<8, 4>(self.rx.rsp_qp.val());
        self.o_ack_nack.d.next = self.rx.nack_valid.val();
        self.o_ack_cack.d.next = self.rx.cack_out.val();
        self.o_ack_offset.d.next = self.rx.sack_offset.val();
        self.o_ack_bitmap.d.next = self.rx.sack_bitmap.val();
        self.o_ack_m.d.next = self.rx.sack_m.val();
        self.o_ack_ev.d.next = self.rx.rsp_ev.val();
        self.o_ack_rcvd.d.next = self.rx.rcvd_bytes.val();
        self.o_ack_reason.d.next = self.rx.nack_reason.val();
        self.o_ack_psn.d.next = self.rx.nack_psn.val();

        // ---- RTT sample of a SACK; the SACK -> acked_bytes line --------------------------
        // Each QP compares the SACK's PSN with its own timed PSN (no QP mux in front of the
        // subtractor); the QP select only gates the result, beside the carry chain.
        self.l_a_st.next = 0.into();
        self.l_clr_qp.next = 0.into();
        self.l_samp_clr.next = false;
        for i in 0..self._q {
            if self.rs_sk[i].q.val() {
                if self.samp_ld[i].q.val() {
                    self.l_a_st.next = self.now_d.q.val();
                } else {
                    self.l_a_st.next = self.samp_t[i].q.val();
                }
            }
            self.l_sge.next = self.rs_sge_o[i].q.val();
            if self.samp_ld[i].q.val() {
                self.l_sge.next = self.rs_sge_n[i].q.val();
            }
            self.l_clr1.next = self.rs_sk[i].q.val() & self.samp_v[i].q.val() & self.l_sge.val();
            self.l_clr_qp.next = self.l_clr_qp.val().replace_bit(i, self.l_clr1.val());
            self.l_samp_clr.next = self.l_samp_clr.val() | self.l_clr1.val();
        }
        self.l_rtt.next = 0.into();
        if self.l_samp_clr.val() {
            self.l_rtt.next = self.now_ns.val() - self.l_a_st.val();
        }
        for k in 0..self._ln {
            self.ln_v[k].clock.next = self.clock.val();
            self.ln_qp[k].clock.next = self.clock.val();
            self.ln_ecn[k].clock.next = self.clock.val();
            self.ln_rtt[k].clock.next = self.clock.val();
        }
        self.ln_v[0].d.next = self.l_rx_sack.val();
        self.ln_qp[0].d.next = 0.into();
        self.ln_ecn[0].d.next = false;
        self.ln_rtt[0].d.next = 0.into();
        if self.l_rx_sack.val() {
            self.ln_qp[0].d.next = self.rs_qp.q.val();
            self.ln_ecn[0].d.next = self.rs_ecn.q.val();
            self.ln_rtt[0].d.next = self.l_rtt.val();
        }
        for k in 1..self._ln {
            self.ln_v[k].d.next = self.ln_v[k - 1].q.val();
            self.ln_qp[k].d.next = self.ln_qp[k - 1].q.val();
            self.ln_ecn[k].d.next = self.ln_ecn[k - 1].q.val();
            self.ln_rtt[k].d.next = self.ln_rtt[k - 1].q.val();
        }
        for k in 0..self._ln {
            if self.rst_g.val() {
                self.ln_v[k].d.next = false;
                self.ln_qp[k].d.next = 0.into();
                self.ln_ecn[k].d.next = false;
                self.ln_rtt[k].d.next = 0.into();
            }
        }

        // ---- send-queue post check -------------------------------------------------------
        self.l_sq_nz.next = self.sq_bytes.val() != 0;
        self.l_sq_ok.next = self.sq_valid.val()
            & (self.sq_qp.val() < self.k_q8.val())
            & self.l_sqe.val()
            & !self.l_sq_rst.val()
            & !self.l_sq_ovf.val();

        // ---- per QP: NSCC event slot, window, glue registers -----------------------------
        self.l_lv.next = false;
        self.l_lq.next = 0.into();
        self.l_le.next = false;
        self.l_lr.next = 0.into();
        for k in self._lk..self._ln {
            self.l_lv.next = self.ln_v[k].q.val();
            self.l_lq.next = self.ln_qp[k].q.val();
            self.l_le.next = self.ln_ecn[k].q.val();
            self.l_lr.next = self.ln_rtt[k].q.val();
        }
        // The shared window takes the owner's slot when no other QP's slot waits, or when the
        // owner has had no event since it was switched to (cc_fresh); otherwise it switches
        // (from idle) to the first waiting QP after the owner, wrapping. So waiting QPs take
        // turns, one event each, and a busy QP cannot starve the others (its ACKs merge in its
        // slot meanwhile).
        // The glue uses the owner as of last clock (cc_own_d): it differs from the window's
        // only in the clock after a switch, when the window loads the context and takes
        // nothing. So the offer reads no window output: a window output feeding the window's
        // inputs through the glue's always block is a combinational loop to Verilator
        // (UNOPTFLAT), although no real path exists. For the same reason what reads the
        // window's ev_ready (the take, cc_fresh) forms the offer again (l_*b) instead of
        // reading the Locals that drive the window.
        self.l_own4.next = self.cc_own_d.q.val();
        self.l_own.next = bit_cast::<8, 4>(self.l_own4.val());
        self.l_ok.next = 0.into();
        self.l_ob.next = 0.into();
        self.l_or.next = 0.into();
        self.l_oe.next = false;
        self.l_sw_hf.next = false;
        self.l_sw_h.next = 0.into();
        self.l_sw_lf.next = false;
        self.l_sw_l.next = 0.into();
        self.l_clr.next = 0.into();
        for i in 0..self._q {
            if self.l_own.val() == self.qi8[i].val() {
                self.l_ok.next = self.s_kind[i].q.val();
                self.l_ob.next = self.s_bytes[i].q.val();
                self.l_or.next = self.s_rtt[i].q.val();
                self.l_oe.next = self.s_ecn[i].q.val();
            }
            if self.s_valid[i].q.val()
                & (self.qi8[i].val() > self.l_own.val())
                & !self.l_sw_hf.val()
            {
                self.l_sw_hf.next = true;
                self.l_sw_h.next = self.qi8[i].val();
            }
            if self.s_valid[i].q.val() & !self.l_sw_lf.val() {
                self.l_sw_lf.next = true;
                self.l_sw_l.next = self.qi8[i].val();
            }
            if self.rq_cc_rep[i].q.val() {
                self.l_clr.next = self.l_clr.val() | self.qbit16[i].val();
            }
        }
        self.l_others.next =
            (self.s_vb.q.val() & !(bits::<16>(1) << self.l_own4.val())) != bits::<16>(0);
        self.l_vsh.next = self.s_vb.q.val() >> self.l_own4.val();
        self.l_offer.next =
            self.l_vsh.val().get_bit(0) & (!self.l_others.val() | self.cc_fresh.q.val());
        self.cc_own_d.clock.next = self.clock.val();
        self.s_vb.clock.next = self.clock.val();
        self.cc_fresh.clock.next = self.clock.val();
        self.l_ownb4.next = self.cc_own_d.q.val();
        self.l_ownb.next = bit_cast::<8, 4>(self.l_ownb4.val());
        self.l_othb.next =
            (self.s_vb.q.val() & !(bits::<16>(1) << self.l_ownb4.val())) != bits::<16>(0);
        self.l_vshb.next = self.s_vb.q.val() >> self.l_ownb4.val();
        self.l_offerb.next =
            self.l_vshb.val().get_bit(0) & (!self.l_othb.val() | self.cc_fresh.q.val());
        self.cc_own_d.d.next = self.cc.ctx_owner.val();
        self.cc_fresh.d.next = (self.cc_fresh.q.val()
            | (self.cc.ctx_owner.val() != self.cc_own_d.q.val()))
            & !(self.l_offerb.val() & self.cc.ev_ready.val());
        if self.rst_g.val() {
            self.cc_own_d.d.next = 0.into();
            self.cc_fresh.d.next = false;
        }
        self.l_sw_to.next = self.l_sw_l.val();
        if self.l_sw_hf.val() {
            self.l_sw_to.next = self.l_sw_h.val();
        }
        self.cc.clock.next = self.clock.val();
        self.cc.rst.next = self.rst_cc_rep.q.val();
        self.cc.ctx_clr.next = self.l_clr.val();
        self.cc.ev_valid.next = self.l_offer.val();
        self.cc.ev_kind.next = self.l_ok.val();
        self.cc.ev_bytes.next = self.l_ob.val().get_bits::<24>(0);
        self.cc.ev_rtt_ns.next = self.l_or.val().get_bits::<24>(0);
        self.cc.ev_ecn.next = self.l_oe.val();
        self.cc.ev_penalty.next = 0.into();
        self.cc.now_ns.next = self.now_ns.val();
        // (The core gates on its own registered cwnd check, not the window's can_send.)
        self.cc.inflight.next = 0.into();
        self.cc.next_len.next = 0.into();
        self.cc.sw_valid.next = self.l_others.val();
        self.cc.sw_ctx.next = bit_cast::<4, 8>(self.l_sw_to.val());
        for i in 0..self._q {
            self.sh_cw[i].clock.next = self.clock.val();
            self.sh_mw[i].clock.next = self.clock.val();
            self.sh_base[i].clock.next = self.clock.val();
            self.sh_cw[i].d.next = self.sh_cw[i].q.val();
            self.sh_mw[i].d.next = self.sh_mw[i].q.val();
            self.sh_base[i].d.next = self.sh_base[i].q.val();
            if self.cc.nx_load.val() & (self.l_ownb.val() == self.qi8[i].val()) {
                self.sh_cw[i].d.next = self.cc.nx_cwnd.val();
                self.sh_mw[i].d.next = self.cc.nx_maxwnd.val();
                self.sh_base[i].d.next = self.cc.nx_base_rtt_ns.val();
            }
            if self.rst_g.val() | self.rq_cc_rep[i].q.val() {
                self.sh_cw[i].d.next = self.k_init_cwnd.val();
                self.sh_mw[i].d.next = self.k_init_cwnd.val();
                self.sh_base[i].d.next = self.k_init_base.val();
            }
        }
        for i in 0..self._q {
            self.en[i].clock.next = self.clock.val();
            self.wok[i].clock.next = self.clock.val();
            self.fit[i].clock.next = self.clock.val();
            self.pnz[i].clock.next = self.clock.val();
            self.rst_q[i].clock.next = self.clock.val();
            self.rq_sb_rep[i].clock.next = self.clock.val();
            self.rq_rx_rep[i].clock.next = self.clock.val();
            self.rq_cc_rep[i].clock.next = self.clock.val();
            self.sel_hit[i].clock.next = self.clock.val();
            self.pend[i].clock.next = self.clock.val();
            self.nxt[i].clock.next = self.clock.val();
            self.nxt1[i].clock.next = self.clock.val();
            self.infl[i].clock.next = self.clock.val();
            self.outs[i].clock.next = self.clock.val();
            self.o_gt[i].clock.next = self.clock.val();
            self.samp_v[i].clock.next = self.clock.val();
            self.samp_psn[i].clock.next = self.clock.val();
            self.samp_t[i].clock.next = self.clock.val();
            self.s_valid[i].clock.next = self.clock.val();
            self.s_kind[i].clock.next = self.clock.val();
            self.s_bytes[i].clock.next = self.clock.val();
            self.s_rtt[i].clock.next = self.clock.val();
            self.s_ecn[i].clock.next = self.clock.val();
            self.cq_v[i].clock.next = self.clock.val();
            self.cq_k[i].clock.next = self.clock.val();
            self.cq_b[i].clock.next = self.clock.val();
            self.cq_r[i].clock.next = self.clock.val();
            self.cq_e[i].clock.next = self.clock.val();
            self.cq_dn[i].clock.next = self.clock.val();
            self.hold[i].clock.next = self.clock.val();
            self.tick_pend[i].clock.next = self.clock.val();

            // pend > MTU: min(pend, MTU) for the window here, and the pend update below.
            self.l_gt.next = self.pend[i].q.val() > self.k_mtu.val();
            self.l_len.next = self.pend[i].q.val();
            if self.l_gt.val() {
                self.l_len.next = self.k_mtu.val();
            }
            // Next cycle's cwnd check, from this cycle's registers: inflight + len <= cwnd, and
            // if this QP sends new data now, inflight + MTU + the next packet's length (its
            // pending bytes then less this packet) <= cwnd; bytes posted now count from the
            // cycle after. Three sums x + y <= cwnd as x + y + ~cwnd < 0 (34-bit carry-save
            // stage, then one carry chain whose top bit is the answer, as in nscc_window's
            // can_send), for y = pend, MTU and 2 MTU, picked by pend > MTU and pend > 2 MTU:
            // the min's mux is off the carry chains, and the pick reads a flop.
            // (bit_cast cannot take an indexed field: the values go through locals)
            self.l_x32.next = self.infl[i].q.val();
            self.l_y32.next = self.sh_cw[i].q.val();
            self.l_p32.next = self.pend[i].q.val();
            self.l_csx.next = bit_cast::<34, 32>(self.l_x32.val());
            self.l_csp.next = bit_cast::<34, 32>(self.l_p32.val());
            self.l_csm.next = bit_cast::<34, 32>(self.k_mtu.val());
            self.l_csm2.next = bit_cast::<34, 32>(self.k_mtu.val()) << 1;
            self.l_csz.next = !bit_cast::<34, 32>(self.l_y32.val());
            self.l_isum.next = (self.l_csx.val() ^ self.l_csp.val() ^ self.l_csz.val())
                + (((self.l_csx.val() & self.l_csp.val())
                    | (self.l_csx.val() & self.l_csz.val())
                    | (self.l_csp.val() & self.l_csz.val()))
                    << 1);
            self.l_isum_m.next = (self.l_csx.val() ^ self.l_csm.val() ^ self.l_csz.val())
                + (((self.l_csx.val() & self.l_csm.val())
                    | (self.l_csx.val() & self.l_csz.val())
                    | (self.l_csm.val() & self.l_csz.val()))
                    << 1);
            self.l_isum_m2.next = (self.l_csx.val() ^ self.l_csm2.val() ^ self.l_csz.val())
                + (((self.l_csx.val() & self.l_csm2.val())
                    | (self.l_csx.val() & self.l_csz.val())
                    | (self.l_csm2.val() & self.l_csz.val()))
                    << 1);
            // keep: y = min(pend, MTU); sent: y = MTU + min(max(pend - MTU, 0), MTU)
            if self.l_gt.val() {
                self.l_fit.next = self.l_isum_m.val().get_bit(33);
            } else {
                self.l_fit.next = self.l_isum.val().get_bit(33);
            }
            self.l_fit_s.next = self.l_isum_m.val().get_bit(33);
            if self.l_gt.val() {
                self.l_fit_s.next = self.l_isum.val().get_bit(33);
            }
            if self.pend[i].q.val() > self.k_mtu2.val() {
                self.l_fit_s.next = self.l_isum_m2.val().get_bit(33);
            }
            // The window takes the slot's event (this QP owns it and offered it).
            self.l_taken.next = self.l_offerb.val()
                & self.cc.ev_ready.val()
                & (self.l_ownb.val() == self.qi8[i].val());
            self.l_sv.next = self.s_valid[i].q.val();
            self.l_sk.next = self.s_kind[i].q.val();
            self.l_sb.next = self.s_bytes[i].q.val();
            self.l_sr.next = self.s_rtt[i].q.val();
            self.l_se.next = self.s_ecn[i].q.val();
            // Candidates: RTO > trim NACK > ACK > TICK, the winner registered (cq_*) with the
            // count of those it beat; the slot takes it the next clock.
            self.l_c_rto.next = self.l_timeout.val() & (self.l_fb_qp.val() == self.qi8[i].val());
            self.l_c_trim.next = self.rs_tn[i].q.val();
            self.l_c_ack.next = self.l_lv.val()
                & (self.l_lq.val() == self.qi8[i].val())
                & (self.sb[i].acked_bytes.val() != 0);
            self.l_dn.next = 0.into();
            if (self.l_c_rto.val() & self.l_c_trim.val())
                | (self.l_c_rto.val() & self.l_c_ack.val())
                | (self.l_c_trim.val() & self.l_c_ack.val())
            {
                self.l_dn.next = 1.into();
            }
            if self.l_c_rto.val() & self.l_c_trim.val() & self.l_c_ack.val() {
                self.l_dn.next = 2.into();
            }
            self.cq_dn[i].d.next = self.l_dn.val();
            self.cq_v[i].d.next = true;
            self.cq_k[i].d.next = 3.into();
            self.cq_b[i].d.next = self.sb[i].acked_bytes.val();
            if self.l_c_trim.val() {
                self.cq_b[i].d.next = self.k_mtu.val();
            }
            self.cq_r[i].d.next = self.l_lr.val();
            self.cq_e[i].d.next = self.l_le.val();
            if self.l_c_rto.val() {
                self.cq_k[i].d.next = 2.into();
            } else if self.l_c_trim.val() {
                self.cq_k[i].d.next = 1.into();
            } else if self.l_c_ack.val() {
                self.cq_k[i].d.next = 0.into();
            } else if !self.tick.val() {
                self.cq_v[i].d.next = false;
            }
            // The slot takes last clock's candidate: an ACK merges into a waiting ACK,
            // anything fills an empty slot, a non-TICK also replaces a waiting TICK, and a
            // non-TICK that fits nowhere is dropped (one more in dq).
            self.l_dn.next = self.cq_dn[i].q.val();
            self.l_free.next = !self.l_sv.val() | (self.l_sk.val() == 3);
            // A merge only happens into a slot the window did not take this cycle (taken
            // selects last, below), so the sum reads l_sb while it is still the slot's
            // register: the window's ready is off the adder.
            self.l_x32.next = self.cq_b[i].q.val();
            self.l_msum.next =
                bit_cast::<33, 32>(self.l_sb.val()) + bit_cast::<33, 32>(self.l_x32.val());
            if self.cq_v[i].q.val() {
                if (self.cq_k[i].q.val() == 0) & self.l_sv.val() & (self.l_sk.val() == 0) {
                    self.l_sb.next = self.l_msum.val().get_bits::<32>(0);
                    // > 2^24 - 1 as an OR of the sum's top bits: a compare against the
                    // constant is a second carry chain behind the adder's in this loop.
                    if self.l_msum.val().get_bits::<9>(24) != 0 {
                        self.l_sb.next = self.k_sat24.val().get_bits::<32>(0);
                    }
                    self.l_se.next = self.l_se.val() | self.cq_e[i].q.val();
                    if self.cq_r[i].q.val() != 0 {
                        self.l_sr.next = self.cq_r[i].q.val();
                    }
                } else if !self.l_sv.val() | (self.l_free.val() & (self.cq_k[i].q.val() != 3)) {
                    self.l_sv.next = true;
                    self.l_sk.next = self.cq_k[i].q.val();
                    self.l_sb.next = self.cq_b[i].q.val();
                    self.l_sr.next = self.cq_r[i].q.val();
                    self.l_se.next = self.cq_e[i].q.val();
                } else if self.cq_k[i].q.val() != 3 {
                    self.l_dn.next = self.l_dn.val() + 1;
                }
            }
            // Taken by the window, the slot is empty and last clock's candidate fills it.
            // Selected last, so the window's ready (from its busy flop, across the die from
            // the slot) is one mux in front of the slot's flops, not the head of the merge
            // decode above.
            if self.l_taken.val() {
                self.l_sv.next = self.cq_v[i].q.val();
                self.l_sk.next = 0.into();
                self.l_sb.next = 0.into();
                self.l_sr.next = 0.into();
                self.l_se.next = false;
                if self.cq_v[i].q.val() {
                    self.l_sk.next = self.cq_k[i].q.val();
                    self.l_sb.next = self.cq_b[i].q.val();
                    self.l_sr.next = self.cq_r[i].q.val();
                    self.l_se.next = self.cq_e[i].q.val();
                }
                self.l_dn.next = self.cq_dn[i].q.val();
            }
            self.dq[i].clock.next = self.clock.val();
            self.dq[i].d.next = self.l_dn.val();
            if self.rst_g.val() {
                self.dq[i].d.next = 0.into();
            }
            self.s_valid[i].d.next = self.l_sv.val();
            self.s_kind[i].d.next = self.l_sk.val();
            self.s_bytes[i].d.next = self.l_sb.val();
            self.s_rtt[i].d.next = self.l_sr.val();
            self.s_ecn[i].d.next = self.l_se.val();

            // Glue registers.
            self.l_is_send.next = self.l_send.val() & (self.l_send_qp.val() == self.qi8[i].val());
            self.l_sent_new.next = self.l_is_send.val() & !self.l_send_rtx.val();
            self.fit[i].d.next = self.l_fit.val();
            if self.l_sent_new.val() {
                self.fit[i].d.next = self.l_fit_s.val();
            }
            self.l_sent_rtx.next = self.l_is_send.val() & self.l_send_rtx.val();
            // The send decision and the post check each end a long path (window and pick;
            // the posted QP's pending bytes + the post's), so the register they update has all
            // four next values formed beside them and they only select.
            self.l_sq_here.next = self.l_sq_ok.val() & (self.sq_qp.val() == self.qi8[i].val());
            // pend - min(pend, MTU) is max(pend - MTU, 0), so the subtracts do not wait for
            // the compare and its mux: pend1 = pend - MTU or 0, pend3 = pend + posted - MTU (a
            // carry-save stage with -MTU, then one carry chain) or the posted bytes alone.
            self.l_pm.next = self.pend[i].q.val() + self.k_neg_mtu.val();
            self.l_cs_s.next = self.pend[i].q.val() ^ self.sq_bytes.val() ^ self.k_neg_mtu.val();
            self.l_cs_c.next = ((self.pend[i].q.val() & self.sq_bytes.val())
                | (self.pend[i].q.val() & self.k_neg_mtu.val())
                | (self.sq_bytes.val() & self.k_neg_mtu.val()))
                << 1;
            self.l_pms.next = self.l_cs_s.val() + self.l_cs_c.val();
            self.l_pend1.next = bits::<32>(0);
            self.l_pend3.next = self.sq_bytes.val();
            if self.l_gt.val() {
                self.l_pend1.next = self.l_pm.val();
                self.l_pend3.next = self.l_pms.val();
            }
            // Written as the same 33-bit add as the post check's overflow carry (l_sq_sum),
            // so synthesis can merge the two adders.
            self.l_sq_p.next = self.pend[i].q.val();
            self.l_pend2.next = bit_cast::<32, 33>(
                bit_cast::<33, 32>(self.l_sq_p.val()) + bit_cast::<33, 32>(self.sq_bytes.val()),
            );
            // pnz follows pend without looking at its 32 bits: pend1 is non-zero exactly when
            // pend > MTU (l_gt); a post is accepted only when pend + posted does not carry
            // out, so pend3 (pend + posted - MTU, or posted) and pend2 (pend + posted) are
            // non-zero exactly when l_gt or posted != 0, and pnz or posted != 0.
            if self.l_sent_new.val() {
                if self.l_sq_here.val() {
                    self.pend[i].d.next = self.l_pend3.val();
                    self.pnz[i].d.next = self.l_gt.val() | self.l_sq_nz.val();
                } else {
                    self.pend[i].d.next = self.l_pend1.val();
                    self.pnz[i].d.next = self.l_gt.val();
                }
            } else if self.l_sq_here.val() {
                self.pend[i].d.next = self.l_pend2.val();
                self.pnz[i].d.next = self.pnz[i].q.val() | self.l_sq_nz.val();
            } else {
                self.pend[i].d.next = self.pend[i].q.val();
                self.pnz[i].d.next = self.pnz[i].q.val();
            }
            self.l_nxt_new.next = self.nxt[i].q.val();
            self.nxt1[i].d.next = self.nxt1[i].q.val();
            if self.l_sent_new.val() {
                self.l_nxt_new.next = self.nxt1[i].q.val();
                self.nxt1[i].d.next = self.nxt1[i].q.val() + 1;
            }
            self.nxt[i].d.next = self.l_nxt_new.val();
            // outs' = nxt' - una' for every way nxt can move (a send, the core's reset), each
            // formed off the send decision, which only selects; una' is the scoreboard's rule
            // (init_psn under its reset, else una + una_adv, all registers), so outs = nxt -
            // una holds at every edge but one: a QP reset leaves outs as a send would, since
            // in the clock after it (rst_q) outs has no reader (the window check is off, inflight
            // cleared), and no subtract hangs off una for that one clock's value.
            self.l_una_adv.next = self.sb[i].una_adv.val();
            // Each difference for both una' (una + una_adv, or init_psn when the scoreboard is
            // in reset): the reset, a high fan-out net, selects after the carry chains.
            // x - (una + una_adv) as one carry-save stage and one carry chain (`SubSum24`),
            // not una + una_adv's chain in front of each subtract's.
            self.os_nxt[i].x.next = self.nxt[i].q.val();
            self.os_nxt1[i].x.next = self.nxt1[i].q.val();
            self.os_nxt[i].a.next = self.sb[i].una.val();
            self.os_nxt1[i].a.next = self.sb[i].una.val();
            self.os_nxt[i].b.next = bit_cast::<24, 4>(self.l_una_adv.val());
            self.os_nxt1[i].b.next = bit_cast::<24, 4>(self.l_una_adv.val());
            self.l_outs0.next = self.os_nxt[i].diff.val();
            self.l_outs1.next = self.os_nxt1[i].diff.val();
            // Outside the resets outs' = outs + send - una_adv (outs = nxt - una at those
            // edges), so o_gt' follows from outs, o_gt and the step.
            self.oc_step[i].outs.next = self.outs[i].q.val();
            self.oc_step[i].gt.next = self.o_gt[i].q.val();
            self.oc_step[i].adv.next = self.l_una_adv.val();
            self.l_oc_gn.next = self.oc_step[i].stay.val();
            self.l_oc_g1.next = self.oc_step[i].send.val();
            // Under either reset una' = reset_psn = nxt (see `reset_psn`; no send while the
            // QP is reset), so nxt' - una' is 0 (1 for nxt + 1), under the cap.
            if self.rst_g.val() | self.rst_q[i].q.val() {
                self.l_outs0.next = 0.into();
                self.l_outs1.next = 1.into();
                self.l_oc_gn.next = false;
                self.l_oc_g1.next = false;
            }
            if self.l_sent_new.val() {
                self.outs[i].d.next = self.l_outs1.val();
                self.o_gt[i].d.next = self.l_oc_g1.val();
            } else {
                self.outs[i].d.next = self.l_outs0.val();
                self.o_gt[i].d.next = self.l_oc_gn.val();
            }
            // Bytes in flight: min(nxt' - una, cap) x MTU, shift-and-add over the MTU's bits,
            // for nxt' = nxt (A); for nxt' = nxt + 1 it is A + MTU. The model's other cases
            // there (A at the cap, 0 where nxt + 1 - una wraps to 0) cannot arise with a
            // send: a new send needs wok, so outs < W - WINDOW_MARGIN a clock ago and outs
            // + 1 <= W now, below the cap (W <= 1024 < 2047).
            self.l_outp.next = self.outs[i].q.val();
            // Next cycle's window check, one PSN tighter (nxt grows by at most one a cycle,
            // una never falls), so the pick reads a flop; false while the QP is reset.
            self.wok[i].d.next = (self.l_outp.val() < self.k_win1.val()) & !self.rst_q[i].q.val();
            self.l_outc.next = bit_cast::<32, 24>(self.l_outp.val());
            if self.o_gt[i].q.val() {
                self.l_outc.next = bit_cast::<32, 24>(self.k_infl_cap.val());
            }
            self.l_infl_acc.next = 0.into();
            for k in 0..14 {
                if self.k_mtu_bit[k].val() {
                    self.l_infl_acc.next =
                        self.l_infl_acc.val() + (self.l_outc.val() << self.k_sh[k].val());
                }
            }
            self.l_infl_b.next = self.l_infl_acc.val() + self.k_mtu.val();
            if self.l_sent_new.val() {
                self.infl[i].d.next = self.l_infl_b.val();
            } else {
                self.infl[i].d.next = self.l_infl_acc.val();
            }
            // Nothing is in flight while the QP is reset (outs is not nxt - una then).
            if self.rst_q[i].q.val() {
                self.infl[i].d.next = 0.into();
            }
            // RTT sample: cleared by the SACK that covers it; set by a new send; a
            // retransmission of the timed PSN cancels it (Karn).
            self.l_gsv.next = self.samp_v[i].q.val() & !self.l_clr_qp.val().get_bit(i);
            self.samp_v[i].d.next = self.l_gsv.val();
            self.samp_psn[i].d.next = self.samp_psn[i].q.val();
            self.samp_t[i].d.next = self.samp_t[i].q.val();
            if self.samp_ld[i].q.val() {
                self.samp_t[i].d.next = self.now_d.q.val();
            }
            // (The PSN sent is this QP's own nxt for a new send and its rtx_psn for a
            // retransmit, so neither compare waits for the pick's PSN mux.)
            self.samp_ld[i].d.next = self.l_sent_new.val() & !self.l_gsv.val();
            if self.l_sent_new.val() & !self.l_gsv.val() {
                self.samp_v[i].d.next = true;
                self.samp_psn[i].d.next = self.nxt[i].q.val();
            }
            if self.l_sent_rtx.val()
                & self.l_gsv.val()
                & (self.samp_psn[i].q.val() == self.sb[i].rtx_psn.val())
            {
                self.samp_v[i].d.next = false;
            }
            self.hold[i].d.next = 0.into();
            if self.hold[i].q.val() != 0 {
                self.hold[i].d.next = self.hold[i].q.val() - 1;
            }
            if self.l_sent_rtx.val() {
                self.hold[i].d.next = self.k_rtx_hold.val();
            }
            self.tick_pend[i].d.next = (self.tick_pend[i].q.val()
                & !(self.l_tick_f.val() & (self.l_tick_qp.val() == self.qi8[i].val())))
                | self.tick.val();
            // QP control.
            self.en[i].d.next = self.en[i].q.val();
            self.rst_q[i].d.next = false;
            self.sel_hit[i].d.next =
                self.l_sel_ok.val() & (self.l_qp_sel.val() == self.qi16[i].val());
            self.l_qp_hit.next = self.l_ctrl_stb.val() & self.sel_hit[i].q.val();
            if self.l_qp_hit.val() {
                if self.l_ctrl_op.val() == 1 {
                    self.en[i].d.next = true;
                }
                if self.l_ctrl_op.val() == 2 {
                    self.en[i].d.next = false;
                }
                if self.l_ctrl_op.val() == 3 {
                    self.rst_q[i].d.next = true;
                    self.reset_psn.d.next = self.l_init_psn.val();
                    self.nxt[i].d.next = self.l_init_psn.val();
                    self.nxt1[i].d.next = self.l_init_psn.val() + 1;
                }
            }
            if self.rst_g.val() {
                self.en[i].d.next = false;
                self.rst_q[i].d.next = false;
                self.nxt[i].d.next = 0.into();
                self.nxt1[i].d.next = bits::<24>(1);
                self.outs[i].d.next = 0.into();
                self.o_gt[i].d.next = false;
            }
            self.rq_sb_rep[i].d.next = self.rst_q[i].d.val();
            self.rq_rx_rep[i].d.next = self.rst_q[i].d.val();
            self.rq_cc_rep[i].d.next = self.rst_q[i].d.val();
            // What a QP reset (QP_CTRL op 3) and the core's reset both clear.
            if self.rst_g.val() | (self.l_qp_hit.val() & (self.l_ctrl_op.val() == 3)) {
                self.wok[i].d.next = false;
                self.fit[i].d.next = false;
                self.pend[i].d.next = 0.into();
                self.pnz[i].d.next = false;
                self.infl[i].d.next = 0.into();
                self.samp_v[i].d.next = false;
                self.samp_ld[i].d.next = false;
                self.samp_psn[i].d.next = 0.into();
                self.s_valid[i].d.next = false;
                self.s_kind[i].d.next = 0.into();
                self.s_bytes[i].d.next = 0.into();
                self.s_rtt[i].d.next = 0.into();
                self.s_ecn[i].d.next = false;
                self.cq_v[i].d.next = false;
                self.cq_k[i].d.next = 0.into();
                self.cq_dn[i].d.next = 0.into();
                self.hold[i].d.next = 0.into();
                self.tick_pend[i].d.next = false;
            }
        }
        // rst_rx_rep's and rq_rx_rep[0]'s next values, ORed (read by the tracker at Q = 1 only).
        self.rst_rx1_rep.d.next = self.rst.val() | self.rst_q[0].d.val();
        self.s_vb.d.next = 0.into();
        for i in 0..self._q {
            if self.s_valid[i].d.val() {
                self.s_vb.d.next = self.s_vb.d.val() | self.qbit16[i].val();
            }
        }

        // ---- arbiter, EV FIFO ------------------------------------------------------------
        self.l_fsum.next =
            bit_cast::<5, 4>(self.f_count.q.val()) + bit_cast::<5, 4>(self.preq.q.val());
        self.l_req.next = !self.req_full.q.val();
        self.arb.rst.next = self.rst_arb_rep.q.val();
        self.arb.req.next = self.l_req.val();
        self.arb.plane_ready.next = self.plane_ready.val();
        self.arb.fb_valid.next = self.l_fb_valid.val();
        self.arb.fb_idx.next = self.l_fb_idx.val();
        self.arb.fb_kind.next = self.l_fb_kind.val();
        self.arb.ctl_op.next = 0.into();
        if self.l_ev_op_stb.val() {
            self.arb.ctl_op.next = self.l_ev_op.val();
        }
        self.arb.ctl_idx.next = self.ev_idx_rep.q.val();
        self.arb.ctl_ev.next = self.l_ev_value.val();
        self.arb.policy.next = false;
        for j in self._rw[8]..self._rw_e[8] {
            self.arb.policy.next = self.csr.rw[j].val().get_bit(0);
        }
        self.arb.min_active.next = 0.into();
        for j in self._rw[9]..self._rw_e[9] {
            self.arb.min_active.next = self.csr.rw[j].val().get_bits::<9>(0);
        }
        self.arb.seed.next = self.k_seed.val();
        self.arb.rd_idx.next = self.l_ev_index.val();
        self.l_back.next = self.arb.grant_valid.val() | self.arb.grant_none.val();
        self.l_preq.next = self.preq.q.val();
        if self.l_req.val() {
            self.l_preq.next = self.l_preq.val() + 1;
        }
        if self.l_back.val() {
            self.l_preq.next = self.l_preq.val() - 1;
        }
        self.preq.d.next = self.l_preq.val();
        self.l_fhead.next = self.f_head.q.val();
        self.l_fcount.next = self.f_count.q.val();
        if self.l_send.val() {
            self.l_fhead.next = self.l_fhead.val() + 1;
            self.l_fcount.next = self.l_fcount.val() - 1;
        }
        self.l_ftail.next = self.f_head.q.val() + self.f_count.q.val().get_bits::<3>(0);
        for k in 0..8 {
            self.f_idx[k].clock.next = self.clock.val();
            self.f_plane[k].clock.next = self.clock.val();
            self.f_ev[k].clock.next = self.clock.val();
            self.f_idx[k].d.next = self.f_idx[k].q.val();
            self.f_plane[k].d.next = self.f_plane[k].q.val();
            self.f_ev[k].d.next = self.f_ev[k].q.val();
            if self.arb.grant_valid.val() & (self.l_ftail.val() == self.fi[k].val()) {
                self.f_idx[k].d.next = self.arb.grant_idx.val();
                self.f_plane[k].d.next = self.arb.grant_plane.val();
                self.f_ev[k].d.next = self.arb.grant_ev.val();
            }
            if self.rst_g.val() {
                self.f_idx[k].d.next = 0.into();
                self.f_plane[k].d.next = 0.into();
                self.f_ev[k].d.next = 0.into();
            }
        }
        if self.arb.grant_valid.val() {
            self.l_fcount.next = self.l_fcount.val() + 1;
        }
        self.f_head.d.next = self.l_fhead.val();
        self.f_count.d.next = self.l_fcount.val();
        // The next f_count + preq is this sum + d - send, d = req + grant - back in
        // {-1, 0, 1} (l_rq_up / l_rq_dn); "no request next cycle" is sum >= 8 - d + send, so
        // the sum is compared with 7..10 as bit tests (no chain after the add) and d and the
        // send (the pick's end) only select.
        self.l_rq_up.next = self.l_req.val() & !(self.l_back.val() & !self.arb.grant_valid.val());
        self.l_rq_dn.next = !self.l_req.val() & self.l_back.val() & !self.arb.grant_valid.val();
        self.l_ge8.next = self.l_fsum.val().get_bit(4) | self.l_fsum.val().get_bit(3);
        self.l_ge7.next = self.l_ge8.val()
            | (self.l_fsum.val().get_bit(2)
                & self.l_fsum.val().get_bit(1)
                & self.l_fsum.val().get_bit(0));
        self.l_ge9.next = self.l_fsum.val().get_bit(4)
            | (self.l_fsum.val().get_bit(3)
                & (self.l_fsum.val().get_bit(2)
                    | self.l_fsum.val().get_bit(1)
                    | self.l_fsum.val().get_bit(0)));
        self.l_ge10.next = self.l_fsum.val().get_bit(4)
            | (self.l_fsum.val().get_bit(3)
                & (self.l_fsum.val().get_bit(2) | self.l_fsum.val().get_bit(1)));
        self.l_rq_a.next = self.l_ge8.val();
        self.l_rq_b.next = self.l_ge9.val();
        if self.l_rq_up.val() {
            self.l_rq_a.next = self.l_ge7.val();
            self.l_rq_b.next = self.l_ge8.val();
        }
        if self.l_rq_dn.val() {
            self.l_rq_a.next = self.l_ge9.val();
            self.l_rq_b.next = self.l_ge10.val();
        }
        self.req_full.d.next = self.l_rq_a.val();
        if self.l_send.val() {
            self.req_full.d.next = self.l_rq_b.val();
        }
        // The next count is nonzero: a grant without a send leaves at least one; a send
        // without a grant leaves count - 1; otherwise the count stays.
        self.f_nz.d.next = self.f_count.q.val() != 0;
        if self.arb.grant_valid.val() & !self.l_send.val() {
            self.f_nz.d.next = true;
        }
        if !self.arb.grant_valid.val() & self.l_send.val() {
            self.f_nz.d.next = self.f_count.q.val() != 1;
        }
        self.rr.d.next = self.l_rr_next.val();

        // ---- EV event queue ----------------------------------------------------------------
        self.l_push.next =
            self.l_fb_valid.val() & (self.l_fb_kind.val() != 0) & (self.l_fb_kind.val() != 4);
        self.l_want.next = 1.into();
        if (self.l_fb_kind.val() == 2) | (self.l_fb_kind.val() == 5) {
            self.l_want.next = 2.into();
        }
        if self.l_fb_kind.val() == 6 {
            self.l_want.next = 0.into();
        }
        self.l_ent.next = bit_cast::<16, 8>(self.l_fb_idx.val())
            | (bit_cast::<16, 2>(self.l_want.val()) << 8)
            | (bit_cast::<16, 3>(self.l_fb_kind.val()) << 12);
        self.l_ehead.next = self.e_head.q.val();
        if self.l_pop.val() {
            self.l_ehead.next = self.e_head.q.val() + 1;
        }
        self.l_etail.next = self.e_head.q.val() + self.e_count.q.val().get_bits::<4>(0);
        // Full after this cycle's pop: full now (a flop) and no pop, so the drop and the
        // push's accept do not wait for the count's decrement.
        self.l_efull.next = self.e_full.q.val() & !self.l_pop.val();
        self.l_evq_drop.next = self.l_push.val() & self.l_efull.val();
        self.l_eacc.next = self.l_push.val() & !self.l_efull.val();
        for k in 0..16 {
            self.e_ent[k].clock.next = self.clock.val();
            self.e_ent[k].d.next = self.e_ent[k].q.val();
            if self.l_eacc.val() & (self.l_etail.val() == self.ei[k].val()) {
                self.e_ent[k].d.next = self.l_ent.val();
            }
            if self.rst_g.val() {
                self.e_ent[k].d.next = 0.into();
            }
        }
        // The count moves by one add of the registered count, selected by the pop and the
        // accept, and full / nonzero are formed from the flops and the two strobes, not from
        // the next count: chained, the decrement, increment and compare were the core's
        // critical path (seed 3 at dc5cdde: e_count -> l_ecount -> e_full, 9.5 ns). The pop
        // needs e_nz. Full stays full unless a pop comes without a push (at full the pop
        // makes room for the push in the same clock); at 15 a push without a pop fills it.
        self.l_ecount.next = self.e_count.q.val();
        if self.l_eacc.val() & !self.l_pop.val() {
            self.l_ecount.next = self.e_count.q.val() + 1;
        }
        if !self.l_eacc.val() & self.l_pop.val() {
            self.l_ecount.next = self.e_count.q.val() - 1;
        }
        self.e_head.d.next = self.l_ehead.val();
        self.e_count.d.next = self.l_ecount.val();
        self.e_full.d.next = (self.e_full.q.val() & (!self.l_pop.val() | self.l_push.val()))
            | ((self.e_count.q.val() == 15) & self.l_push.val() & !self.l_pop.val());
        self.e_nz.d.next = self.l_eacc.val()
            | (self.e_nz.q.val() & !(self.l_pop.val() & (self.e_count.q.val() == 1)));

        // ---- EV value shadow (read registered, read-first) -------------------------------
        self.shadow.read_address.next = self.l_ev_index.val();
        self.shadow.write_address.next = self.l_ev_index.val();
        self.shadow.write_data.next = self.l_ev_value.val();
        self.ev_idx_ok.d.next = bit_cast::<9, 8>(self.l_ev_index.val()) < self.k_total.val();
        self.ev_idx_rep.d.next = self.l_ev_index.val();
        self.now_d.d.next = self.now_ns.val();
        if self.rst.val() {
            self.reset_psn.d.next = 0.into();
        }
        self.shadow.write_enable.next =
            self.l_ev_op_stb.val() & (self.l_ev_op.val() == 3) & self.ev_idx_ok.q.val();

        // ---- CSR block: MMIO, RO values from the registered state ------------------------
        self.csr.rst.next = self.rst_csr_rep.q.val();
        self.csr.wr_valid.next = self.wr_valid.val();
        self.csr.wr_addr.next = self.wr_addr.val();
        self.csr.wr_data.next = self.wr_data.val();
        self.csr.wr_strb.next = self.wr_strb.val();
        self.csr.rd_valid.next = self.rd_valid.val();
        self.csr.rd_addr.next = self.rd_addr.val();
        self.l_st_en.next = false;
        self.l_st_rst.next = false;
        self.l_st_err.next = false;
        self.l_brtt.next = 0.into();
        self.l_cwnd.next = 0.into();
        self.l_maxwnd.next = 0.into();
        self.l_base_rtt.next = 0.into();
        for i in 0..self._q {
            if self.l_qp_sel.val() == self.qi16[i].val() {
                self.l_st_en.next = self.en[i].q.val();
                self.l_st_rst.next = self.rst_q[i].q.val();
                self.l_st_err.next = self.sb[i].qp_error.val();
                self.l_cwnd.next = self.sh_cw[i].q.val();
                self.l_maxwnd.next = self.sh_mw[i].q.val();
                self.l_brtt.next = self.sh_base[i].q.val();
            }
        }
        self.l_status.next = bit_cast::<32, 1>(self.l_st_en.val().into())
            | (bit_cast::<32, 1>(self.l_st_rst.val().into()) << 1)
            | (bit_cast::<32, 1>(self.l_st_err.val().into()) << 2);
        self.l_base_rtt.next = bit_cast::<32, 24>(self.l_brtt.val());
        self.l_hent.next = 0.into();
        for k in 0..16 {
            if self.e_head.q.val() == self.ei[k].val() {
                self.l_hent.next = self.e_ent[k].q.val();
            }
        }
        self.l_evq_head.next = 0.into();
        if self.e_count.q.val() != 0 {
            self.l_evq_head.next = bit_cast::<32, 16>(self.l_hent.val()) | self.k_bit31.val();
        }
        for j in self._ro[0]..self._ro_e[0] {
            self.csr.ro[j].next = self.l_status.val();
        }
        for j in self._ro[1]..self._ro_e[1] {
            self.csr.ro[j].next = bit_cast::<32, 2>(self.arb.rd_state.val())
                | (bit_cast::<32, 4>(self.arb.rd_pen.val()) << 8);
        }
        for j in self._ro[2]..self._ro_e[2] {
            self.csr.ro[j].next = self.shadow.read_data.val();
        }
        for j in self._ro[3]..self._ro_e[3] {
            self.csr.ro[j].next = self.l_cwnd.val();
        }
        for j in self._ro[4]..self._ro_e[4] {
            self.csr.ro[j].next = self.l_maxwnd.val();
        }
        for j in self._ro[5]..self._ro_e[5] {
            self.csr.ro[j].next = self.l_base_rtt.val();
        }
        for j in self._ro[6]..self._ro_e[6] {
            self.csr.ro[j].next = self.c_pkts.q.val();
        }
        for j in self._ro[7]..self._ro_e[7] {
            self.csr.ro[j].next = self.c_rtx.q.val();
        }
        for j in self._ro[8]..self._ro_e[8] {
            self.csr.ro[j].next = self.c_trims.q.val();
        }
        for j in self._ro[9]..self._ro_e[9] {
            self.csr.ro[j].next = self.c_ntrim.q.val();
        }
        for j in self._ro[10]..self._ro_e[10] {
            self.csr.ro[j].next = self.c_ntrim_lh.q.val();
        }
        for j in self._ro[11]..self._ro_e[11] {
            self.csr.ro[j].next = self.c_noor.q.val();
        }
        for j in self._ro[12]..self._ro_e[12] {
            self.csr.ro[j].next = self.c_nother.q.val();
        }
        for j in self._ro[13]..self._ro_e[13] {
            self.csr.ro[j].next = self.c_tmo.q.val();
        }
        for j in self._ro[14]..self._ro_e[14] {
            self.csr.ro[j].next = self.c_oow.q.val();
        }
        for j in self._ro[15]..self._ro_e[15] {
            self.csr.ro[j].next = self.c_rxdrop.q.val();
        }
        for j in self._ro[16]..self._ro_e[16] {
            self.csr.ro[j].next = self.c_refused.q.val();
        }
        for j in self._ro[17]..self._ro_e[17] {
            self.csr.ro[j].next = self.c_nsccdrop.q.val();
        }
        for j in self._ro[18]..self._ro_e[18] {
            self.csr.ro[j].next = self.c_acks.q.val();
        }
        for j in self._ro[19]..self._ro_e[19] {
            self.csr.ro[j].next = self.l_evq_head.val();
        }
        for j in self._ro[20]..self._ro_e[20] {
            self.csr.ro[j].next = bit_cast::<32, 5>(self.e_count.q.val());
        }
        for j in self._ro[21]..self._ro_e[21] {
            self.csr.ro[j].next = self.c_evqdrop.q.val();
        }
        for j in 0..self._n_w1c {
            self.csr.w1c_set[j].next = 0.into();
        }
        for j in self._w1c_evq_status..self._w1c_evq_status_e {
            self.csr.w1c_set[j].next = bit_cast::<32, 1>(self.l_evq_drop.val().into());
        }
        self.wr_ready.next = self.csr.wr_ready.val();
        self.rd_ready.next = self.csr.rd_ready.val();
        self.b_valid.next = self.csr.b_valid.val();
        self.b_resp.next = self.csr.b_resp.val();
        self.r_valid.next = self.csr.r_valid.val();
        self.r_data.next = self.csr.r_data.val();
        self.r_resp.next = self.csr.r_resp.val();

        // ---- counters ----------------------------------------------------------------------
        // Two refusals can land in one clock (a QP_CTRL op now, a post a clock ago).
        self.l_ref1.next = self.c_refused.q.val() + 1;
        self.l_ref2.next = self.c_refused.q.val() + 2;
        self.l_refused.next = self.c_refused.q.val();
        if self.l_ctrl_stb.val() & (self.l_ctrl_op.val() != 0) & !self.l_sel_ok.val() {
            self.l_refused.next = self.l_ref1.val();
            if self.sq_ref_q.q.val() {
                self.l_refused.next = self.l_ref2.val();
            }
        } else if self.sq_ref_q.q.val() {
            self.l_refused.next = self.l_ref1.val();
        }
        self.c_refused.d.next = self.l_refused.val();
        self.sq_ref_q.d.next = self.sq_valid.val() & !self.l_sq_ok.val();
        if self.rx_valid.val() & !self.l_rx_ok.val() {
            self.c_rxdrop.d.next = self.c_rxdrop.q.val() + 1;
        }
        if self.rs_valid.q.val() & (self.rs_kind.q.val() == 1) & self.rs_trimmed.q.val() {
            self.c_trims.d.next = self.c_trims.q.val() + 1;
        }
        if self.l_is_nack.val() {
            if self.rs_reason.q.val() == 1 {
                self.c_ntrim.d.next = self.c_ntrim.q.val() + 1;
            } else if self.rs_reason.q.val() == 2 {
                self.c_ntrim_lh.d.next = self.c_ntrim_lh.q.val() + 1;
            } else if self.rs_reason.q.val() == 11 {
                self.c_noor.d.next = self.c_noor.q.val() + 1;
            } else {
                self.c_nother.d.next = self.c_nother.q.val() + 1;
            }
        }
        if self.l_timeout.val() {
            self.c_tmo.d.next = self.c_tmo.q.val() + 1;
        }
        self.c_oow.d.next = self.l_oow.val();
        // Last clock's drops, from flops: at most 3 per QP and qps <= 16, so 8 bits. (Summed
        // in the clock they happen, behind the receive decode and the slot logic, they were
        // the core's critical path.)
        self.l_drops.next = 0.into();
        for i in 0..self._q {
            self.l_dqv.next = self.dq[i].q.val();
            self.l_drops.next = self.l_drops.val() + bit_cast::<8, 2>(self.l_dqv.val());
        }
        self.c_nsccdrop.d.next = self.c_nsccdrop.q.val() + bit_cast::<32, 8>(self.l_drops.val());
        if self.l_ack_f.val() {
            self.c_acks.d.next = self.c_acks.q.val() + 1;
        }
        if self.l_evq_drop.val() {
            self.c_evqdrop.d.next = self.c_evqdrop.q.val() + 1;
        }
        if self.l_send.val() {
            self.c_pkts.d.next = self.c_pkts.q.val() + 1;
            if self.l_send_rtx.val() {
                self.c_rtx.d.next = self.c_rtx.q.val() + 1;
            }
        }

        // ---- transmit header ---------------------------------------------------------------
        // The header's fields load every clock, with no enable and no reset: the outputs
        // are masked by tx_valid, so the send decision (the end of the pick) drives one
        // flop, not the clear of some 90 on the far side of the die.
        self.o_tx_valid.d.next = self.l_send.val();
        self.o_tx_qp.d.next = self.l_send_qp.val();
        self.o_tx_psn.d.next = self.l_send_psn.val();
        self.o_tx_ev.d.next = self.l_h_ev.val();
        self.o_tx_ev_idx.d.next = self.l_h_idx.val();
        self.o_tx_plane.d.next = self.l_h_plane.val();
        self.o_tx_rtx.d.next = self.l_send_rtx.val();
        self.o_tx_len.d.next = 0.into();
        self.o_tx_last.d.next = false;
        if !self.l_send_rtx.val() {
            self.o_tx_len.d.next = self.l_send_len.val().get_bits::<16>(0);
            self.o_tx_last.d.next = self.l_send_last.val();
        }

        // ---- R stage -----------------------------------------------------------------------
        self.rs_valid.d.next = self.l_rx_ok.val();
        self.l_rx_sbop.next =
            self.l_rx_ok.val() & ((self.rx_kind.val() == 2) | (self.rx_kind.val() == 3));
        self.rs_op.d.next = self.l_rx_sbop.val();
        for i in 0..self._q {
            self.rs_hit[i].clock.next = self.clock.val();
            self.rs_hit[i].d.next = self.l_rx_sbop.val() & (self.rx_qp.val() == self.qi8[i].val());
            self.rs_tn[i].clock.next = self.clock.val();
            self.rs_tn[i].d.next = self.l_rx_ok.val()
                & (self.rx_kind.val() == 3)
                & ((self.rx_reason.val() == 1) | (self.rx_reason.val() == 2))
                & (self.rx_qp.val() == self.qi8[i].val());
            self.rs_sk[i].clock.next = self.clock.val();
            self.rs_sk[i].d.next = self.l_rx_ok.val()
                & (self.rx_kind.val() == 2)
                & (self.rx_qp.val() == self.qi8[i].val());
            // cack - sampled PSN >= 0 (24-bit serial), for either PSN the sample holds next
            self.rs_sge_o[i].clock.next = self.clock.val();
            self.rs_sge_n[i].clock.next = self.clock.val();
            self.samp_ld[i].clock.next = self.clock.val();
            self.l_sdiff.next = self.rx_psn.val() - self.samp_psn[i].q.val();
            self.l_sdiff_n.next = self.rx_psn.val() - self.nxt[i].q.val();
            self.rs_sge_o[i].d.next = !self.l_sdiff.val().get_bit(23);
            self.rs_sge_n[i].d.next = !self.l_sdiff_n.val().get_bit(23);
        }
        self.rs_qp.d.next = self.rx_qp.val();
        self.rs_kind.d.next = self.rx_kind.val();
        self.rs_psn.d.next = self.rx_psn.val();
        self.rs_len.d.next = self.rx_len.val();
        self.rs_ecn.d.next = self.rx_ecn.val();
        self.rs_trimmed.d.next = self.rx_trimmed.val();
        self.rs_lasthop.d.next = self.rx_lasthop.val();
        self.rs_ackreq.d.next = self.rx_ackreq.val();
        self.rs_ev.d.next = self.rx_ev.val();
        self.rs_ev_idx.d.next = self.rx_ev_idx.val();
        self.rs_offset.d.next = self.rx_offset.val();
        self.rs_bitmap.d.next = self.rx_bitmap.val();
        self.rs_m.d.next = self.rx_m.val();
        self.rs_rcvd.d.next = self.rx_rcvd_bytes.val();
        self.rs_reason.d.next = self.rx_reason.val();

        // ---- core reset: every glue register to its power-on value ------------------------
        if self.rst_g.val() {
            self.rs_valid.d.next = false;
            self.rs_op.d.next = false;
            for i in 0..self._q {
                self.rs_hit[i].d.next = false;
                self.rs_tn[i].d.next = false;
                self.rs_sk[i].d.next = false;
            }
            self.rs_qp.d.next = 0.into();
            self.rs_kind.d.next = 0.into();
            self.rs_psn.d.next = 0.into();
            self.rs_len.d.next = 0.into();
            self.rs_ecn.d.next = false;
            self.rs_trimmed.d.next = false;
            self.rs_lasthop.d.next = false;
            self.rs_ackreq.d.next = false;
            self.rs_ev.d.next = 0.into();
            self.rs_ev_idx.d.next = 0.into();
            self.rs_offset.d.next = 0.into();
            self.rs_bitmap.d.next = 0.into();
            self.rs_m.d.next = 0.into();
            self.rs_rcvd.d.next = 0.into();
            self.rs_reason.d.next = 0.into();
            self.f_head.d.next = 0.into();
            self.f_count.d.next = 0.into();
            self.f_nz.d.next = false;
            self.preq.d.next = 0.into();
            self.req_full.d.next = false;
            self.rr.d.next = 0.into();
            self.e_head.d.next = 0.into();
            self.e_count.d.next = 0.into();
            self.e_full.d.next = false;
            self.e_nz.d.next = false;
            self.c_pkts.d.next = 0.into();
            self.c_rtx.d.next = 0.into();
            self.c_trims.d.next = 0.into();
            self.c_ntrim.d.next = 0.into();
            self.c_ntrim_lh.d.next = 0.into();
            self.c_noor.d.next = 0.into();
            self.c_nother.d.next = 0.into();
            self.c_tmo.d.next = 0.into();
            self.c_oow.d.next = 0.into();
            self.c_rxdrop.d.next = 0.into();
            self.c_refused.d.next = 0.into();
            self.sq_ref_q.d.next = false;
            self.c_nsccdrop.d.next = 0.into();
            self.c_acks.d.next = 0.into();
            self.c_evqdrop.d.next = 0.into();
            self.o_tx_valid.d.next = false;
            self.o_ack_valid.d.next = false;
        }

        // ---- outputs ---------------------------------------------------------------------
        self.tx_valid.next = self.o_tx_valid.q.val();
        self.tx_qp.next = 0.into();
        self.tx_psn.next = 0.into();
        self.tx_ev.next = 0.into();
        self.tx_ev_idx.next = 0.into();
        self.tx_plane.next = 0.into();
        self.tx_rtx.next = false;
        self.tx_len.next = 0.into();
        self.tx_last.next = false;
        if self.o_tx_valid.q.val() {
            self.tx_qp.next = self.o_tx_qp.q.val();
            self.tx_psn.next = self.o_tx_psn.q.val();
            self.tx_ev.next = self.o_tx_ev.q.val();
            self.tx_ev_idx.next = self.o_tx_ev_idx.q.val();
            self.tx_plane.next = self.o_tx_plane.q.val();
            self.tx_rtx.next = self.o_tx_rtx.q.val();
            self.tx_len.next = self.o_tx_len.q.val();
            self.tx_last.next = self.o_tx_last.q.val();
        }
        self.ack_valid.next = self.o_ack_valid.q.val();
        self.ack_qp.next = 0.into();
        self.ack_nack.next = false;
        self.ack_cack.next = 0.into();
        self.ack_offset.next = 0.into();
        self.ack_bitmap.next = 0.into();
        self.ack_m.next = 0.into();
        self.ack_ev.next = 0.into();
        self.ack_rcvd_bytes.next = 0.into();
        self.ack_reason.next = 0.into();
        self.ack_psn.next = 0.into();
        if self.o_ack_valid.q.val() {
            self.ack_qp.next = self.o_ack_qp.q.val();
            self.ack_nack.next = self.o_ack_nack.q.val();
            self.ack_cack.next = self.o_ack_cack.q.val();
            self.ack_offset.next = self.o_ack_offset.q.val();
            self.ack_bitmap.next = self.o_ack_bitmap.q.val();
            self.ack_m.next = self.o_ack_m.q.val();
            self.ack_ev.next = self.o_ack_ev.q.val();
            self.ack_rcvd_bytes.next = self.o_ack_rcvd.q.val();
            self.ack_reason.next = self.o_ack_reason.q.val();
            self.ack_psn.next = self.o_ack_psn.q.val();
        }

        // busy_q / hold_nz from the final next values of everything they follow (rs_hit,
        // rs_op, tick_pend, hold: resets included), so each equals its function of those
        // registers at every edge.
        self.l_tf_n.next = false;
        for i in 0..self._q {
            self.busy_q[i].clock.next = self.clock.val();
            self.hold_nz[i].clock.next = self.clock.val();
            self.busy_q[i].d.next = self.rs_hit[i].d.val();
            if self.tick_pend[i].d.val() & !self.rs_op.d.val() & !self.l_tf_n.val() {
                self.l_tf_n.next = true;
                self.busy_q[i].d.next = true;
            }
            self.hold_nz[i].d.next = self.hold[i].d.val() != 0;
        }
    }
}
