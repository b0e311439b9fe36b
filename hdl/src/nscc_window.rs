//! `nscc_window`: the NSCC congestion window, in the integer arithmetic of
//! `mrc_model::nscc::Fixed` (formats and algorithm documented there), cycle-exact with
//! `mrc_model::nscc::NsccWindow`. One datapath for the config's QPs: each QP's algorithm
//! state is a context; the owner's is in the registers below, the others' in a LUT RAM.
//!
//! ```text
//!  sw_valid, sw_ctx (idle only)     switch clock: read RAM[sw_ctx]; owner <= sw_ctx
//!                                   phase 0:      RAM[old owner] <= registers (still its
//!                                                 state); registers <= the entry read (or
//!                                                 initial values)
//!  ctx_clr[i]                       context i back to initial values (the owner's: reset)
//!  nx_load, nx_cwnd/maxwnd/base     an event's last phase: the owner's result, for per-QP copies
//! ```
//!
//! One event at a time, taken with `ev_valid && ev_ready`, then a fixed micro-sequence of
//! phases. Every multiplier is a two-stage `PipeMul` (17-bit DSP tiles registered, inside the
//! DSP on ECP5, then their sum), read two clocks after its operands settle; every other phase
//! is at most one carry chain plus muxes (compares run side by side, not in series: a clamp's
//! decisions are taken in the phase that computes its operand, against bounds kept in
//! registers, and the next phase only picks). Optional phases run only when the event needs
//! them, so the usual event costs 9 clocks:
//!
//! ```text
//!  take e_* <= ev_*; rtt < base and "has a sample" decided from the ports
//!                          products of e_*: fi_m*bytes, fi_scale*bytes, penalty*bytes (-> 3)
//!  1  base <= min-filter(rtt); delay; achieved/received += bytes; trigger |= NACK|RTO;
//!     now - (qa_end, last_adjust, last_dec); fast-increase byte count
//!  2  quadrant / epoch / period / MD-interval flags; |delay<<8 - avg|
//!                          products: base*maxwnd_per_ns (-> 4), bytes*(target-delay) (-> 4)
//!  3  (EWMA product |..|*w running, -> 5)      (p1>>7)*alpha_m starts at 4 (-> 6)
//!  4  maxwnd = max(min(.. >> 8, 2^32-1), MTU)
//!  5  avg +-= ..>>16; quick adapt decided, epoch restart
//!  6  quick adapt applied (cwnd = max(achieved, MTU)); inc's addend: fair, or
//!     prop = sat48(.. >> (9 - alpha_e)); md_do, fulfill_do; leading one of avg; count > cwnd;
//!     cwnd +- candidates of 7
//!  7  quadrant: addend into inc, fast increase into cwnd; NACK/RTO subtract;
//!     avg's table index; gts = (gamma target 2^8) >> (p - 16)          -> 8 if md_do else 15
//!  8..14 (MD)  8 table slices (registered); 9 slice pick; gts*r (-> 12); 12 factor =
//!     (1 - g) + clamp(gt) (compares and sum side by side); cwnd*factor (-> 15)
//!  15 cut - penalty, and cut < penalty + MTU / cut > penalty + maxwnd
//!  16 cwnd = MTU / maxwnd / cut - penalty by those flags       -> done unless fulfill_do
//!  17..24 (fulfill)  17 leading one of cwnd; 18 index; 19 inc >> (p-2) and the table
//!     slices; 20 sat34, cwnd + eta, slice pick; incs*r (-> 23); 23 + inc/cwnd, and
//!     inc/cwnd > maxwnd - (cwnd + eta); 24 min(.., maxwnd) by that flag
//! ```
//!
//! `ev_ready` is high when idle and in an event's last phase (16 without a fulfill, 24), so a
//! waiting event is taken back to back. The outputs (`cwnd`, `maxwnd`, `base_rtt_ns`,
//! `avg_delay_q8`, counters) are registers loaded at the end of an event: they show whole
//! events only, from the clock after its last phase. `can_send` is combinational from this
//! clock's `inflight` / `next_len` and the shown cwnd.
//!
//! Line rate: at one ACK per 4096-byte packet and 800 Gb/s (24.4 M ACK/s), the average cost is
//! 9 + 8/9 clocks (a fulfill per 8 MTU received) plus 7 at most once per base RTT: 9.9 clocks,
//! 25.3 M events/s at 250 MHz. Config validation refuses a line rate / MTU / clock whose ACK
//! rate at 10 clocks per ACK exceeds the clock. The upstream holds an event while `ev_ready`
//! is low (bursts queue in front, e.g. in `mrc_core`).

use crate::arith::{LeadingOne32, PipeMul};
use crate::lut_ram::LutRam;
use mrc_config::nscc::{recip_table, NsccFixed};
use mrc_config::NicConfig;
use rust_hdl::prelude::*;
use rust_hdl::widgets::ramrom::rom::ROM;

/// Slices of the reciprocal table (128 entries each; the loop in `update` is unrolled over 8).
const ROM_PARTS: usize = 8;
/// Bits of one saved context: the algorithm state the reset block names, packed as `l_pack`
/// lays it out (twelve 32-bit registers from bit 0, base and base + target at 384 and 408,
/// inc at 432, then incr / trig / epv at 480..482).
const CTX_BITS: usize = 483;

#[derive(LogicBlock)]
pub struct NsccWindow {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: state back to the config's initial values; an event in flight is lost.
    pub rst: Signal<In, Bit>,
    pub ev_valid: Signal<In, Bit>,
    /// 0 ACK, 1 trim NACK, 2 RTO, 3 TICK.
    pub ev_kind: Signal<In, Bits<2>>,
    /// ACK: newly acked bytes; NACK: trimmed bytes.
    pub ev_bytes: Signal<In, Bits<24>>,
    /// RTT sample in ns; 0 = the ACK carried none.
    pub ev_rtt_ns: Signal<In, Bits<24>>,
    pub ev_ecn: Signal<In, Bit>,
    /// Receiver window penalty, 0..127 (64 = 50 %).
    pub ev_penalty: Signal<In, Bits<7>>,
    /// Free-running ns clock (wraps).
    pub now_ns: Signal<In, Bits<32>>,
    pub inflight: Signal<In, Bits<32>>,
    pub next_len: Signal<In, Bits<16>>,

    pub ev_ready: Signal<Out, Bit>,
    pub cwnd: Signal<Out, Bits<32>>,
    pub maxwnd: Signal<Out, Bits<32>>,
    pub base_rtt_ns: Signal<Out, Bits<24>>,
    /// Average queuing delay, ns Q24.8.
    pub avg_delay_q8: Signal<Out, Bits<32>>,
    pub can_send: Signal<Out, Bit>,
    pub cnt_events: Signal<Out, Bits<32>>,
    pub cnt_md: Signal<Out, Bits<32>>,
    pub cnt_qa: Signal<Out, Bits<32>>,

    /// Switch the datapath to context `sw_ctx` (taken only when idle and not taking an event;
    /// two clocks: write the owner back and read `sw_ctx`, then load it).
    pub sw_valid: Signal<In, Bit>,
    pub sw_ctx: Signal<In, Bits<4>>,
    /// Contexts back to their initial values (bit per context); the owner's is its reset.
    pub ctx_clr: Signal<In, Bits<16>>,
    pub ctx_owner: Signal<Out, Bits<4>>,
    /// An event's last phase: `nx_*` are the owner's window after it (0 otherwise).
    pub nx_load: Signal<Out, Bit>,
    pub nx_cwnd: Signal<Out, Bits<32>>,
    pub nx_maxwnd: Signal<Out, Bits<32>>,
    pub nx_base_rtt_ns: Signal<Out, Bits<24>>,

    // Contexts: the owner's state is in the registers below, the others' in `ctx_ram`
    // (none with one context).
    owner: DFF<Bits<4>>,
    /// The owner before the last switch: its context is written back in the load clock
    /// (phase 0), from registers that still hold it, so the RAM's write enable is a flop
    /// (the switch decision fanned out to every RAM cell was the critical path).
    owner_prev: DFF<Bits<4>>,
    /// Per context: saved in the RAM (else it loads its initial values).
    cv: Vec<DFF<Bit>>,
    k_ctx: Vec<Constant<Bits<4>>>,
    k_nctx: Constant<Bits<5>>,
    /// Two or more contexts: with one, every switch and load term is a constant 0, so
    /// synthesis removes them and the one-QP window is the logic it was.
    k_multi: Constant<Bit>,
    ctx_ram: Vec<LutRam<Bits<CTX_BITS>, 4>>,
    _nctx: usize,
    _nram: usize,
    l_sw: Signal<Local, Bit>,
    l_clr_own: Signal<Local, Bit>,
    l_cv_own: Signal<Local, Bit>,
    l_rst_all: Signal<Local, Bit>,
    l_pack: Signal<Local, Bits<CTX_BITS>>,
    l_rd: Signal<Local, Bits<CTX_BITS>>,

    // Elaboration constants (NsccFixed).
    k_mtu: Constant<Bits<32>>,
    k_target: Constant<Bits<24>>,
    k_target_q8: Constant<Bits<32>>,
    k_qa_th: Constant<Bits<24>>,
    k_fast: Constant<Bits<24>>,
    k_fi_m: Constant<Bits<17>>,
    k_fi_e: Constant<Bits<4>>,
    k_alpha_m: Constant<Bits<17>>,
    k_prop_sh: Constant<Bits<4>>,
    k_fsq8: Constant<Bits<16>>,
    k_eta: Constant<Bits<40>>,
    k_adj: Constant<Bits<32>>,
    k_mwq8: Constant<Bits<17>>,
    k_ewma: Constant<Bits<10>>,
    k_one_minus_g: Constant<Bits<17>>,
    /// The MD factor at the clamp's bounds, (1 - g) + (g - 0.5) and (1 - g) + g, mod 2^17.
    k_mdf_lo: Constant<Bits<17>>,
    k_mdf_hi: Constant<Bits<17>>,
    k_gt_lo: Constant<Bits<45>>,
    k_gt_hi: Constant<Bits<45>>,
    k_gt: Constant<Bits<41>>,
    k_init_cwnd: Constant<Bits<32>>,
    k_init_base: Constant<Bits<24>>,
    k_init_tb: Constant<Bits<24>>,
    /// Saturation values and the serial-comparison half range (literals above i32 cannot be
    /// written inside hdl_gen).
    k_all32: Constant<Bits<32>>,
    k_all48: Constant<Bits<48>>,
    k_half32: Constant<Bits<32>>,
    k_all34: Constant<Bits<34>>,

    // Sequencer and the event being processed.
    /// One-hot phase: bit k set in phase k (1..=24); all zero when idle (the power-on state).
    ph: DFF<Bits<25>>,
    e_kind: DFF<Bits<2>>,
    e_bytes: DFF<Bits<24>>,
    e_rtt: DFF<Bits<24>>,
    e_ecn: DFF<Bit>,
    e_pen: DFF<Bits<7>>,
    e_now: DFF<Bits<32>>,
    /// Copies of e_bytes, one per multiplier that reads it at take + 1, so each can sit next
    /// to its DSPs (one register fanning out to six DSP tiles was the critical path). Each
    /// loads on a different superset of take (harmless: the copies are read only during an
    /// event), so Yosys does not merge them back into one register.
    e_by_fair: DFF<Bits<24>>,
    /// Decided at take from the ports (base does not change between take and phase 1): the
    /// ACK carries an RTT sample / the sample is below base. Phase 1 then only muxes.
    e_rttv: DFF<Bit>,
    e_lower: DFF<Bit>,
    e_by_fast: DFF<Bits<24>>,
    e_by_pen: DFF<Bits<24>>,

    // Algorithm state (registers with a non-zero reset value power up at it too, so the
    // model's power-on state is the RTL's).
    cw: DFFWithInit<Bits<32>>,
    mw: DFFWithInit<Bits<32>>,
    base: DFFWithInit<Bits<24>>,
    avg: DFF<Bits<32>>,
    inc: DFF<Bits<48>>,
    rcv: DFF<Bits<32>>,
    ach: DFF<Bits<32>>,
    fic: DFF<Bits<32>>,
    incr: DFF<Bit>,
    trig: DFF<Bit>,
    epv: DFF<Bit>,
    qa_end: DFF<Bits<32>>,
    last_dec: DFF<Bits<32>>,
    last_adj: DFF<Bits<32>>,
    c_ev: DFF<Bits<32>>,
    c_md: DFF<Bits<32>>,
    c_qa: DFF<Bits<32>>,

    // Per-event intermediates.
    t_delay: DFF<Bits<24>>,
    t_rttv: DFF<Bit>,
    t_diff: DFF<Bits<33>>,
    t_up: DFF<Bit>,
    t_prop: DFF<Bits<48>>,
    t_fic: DFF<Bits<32>>,
    t_ficgt: DFF<Bit>,
    t_cwe: DFF<Bits<40>>,
    t_w40: DFF<Bits<40>>,
    t_gap: DFF<Bits<24>>,
    /// base + target (mod 2^24), kept in step with base.
    tb: DFFWithInit<Bits<24>>,
    t_achmax: DFF<Bits<32>>,
    busy: DFF<Bit>,
    t_cwf33: DFF<Bits<33>>,
    t_nsub33: DFF<Bits<33>>,
    t_incs48: DFF<Bits<48>>,
    pcm2: DFF<Bits<5>>,
    t_after33: DFF<Bits<33>>,
    /// penalty + MTU and penalty + maxwnd (34 bits, every clock; settled from phase 6), so
    /// the clamp's compares at 15 run beside the subtract instead of after it.
    t_pmtu: DFF<Bits<34>>,
    t_pmw: DFF<Bits<34>>,
    /// 15: cut - penalty below 0 or below MTU (-> MTU) / above maxwnd (-> maxwnd).
    f_lo: DFF<Bit>,
    f_hi: DFF<Bit>,
    /// maxwnd - (cwnd + eta), 41-bit two's complement (every clock; settled from 22), so the
    /// fulfill's compare with maxwnd runs at 23 beside the add.
    t_mwmc: DFF<Bits<41>>,
    /// Plain-DFF copies of base (loaded with it at 1) and cwnd (every clock; cwnd is final
    /// from 8 to 15) as multiplier operands: Yosys keeps a `DFFWithInit` bit whose init is 1
    /// inverted, and the inverter LUT would sit between the flop and the DSP.
    t_base_m: DFF<Bits<24>>,
    t_cw_m: DFF<Bits<32>>,
    /// 23: cwnd + eta + inc/cwnd above maxwnd.
    f_whi: DFF<Bit>,
    t_el_qa: DFF<Bits<32>>,
    t_el_adj: DFF<Bits<32>>,
    t_el_dec: DFF<Bits<32>>,
    f_fairz: DFF<Bit>,
    f_propz: DFF<Bit>,
    f_mdz: DFF<Bit>,
    f_fastz: DFF<Bit>,
    f_qtrig: DFF<Bit>,
    f_over: DFF<Bit>,
    f_adj: DFF<Bit>,
    f_mdt: DFF<Bit>,
    f_fdob: DFF<Bit>,
    f_qa: DFF<Bit>,
    f_mdo: DFF<Bit>,
    f_fdo: DFF<Bit>,
    pa: DFF<Bits<5>>,
    ia: DFF<Bits<10>>,
    r_avg: DFF<Bits<12>>,
    gts: DFF<Bits<33>>,
    mdf: DFF<Bits<17>>,
    pc: DFF<Bits<5>>,
    r_c: DFF<Bits<12>>,
    incs: DFF<Bits<34>>,

    // Shown outputs.
    o_cw: DFFWithInit<Bits<32>>,
    o_mw: DFFWithInit<Bits<32>>,
    o_base: DFFWithInit<Bits<24>>,
    o_avg: DFF<Bits<32>>,
    o_ev: DFF<Bits<32>>,
    o_md: DFF<Bits<32>>,
    o_qa: DFF<Bits<32>>,

    // Multipliers (two-stage: the product of this clock's operands two clocks later).
    m_fair: PipeMul<24, 17, 41>,
    m_fast: PipeMul<24, 16, 40>,
    m_pen: PipeMul<24, 7, 31>,
    m_mwp: PipeMul<24, 17, 41>,
    m_avg: PipeMul<33, 10, 43>,
    m_p1: PipeMul<24, 17, 41>,
    m_prop: PipeMul<34, 17, 51>,
    m_gt: PipeMul<33, 12, 45>,
    m_md: PipeMul<32, 17, 49>,
    m_ful: PipeMul<34, 12, 46>,
    lead_a: LeadingOne32,
    lead_c: LeadingOne32,
    /// The reciprocal table in `ROM_PARTS` slices of 128 entries (address = the index's low 7
    /// bits), each slice's entry registered (`rq`), then the slice picked by the index's top
    /// bits: the 1024-entry lookup as two short clocks instead of one long one.
    roms: Vec<ROM<Bits<12>, 7>>,
    rq: Vec<DFF<Bits<12>>>,
    k_part: Vec<Constant<Bits<3>>>,

    // Locals.
    l_take: Signal<Local, Bit>,
    l_last: Signal<Local, Bit>,
    l_ready: Signal<Local, Bit>,
    l_ack: Signal<Local, Bit>,
    l_nack: Signal<Local, Bit>,
    l_rto: Signal<Local, Bit>,
    l_tick: Signal<Local, Bit>,
    l_rttv: Signal<Local, Bit>,
    l_nb: Signal<Local, Bits<24>>,
    l_s33a: Signal<Local, Bits<33>>,
    l_s33b: Signal<Local, Bits<33>>,
    l_csx: Signal<Local, Bits<34>>,
    l_csy: Signal<Local, Bits<34>>,
    l_csz: Signal<Local, Bits<34>>,
    l_css: Signal<Local, Bits<34>>,
    l_csc: Signal<Local, Bits<34>>,
    l_cst: Signal<Local, Bits<34>>,
    l_d8: Signal<Local, Bits<33>>,
    l_a33: Signal<Local, Bits<33>>,
    l_tmd: Signal<Local, Bits<24>>,
    l_gap: Signal<Local, Bits<24>>,
    l_base32: Signal<Local, Bits<32>>,
    l_mw41: Signal<Local, Bits<41>>,
    l_step43: Signal<Local, Bits<43>>,
    l_p1s: Signal<Local, Bits<41>>,
    l_prop_sh: Signal<Local, Bits<51>>,
    l_qa: Signal<Local, Bit>,
    l_end_qa: Signal<Local, Bits<32>>,
    l_idx_x: Signal<Local, Bits<32>>,
    l_idx_m: Signal<Local, Bits<32>>,
    l_fic33: Signal<Local, Bits<33>>,
    l_fic: Signal<Local, Bits<32>>,
    l_go_fast: Signal<Local, Bit>,
    l_fair48: Signal<Local, Bits<48>>,
    l_add48: Signal<Local, Bits<48>>,
    l_inc49: Signal<Local, Bits<49>>,
    l_fast_sh: Signal<Local, Bits<40>>,
    l_cw33: Signal<Local, Bits<33>>,
    l_sub32: Signal<Local, Bits<32>>,
    l_gts41: Signal<Local, Bits<41>>,
    l_gt_sh: Signal<Local, Bits<45>>,
    l_mdf: Signal<Local, Bits<17>>,
    l_part: Signal<Local, Bits<3>>,
    l_gt19: Signal<Local, Bits<19>>,
    l_dlo19: Signal<Local, Bits<19>>,
    l_dhi19: Signal<Local, Bits<19>>,
    l_r: Signal<Local, Bits<12>>,
    l_md_sh: Signal<Local, Bits<49>>,
    l_pen_sh: Signal<Local, Bits<31>>,
    l_cut: Signal<Local, Bits<32>>,
    l_cut34: Signal<Local, Bits<34>>,
    l_pen34: Signal<Local, Bits<34>>,
    l_pen32: Signal<Local, Bits<32>>,
    l_after: Signal<Local, Bits<32>>,
    l_clamped: Signal<Local, Bits<32>>,
    l_incs48: Signal<Local, Bits<48>>,
    l_ful_sh: Signal<Local, Bits<46>>,
    l_w40: Signal<Local, Bits<40>>,
    l_cwn: Signal<Local, Bits<32>>,
    l_cmd: Signal<Local, Bits<32>>,
    l_lower: Signal<Local, Bit>,
    l_rmb: Signal<Local, Bits<24>>,
    l_after33: Signal<Local, Bits<33>>,
    l_cwe: Signal<Local, Bits<40>>,
    l_shl: Signal<Local, Bits<5>>,
    l_pam16: Signal<Local, Bits<5>>,
    l_cshl: Signal<Local, Bits<5>>,
    l_cidx_m: Signal<Local, Bits<32>>,
    l_idle: Signal<Local, Bit>,
    l_nsub33: Signal<Local, Bits<33>>,
    l_incs_hi: Signal<Local, Bits<48>>,
}

impl NsccWindow {
    /// A window with one context per QP of `cfg` (the context RAM only when there are two
    /// or more).
    pub fn new(cfg: &NicConfig) -> Self {
        let k = NsccFixed::new(cfg);
        let table = recip_table();
        let nctx = cfg.qps.clamp(1, 16) as usize;
        let nram = usize::from(nctx > 1);
        // Every constant must fit its field: config validation bounds them.
        fn c<const N: usize>(v: u64) -> Constant<Bits<N>> {
            assert!(
                N >= 64 || v < 1 << N,
                "NSCC constant {v} does not fit {N} bits"
            );
            Constant::new(v.into())
        }
        Self {
            clock: Default::default(),
            rst: Default::default(),
            ev_valid: Default::default(),
            ev_kind: Default::default(),
            ev_bytes: Default::default(),
            ev_rtt_ns: Default::default(),
            ev_ecn: Default::default(),
            ev_penalty: Default::default(),
            now_ns: Default::default(),
            inflight: Default::default(),
            next_len: Default::default(),
            ev_ready: Default::default(),
            cwnd: Default::default(),
            maxwnd: Default::default(),
            base_rtt_ns: Default::default(),
            avg_delay_q8: Default::default(),
            can_send: Default::default(),
            cnt_events: Default::default(),
            cnt_md: Default::default(),
            cnt_qa: Default::default(),
            sw_valid: Default::default(),
            sw_ctx: Default::default(),
            ctx_clr: Default::default(),
            ctx_owner: Default::default(),
            nx_load: Default::default(),
            nx_cwnd: Default::default(),
            nx_maxwnd: Default::default(),
            nx_base_rtt_ns: Default::default(),
            owner: Default::default(),
            owner_prev: Default::default(),
            cv: (0..nctx).map(|_| Default::default()).collect(),
            k_ctx: (0..nctx as u64).map(|i| Constant::new(i.into())).collect(),
            k_nctx: c(nctx as u64),
            k_multi: Constant::new(nctx > 1),
            ctx_ram: (0..nram).map(|_| LutRam::new(Default::default())).collect(),
            _nctx: nctx,
            _nram: nram,
            l_sw: Default::default(),
            l_clr_own: Default::default(),
            l_cv_own: Default::default(),
            l_rst_all: Default::default(),
            l_pack: Default::default(),
            l_rd: Default::default(),
            k_mtu: c(k.mtu.into()),
            k_target: c(k.target_ns.into()),
            k_target_q8: c(u64::from(k.target_ns) << 8),
            k_qa_th: c(k.qa_threshold_ns.into()),
            k_fast: c(mrc_config::nscc::FAST_DELAY_NS.into()),
            k_fi_m: c(k.fi_m.into()),
            k_fi_e: c(k.fi_e.into()),
            k_alpha_m: c(k.alpha_m.into()),
            k_prop_sh: c((9 - k.alpha_e).into()),
            k_fsq8: c(k.fi_scale_q8.into()),
            k_eta: c(k.eta.into()),
            k_adj: c(k.adjust_bytes.into()),
            k_mwq8: c(k.maxwnd_per_ns_q8.into()),
            k_ewma: c(k.ewma_q16.into()),
            k_one_minus_g: c(65536 - u64::from(k.gamma_q16)),
            k_mdf_lo: c(
                (65536 - u64::from(k.gamma_q16) + u64::from(k.gamma_q16) - 32768) & 0x1_FFFF,
            ),
            k_mdf_hi: c(65536 & 0x1_FFFF),
            k_gt_lo: c(u64::from(k.gamma_q16) - 32768),
            k_gt_hi: c(k.gamma_q16.into()),
            k_gt: c(k.gamma_target_q24),
            k_init_cwnd: c(k.init_cwnd.into()),
            k_init_base: c(k.base_rtt_ns.into()),
            k_init_tb: c(u64::from(k.base_rtt_ns + k.target_ns) & 0xFF_FFFF),
            k_all32: c(u32::MAX.into()),
            k_all48: c((1 << 48) - 1),
            k_half32: c(1 << 31),
            k_all34: c((1 << 34) - 1),
            ph: Default::default(),
            e_kind: Default::default(),
            e_bytes: Default::default(),
            e_rtt: Default::default(),
            e_ecn: Default::default(),
            e_pen: Default::default(),
            e_now: Default::default(),
            e_by_fair: Default::default(),
            e_rttv: Default::default(),
            e_lower: Default::default(),
            e_by_fast: Default::default(),
            e_by_pen: Default::default(),
            cw: DFFWithInit::new(u64::from(k.init_cwnd).to_bits()),
            mw: DFFWithInit::new(u64::from(k.init_cwnd).to_bits()),
            base: DFFWithInit::new(u64::from(k.base_rtt_ns).to_bits()),
            avg: Default::default(),
            inc: Default::default(),
            rcv: Default::default(),
            ach: Default::default(),
            fic: Default::default(),
            incr: Default::default(),
            trig: Default::default(),
            epv: Default::default(),
            qa_end: Default::default(),
            last_dec: Default::default(),
            last_adj: Default::default(),
            c_ev: Default::default(),
            c_md: Default::default(),
            c_qa: Default::default(),
            t_delay: Default::default(),
            t_rttv: Default::default(),
            t_diff: Default::default(),
            t_up: Default::default(),
            t_prop: Default::default(),
            t_fic: Default::default(),
            t_ficgt: Default::default(),
            t_cwe: Default::default(),
            t_w40: Default::default(),
            t_gap: Default::default(),
            tb: DFFWithInit::new((u64::from(k.base_rtt_ns + k.target_ns) & 0xFF_FFFF).to_bits()),
            t_achmax: Default::default(),
            busy: Default::default(),
            t_cwf33: Default::default(),
            t_nsub33: Default::default(),
            t_incs48: Default::default(),
            pcm2: Default::default(),
            t_after33: Default::default(),
            t_pmtu: Default::default(),
            t_pmw: Default::default(),
            f_lo: Default::default(),
            f_hi: Default::default(),
            t_mwmc: Default::default(),
            t_base_m: Default::default(),
            t_cw_m: Default::default(),
            f_whi: Default::default(),
            t_el_qa: Default::default(),
            t_el_adj: Default::default(),
            t_el_dec: Default::default(),
            f_fairz: Default::default(),
            f_propz: Default::default(),
            f_mdz: Default::default(),
            f_fastz: Default::default(),
            f_qtrig: Default::default(),
            f_over: Default::default(),
            f_adj: Default::default(),
            f_mdt: Default::default(),
            f_fdob: Default::default(),
            f_qa: Default::default(),
            f_mdo: Default::default(),
            f_fdo: Default::default(),
            pa: Default::default(),
            ia: Default::default(),
            r_avg: Default::default(),
            gts: Default::default(),
            mdf: Default::default(),
            pc: Default::default(),
            r_c: Default::default(),
            incs: Default::default(),
            o_cw: DFFWithInit::new(u64::from(k.init_cwnd).to_bits()),
            o_mw: DFFWithInit::new(u64::from(k.init_cwnd).to_bits()),
            o_base: DFFWithInit::new(u64::from(k.base_rtt_ns).to_bits()),
            o_avg: Default::default(),
            o_ev: Default::default(),
            o_md: Default::default(),
            o_qa: Default::default(),
            m_fair: Default::default(),
            m_fast: Default::default(),
            m_pen: Default::default(),
            m_mwp: Default::default(),
            m_avg: Default::default(),
            m_p1: Default::default(),
            m_prop: Default::default(),
            m_gt: Default::default(),
            m_md: Default::default(),
            m_ful: Default::default(),
            lead_a: Default::default(),
            lead_c: Default::default(),
            roms: (0..ROM_PARTS)
                .map(|p| {
                    ROM::new(
                        (0..128)
                            .map(|j| {
                                (
                                    (j as u64).to_bits(),
                                    u64::from(table[p * 128 + j]).to_bits(),
                                )
                            })
                            .collect(),
                    )
                })
                .collect(),
            rq: (0..ROM_PARTS).map(|_| Default::default()).collect(),
            k_part: (0..ROM_PARTS as u64)
                .map(|p| Constant::new(p.into()))
                .collect(),
            l_take: Default::default(),
            l_last: Default::default(),
            l_ready: Default::default(),
            l_ack: Default::default(),
            l_nack: Default::default(),
            l_rto: Default::default(),
            l_tick: Default::default(),
            l_rttv: Default::default(),
            l_nb: Default::default(),
            l_s33a: Default::default(),
            l_s33b: Default::default(),
            l_csx: Default::default(),
            l_csy: Default::default(),
            l_csz: Default::default(),
            l_css: Default::default(),
            l_csc: Default::default(),
            l_cst: Default::default(),
            l_d8: Default::default(),
            l_a33: Default::default(),
            l_tmd: Default::default(),
            l_gap: Default::default(),
            l_base32: Default::default(),
            l_mw41: Default::default(),
            l_step43: Default::default(),
            l_p1s: Default::default(),
            l_prop_sh: Default::default(),
            l_qa: Default::default(),
            l_end_qa: Default::default(),
            l_idx_x: Default::default(),
            l_idx_m: Default::default(),
            l_fic33: Default::default(),
            l_fic: Default::default(),
            l_go_fast: Default::default(),
            l_fair48: Default::default(),
            l_add48: Default::default(),
            l_inc49: Default::default(),
            l_fast_sh: Default::default(),
            l_cw33: Default::default(),
            l_sub32: Default::default(),
            l_gts41: Default::default(),
            l_gt_sh: Default::default(),
            l_mdf: Default::default(),
            l_part: Default::default(),
            l_gt19: Default::default(),
            l_dlo19: Default::default(),
            l_dhi19: Default::default(),
            l_r: Default::default(),
            l_md_sh: Default::default(),
            l_pen_sh: Default::default(),
            l_cut: Default::default(),
            l_cut34: Default::default(),
            l_pen34: Default::default(),
            l_pen32: Default::default(),
            l_after: Default::default(),
            l_clamped: Default::default(),
            l_incs48: Default::default(),
            l_ful_sh: Default::default(),
            l_w40: Default::default(),
            l_cwn: Default::default(),
            l_cmd: Default::default(),
            l_lower: Default::default(),
            l_rmb: Default::default(),
            l_after33: Default::default(),
            l_cwe: Default::default(),
            l_shl: Default::default(),
            l_pam16: Default::default(),
            l_cshl: Default::default(),
            l_cidx_m: Default::default(),
            l_idle: Default::default(),
            l_nsub33: Default::default(),
            l_incs_hi: Default::default(),
        }
    }
}

impl Logic for NsccWindow {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, ph, e_kind, e_bytes, e_rtt, e_ecn, e_pen, e_now, e_by_fair, e_rttv,
            e_lower, e_by_fast, e_by_pen, cw, mw, base, avg, inc, rcv, ach, fic, incr, trig, epv,
            qa_end, last_dec, last_adj, c_ev, c_md, c_qa, t_delay, t_rttv, t_diff, t_up, t_prop,
            t_fic, t_ficgt, t_cwe, t_w40, t_gap, tb, t_achmax, busy, t_cwf33, t_nsub33, t_incs48,
            pcm2, t_after33, t_pmtu, t_pmw, f_lo, f_hi, t_mwmc, t_base_m, t_cw_m, f_whi, t_el_qa,
            t_el_adj, t_el_dec, f_fairz, f_propz, f_mdz, f_fastz, f_qtrig, f_over, f_adj, f_mdt,
            f_fdob, f_qa, f_mdo, f_fdo, pa, ia, r_avg, gts, mdf, pc, r_c, incs, o_cw, o_mw, o_base,
            o_avg, o_ev, o_md, o_qa, owner, owner_prev
        );
        self.m_fair.clock.next = self.clock.val();
        self.m_fast.clock.next = self.clock.val();
        self.m_pen.clock.next = self.clock.val();
        self.m_mwp.clock.next = self.clock.val();
        self.m_avg.clock.next = self.clock.val();
        self.m_p1.clock.next = self.clock.val();
        self.m_prop.clock.next = self.clock.val();
        self.m_gt.clock.next = self.clock.val();
        self.m_md.clock.next = self.clock.val();
        self.m_ful.clock.next = self.clock.val();

        // ---- contexts: the owner's clear, whether its context was saved --------------------
        self.l_clr_own.next = false;
        self.l_cv_own.next = false;
        for i in 0..self._nctx {
            self.cv[i].clock.next = self.clock.val();
            if self.owner.q.val() == self.k_ctx[i].val() {
                self.l_clr_own.next = self.ctx_clr.val().get_bit(i);
                self.l_cv_own.next = self.cv[i].q.val();
            }
        }
        self.l_rst_all.next = self.rst.val() | self.l_clr_own.val();

        // ---- handshake and outputs ---------------------------------------------------------
        self.l_last.next =
            (self.ph.q.val().get_bit(16) & !self.f_fdo.q.val()) | self.ph.q.val().get_bit(24);
        // ev_ready comes from a flop (busy) predicted a clock ahead, so the handshake does not
        // start from a 24-bit zero test of the phase: ready next clock = not taking now, and
        // then idle or an event's last phase (16 without a fulfill, 23) next clock.
        self.l_ready.next = !self.busy.q.val();
        self.l_idle.next = self.ph.q.val() == bits::<25>(0);
        self.ev_ready.next = self.l_ready.val();
        self.l_take.next = self.l_ready.val() & self.ev_valid.val();
        // A switch: idle, no event taken, another context that exists, and the owner not
        // being cleared (its clear resets the registers this clock, so they must not load).
        self.l_sw.next = self.k_multi.val()
            & self.l_idle.val()
            & !self.l_take.val()
            & self.sw_valid.val()
            & (bit_cast::<5, 4>(self.sw_ctx.val()) < self.k_nctx.val())
            & (self.sw_ctx.val() != self.owner.q.val())
            & !self.l_rst_all.val();
        self.busy.d.next = self.l_take.val()
            | self.l_sw.val()
            | !(self.l_last.val()
                | self.l_idle.val()
                | self.ph.q.val().get_bit(0)
                | (self.ph.q.val().get_bit(15) & !self.f_fdo.q.val())
                | self.ph.q.val().get_bit(23));
        self.cwnd.next = self.o_cw.q.val();
        self.maxwnd.next = self.o_mw.q.val();
        self.base_rtt_ns.next = self.o_base.q.val();
        self.avg_delay_q8.next = self.o_avg.q.val();
        self.cnt_events.next = self.o_ev.q.val();
        self.cnt_md.next = self.o_md.q.val();
        self.cnt_qa.next = self.o_qa.q.val();
        // inflight + next_len <= cwnd  <=>  inflight + next_len + ~cwnd < 0 (34-bit, ~cwnd =
        // -cwnd - 1): one carry-save stage (sum and majority per bit, one LUT level), then
        // one carry chain whose top bit is the answer (not an add, then a compare).
        self.l_csx.next = bit_cast::<34, 32>(self.inflight.val());
        self.l_csy.next = bit_cast::<34, 16>(self.next_len.val());
        self.l_csz.next = !bit_cast::<34, 32>(self.o_cw.q.val());
        self.l_css.next = self.l_csx.val() ^ self.l_csy.val() ^ self.l_csz.val();
        self.l_csc.next = ((self.l_csx.val() & self.l_csy.val())
            | (self.l_csx.val() & self.l_csz.val())
            | (self.l_csy.val() & self.l_csz.val()))
            << 1;
        self.l_cst.next = self.l_css.val() + self.l_csc.val();
        self.can_send.next = (self.next_len.val() != bits::<16>(0)) & self.l_cst.val().get_bit(33);
        self.l_cwn.next = self.cw.q.val();
        self.l_cmd.next = self.c_md.q.val();

        // ---- sequencer: 1..7, then 8..13 for an MD, 14, then 15..20 for a fulfill ----------
        if self.l_take.val() {
            self.ph.d.next = bits::<25>(2);
            self.e_kind.d.next = self.ev_kind.val();
            self.e_bytes.d.next = self.ev_bytes.val();
            self.e_rtt.d.next = self.ev_rtt_ns.val();
            self.e_ecn.d.next = self.ev_ecn.val();
            self.e_pen.d.next = self.ev_penalty.val();
            self.e_now.d.next = self.now_ns.val();
            self.e_rttv.d.next =
                (self.ev_kind.val() == bits::<2>(0)) & (self.ev_rtt_ns.val() != bits::<24>(0));
            self.e_lower.d.next = (self.ev_kind.val() == bits::<2>(0))
                & (self.ev_rtt_ns.val() != bits::<24>(0))
                & (self.ev_rtt_ns.val() < self.base.q.val());
        } else if self.l_sw.val() {
            // Phase 0: the load clock.
            self.ph.d.next = bits::<25>(1);
        } else if self.l_last.val() | self.ph.q.val().get_bit(0) {
            self.ph.d.next = bits::<25>(0);
        } else if self.ph.q.val().get_bit(7) & !self.f_mdo.q.val() {
            self.ph.d.next = bits::<25>(1 << 15);
        } else {
            self.ph.d.next = self.ph.q.val() << 1;
        }

        self.l_ack.next = self.e_kind.q.val() == bits::<2>(0);
        self.l_nack.next = self.e_kind.q.val() == bits::<2>(1);
        self.l_rto.next = self.e_kind.q.val() == bits::<2>(2);
        self.l_tick.next = self.e_kind.q.val() == bits::<2>(3);

        // Multiplier operands. Each product is read two clocks after its operands settle.
        if self.l_ready.val() {
            self.e_by_fair.d.next = self.ev_bytes.val();
        }
        if self.l_take.val() | self.rst.val() {
            self.e_by_fast.d.next = self.ev_bytes.val();
        }
        if self.l_ready.val() | self.rst.val() {
            self.e_by_pen.d.next = self.ev_bytes.val();
        }
        self.m_fair.a.next = self.e_by_fair.q.val();
        self.m_fair.b.next = self.k_fi_m.val();
        self.m_fast.a.next = self.e_by_fast.q.val();
        self.m_fast.b.next = self.k_fsq8.val();
        self.m_pen.a.next = self.e_by_pen.q.val();
        self.m_pen.b.next = self.e_pen.q.val();
        self.m_mwp.a.next = self.t_base_m.q.val();
        self.m_mwp.b.next = self.k_mwq8.val();
        self.m_avg.a.next = self.t_diff.q.val();
        self.m_avg.b.next = self.k_ewma.val();
        self.m_p1.a.next = self.e_bytes.q.val();
        self.m_p1.b.next = bit_cast::<17, 24>(self.t_gap.q.val());
        self.l_p1s.next = self.m_p1.p.val() >> 7;
        self.m_prop.a.next = bit_cast::<34, 41>(self.l_p1s.val());
        self.m_prop.b.next = self.k_alpha_m.val();
        self.m_gt.a.next = self.gts.q.val();
        self.m_gt.b.next = self.r_avg.q.val();
        self.t_cw_m.d.next = self.cw.q.val();
        self.m_md.a.next = self.t_cw_m.q.val();
        self.m_md.b.next = self.mdf.q.val();
        self.m_ful.a.next = self.incs.q.val();
        self.m_ful.b.next = self.r_c.q.val();

        self.l_fic33.next =
            bit_cast::<33, 32>(self.fic.q.val()) + bit_cast::<33, 24>(self.e_bytes.q.val());
        self.l_fic.next = bit_cast::<32, 33>(self.l_fic33.val());
        if self.l_fic33.val().get_bit(32) {
            self.l_fic.next = self.k_all32.val();
        }
        // ---- 1: base-RTT min filter, delay, byte counts ------------------------------------
        self.l_rttv.next = self.e_rttv.q.val();
        // A lower sample becomes the base (delay 0); compare and subtract side by side.
        self.l_lower.next = self.e_lower.q.val();
        self.l_nb.next = self.base.q.val();
        if self.l_lower.val() {
            self.l_nb.next = self.e_rtt.q.val();
        }
        self.l_rmb.next = self.e_rtt.q.val() - self.base.q.val();
        // target - delay straight from the sample: (target + base) - rtt, with target + base
        // kept in a register, so the multiplier's operand is a flop.
        self.l_gap.next = self.tb.q.val() - self.e_rtt.q.val();
        self.l_s33a.next =
            bit_cast::<33, 32>(self.ach.q.val()) + bit_cast::<33, 24>(self.e_bytes.q.val());
        self.l_s33b.next =
            bit_cast::<33, 32>(self.rcv.q.val()) + bit_cast::<33, 24>(self.e_bytes.q.val());
        if self.ph.q.val().get_bit(1) {
            self.base.d.next = self.l_nb.val();
            self.t_base_m.d.next = self.l_nb.val();
            self.t_rttv.d.next = self.l_rttv.val();
            self.t_delay.d.next = bits::<24>(0);
            self.t_gap.d.next = self.k_target.val();
            if self.l_rttv.val() & !self.l_lower.val() {
                self.t_delay.d.next = self.l_rmb.val();
                self.t_gap.d.next = self.l_gap.val();
            }
            if self.l_ack.val() {
                self.ach.d.next = bit_cast::<32, 33>(self.l_s33a.val());
                if self.l_s33a.val().get_bit(32) {
                    self.ach.d.next = self.k_all32.val();
                }
                self.rcv.d.next = bit_cast::<32, 33>(self.l_s33b.val());
                if self.l_s33b.val().get_bit(32) {
                    self.rcv.d.next = self.k_all32.val();
                }
            }
            self.trig.d.next = self.trig.q.val() | self.l_nack.val() | self.l_rto.val();
            self.t_el_qa.d.next = self.e_now.q.val() - self.qa_end.q.val();
            self.t_el_adj.d.next = self.e_now.q.val() - self.last_adj.q.val();
            self.t_el_dec.d.next = self.e_now.q.val() - self.last_dec.q.val();
            self.t_fic.d.next = self.l_fic.val();
            self.c_ev.d.next = self.c_ev.q.val() + bits::<32>(1);
        }

        // ---- 2: flags; |delay<<8 - avg| for the EWMA ---------------------------------------
        self.l_d8.next = bit_cast::<33, 24>(self.t_delay.q.val()) << 8;
        self.l_a33.next = bit_cast::<33, 32>(self.avg.q.val());
        self.l_tmd.next = self.t_delay.q.val();

        self.l_base32.next = bit_cast::<32, 24>(self.base.q.val());
        if self.ph.q.val().get_bit(2) {
            self.tb.d.next = self.base.q.val() + self.k_target.val();
            self.t_up.d.next = self.l_d8.val() >= self.l_a33.val();
            self.t_diff.d.next = self.l_a33.val() - self.l_d8.val();
            if self.l_d8.val() >= self.l_a33.val() {
                self.t_diff.d.next = self.l_d8.val() - self.l_a33.val();
            }
            self.f_fairz.d.next =
                self.l_ack.val() & !self.e_ecn.q.val() & (self.l_tmd.val() >= self.k_target.val());
            self.f_propz.d.next =
                self.l_ack.val() & !self.e_ecn.q.val() & (self.l_tmd.val() < self.k_target.val());
            self.f_mdz.d.next =
                self.l_ack.val() & self.e_ecn.q.val() & (self.l_tmd.val() >= self.k_target.val());
            self.f_fastz.d.next = self.l_tmd.val() < self.k_fast.val();
            self.f_qtrig.d.next = self.trig.q.val() | (self.l_tmd.val() > self.k_qa_th.val());
            // Epoch over: not started yet, or now is after its end (serial comparison).
            self.f_over.d.next = !self.epv.q.val()
                | ((self.t_el_qa.q.val() != bits::<32>(0))
                    & (self.t_el_qa.q.val() < self.k_half32.val()));
            self.f_adj.d.next = self.t_el_adj.q.val() > self.l_base32.val();
            self.f_mdt.d.next = self.t_el_dec.q.val() > self.l_base32.val();
            self.f_fdob.d.next = self.rcv.q.val() > self.k_adj.val();
        }

        // ---- 4: maxwnd = 1.5 BDP(base) ------------------------------------------------------
        self.l_mw41.next = self.m_mwp.p.val() >> 8;
        if self.ph.q.val().get_bit(4) {
            self.mw.d.next = bit_cast::<32, 41>(self.l_mw41.val());
            if (self.l_mw41.val() >> 32) != bits::<41>(0) {
                self.mw.d.next = self.k_all32.val();
            }
            if self.l_mw41.val() < bit_cast::<41, 32>(self.k_mtu.val()) {
                self.mw.d.next = self.k_mtu.val();
            }
        }

        // ---- 5: average delay; quick adapt ---------------------------------------------------
        self.l_step43.next = self.m_avg.p.val() >> 16;
        self.l_qa.next = (self.l_ack.val() | self.l_nack.val())
            & self.f_over.q.val()
            & self.epv.q.val()
            & self.f_qtrig.q.val()
            & (self.ach.q.val() < (self.mw.q.val() >> 3));
        self.l_end_qa.next =
            self.e_now.q.val() + self.l_base32.val() + bit_cast::<32, 24>(self.k_target.val());
        if self.ph.q.val().get_bit(5) {
            if self.t_rttv.q.val() {
                if self.t_up.q.val() {
                    self.avg.d.next = self.avg.q.val() + bit_cast::<32, 43>(self.l_step43.val());
                } else {
                    self.avg.d.next = self.avg.q.val() - bit_cast::<32, 43>(self.l_step43.val());
                }
            }
            self.f_qa.d.next = self.l_qa.val();
            if (self.l_ack.val() | self.l_nack.val()) & self.f_over.q.val() {
                self.ach.d.next = bits::<32>(0);
                self.qa_end.d.next = self.l_end_qa.val();
                self.epv.d.next = true;
            }
            // Decided here, applied at 6 (the decision is one compare and an AND).
            self.t_achmax.d.next = self.ach.q.val();
            if self.ach.q.val() < self.k_mtu.val() {
                self.t_achmax.d.next = self.k_mtu.val();
            }
        }
        if self.ph.q.val().get_bit(6) & self.f_qa.q.val() {
            self.l_cwn.next = self.t_achmax.q.val();
            self.trig.d.next = false;
            self.inc.d.next = bits::<48>(0);
            self.rcv.d.next = bits::<32>(0);
            self.c_qa.d.next = self.c_qa.q.val() + bits::<32>(1);
        }

        // ---- 6: proportional increment; which optional phases run; leading one of avg ------
        self.lead_a.x.next = self.avg.q.val();
        self.lead_c.x.next = self.cw.q.val();
        self.l_fair48.next = bit_cast::<48, 41>(self.m_fair.p.val()) << self.k_fi_e.val();
        self.l_prop_sh.next = self.m_prop.p.val() >> self.k_prop_sh.val();
        if self.ph.q.val().get_bit(6) {
            self.t_prop.d.next = bit_cast::<48, 51>(self.l_prop_sh.val());
            if (self.l_prop_sh.val() >> 48) != bits::<51>(0) {
                self.t_prop.d.next = self.k_all48.val();
            }
            // 7's addend picked here (fair or proportional), so 7 is one add and a saturate.
            if self.f_fairz.q.val() {
                self.t_prop.d.next = self.l_fair48.val();
            }
            self.f_mdo.d.next = false;
            self.f_fdo.d.next = false;
            if !self.f_qa.q.val() {
                self.f_mdo.d.next = self.f_mdz.q.val()
                    & (self.avg.q.val() > self.k_target_q8.val())
                    & self.f_mdt.q.val();
                self.f_fdo.d.next = (self.l_ack.val() & (self.f_fdob.q.val() | self.f_adj.q.val()))
                    | (self.l_tick.val()
                        & self.f_adj.q.val()
                        & (self.rcv.q.val() != bits::<32>(0)));
            }
            self.pa.d.next = self.lead_a.pos.val();
            self.t_ficgt.d.next = self.t_fic.q.val() > self.cw.q.val();
        }

        // ---- 7 / 18: table index of x with its leading one at p -----------------------------
        // x << (31 - p) puts the leading one at bit 31, so the 10 bits under it are [30:21]
        // (zeros shifted in when p < 10, as the table index wants): one left shifter by ~p,
        // no subtract, compare or second shifter. The amount is a 5-bit local: rust-hdl sizes
        // literals at 32 bits, and a 32-bit amount would make the shifter far wider.
        self.l_idx_x.next = self.avg.q.val();
        self.l_shl.next = !self.pa.q.val();
        self.l_idx_m.next = (self.l_idx_x.val() << self.l_shl.val()) >> 21;
        // The same for cwnd (its own shifter: no phase mux in front of either).
        self.l_cshl.next = !self.pc.q.val();
        // From cwnd's plain copy (final since 16, so the copy is at 18): no inverter LUT.
        self.l_cidx_m.next = (self.t_cw_m.q.val() << self.l_cshl.val()) >> 21;

        // ---- 7: the quadrant's effect; NACK / RTO subtraction -------------------------------

        self.l_go_fast.next = self.f_fastz.q.val() & (self.t_ficgt.q.val() | self.incr.q.val());
        self.l_add48.next = self.t_prop.q.val();
        self.l_inc49.next =
            bit_cast::<49, 48>(self.inc.q.val()) + bit_cast::<49, 48>(self.l_add48.val());
        self.l_fast_sh.next = self.m_fast.p.val() >> 8;
        self.l_cw33.next =
            bit_cast::<33, 32>(self.cw.q.val()) + bit_cast::<33, 40>(self.l_fast_sh.val());
        self.l_sub32.next = bit_cast::<32, 24>(self.e_bytes.q.val());
        if self.l_rto.val() {
            self.l_sub32.next = self.k_mtu.val();
        }
        self.l_nsub33.next =
            bit_cast::<33, 32>(self.cw.q.val()) - bit_cast::<33, 32>(self.l_sub32.val());
        // Both cwnd candidates of phase 7 are summed at 6 (cwnd is final there unless a quick
        // adapt fired, and then phase 7 does nothing).
        if self.ph.q.val().get_bit(6) {
            self.t_cwf33.d.next = self.l_cw33.val();
            self.t_nsub33.d.next = self.l_nsub33.val();
        }
        self.l_pam16.next = self.pa.q.val() - bits::<5>(16);
        self.l_gts41.next = self.k_gt.val();
        if self.pa.q.val() >= bits::<5>(16) {
            self.l_gts41.next = self.k_gt.val() >> self.l_pam16.val();
        }
        if self.ph.q.val().get_bit(7) {
            self.ia.d.next = bit_cast::<10, 32>(self.l_idx_m.val());
            self.gts.d.next = bit_cast::<33, 41>(self.l_gts41.val());
            if !self.f_qa.q.val() {
                if self.f_fairz.q.val() | self.f_mdz.q.val() {
                    self.fic.d.next = bits::<32>(0);
                    self.incr.d.next = false;
                }
                if self.f_propz.q.val() {
                    if self.f_fastz.q.val() {
                        self.fic.d.next = self.t_fic.q.val();
                        self.incr.d.next = self.l_go_fast.val();
                        if self.l_go_fast.val() {
                            self.l_cwn.next = bit_cast::<32, 33>(self.t_cwf33.q.val());
                            if self.t_cwf33.q.val().get_bit(32) {
                                self.l_cwn.next = self.k_all32.val();
                            }
                        }
                    } else {
                        self.fic.d.next = bits::<32>(0);
                        self.incr.d.next = false;
                    }
                }
                if self.f_fairz.q.val() | (self.f_propz.q.val() & !self.l_go_fast.val()) {
                    self.inc.d.next = bit_cast::<48, 49>(self.l_inc49.val());
                    if self.l_inc49.val().get_bit(48) {
                        self.inc.d.next = self.k_all48.val();
                    }
                }
                if self.l_nack.val() | self.l_rto.val() {
                    self.l_cwn.next = bit_cast::<32, 33>(self.t_nsub33.q.val());
                    if self.t_nsub33.q.val().get_bit(32) {
                        self.l_cwn.next = bits::<32>(0);
                    }
                }
            }
        }

        // ---- 8..13 (MD only): table[avg]; factor; cwnd * factor -----------------------------
        // ia is the table's address register: avg's index (7) or cwnd's (18), so no phase
        // mux sits in front of the table.
        // The table, two clocks from ia: every slice's entry is registered each clock (8 / 19),
        // then the slice is picked by ia's top bits (9 / 20; one-hot, an AND-OR).
        self.l_part.next = bit_cast::<3, 10>(self.ia.q.val() >> 7);
        self.l_r.next = bits::<12>(0);
        for i in 0..8 {
            self.roms[i].address.next = bit_cast::<7, 10>(self.ia.q.val());
            self.rq[i].clock.next = self.clock.val();
            self.rq[i].d.next = self.roms[i].data.val();
            if self.l_part.val() == self.k_part[i].val() {
                self.l_r.next = self.l_r.val() | self.rq[i].q.val();
            }
        }
        if self.ph.q.val().get_bit(9) {
            self.r_avg.d.next = self.l_r.val();
        }
        // 12: the factor (1 - g) + clamp(gt, g - 0.5, g) in one clock: the two compares and the
        // sum run side by side (the clamped sums are constants), then a 3-way pick. Only the
        // low 17 bits of the sum are kept, so a 17-bit add of gt's low bits is exact.
        self.l_gt_sh.next = self.m_gt.p.val() >> 27;
        self.l_mdf.next = self.k_one_minus_g.val() + bit_cast::<17, 45>(self.l_gt_sh.val());
        // gt (18 significant bits) against the bounds as the borrows of 19-bit subtracts: carry
        // chains, not a LUT tree per compare.
        self.l_gt19.next = bit_cast::<19, 45>(self.l_gt_sh.val());
        self.l_dlo19.next = self.l_gt19.val() - bit_cast::<19, 45>(self.k_gt_lo.val());
        self.l_dhi19.next = bit_cast::<19, 45>(self.k_gt_hi.val()) - self.l_gt19.val();
        if self.l_dlo19.val().get_bit(18) {
            self.l_mdf.next = self.k_mdf_lo.val();
        }
        if self.l_dhi19.val().get_bit(18) {
            self.l_mdf.next = self.k_mdf_hi.val();
        }
        if self.ph.q.val().get_bit(12) {
            self.mdf.d.next = self.l_mdf.val();
        }

        // ---- 14: cut, penalty, clamp ---------------------------------------------------------
        self.l_md_sh.next = self.m_md.p.val() >> 16;
        self.l_cut.next = self.cw.q.val();
        if self.f_mdo.q.val() {
            self.l_cut.next = bit_cast::<32, 49>(self.l_md_sh.val());
        }
        self.l_pen_sh.next = self.m_pen.p.val() >> 7;
        self.l_pen32.next = bits::<32>(0);
        if self.l_ack.val() {
            self.l_pen32.next = bit_cast::<32, 31>(self.l_pen_sh.val());
        }
        // 15: subtract, and beside it the clamp's two decisions against penalty + MTU and
        // penalty + maxwnd (registers settled long before): cut - pen < MTU (borrow included)
        // iff cut < pen + MTU; cut - pen > maxwnd iff cut > pen + maxwnd. 16: a pick by flags
        // (MTU <= maxwnd always, so "below" wins).
        self.l_pen34.next = bit_cast::<34, 32>(self.l_pen32.val());
        self.t_pmtu.d.next = self.l_pen34.val() + bit_cast::<34, 32>(self.k_mtu.val());
        self.t_pmw.d.next = self.l_pen34.val() + bit_cast::<34, 32>(self.mw.q.val());
        self.l_cut34.next = bit_cast::<34, 32>(self.l_cut.val());
        self.l_after33.next =
            bit_cast::<33, 32>(self.l_cut.val()) - bit_cast::<33, 32>(self.l_pen32.val());
        if self.ph.q.val().get_bit(15) {
            self.t_after33.d.next = self.l_after33.val();
            self.f_lo.d.next = self.l_cut34.val() < self.t_pmtu.q.val();
            self.f_hi.d.next = self.l_cut34.val() > self.t_pmw.q.val();
        }
        self.l_after.next = bit_cast::<32, 33>(self.t_after33.q.val());
        self.l_clamped.next = self.l_after.val();
        if self.f_hi.q.val() {
            self.l_clamped.next = self.mw.q.val();
        }
        if self.f_lo.q.val() {
            self.l_clamped.next = self.k_mtu.val();
        }
        if (self.ph.q.val().get_bit(16)) & !self.f_qa.q.val() {
            self.l_cwn.next = self.l_clamped.val();
            if self.f_mdo.q.val() {
                self.last_dec.d.next = self.e_now.q.val();
                self.l_cmd.next = self.c_md.q.val() + bits::<32>(1);
            }
        }

        // ---- 17..24 (fulfill only): cwnd += inc / cwnd (+ eta) ------------------------------
        // 17 leading one; 18 its shift amounts and the table index; 19 inc's shift and the
        // table; 20 saturate (an OR of the bits above 34) and cwnd (+ eta); product -> 23;
        // 23 add; 24 clamp.
        if self.ph.q.val().get_bit(17) {
            self.pc.d.next = self.lead_c.pos.val();
        }
        if self.ph.q.val().get_bit(18) {
            self.pcm2.d.next = self.pc.q.val() - bits::<5>(2);
            self.ia.d.next = bit_cast::<10, 32>(self.l_cidx_m.val());
        }
        self.l_incs48.next = self.inc.q.val() >> self.pcm2.q.val();
        if self.ph.q.val().get_bit(19) {
            self.t_incs48.d.next = self.l_incs48.val();
        }
        self.l_incs_hi.next = self.t_incs48.q.val() >> 34;
        self.l_cwe.next = bit_cast::<40, 32>(self.cw.q.val());
        if self.f_adj.q.val() {
            self.l_cwe.next = bit_cast::<40, 32>(self.cw.q.val()) + self.k_eta.val();
        }
        if self.ph.q.val().get_bit(20) {
            self.r_c.d.next = self.l_r.val();
            self.incs.d.next = bit_cast::<34, 48>(self.t_incs48.q.val());
            if self.l_incs_hi.val() != bits::<48>(0) {
                self.incs.d.next = self.k_all34.val();
            }
            self.t_cwe.d.next = self.l_cwe.val();
        }
        // 23: the add, and beside it cwnd + eta + q > maxwnd decided as q > maxwnd - (cwnd +
        // eta) (true when that is negative; q = inc/cwnd < 2^33, so the 40-bit sum never
        // wraps); 24: a pick by the flag.
        self.l_ful_sh.next = self.m_ful.p.val() >> 13;
        self.l_w40.next = self.t_cwe.q.val() + bit_cast::<40, 46>(self.l_ful_sh.val());
        self.t_mwmc.d.next =
            bit_cast::<41, 32>(self.mw.q.val()) - bit_cast::<41, 40>(self.t_cwe.q.val());
        if self.ph.q.val().get_bit(23) {
            self.t_w40.d.next = self.l_w40.val();
            self.f_whi.d.next = self.t_mwmc.q.val().get_bit(40)
                | (self.l_ful_sh.val() > bit_cast::<46, 41>(self.t_mwmc.q.val()));
        }
        if self.ph.q.val().get_bit(24) {
            self.l_cwn.next = bit_cast::<32, 40>(self.t_w40.q.val());
            if self.f_whi.q.val() {
                self.l_cwn.next = self.mw.q.val();
            }
            if self.f_adj.q.val() {
                self.last_adj.d.next = self.e_now.q.val();
            }
            self.inc.d.next = bits::<48>(0);
            self.rcv.d.next = bits::<32>(0);
        }

        // ---- commit; the shown outputs take whole events ----------------------------------
        self.cw.d.next = self.l_cwn.val();
        self.c_md.d.next = self.l_cmd.val();
        if self.l_last.val() {
            self.o_cw.d.next = self.l_cwn.val();
            self.o_mw.d.next = self.mw.q.val();
            self.o_base.d.next = self.base.q.val();
            self.o_avg.d.next = self.avg.q.val();
            self.o_ev.d.next = self.c_ev.q.val();
            self.o_md.d.next = self.l_cmd.val();
            self.o_qa.d.next = self.c_qa.q.val();
        }
        self.nx_load.next = self.l_last.val();
        self.nx_cwnd.next = 0.into();
        self.nx_maxwnd.next = 0.into();
        self.nx_base_rtt_ns.next = 0.into();
        if self.l_last.val() {
            self.nx_cwnd.next = self.l_cwn.val();
            self.nx_maxwnd.next = self.mw.q.val();
            self.nx_base_rtt_ns.next = self.base.q.val();
        }

        // ---- context switch: read the next (switch clock); write the old owner back and load
        // the next (phase 0). The layout is `CTX_BITS`'s; a context never saved loads initial values.
        self.ctx_owner.next = self.owner.q.val();
        self.l_pack.next = bit_cast::<CTX_BITS, 32>(self.cw.q.val())
            | (bit_cast::<CTX_BITS, 32>(self.mw.q.val()) << 32)
            | (bit_cast::<CTX_BITS, 32>(self.avg.q.val()) << 64)
            | (bit_cast::<CTX_BITS, 32>(self.rcv.q.val()) << 96)
            | (bit_cast::<CTX_BITS, 32>(self.ach.q.val()) << 128)
            | (bit_cast::<CTX_BITS, 32>(self.fic.q.val()) << 160)
            | (bit_cast::<CTX_BITS, 32>(self.qa_end.q.val()) << 192)
            | (bit_cast::<CTX_BITS, 32>(self.last_dec.q.val()) << 224)
            | (bit_cast::<CTX_BITS, 32>(self.last_adj.q.val()) << 256)
            | (bit_cast::<CTX_BITS, 32>(self.c_ev.q.val()) << 288)
            | (bit_cast::<CTX_BITS, 32>(self.c_md.q.val()) << 320)
            | (bit_cast::<CTX_BITS, 32>(self.c_qa.q.val()) << 352)
            | (bit_cast::<CTX_BITS, 24>(self.base.q.val()) << 384)
            | (bit_cast::<CTX_BITS, 24>(self.tb.q.val()) << 408)
            | (bit_cast::<CTX_BITS, 48>(self.inc.q.val()) << 432);
        if self.incr.q.val() {
            self.l_pack.next = self.l_pack.val() | (bits::<CTX_BITS>(1) << 480);
        }
        if self.trig.q.val() {
            self.l_pack.next = self.l_pack.val() | (bits::<CTX_BITS>(1) << 481);
        }
        if self.epv.q.val() {
            self.l_pack.next = self.l_pack.val() | (bits::<CTX_BITS>(1) << 482);
        }
        self.l_rd.next = 0.into();
        for r in 0..self._nram {
            self.ctx_ram[r].write_clock.next = self.clock.val();
            self.ctx_ram[r].read_clock.next = self.clock.val();
            self.ctx_ram[r].write_address.next = self.owner_prev.q.val();
            self.ctx_ram[r].write_data.next = self.l_pack.val();
            self.ctx_ram[r].write_enable.next = self.ph.q.val().get_bit(0);
            self.ctx_ram[r].read_address.next = self.sw_ctx.val();
            self.l_rd.next = self.ctx_ram[r].read_data.val();
        }
        if self.l_sw.val() {
            self.owner.d.next = self.sw_ctx.val();
            self.owner_prev.d.next = self.owner.q.val();
        }
        for i in 0..self._nctx {
            self.cv[i].d.next = self.cv[i].q.val();
            if self.l_sw.val() & (self.owner.q.val() == self.k_ctx[i].val()) {
                self.cv[i].d.next = true;
            }
            if self.ctx_clr.val().get_bit(i) | self.rst.val() {
                self.cv[i].d.next = false;
            }
        }
        if self.ph.q.val().get_bit(0) {
            self.cw.d.next = self.l_rd.val().get_bits::<32>(0);
            self.mw.d.next = self.l_rd.val().get_bits::<32>(32);
            self.avg.d.next = self.l_rd.val().get_bits::<32>(64);
            self.rcv.d.next = self.l_rd.val().get_bits::<32>(96);
            self.ach.d.next = self.l_rd.val().get_bits::<32>(128);
            self.fic.d.next = self.l_rd.val().get_bits::<32>(160);
            self.qa_end.d.next = self.l_rd.val().get_bits::<32>(192);
            self.last_dec.d.next = self.l_rd.val().get_bits::<32>(224);
            self.last_adj.d.next = self.l_rd.val().get_bits::<32>(256);
            self.c_ev.d.next = self.l_rd.val().get_bits::<32>(288);
            self.c_md.d.next = self.l_rd.val().get_bits::<32>(320);
            self.c_qa.d.next = self.l_rd.val().get_bits::<32>(352);
            self.base.d.next = self.l_rd.val().get_bits::<24>(384);
            self.tb.d.next = self.l_rd.val().get_bits::<24>(408);
            self.inc.d.next = self.l_rd.val().get_bits::<48>(432);
            self.incr.d.next = self.l_rd.val().get_bit(480);
            self.trig.d.next = self.l_rd.val().get_bit(481);
            self.epv.d.next = self.l_rd.val().get_bit(482);
        }

        // ---- synchronous reset (all, or the owner's context; or a never-saved context's
        // load) -----------------------------------------------------------------------------
        if self.rst.val() {
            self.owner.d.next = 0.into();
        }
        if self.l_rst_all.val() | (self.ph.q.val().get_bit(0) & !self.l_cv_own.val()) {
            self.ph.d.next = bits::<25>(0);
            self.cw.d.next = self.k_init_cwnd.val();
            self.mw.d.next = self.k_init_cwnd.val();
            self.base.d.next = self.k_init_base.val();
            self.tb.d.next = self.k_init_tb.val();
            self.avg.d.next = bits::<32>(0);
            self.inc.d.next = bits::<48>(0);
            self.rcv.d.next = bits::<32>(0);
            self.ach.d.next = bits::<32>(0);
            self.fic.d.next = bits::<32>(0);
            self.incr.d.next = false;
            self.trig.d.next = false;
            self.epv.d.next = false;
            self.qa_end.d.next = bits::<32>(0);
            self.last_dec.d.next = bits::<32>(0);
            self.last_adj.d.next = bits::<32>(0);
            self.c_ev.d.next = bits::<32>(0);
            self.c_md.d.next = bits::<32>(0);
            self.c_qa.d.next = bits::<32>(0);
            self.f_fdo.d.next = false;
            self.busy.d.next = false;
        }
        if self.l_rst_all.val() {
            self.o_cw.d.next = self.k_init_cwnd.val();
            self.o_mw.d.next = self.k_init_cwnd.val();
            self.o_base.d.next = self.k_init_base.val();
            self.o_avg.d.next = bits::<32>(0);
            self.o_ev.d.next = bits::<32>(0);
            self.o_md.d.next = bits::<32>(0);
            self.o_qa.d.next = bits::<32>(0);
        }
    }
}
