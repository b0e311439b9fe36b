//! `sack_rx_tracker`: receiver-side PSN tracking: circular SACK bitmap, cumulative ack,
//! duplicate / out-of-window / trim classification, SACK coalescing, SACK and NACK build.
//! One pipeline serves `qps` QPs (contexts): the description below is of one context; what
//! a context keeps on its own and how the stages select it is after the diagram.
//!
//! ```text
//!  pkt_* (one header per clock)
//!    |
//!  I: input registers; psn low bits decoded one-hot (lo nibble, hi group); i_same = psn equals
//!    |   the psn now in I (the packet that will be one stage ahead); i_row = the psn's 16-slot
//!    |   group of the bitmap, this edge's commit folded in per slot (its clear cannot matter)
//!  C: classify.  lo_ok = !(psn - cack_p1)[23]    hi_ok = (psn - hi_edge)[23]  (two chains)
//!    |   seen = i_row[psn mod 16] (one-hot AND-OR) | (i_same & c_new)   (forwarding)
//!    |   OOW = lo_ok & !hi_ok;  DUP = !lo_ok | (in & seen);  TRIM / NEW otherwise
//!  R: commit (edge of t+2): bits[slot] <= 1 for NEW, counters, bytes, coalescing via the
//!    |   down-counter `remaining` (NEW & len >= remaining -> SACK); snapshot cack / ooo /
//!    |   rcvd_bytes as they are after this edge
//!  B: base = inwin & (psn - 63 >= cack + 1) ? psn - 63 : cack + 1; offset; the base slot's
//!    |   byte one-hot and bit one-hot, selected between both candidates pre-decoded at R
//!  E: 9 bytes of the circular bitmap from the base byte (each a W/8:1 one-hot AND-OR);
//!    |   fill = live cack - base + 1 clipped to 0..=64 (what the loop consumed since R)
//!  O: 72 -> 64 bit shift by base % 8, OR the low `fill` bits; every response field
//!        registered (0 without response)
//!        sack_valid | nack_valid, cack_out, sack_offset, sack_bitmap, ...   (t + 5)
//!
//!  advance loop, beside R, one byte per clock:
//!    cur = adv ? cur1 : cur0 (registers; see below); m = cur | mask; p = prefix-AND(m);
//!    clr = p & ~mask;  ptr <= p[7] ? rotate(ptr) : ptr;  mask <= p[7] ? 0 : p;  adv <= p[7]
//!    cur0 <= byte ptr, cur1 <= byte ptr + 1 (as after this edge);  clr_q <= clr;  cptr <= ptr
//!    next edge: ncl_q <= popcount(clr_q) (clr_q2, cptr2 follow)
//!    edge after: bits[cptr2 byte] &= ~clr_q2 and cack += ncl_q, together
//! ```
//!
//! Contexts (`NicConfig::qps`; `mrc_core` has one tracker for all its QPs): each has its own
//! bitmap, advance loop, cack / cack + 1 / hi_edge, ooo, bytes, coalescing state and counters,
//! all in flops; the pipeline registers are shared. `pkt_qp` tags a packet (one for a context
//! the tracker does not have is dropped); each stage carries its context one-hot and selects
//! the per-context state it reads by it (I: the group read and the commit fold-in; C: the
//! window edges; R: coalescing state and snapshots; E: the live cack for the fill). E reads
//! the bitmap from a mirror loaded, at the edge that moves the packet from R to B, with what
//! its context's bitmap takes at that edge. `qp_rst` bit q resets context q and drops its
//! packets from every stage; `rsp_qp` tags the response; the counters are summed over the
//! contexts and `cack_psn` is context 0's. With one context every select is a constant, and
//! the tracker is the one-QP logic. Model: `mrc_model::sack_rx_tracker::SharedRxTracker`.
//!
//! Bitmap: W flops indexed circularly by `psn mod W`; slot k holds the PSN in
//! `(cack, cack + W]` congruent to k. The advance loop walks the head up to 8 PSNs per clock
//! (one byte); what it consumed is counted at the next edge (`ncl_q`, so the popcount is not
//! in front of the adders) and cleared at the edge after, the same edge that adds the count to
//! `cack`, so `cack` and the bitmap change together and the bitmap holds exactly the received
//! PSNs in `(cack, cack + W]` after every edge. `mask` holds the bits of the head byte already
//! consumed, so bits consumed but not yet cleared, and bits of the head byte set again for the
//! next lap, are never counted twice. In-order traffic: cack covers a packet in the outputs 5
//! steps after it was presented; the worst case (a hole at the head with W - 1 PSNs above it,
//! then filled) is at most `W/8 + 6` steps after the filling packet
//! (`mrc_model::sack_rx_tracker::cack_lag_bound`).
//!
//! Window check: `cack_p1` = cack + 1 is a register kept exactly in step with `cack` (it is
//! updated by the same popcount), so the lower edge is exact. It must be: a PSN at or below
//! cack has had its bit cleared, and a stale lower edge would classify it NEW and set its slot
//! for the wrong lap. `hi_edge = cack_p1 + lim` is computed one cycle late from registers,
//! `lim = min(W, mpr * 128 - 1)` (registered from the `mpr` port, 0 when mpr = 0): a stale
//! upper edge is lower, so it can only reject (NACK PSN_OOR_WINDOW) a PSN the sender could
//! only have sent after seeing an ack the receiver issued later; it never admits a PSN beyond
//! cack + W. Serial corner: d = psn - cack = 2^23 exactly counts as ahead (OOW). That lag is
//! also what lets I read the bitmap without the clear of the same edge (see the I stage): make
//! hi_edge exact and i_row must fold the clear in.
//!
//! Safety (no slot set for the wrong PSN, no bitmap claim of an unreceived PSN):
//! 1. A NEW packet classified in C had psn in (cack, cack + lim] against the exact cack; its bit
//!    is set at the next edge. Until then the loop cannot pass psn (its bit reads 0 to the loop
//!    in both cycles), so psn is still above cack when it is set, and below cack + W as cack
//!    only grows.
//! 2. A slot being cleared is never set in the same edge: the cleared bits were consumed by the
//!    loop two cycles earlier and stay set until this edge, so they were set when the packet
//!    now committing was classified (one cycle earlier), and that packet was a DUP. The only other case, the packet one stage ahead setting the same PSN, is forwarded.
//!    The next lap of a cleared slot is psn + W, admitted only once cack >= psn, i.e. after
//!    the clear.
//! 3. The SACK reads the bitmap two cycles after its cack snapshot c. Base + j lies in
//!    [c + 1, c + W] (base = max(psn - 63, c + 1), psn <= c + lim). At read time cack = c' >= c.
//!    If base + j > c' the slot holds base + j itself (unique in (c', c' + W]); if
//!    base + j <= c' the PSN was received anyway. So a set bit is never a false claim; a PSN
//!    that arrives after the snapshot may show (that is fine, it was received).
//!
//! Coalescing: `remaining` counts down from `ack_bytes` (sampled on reset and after each SACK);
//! a NEW packet with `len >= remaining` (one carry chain), ECN, ack-request or the first NEW
//! since reset, and every DUP, answers with a SACK, which reloads it.
//! Responses appear a fixed `RSP_LATENCY` = 5 steps after the packet
//! (`mrc_model::sack_rx_tracker::RSP_LATENCY`). The golden model is
//! `mrc_model::sack_rx_tracker`.

use mrc_config::NicConfig;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct SackRxTracker {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: bitmap cleared, cack <= init_psn - 1, pipelines emptied, counters 0.
    pub rst: Signal<In, Bit>,
    pub init_psn: Signal<In, Bits<24>>,
    pub pkt_valid: Signal<In, Bit>,
    pub pkt_psn: Signal<In, Bits<24>>,
    /// Payload bytes.
    pub pkt_len: Signal<In, Bits<16>>,
    pub pkt_ecn: Signal<In, Bit>,
    pub pkt_trimmed: Signal<In, Bit>,
    /// The trim happened at the last hop.
    pub pkt_lasthop: Signal<In, Bit>,
    pub pkt_ackreq: Signal<In, Bit>,
    pub pkt_ev: Signal<In, Bits<32>>,
    /// Receive window, units of 128 PSNs.
    pub mpr: Signal<In, Bits<8>>,
    /// Coalescing threshold, bytes.
    pub ack_bytes: Signal<In, Bits<24>>,
    /// The packet's receive context (QP), 0..qps; a packet for another is dropped.
    pub pkt_qp: Signal<In, Bits<4>>,
    /// Per-context synchronous reset (bit q: context q), as `rst` does for all of them.
    pub qp_rst: Signal<In, Bits<16>>,

    pub sack_valid: Signal<Out, Bit>,
    pub nack_valid: Signal<Out, Bit>,
    pub cack_out: Signal<Out, Bits<24>>,
    pub sack_offset: Signal<Out, Bits<16>>,
    pub sack_bitmap: Signal<Out, Bits<64>>,
    /// 0 NONE, 1 SKIP_ONCE (the triggering packet was ECN-marked).
    pub sack_m: Signal<Out, Bits<2>>,
    pub rsp_ev: Signal<Out, Bits<32>>,
    pub ooo_count: Signal<Out, Bits<15>>,
    /// Total bytes accepted >> 8, mod 2^24.
    pub rcvd_bytes: Signal<Out, Bits<24>>,
    /// 0x01 TRIMMED, 0x02 TRIMMED_LASTHOP, 0x0B PSN_OOR_WINDOW.
    pub nack_reason: Signal<Out, Bits<8>>,
    pub nack_psn: Signal<Out, Bits<24>>,
    /// The live committed cumulative ack.
    pub cack_psn: Signal<Out, Bits<24>>,
    pub cnt_accepted: Signal<Out, Bits<32>>,
    pub cnt_duplicate: Signal<Out, Bits<32>>,
    pub cnt_out_of_window: Signal<Out, Bits<32>>,
    pub cnt_trimmed: Signal<Out, Bits<32>>,
    /// The context of the response on `sack_valid` / `nack_valid` (0 without one).
    pub rsp_qp: Signal<Out, Bits<4>>,

    // Elaboration constants.
    wmask: Constant<Bits<24>>,
    wlim: Constant<Bits<16>>,
    nib: Vec<Constant<Bits<4>>>,
    grp: Vec<Constant<Bits<6>>>,
    byt: Vec<Constant<Bits<7>>>,
    sh3: Vec<Constant<Bits<3>>>,
    /// Context numbers 0..qps.
    qid: Vec<Constant<Bits<4>>>,
    /// 1 with one context (its selects are then constant), else 0.
    one_ctx: Constant<Bits<16>>,
    // Each pipeline stage's context, one-hot, for the selects and the kills; `rsp_qp` is
    // encoded from the last (`o_qp`), so no binary tag rides the pipeline beside it.
    i_qm: DFF<Bits<16>>,
    c_qm: DFF<Bits<16>>,
    r_qm: DFF<Bits<16>>,
    b_qm: DFF<Bits<16>>,
    e_qm: DFF<Bits<16>>,
    o_qp: DFF<Bits<4>>,

    // I
    i_v: DFF<Bit>,
    i_psn: DFF<Bits<24>>,
    i_len: DFF<Bits<16>>,
    i_ecn: DFF<Bit>,
    i_trim: DFF<Bit>,
    i_lh: DFF<Bit>,
    i_ackreq: DFF<Bit>,
    i_ev: DFF<Bits<32>>,
    i_same: DFF<Bit>,
    i_lohot: Vec<DFF<Bit>>,
    i_hihot: Vec<DFF<Bit>>,
    i_bhot: Vec<DFF<Bit>>,
    /// The packet's 16-slot group of the bitmap as it is after the edge that loads I.
    i_row: Vec<DFF<Bit>>,
    // C
    c_new: DFF<Bit>,
    c_dup: DFF<Bit>,
    c_oow: DFF<Bit>,
    c_trim: DFF<Bit>,
    c_inwin: DFF<Bit>,
    c_psn: DFF<Bits<24>>,
    c_len: DFF<Bits<16>>,
    c_ecn: DFF<Bit>,
    c_lh: DFF<Bit>,
    c_ackreq: DFF<Bit>,
    c_ev: DFF<Bits<32>>,
    c_lohot: Vec<DFF<Bit>>,
    c_hihot: Vec<DFF<Bit>>,
    c_lo8: Vec<DFF<Bit>>,
    // bitmap, loop, cumulative state
    bits: Vec<DFF<Bit>>,
    ptr: Vec<DFF<Bit>>,
    cptr: Vec<DFF<Bit>>,
    mask: Vec<DFF<Bits<8>>>,
    cur0: Vec<DFF<Bits<8>>>,
    cur1: Vec<DFF<Bits<8>>>,
    /// The NEW packet's byte (in C) against byte ptr + k of this context, k = 0, 1, 2,
    /// registered a clock early from its byte one-hot in I (i_bhot) and this clock's ptr; `adv`
    /// then picks k or k + 1, as ptr moves by one byte or none. A context's reset moves ptr
    /// anywhere, but it also drops that context's packet entering C (k_i), so in the clock
    /// after it no NEW packet of the context reads the match.
    nm0: Vec<DFF<Bit>>,
    nm1: Vec<DFF<Bit>>,
    nm2: Vec<DFF<Bit>>,
    l_nm0: Signal<Local, Bit>,
    l_nm1: Signal<Local, Bit>,
    l_nm2: Signal<Local, Bit>,
    adv: Vec<DFF<Bit>>,
    clr_q: Vec<DFF<Bits<8>>>,
    clr_q2: Vec<DFF<Bits<8>>>,
    cptr2: Vec<DFF<Bit>>,
    ncl_q: Vec<DFF<Bits<4>>>,
    nclm1_q: Vec<DFF<Bits<15>>>,
    cack: Vec<DFF<Bits<24>>>,
    cack_p1: Vec<DFF<Bits<24>>>,
    hi_edge: Vec<DFF<Bits<24>>>,
    lim_q: DFF<Bits<16>>,
    ooo: Vec<DFF<Bits<15>>>,
    bytes: Vec<DFF<Bits<32>>>,
    remaining: Vec<DFF<Bits<24>>>,
    first: Vec<DFF<Bit>>,
    cnt_acc: Vec<DFF<Bits<32>>>,
    cnt_dup: Vec<DFF<Bits<32>>>,
    cnt_oow: Vec<DFF<Bits<32>>>,
    cnt_trim: Vec<DFF<Bits<32>>>,
    // R
    r_sack: DFF<Bit>,
    r_nack: DFF<Bit>,
    r_reason: DFF<Bits<8>>,
    r_psn: DFF<Bits<24>>,
    r_pm63: DFF<Bits<24>>,
    r_ev: DFF<Bits<32>>,
    r_m: DFF<Bits<2>>,
    r_inwin: DFF<Bit>,
    r_cack: DFF<Bits<24>>,
    r_cack1: DFF<Bits<24>>,
    /// Both base candidates, psn - 63 and cack + 1, pre-decoded: byte one-hot and bit one-hot.
    r_phot: Vec<DFF<Bit>>,
    r_chot: Vec<DFF<Bit>>,
    r_pshot: Vec<DFF<Bit>>,
    r_cshot: Vec<DFF<Bit>>,
    r_ooo: DFF<Bits<15>>,
    r_bytes: DFF<Bits<24>>,
    // B
    b_sack: DFF<Bit>,
    b_nack: DFF<Bit>,
    b_reason: DFF<Bits<8>>,
    b_psn: DFF<Bits<24>>,
    b_ev: DFF<Bits<32>>,
    b_m: DFF<Bits<2>>,
    b_cack: DFF<Bits<24>>,
    b_ooo: DFF<Bits<15>>,
    b_bytes: DFF<Bits<24>>,
    b_off: DFF<Bits<16>>,
    b_base: DFF<Bits<24>>,
    b_bhot: Vec<DFF<Bit>>,
    b_shhot: Vec<DFF<Bit>>,
    // E
    e_sack: DFF<Bit>,
    e_nack: DFF<Bit>,
    e_reason: DFF<Bits<8>>,
    e_psn: DFF<Bits<24>>,
    e_ev: DFF<Bits<32>>,
    e_m: DFF<Bits<2>>,
    e_cack: DFF<Bits<24>>,
    e_ooo: DFF<Bits<15>>,
    e_bytes: DFF<Bits<24>>,
    e_off: DFF<Bits<16>>,
    e_fneg: DFF<Bit>,
    e_fbig: DFF<Bit>,
    e_flo: DFF<Bits<6>>,
    e_shhot: Vec<DFF<Bit>>,
    e_ext: Vec<DFF<Bit>>,
    // O
    o_sack: DFF<Bit>,
    o_nack: DFF<Bit>,
    o_cack: DFF<Bits<24>>,
    o_off: DFF<Bits<16>>,
    o_bm: DFF<Bits<64>>,
    o_m: DFF<Bits<2>>,
    o_ev: DFF<Bits<32>>,
    o_ooo: DFF<Bits<15>>,
    o_bytes: DFF<Bits<24>>,
    o_reason: DFF<Bits<8>>,
    o_npsn: DFF<Bits<24>>,

    // Combinational intermediates (reused per unrolled iteration).
    lo_d: Signal<Local, Bits<24>>,
    hi_d: Signal<Local, Bits<24>>,
    lo_ok: Signal<Local, Bit>,
    hi_ok: Signal<Local, Bit>,
    inwin: Signal<Local, Bit>,
    seen: Signal<Local, Bit>,
    t: Signal<Local, Bit>,
    t2: Signal<Local, Bit>,
    hb: Signal<Local, Bits<8>>,
    nb1: Signal<Local, Bits<8>>,
    sv: Signal<Local, Bits<8>>,
    mt0: Signal<Local, Bit>,
    mt1: Signal<Local, Bit>,
    m8: Signal<Local, Bits<8>>,
    cur8: Signal<Local, Bits<8>>,
    p8: Signal<Local, Bits<8>>,
    run: Signal<Local, Bit>,
    full: Signal<Local, Bit>,
    ncl: Signal<Local, Bits<4>>,
    nclm1: Signal<Local, Bits<15>>,
    pu: Signal<Local, Bits<8>>,
    pn: Signal<Local, Bits<6>>,
    px0: Signal<Local, Bit>,
    px1: Signal<Local, Bit>,
    py0: Signal<Local, Bit>,
    py1: Signal<Local, Bit>,
    pk: Signal<Local, Bit>,
    cack_n: Signal<Local, Bits<24>>,
    cack_p1_n: Signal<Local, Bits<24>>,
    ooo_n: Signal<Local, Bits<15>>,
    bytes_n: Signal<Local, Bits<32>>,
    trig: Signal<Local, Bit>,
    sack: Signal<Local, Bit>,
    nack: Signal<Local, Bit>,
    diff: Signal<Local, Bits<24>>,
    offd: Signal<Local, Bits<24>>,
    use_psn: Signal<Local, Bit>,
    bslot: Signal<Local, Bits<24>>,
    bbyte: Signal<Local, Bits<7>>,
    bsh: Signal<Local, Bits<3>>,
    lbyte: Signal<Local, Bits<7>>,
    lsh: Signal<Local, Bits<3>>,
    lim_raw: Signal<Local, Bits<16>>,
    islot: Signal<Local, Bits<24>>,
    hsel: Signal<Local, Bits<64>>,
    bnx: Signal<Local, Bit>,
    bm: Signal<Local, Bits<64>>,
    fdd: Signal<Local, Bits<24>>,
    fk: Vec<Constant<Bits<6>>>,
    fth: Signal<Local, Bits<64>>,
    fbig_mask: Constant<Bits<24>>,
    // The stage contexts as masks (bit q: context q) and what is selected by them.
    psel: Signal<Local, Bits<16>>,
    pselg: Signal<Local, Bits<16>>,
    qenc: Signal<Local, Bits<4>>,
    isel: Signal<Local, Bits<16>>,
    csel: Signal<Local, Bits<16>>,
    rsel: Signal<Local, Bits<16>>,
    bsel: Signal<Local, Bits<16>>,
    esel: Signal<Local, Bits<16>>,
    k_p: Signal<Local, Bit>,
    k_i: Signal<Local, Bit>,
    k_c: Signal<Local, Bit>,
    k_r: Signal<Local, Bit>,
    k_b: Signal<Local, Bit>,
    k_e: Signal<Local, Bit>,
    qrst: Signal<Local, Bit>,
    fsame: Signal<Local, Bit>,
    s_cp1: Signal<Local, Bits<24>>,
    s_hi: Signal<Local, Bits<24>>,
    s_rem: Signal<Local, Bits<24>>,
    s_first: Signal<Local, Bit>,
    s_bytes: Signal<Local, Bits<32>>,
    s_cn: Signal<Local, Bits<24>>,
    s_cp1n: Signal<Local, Bits<24>>,
    s_ooon: Signal<Local, Bits<15>>,
    s_cb: Signal<Local, Bits<24>>,

    _w: usize,
    _nb: usize,
    _nb_end: usize,
    _groups: usize,
    _nq: usize,
    /// Where stage E reads the bitmap: context 0's bits with one context, else the mirror
    /// (`bits[nq * W..]`), a one-iteration loop from `_eoff` to `_eoff_end`.
    _eoff: usize,
    _eoff_end: usize,
    /// The mirror's loop: one iteration with more than one context, none with one.
    _mir: usize,
    _mir_end: usize,
}

fn dffs<T: Synth>(n: usize) -> Vec<DFF<T>> {
    (0..n).map(|_| DFF::default()).collect()
}

impl SackRxTracker {
    /// Elaborate the tracker for a validated config (W = `sack_window_bits`).
    pub fn new(cfg: &NicConfig) -> Self {
        let w = cfg.sack_window_bits as usize;
        let nb = w / 8;
        let groups = w / 16;
        let nq = cfg.qps.clamp(1, 16) as usize;
        let multi = nq > 1;
        let eoff = if multi { nq * w } else { 0 };
        Self {
            clock: Default::default(),
            rst: Default::default(),
            init_psn: Default::default(),
            pkt_valid: Default::default(),
            pkt_psn: Default::default(),
            pkt_len: Default::default(),
            pkt_ecn: Default::default(),
            pkt_trimmed: Default::default(),
            pkt_lasthop: Default::default(),
            pkt_ackreq: Default::default(),
            pkt_ev: Default::default(),
            mpr: Default::default(),
            ack_bytes: Default::default(),
            sack_valid: Default::default(),
            nack_valid: Default::default(),
            cack_out: Default::default(),
            sack_offset: Default::default(),
            sack_bitmap: Default::default(),
            sack_m: Default::default(),
            rsp_ev: Default::default(),
            ooo_count: Default::default(),
            rcvd_bytes: Default::default(),
            nack_reason: Default::default(),
            nack_psn: Default::default(),
            cack_psn: Default::default(),
            cnt_accepted: Default::default(),
            cnt_duplicate: Default::default(),
            cnt_out_of_window: Default::default(),
            cnt_trimmed: Default::default(),
            pkt_qp: Default::default(),
            qp_rst: Default::default(),
            rsp_qp: Default::default(),
            qid: (0..nq as u64).map(|q| Constant::new(q.into())).collect(),
            one_ctx: Constant::new(u64::from(!multi).into()),
            i_qm: Default::default(),
            c_qm: Default::default(),
            r_qm: Default::default(),
            b_qm: Default::default(),
            e_qm: Default::default(),
            o_qp: Default::default(),
            psel: Default::default(),
            pselg: Default::default(),
            qenc: Default::default(),
            isel: Default::default(),
            csel: Default::default(),
            rsel: Default::default(),
            bsel: Default::default(),
            esel: Default::default(),
            k_p: Default::default(),
            k_i: Default::default(),
            k_c: Default::default(),
            k_r: Default::default(),
            k_b: Default::default(),
            k_e: Default::default(),
            qrst: Default::default(),
            fsame: Default::default(),
            s_cp1: Default::default(),
            s_hi: Default::default(),
            s_rem: Default::default(),
            s_first: Default::default(),
            s_bytes: Default::default(),
            s_cn: Default::default(),
            s_cp1n: Default::default(),
            s_ooon: Default::default(),
            s_cb: Default::default(),
            wmask: Constant::new((w as u64 - 1).into()),
            wlim: Constant::new((w as u64).into()),
            nib: (0..16u64).map(|j| Constant::new(j.into())).collect(),
            grp: (0..groups as u64)
                .map(|g| Constant::new(g.into()))
                .collect(),
            byt: (0..nb as u64).map(|b| Constant::new(b.into())).collect(),
            sh3: (0..8u64).map(|s| Constant::new(s.into())).collect(),
            i_v: Default::default(),
            i_psn: Default::default(),
            i_len: Default::default(),
            i_ecn: Default::default(),
            i_trim: Default::default(),
            i_lh: Default::default(),
            i_ackreq: Default::default(),
            i_ev: Default::default(),
            i_same: Default::default(),
            i_lohot: dffs(16),
            i_hihot: dffs(groups),
            i_bhot: dffs(nb),
            i_row: dffs(16),
            c_new: Default::default(),
            c_dup: Default::default(),
            c_oow: Default::default(),
            c_trim: Default::default(),
            c_inwin: Default::default(),
            c_psn: Default::default(),
            c_len: Default::default(),
            c_ecn: Default::default(),
            c_lh: Default::default(),
            c_ackreq: Default::default(),
            c_ev: Default::default(),
            c_lohot: dffs(16),
            c_hihot: dffs(groups),
            c_lo8: dffs(8),
            bits: dffs(nq * w + if multi { w } else { 0 }),
            ptr: dffs(nq * nb),
            cptr: dffs(nq * nb),
            mask: dffs(nq),
            cur0: dffs(nq),
            cur1: dffs(nq),
            nm0: dffs(nq),
            nm1: dffs(nq),
            nm2: dffs(nq),
            l_nm0: Default::default(),
            l_nm1: Default::default(),
            l_nm2: Default::default(),
            adv: dffs(nq),
            clr_q: dffs(nq),
            clr_q2: dffs(nq),
            cptr2: dffs(nq * nb),
            ncl_q: dffs(nq),
            nclm1_q: dffs(nq),
            cack: dffs(nq),
            cack_p1: dffs(nq),
            hi_edge: dffs(nq),
            lim_q: Default::default(),
            ooo: dffs(nq),
            bytes: dffs(nq),
            remaining: dffs(nq),
            first: dffs(nq),
            cnt_acc: dffs(nq),
            cnt_dup: dffs(nq),
            cnt_oow: dffs(nq),
            cnt_trim: dffs(nq),
            r_sack: Default::default(),
            r_nack: Default::default(),
            r_reason: Default::default(),
            r_psn: Default::default(),
            r_pm63: Default::default(),
            r_ev: Default::default(),
            r_m: Default::default(),
            r_inwin: Default::default(),
            r_cack: Default::default(),
            r_cack1: Default::default(),
            r_phot: dffs(nb),
            r_chot: dffs(nb),
            r_pshot: dffs(8),
            r_cshot: dffs(8),
            r_ooo: Default::default(),
            r_bytes: Default::default(),
            b_sack: Default::default(),
            b_nack: Default::default(),
            b_reason: Default::default(),
            b_psn: Default::default(),
            b_ev: Default::default(),
            b_m: Default::default(),
            b_cack: Default::default(),
            b_ooo: Default::default(),
            b_bytes: Default::default(),
            b_off: Default::default(),
            b_bhot: dffs(nb),
            b_shhot: dffs(8),
            e_sack: Default::default(),
            e_nack: Default::default(),
            e_reason: Default::default(),
            e_psn: Default::default(),
            e_ev: Default::default(),
            e_m: Default::default(),
            e_cack: Default::default(),
            e_ooo: Default::default(),
            e_bytes: Default::default(),
            e_off: Default::default(),
            e_shhot: dffs(8),
            e_ext: dffs(71),
            o_sack: Default::default(),
            o_nack: Default::default(),
            o_cack: Default::default(),
            o_off: Default::default(),
            o_bm: Default::default(),
            o_m: Default::default(),
            o_ev: Default::default(),
            o_ooo: Default::default(),
            o_bytes: Default::default(),
            o_reason: Default::default(),
            o_npsn: Default::default(),
            b_base: Default::default(),
            e_fneg: Default::default(),
            e_fbig: Default::default(),
            e_flo: Default::default(),
            fbig_mask: Constant::new(0x7F_FFC0u64.into()),
            fdd: Default::default(),
            fk: (0..63u64).map(|i| Constant::new(i.into())).collect(),
            fth: Default::default(),
            lo_d: Default::default(),
            hi_d: Default::default(),
            lo_ok: Default::default(),
            hi_ok: Default::default(),
            inwin: Default::default(),
            seen: Default::default(),
            t: Default::default(),
            t2: Default::default(),
            hb: Default::default(),
            nb1: Default::default(),
            sv: Default::default(),
            mt0: Default::default(),
            mt1: Default::default(),
            m8: Default::default(),
            cur8: Default::default(),
            p8: Default::default(),
            run: Default::default(),
            full: Default::default(),
            ncl: Default::default(),
            nclm1: Default::default(),
            pu: Default::default(),
            pn: Default::default(),
            px0: Default::default(),
            px1: Default::default(),
            py0: Default::default(),
            py1: Default::default(),
            pk: Default::default(),
            cack_n: Default::default(),
            cack_p1_n: Default::default(),
            ooo_n: Default::default(),
            bytes_n: Default::default(),
            trig: Default::default(),
            sack: Default::default(),
            nack: Default::default(),
            diff: Default::default(),
            offd: Default::default(),
            use_psn: Default::default(),
            bslot: Default::default(),
            bbyte: Default::default(),
            bsh: Default::default(),
            lbyte: Default::default(),
            lsh: Default::default(),
            lim_raw: Default::default(),
            islot: Default::default(),
            hsel: Default::default(),
            bnx: Default::default(),
            bm: Default::default(),
            _w: w,
            _nb: nb,
            _nb_end: nb + 1,
            _groups: groups,
            _nq: nq,
            _eoff: eoff,
            _eoff_end: eoff + 1,
            _mir: eoff,
            _mir_end: if multi { eoff + 1 } else { eoff },
        }
    }
}

impl Logic for SackRxTracker {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, i_v, i_psn, i_len, i_ecn, i_trim, i_lh, i_ackreq, i_ev, i_same, c_new,
            c_dup, c_oow, c_trim, c_inwin, c_psn, c_len, c_ecn, c_lh, c_ackreq, c_ev, lim_q,
            r_sack, r_nack, r_reason, r_psn, r_pm63, r_ev, r_m, r_inwin, r_cack, r_cack1, r_ooo,
            r_bytes, b_sack, b_nack, b_reason, b_psn, b_ev, b_m, b_cack, b_ooo, b_bytes, b_off,
            b_base, e_fneg, e_fbig, e_flo, e_sack, e_nack, e_reason, e_psn, e_ev, e_m, e_cack,
            e_ooo, e_bytes, e_off, o_sack, o_nack, o_cack, o_off, o_bm, o_m, o_ev, o_ooo, o_bytes,
            o_reason, o_npsn, o_qp, i_qm, c_qm, r_qm, b_qm, e_qm
        );
        // Each context's own registers hold unless written below.
        for q in 0..self._nq {
            self.mask[q].clock.next = self.clock.val();
            self.cur0[q].clock.next = self.clock.val();
            self.cur1[q].clock.next = self.clock.val();
            self.nm0[q].clock.next = self.clock.val();
            self.nm1[q].clock.next = self.clock.val();
            self.nm2[q].clock.next = self.clock.val();
            self.adv[q].clock.next = self.clock.val();
            self.clr_q[q].clock.next = self.clock.val();
            self.clr_q2[q].clock.next = self.clock.val();
            self.ncl_q[q].clock.next = self.clock.val();
            self.nclm1_q[q].clock.next = self.clock.val();
            self.cack[q].clock.next = self.clock.val();
            self.cack_p1[q].clock.next = self.clock.val();
            self.hi_edge[q].clock.next = self.clock.val();
            self.ooo[q].clock.next = self.clock.val();
            self.bytes[q].clock.next = self.clock.val();
            self.remaining[q].clock.next = self.clock.val();
            self.first[q].clock.next = self.clock.val();
            self.cnt_acc[q].clock.next = self.clock.val();
            self.cnt_dup[q].clock.next = self.clock.val();
            self.cnt_oow[q].clock.next = self.clock.val();
            self.cnt_trim[q].clock.next = self.clock.val();
            self.mask[q].d.next = self.mask[q].q.val();
            self.cur0[q].d.next = self.cur0[q].q.val();
            self.cur1[q].d.next = self.cur1[q].q.val();
            self.adv[q].d.next = self.adv[q].q.val();
            self.clr_q[q].d.next = self.clr_q[q].q.val();
            self.clr_q2[q].d.next = self.clr_q2[q].q.val();
            self.ncl_q[q].d.next = self.ncl_q[q].q.val();
            self.nclm1_q[q].d.next = self.nclm1_q[q].q.val();
            self.cack[q].d.next = self.cack[q].q.val();
            self.cack_p1[q].d.next = self.cack_p1[q].q.val();
            self.hi_edge[q].d.next = self.hi_edge[q].q.val();
            self.ooo[q].d.next = self.ooo[q].q.val();
            self.bytes[q].d.next = self.bytes[q].q.val();
            self.remaining[q].d.next = self.remaining[q].q.val();
            self.first[q].d.next = self.first[q].q.val();
            self.cnt_acc[q].d.next = self.cnt_acc[q].q.val();
            self.cnt_dup[q].d.next = self.cnt_dup[q].q.val();
            self.cnt_oow[q].d.next = self.cnt_oow[q].q.val();
            self.cnt_trim[q].d.next = self.cnt_trim[q].q.val();
        }

        // ---- contexts: which one each stage holds ----------------------------------------
        // With one context every select below is the constant 1 (`one_ctx`) and folds away;
        // only the port's check remains (a packet for context != 0 is dropped).
        self.psel.next = bits::<16>(0);
        for q in 0..self._nq {
            self.psel.next = self
                .psel
                .val()
                .replace_bit(q, self.pkt_qp.val() == self.qid[q].val());
        }
        self.pselg.next = self.psel.val() | self.one_ctx.val();
        self.i_qm.d.next = self.psel.val();
        self.c_qm.d.next = self.i_qm.q.val();
        self.r_qm.d.next = self.c_qm.q.val();
        self.b_qm.d.next = self.r_qm.q.val();
        self.e_qm.d.next = self.b_qm.q.val();
        self.isel.next = self.i_qm.q.val() | self.one_ctx.val();
        self.csel.next = self.c_qm.q.val() | self.one_ctx.val();
        self.rsel.next = self.r_qm.q.val() | self.one_ctx.val();
        self.bsel.next = self.b_qm.q.val() | self.one_ctx.val();
        self.esel.next = self.e_qm.q.val() | self.one_ctx.val();
        // A context's reset drops its packets wherever they are in the pipeline (as `rst`
        // empties the whole pipeline): k_x for the packet entering the stage after x.
        self.k_p.next = self.rst.val() | ((self.qp_rst.val() & self.pselg.val()) != 0);
        self.k_i.next = self.rst.val() | ((self.qp_rst.val() & self.isel.val()) != 0);
        self.k_c.next = self.rst.val() | ((self.qp_rst.val() & self.csel.val()) != 0);
        self.k_r.next = self.rst.val() | ((self.qp_rst.val() & self.rsel.val()) != 0);
        self.k_b.next = self.rst.val() | ((self.qp_rst.val() & self.bsel.val()) != 0);
        self.k_e.next = self.rst.val() | ((self.qp_rst.val() & self.esel.val()) != 0);

        // ---- I: input registers, slot pre-decoded one-hot --------------------------------
        self.i_v.d.next = self.pkt_valid.val() & (self.psel.val() != 0);
        self.i_psn.d.next = self.pkt_psn.val();
        self.i_len.d.next = self.pkt_len.val();
        self.i_ecn.d.next = self.pkt_ecn.val();
        self.i_trim.d.next = self.pkt_trimmed.val();
        self.i_lh.d.next = self.pkt_lasthop.val();
        self.i_ackreq.d.next = self.pkt_ackreq.val();
        self.i_ev.d.next = self.pkt_ev.val();
        self.i_same.d.next = self.pkt_valid.val()
            & self.i_v.q.val()
            & (self.pkt_psn.val() == self.i_psn.q.val())
            & ((self.pselg.val() & self.isel.val()) != 0);
        self.islot.next = self.pkt_psn.val() & self.wmask.val();
        for j in 0..16 {
            self.i_lohot[j].clock.next = self.clock.val();
            self.c_lohot[j].clock.next = self.clock.val();
            self.i_lohot[j].d.next = bit_cast::<4, 24>(self.islot.val()) == self.nib[j].val();
            self.c_lohot[j].d.next = self.i_lohot[j].q.val();
        }
        for b in 0..self._nb {
            self.i_bhot[b].clock.next = self.clock.val();
            self.i_bhot[b].d.next = bit_cast::<7, 24>(self.islot.val() >> 3) == self.byt[b].val();
        }
        for j in 0..8 {
            self.c_lo8[j].clock.next = self.clock.val();
            self.c_lo8[j].d.next = self.i_lohot[j].q.val() | self.i_lohot[j + 8].q.val();
        }
        self.hsel.next = bits::<64>(0);
        for g in 0..self._groups {
            self.i_hihot[g].clock.next = self.clock.val();
            self.c_hihot[g].clock.next = self.clock.val();
            self.hsel.next = self.hsel.val().replace_bit(
                g,
                bit_cast::<6, 24>(self.islot.val() >> 4) == self.grp[g].val(),
            );
            self.i_hihot[g].d.next = self.hsel.val().get_bit(g);
            self.c_hihot[g].d.next = self.i_hihot[g].q.val();
        }
        // The packet's group is read here, a cycle before C, so C selects 1 of 16 flops
        // instead of 1 of W. The read is of the bitmap as this edge leaves it, with one
        // exception. The commit of the packet two ahead (c_new) is folded in per slot. This
        // edge's clear is not: the bits it clears are PSNs q that cack passes at this edge, and
        // the only PSN C could still find in such a slot is the next lap, q + W. In C, hi_edge
        // is still the one from before this edge (it is registered a cycle late from cack_p1),
        // so it is at most q + lim <= q + W, and C classifies q + W out of window whatever it reads.
        // Both are of the packet's own context: the commit ahead folds in only when it is of
        // the same context (`fsame`), so the fold-in is formed once, not once per context.
        self.fsame.next = self.c_new.q.val() & ((self.csel.val() & self.pselg.val()) != 0);
        for n in self._nb..self._nb_end {
            for h in 0..2 {
                for j in 0..8 {
                    self.i_row[h * 8 + j].clock.next = self.clock.val();
                    self.t.next = false;
                    for g in 0..self._groups {
                        self.bnx.next = self.fsame.val()
                            & self.c_hihot[g].q.val()
                            & self.c_lohot[h * 8 + j].q.val();
                        for q in 0..self._nq {
                            self.bnx.next = self.bnx.val()
                                | (self.pselg.val().get_bit(q)
                                    & self.bits[q * n * 8 + g * 16 + h * 8 + j].q.val());
                        }
                        self.t.next = self.t.val() | (self.hsel.val().get_bit(g) & self.bnx.val());
                    }
                    self.i_row[h * 8 + j].d.next = self.t.val() & !self.rst.val();
                }
            }
        }

        // ---- C: classify against the packet's context ---------------------------------------
        self.s_cp1.next = self.cack_p1[0].q.val();
        self.s_hi.next = self.hi_edge[0].q.val();
        for q in 1..self._nq {
            if self.isel.val().get_bit(q) {
                self.s_cp1.next = self.cack_p1[q].q.val();
                self.s_hi.next = self.hi_edge[q].q.val();
            }
        }
        self.lo_d.next = self.i_psn.q.val() - self.s_cp1.val();
        self.hi_d.next = self.i_psn.q.val() - self.s_hi.val();
        // Compared whole (not `get_bit(23)`) so the linter sees every bit used; same logic.
        self.lo_ok.next = self.lo_d.val() < bits::<24>(0x80_0000);
        self.hi_ok.next = self.hi_d.val() >= bits::<24>(0x80_0000);
        self.inwin.next = self.lo_ok.val() & self.hi_ok.val();
        self.seen.next = self.i_same.q.val() & self.c_new.q.val();
        for j in 0..16 {
            self.seen.next = self.seen.val() | (self.i_lohot[j].q.val() & self.i_row[j].q.val());
        }
        self.c_oow.d.next = self.i_v.q.val() & self.lo_ok.val() & !self.hi_ok.val();
        self.c_dup.d.next =
            self.i_v.q.val() & (!self.lo_ok.val() | (self.hi_ok.val() & self.seen.val()));
        self.c_trim.d.next =
            self.i_v.q.val() & self.inwin.val() & !self.seen.val() & self.i_trim.q.val();
        self.c_new.d.next =
            self.i_v.q.val() & self.inwin.val() & !self.seen.val() & !self.i_trim.q.val();
        self.c_inwin.d.next = self.inwin.val();
        self.c_psn.d.next = self.i_psn.q.val();
        self.c_len.d.next = self.i_len.q.val();
        self.c_ecn.d.next = self.i_ecn.q.val();
        self.c_lh.d.next = self.i_lh.q.val();
        self.c_ackreq.d.next = self.i_ackreq.q.val();
        self.c_ev.d.next = self.i_ev.q.val();

        // ---- advance loop of each context: one byte per clock ------------------------------
        // The head byte `cur` comes from registers: (cur | mask) always equals
        // (bits[ptr byte] | mask). Both candidates for the next cycle are registered, read from
        // the bitmap as it will be after this edge (this edge's NEW set included; this edge's
        // clear only touches bits already in `mask`, or an older byte): cur0 = byte ptr,
        // cur1 = byte ptr + 1; `adv` (ptr moved at this edge) picks one next cycle. So the
        // W/8:1 byte selects hang off `ptr` alone and the loop is adv -> cur -> prefix-AND ->
        // full -> ptr / mask / adv, with `full` no longer in front of the byte select's flops.
        self.sv.next = bits::<8>(0);
        for j in 0..8 {
            self.sv.next = self.sv.val().replace_bit(j, self.c_lo8[j].q.val());
        }
        self.lim_raw.next = (bit_cast::<16, 8>(self.mpr.val()) << 7) - 1;
        if self.mpr.val() == 0 {
            self.lim_q.d.next = bits::<16>(0);
        } else if self.lim_raw.val() < self.wlim.val() {
            self.lim_q.d.next = self.lim_raw.val();
        } else {
            self.lim_q.d.next = self.wlim.val();
        }
        // The packet in C commits to its context at this edge (NEW: its bit, and below).
        self.s_rem.next = self.remaining[0].q.val();
        self.s_first.next = self.first[0].q.val();
        self.s_bytes.next = self.bytes[0].q.val();
        for q in 1..self._nq {
            if self.csel.val().get_bit(q) {
                self.s_rem.next = self.remaining[q].q.val();
                self.s_first.next = self.first[q].q.val();
                self.s_bytes.next = self.bytes[q].q.val();
            }
        }
        self.s_cn.next = bits::<24>(0);
        self.s_cp1n.next = bits::<24>(0);
        self.s_ooon.next = bits::<15>(0);
        for n in self._nb..self._nb_end {
            for q in 0..self._nq {
                self.hb.next = bits::<8>(0);
                self.nb1.next = bits::<8>(0);
                for j in 0..8 {
                    self.t.next = false;
                    self.t2.next = false;
                    for b in 0..self._nb {
                        self.t.next = self.t.val()
                            | (self.ptr[q * n + b].q.val()
                                & self.bits[q * n * 8 + b * 8 + j].q.val());
                        self.t2.next = self.t2.val()
                            | (self.ptr[q * n + b].q.val()
                                & self.bits[q * n * 8 + ((b + 1) % n) * 8 + j].q.val());
                    }
                    self.hb.next = self.hb.val().replace_bit(j, self.t.val());
                    self.nb1.next = self.nb1.val().replace_bit(j, self.t2.val());
                }
                // The NEW packet's bit, when it lands in byte ptr or ptr + 1: from the matches
                // registered a clock early (nm*), `adv` selecting.
                self.l_nm0.next = false;
                self.l_nm1.next = false;
                self.l_nm2.next = false;
                for b in 0..self._nb {
                    self.l_nm0.next =
                        self.l_nm0.val() | (self.ptr[q * n + b].q.val() & self.i_bhot[b].q.val());
                    self.l_nm1.next = self.l_nm1.val()
                        | (self.ptr[q * n + b].q.val() & self.i_bhot[(b + 1) % n].q.val());
                    self.l_nm2.next = self.l_nm2.val()
                        | (self.ptr[q * n + b].q.val() & self.i_bhot[(b + 2) % n].q.val());
                }
                self.nm0[q].d.next = self.l_nm0.val();
                self.nm1[q].d.next = self.l_nm1.val();
                self.nm2[q].d.next = self.l_nm2.val();
                self.mt0.next = self.nm0[q].q.val();
                self.mt1.next = self.nm1[q].q.val();
                if self.adv[q].q.val() {
                    self.mt0.next = self.nm1[q].q.val();
                    self.mt1.next = self.nm2[q].q.val();
                }
                if self.c_new.q.val() & self.csel.val().get_bit(q) & self.mt0.val() {
                    self.hb.next = self.hb.val() | self.sv.val();
                }
                if self.c_new.q.val() & self.csel.val().get_bit(q) & self.mt1.val() {
                    self.nb1.next = self.nb1.val() | self.sv.val();
                }
                self.cur0[q].d.next = self.hb.val();
                self.cur1[q].d.next = self.nb1.val();
                self.cur8.next = self.cur0[q].q.val();
                if self.adv[q].q.val() {
                    self.cur8.next = self.cur1[q].q.val();
                }
                self.m8.next = self.cur8.val() | self.mask[q].q.val();
                self.p8.next = bits::<8>(0);
                self.run.next = true;
                for j in 0..8 {
                    self.run.next = self.run.val() & self.m8.val().get_bit(j);
                    self.p8.next = self.p8.val().replace_bit(j, self.run.val());
                }
                self.full.next = self.p8.val().get_bit(7);
                self.clr_q[q].d.next = self.p8.val() & !self.mask[q].q.val();
                self.adv[q].d.next = self.full.val();
                if self.full.val() {
                    self.mask[q].d.next = bits::<8>(0);
                } else {
                    self.mask[q].d.next = self.p8.val();
                }
                for b in 0..self._nb {
                    self.ptr[q * n + b].clock.next = self.clock.val();
                    self.cptr[q * n + b].clock.next = self.clock.val();
                    self.cptr[q * n + b].d.next = self.ptr[q * n + b].q.val();
                    self.cptr2[q * n + b].clock.next = self.clock.val();
                    self.cptr2[q * n + b].d.next = self.cptr[q * n + b].q.val();
                    if self.full.val() {
                        self.ptr[q * n + b].d.next = self.ptr[q * n + (b + n - 1) % n].q.val();
                    } else {
                        self.ptr[q * n + b].d.next = self.ptr[q * n + b].q.val();
                    }
                }

                // popcount(clr_q) and popcount - 1, written out as half/full adders on bits: as
                // a chain of `+ 1` (or a `- 1` after it) Yosys builds carry chains in series,
                // and that was one of this module's critical paths.
                self.pu.next = self.clr_q[q].q.val();
                self.pn.next = bits::<6>(0);
                for h in 0..2 {
                    // a nibble's count, two pair sums added
                    self.px0.next = self.pu.val().get_bit(4 * h) ^ self.pu.val().get_bit(4 * h + 1);
                    self.px1.next = self.pu.val().get_bit(4 * h) & self.pu.val().get_bit(4 * h + 1);
                    self.py0.next =
                        self.pu.val().get_bit(4 * h + 2) ^ self.pu.val().get_bit(4 * h + 3);
                    self.py1.next =
                        self.pu.val().get_bit(4 * h + 2) & self.pu.val().get_bit(4 * h + 3);
                    self.pk.next = self.px0.val() & self.py0.val();
                    self.pn.next = self
                        .pn
                        .val()
                        .replace_bit(3 * h, self.px0.val() ^ self.py0.val());
                    self.pn.next = self
                        .pn
                        .val()
                        .replace_bit(3 * h + 1, self.px1.val() ^ self.py1.val() ^ self.pk.val());
                    self.pn.next = self.pn.val().replace_bit(
                        3 * h + 2,
                        (self.px1.val() & self.py1.val())
                            | (self.pk.val() & (self.px1.val() ^ self.py1.val())),
                    );
                }
                // the two nibble counts (pn[2:0], pn[5:3]) added
                self.ncl.next = bits::<4>(0);
                self.pk.next = false;
                for j in 0..3 {
                    self.ncl.next = self.ncl.val().replace_bit(
                        j,
                        self.pn.val().get_bit(j) ^ self.pn.val().get_bit(j + 3) ^ self.pk.val(),
                    );
                    self.pk.next = (self.pn.val().get_bit(j) & self.pn.val().get_bit(j + 3))
                        | (self.pk.val()
                            & (self.pn.val().get_bit(j) ^ self.pn.val().get_bit(j + 3)));
                }
                self.ncl.next = self.ncl.val().replace_bit(3, self.pk.val());
                // ncl - 1 over 15 bits: a borrow ripples up from bit 0
                self.nclm1.next = bits::<15>(0);
                self.pk.next = true;
                for j in 0..4 {
                    self.nclm1.next = self
                        .nclm1
                        .val()
                        .replace_bit(j, self.ncl.val().get_bit(j) ^ self.pk.val());
                    self.pk.next = self.pk.val() & !self.ncl.val().get_bit(j);
                }
                for j in 4..15 {
                    self.nclm1.next = self.nclm1.val().replace_bit(j, self.pk.val());
                }
                // Counted one stage after the loop (ncl_q), applied with the clear one edge later.
                self.ncl_q[q].d.next = self.ncl.val();
                self.nclm1_q[q].d.next = self.nclm1.val();
                self.clr_q2[q].d.next = self.clr_q[q].q.val();
                // (bit_cast of an indexed register does not translate: through a Local)
                self.ncl.next = self.ncl_q[q].q.val();
                self.lim_raw.next = self.lim_q.q.val();
                self.cack_n.next = self.cack[q].q.val() + bit_cast::<24, 4>(self.ncl.val());
                self.cack_p1_n.next = self.cack_p1[q].q.val() + bit_cast::<24, 4>(self.ncl.val());
                self.cack[q].d.next = self.cack_n.val();
                self.cack_p1[q].d.next = self.cack_p1_n.val();
                self.hi_edge[q].d.next =
                    self.cack_p1[q].q.val() + bit_cast::<24, 16>(self.lim_raw.val());
                // ooo + new - ncl as one subtraction: ncl - 1 is registered beside ncl.
                if self.c_new.q.val() & self.csel.val().get_bit(q) {
                    self.ooo_n.next = self.ooo[q].q.val() - self.nclm1_q[q].q.val();
                } else {
                    self.ooo_n.next = self.ooo[q].q.val() - bit_cast::<15, 4>(self.ncl.val());
                }
                self.ooo[q].d.next = self.ooo_n.val();
                if self.csel.val().get_bit(q) {
                    self.s_cn.next = self.cack_n.val();
                    self.s_cp1n.next = self.cack_p1_n.val();
                    self.s_ooon.next = self.ooo_n.val();
                }
            }
        }

        // ---- R: commit ---------------------------------------------------------------------
        if self.c_new.q.val() {
            self.bytes_n.next = self.s_bytes.val() + bit_cast::<32, 16>(self.c_len.q.val());
        } else {
            self.bytes_n.next = self.s_bytes.val();
        }
        self.trig.next = self.c_new.q.val()
            & (self.s_first.val()
                | self.c_ecn.q.val()
                | self.c_ackreq.q.val()
                | (bit_cast::<24, 16>(self.c_len.q.val()) >= self.s_rem.val()));
        self.sack.next = self.c_dup.q.val() | self.trig.val();
        self.nack.next = self.c_oow.q.val() | self.c_trim.q.val();
        for q in 0..self._nq {
            if self.csel.val().get_bit(q) {
                self.bytes[q].d.next = self.bytes_n.val();
                if self.sack.val() {
                    self.remaining[q].d.next = self.ack_bytes.val();
                } else if self.c_new.q.val() {
                    self.remaining[q].d.next =
                        self.s_rem.val() - bit_cast::<24, 16>(self.c_len.q.val());
                }
                self.first[q].d.next = self.first[q].q.val() & !self.c_new.q.val();
                self.cnt_acc[q].d.next =
                    self.cnt_acc[q].q.val() + bit_cast::<32, 1>(self.c_new.q.val().into());
                self.cnt_dup[q].d.next =
                    self.cnt_dup[q].q.val() + bit_cast::<32, 1>(self.c_dup.q.val().into());
                self.cnt_oow[q].d.next =
                    self.cnt_oow[q].q.val() + bit_cast::<32, 1>(self.c_oow.q.val().into());
                self.cnt_trim[q].d.next =
                    self.cnt_trim[q].q.val() + bit_cast::<32, 1>(self.c_trim.q.val().into());
            }
        }
        self.r_sack.d.next = self.sack.val();
        self.r_nack.d.next = self.nack.val();
        self.r_reason.d.next = bits::<8>(0);
        if self.c_trim.q.val() {
            if self.c_lh.q.val() {
                self.r_reason.d.next = bits::<8>(2);
            } else {
                self.r_reason.d.next = bits::<8>(1);
            }
        }
        if self.c_oow.q.val() {
            self.r_reason.d.next = bits::<8>(0x0B);
        }
        self.r_psn.d.next = self.c_psn.q.val();
        self.r_pm63.d.next = self.c_psn.q.val() - 63;
        self.r_ev.d.next = self.c_ev.q.val();
        if self.c_ecn.q.val() {
            self.r_m.d.next = bits::<2>(1);
        } else {
            self.r_m.d.next = bits::<2>(0);
        }
        self.r_inwin.d.next = self.c_inwin.q.val();
        self.r_cack.d.next = self.s_cn.val();
        self.r_cack1.d.next = self.s_cp1n.val();
        self.r_ooo.d.next = self.s_ooon.val();
        self.r_bytes.d.next = bit_cast::<24, 32>(self.bytes_n.val() >> 8);
        // The base slot's byte and bit, decoded here for both candidates so stage B only
        // selects (the select waits for a 24-bit compare).
        self.bslot.next = (self.c_psn.q.val() - 63) & self.wmask.val();
        self.bbyte.next = bit_cast::<7, 24>(self.bslot.val() >> 3);
        self.bsh.next = bit_cast::<3, 24>(self.bslot.val());
        self.islot.next = self.s_cp1n.val() & self.wmask.val();
        self.lbyte.next = bit_cast::<7, 24>(self.islot.val() >> 3);
        self.lsh.next = bit_cast::<3, 24>(self.islot.val());
        for b in 0..self._nb {
            self.r_phot[b].clock.next = self.clock.val();
            self.r_chot[b].clock.next = self.clock.val();
            self.r_phot[b].d.next = self.bbyte.val() == self.byt[b].val();
            self.r_chot[b].d.next = self.lbyte.val() == self.byt[b].val();
        }
        for s in 0..8 {
            self.r_pshot[s].clock.next = self.clock.val();
            self.r_cshot[s].clock.next = self.clock.val();
            self.r_pshot[s].d.next = self.bsh.val() == self.sh3[s].val();
            self.r_cshot[s].d.next = self.lsh.val() == self.sh3[s].val();
        }

        // Bitmap: clear what the loop consumed last cycle, set the NEW packet's slot (never
        // the same slot in one edge: see the module doc).
        for n in self._nb..self._nb_end {
            for q in 0..self._nq {
                for kb in 0..self._nb {
                    for j in 0..8 {
                        self.bits[q * n * 8 + kb * 8 + j].clock.next = self.clock.val();
                        self.t.next =
                            self.clr_q2[q].q.val().get_bit(j) & self.cptr2[q * n + kb].q.val();
                        self.t2.next = self.c_new.q.val()
                            & self.csel.val().get_bit(q)
                            & self.c_hihot[kb / 2].q.val()
                            & self.c_lohot[(kb % 2) * 8 + j].q.val();
                        self.bits[q * n * 8 + kb * 8 + j].d.next =
                            (self.bits[q * n * 8 + kb * 8 + j].q.val() & !self.t.val())
                                | self.t2.val();
                        if self.rst.val() | self.qp_rst.val().get_bit(q) {
                            self.bits[q * n * 8 + kb * 8 + j].d.next = false;
                        }
                    }
                }
            }
        }
        // ---- B: SACK base ------------------------------------------------------------------
        self.diff.next = self.r_pm63.q.val() - self.r_cack1.q.val();
        self.offd.next = self.r_pm63.q.val() - self.r_cack.q.val();
        self.use_psn.next = self.r_inwin.q.val() & (self.diff.val() < bits::<24>(0x80_0000));
        if self.use_psn.val() {
            self.b_off.d.next = bit_cast::<16, 24>(self.offd.val());
            self.b_base.d.next = self.r_pm63.q.val();
        } else {
            self.b_off.d.next = bits::<16>(1);
            self.b_base.d.next = self.r_cack1.q.val();
        }
        for b in 0..self._nb {
            self.b_bhot[b].clock.next = self.clock.val();
            if self.use_psn.val() {
                self.b_bhot[b].d.next = self.r_phot[b].q.val();
            } else {
                self.b_bhot[b].d.next = self.r_chot[b].q.val();
            }
        }
        for s in 0..8 {
            self.b_shhot[s].clock.next = self.clock.val();
            self.e_shhot[s].clock.next = self.clock.val();
            if self.use_psn.val() {
                self.b_shhot[s].d.next = self.r_pshot[s].q.val();
            } else {
                self.b_shhot[s].d.next = self.r_cshot[s].q.val();
            }
            self.e_shhot[s].d.next = self.b_shhot[s].q.val();
        }
        self.b_sack.d.next = self.r_sack.q.val();
        self.b_nack.d.next = self.r_nack.q.val();
        self.b_reason.d.next = self.r_reason.q.val();
        self.b_psn.d.next = self.r_psn.q.val();
        self.b_ev.d.next = self.r_ev.q.val();
        self.b_m.d.next = self.r_m.q.val();
        self.b_cack.d.next = self.r_cack.q.val();
        self.b_ooo.d.next = self.r_ooo.q.val();
        self.b_bytes.d.next = self.r_bytes.q.val();

        // ---- E: 9 bytes of the circular bitmap from the base byte --------------------------
        // Context 0's bits with one context; with more, the mirror of the B packet's context.
        for e in self._eoff..self._eoff_end {
            for n in self._nb..self._nb_end {
                // 71 bits: bit 71 would only feed a shift by 8.
                for k in 0..8 {
                    for j in 0..8 {
                        self.e_ext[k * 8 + j].clock.next = self.clock.val();
                        self.t.next = false;
                        for b in 0..self._nb {
                            self.t.next = self.t.val()
                                | (self.b_bhot[b].q.val()
                                    & self.bits[e + ((b + k) % n) * 8 + j].q.val());
                        }
                        self.e_ext[k * 8 + j].d.next = self.t.val();
                    }
                }
                for k in 8..9 {
                    for j in 0..7 {
                        self.e_ext[k * 8 + j].clock.next = self.clock.val();
                        self.t.next = false;
                        for b in 0..self._nb {
                            self.t.next = self.t.val()
                                | (self.b_bhot[b].q.val()
                                    & self.bits[e + ((b + k) % n) * 8 + j].q.val());
                        }
                        self.e_ext[k * 8 + j].d.next = self.t.val();
                    }
                }
            }
        }
        self.e_sack.d.next = self.b_sack.q.val();
        self.e_nack.d.next = self.b_nack.q.val();
        self.e_reason.d.next = self.b_reason.q.val();
        self.e_psn.d.next = self.b_psn.q.val();
        self.e_ev.d.next = self.b_ev.q.val();
        self.e_m.d.next = self.b_m.q.val();
        self.e_cack.d.next = self.b_cack.q.val();
        self.e_ooo.d.next = self.b_ooo.q.val();
        self.e_bytes.d.next = self.b_bytes.q.val();
        self.e_off.d.next = self.b_off.q.val();
        // The snapshot cack is from R, two edges before this read; PSNs the loop consumed
        // since are only in the live cack, so O sets every bit from the base up to it.
        // Bit j is set at O when 0 <= live cack - base (dd) and j <= dd: dd's sign, dd >= 64
        // and its low 6 bits are registered (no add or compare behind the subtraction).
        self.s_cb.next = self.cack[0].q.val();
        for q in 1..self._nq {
            if self.bsel.val().get_bit(q) {
                self.s_cb.next = self.cack[q].q.val();
            }
        }
        self.fdd.next = self.s_cb.val() - self.b_base.q.val();
        self.e_fneg.d.next = self.fdd.val().get_bit(23);
        self.e_fbig.d.next = (self.fdd.val() & self.fbig_mask.val()) != 0;
        self.e_flo.d.next = bit_cast::<6, 24>(self.fdd.val());

        // ---- O: shift by base % 8, register every response field -------------------------
        // The fill as a thermometer: bit j for 0 <= j <= dd (bit k + 1 is flo > k).
        self.fth.next = bits::<64>(0);
        self.fth.next = self.fth.val().replace_bit(0, !self.e_fneg.q.val());
        for k in 0..63 {
            self.fth.next = self.fth.val().replace_bit(
                k + 1,
                !self.e_fneg.q.val()
                    & (self.e_fbig.q.val() | (self.e_flo.q.val() > self.fk[k].val())),
            );
        }
        self.bm.next = bits::<64>(0);
        for i in 0..64 {
            self.t.next = false;
            for s in 0..8 {
                self.t.next = self.t.val() | (self.e_shhot[s].q.val() & self.e_ext[i + s].q.val());
            }
            self.t.next = self.t.val() | self.fth.val().get_bit(i);
            self.bm.next = self.bm.val().replace_bit(i, self.t.val());
        }
        self.o_sack.d.next = self.e_sack.q.val() & !self.k_e.val();
        self.o_nack.d.next = self.e_nack.q.val() & !self.k_e.val();
        // The responding context's number, from E's one-hot (one bit set whenever E holds a
        // packet: i_v needs a context match).
        self.qenc.next = bits::<4>(0);
        for q in 0..self._nq {
            if self.e_qm.q.val().get_bit(q) {
                self.qenc.next = self.qenc.val() | self.qid[q].val();
            }
        }
        // The response's fields load every clock, with no enable and no reset: the outputs
        // are masked by the response's valid (o_sack | o_nack, which a kill and rst clear).
        // So the kill (rst and the context resets, decoded) drives two flops, not the clear
        // of some 210 spread over the die.
        self.o_cack.d.next = self.e_cack.q.val();
        self.o_off.d.next = self.e_off.q.val();
        self.o_bm.d.next = self.bm.val();
        self.o_m.d.next = self.e_m.q.val();
        self.o_ev.d.next = self.e_ev.q.val();
        self.o_ooo.d.next = self.e_ooo.q.val();
        self.o_bytes.d.next = self.e_bytes.q.val();
        self.o_reason.d.next = self.e_reason.q.val();
        self.o_npsn.d.next = self.e_psn.q.val();
        self.o_qp.d.next = self.qenc.val();

        // ---- synchronous reset -----------------------------------------------------------
        self.islot.next = self.init_psn.val() & self.wmask.val();
        self.bbyte.next = bit_cast::<7, 24>(self.islot.val() >> 3);
        self.bsh.next = bit_cast::<3, 24>(self.islot.val());
        if self.rst.val() {
            self.i_v.d.next = false;
            self.i_psn.d.next = bits::<24>(0);
            self.i_len.d.next = bits::<16>(0);
            self.i_ecn.d.next = false;
            self.i_trim.d.next = false;
            self.i_lh.d.next = false;
            self.i_ackreq.d.next = false;
            self.i_ev.d.next = bits::<32>(0);
            self.i_same.d.next = false;
            self.c_new.d.next = false;
            self.c_dup.d.next = false;
            self.c_oow.d.next = false;
            self.c_trim.d.next = false;
            self.c_inwin.d.next = false;
            self.c_psn.d.next = bits::<24>(0);
            self.c_len.d.next = bits::<16>(0);
            self.c_ecn.d.next = false;
            self.c_lh.d.next = false;
            self.c_ackreq.d.next = false;
            self.c_ev.d.next = bits::<32>(0);
            self.r_sack.d.next = false;
            self.r_nack.d.next = false;
            self.r_reason.d.next = bits::<8>(0);
            self.r_psn.d.next = bits::<24>(0);
            self.r_pm63.d.next = bits::<24>(0);
            self.r_ev.d.next = bits::<32>(0);
            self.r_m.d.next = bits::<2>(0);
            self.r_inwin.d.next = false;
            self.r_cack.d.next = bits::<24>(0);
            self.r_cack1.d.next = bits::<24>(0);
            self.r_ooo.d.next = bits::<15>(0);
            self.r_bytes.d.next = bits::<24>(0);
            self.b_sack.d.next = false;
            self.b_nack.d.next = false;
            self.e_sack.d.next = false;
            self.e_nack.d.next = false;
            self.o_sack.d.next = false;
            self.o_nack.d.next = false;
            self.b_base.d.next = bits::<24>(0);
            self.e_fneg.d.next = true;
            self.e_fbig.d.next = false;
            self.e_flo.d.next = bits::<6>(0);
        }
        // A context's reset: its packets leave the pipeline, its own state restarts.
        if self.k_p.val() {
            self.i_v.d.next = false;
        }
        if self.k_i.val() {
            self.c_new.d.next = false;
            self.c_dup.d.next = false;
            self.c_oow.d.next = false;
            self.c_trim.d.next = false;
        }
        if self.k_c.val() {
            self.r_sack.d.next = false;
            self.r_nack.d.next = false;
        }
        if self.k_r.val() {
            self.b_sack.d.next = false;
            self.b_nack.d.next = false;
        }
        if self.k_b.val() {
            self.e_sack.d.next = false;
            self.e_nack.d.next = false;
        }
        for n in self._nb..self._nb_end {
            for q in 0..self._nq {
                self.qrst.next = self.rst.val() | self.qp_rst.val().get_bit(q);
                if self.qrst.val() {
                    self.mask[q].d.next = (bits::<8>(1) << self.bsh.val()) - 1;
                    self.clr_q[q].d.next = bits::<8>(0);
                    self.clr_q2[q].d.next = bits::<8>(0);
                    self.cur0[q].d.next = bits::<8>(0);
                    self.cur1[q].d.next = bits::<8>(0);
                    self.adv[q].d.next = false;
                    self.ncl_q[q].d.next = bits::<4>(0);
                    self.nclm1_q[q].d.next = bits::<15>(0x7FFF);
                    self.cack[q].d.next = self.init_psn.val() - 1;
                    self.cack_p1[q].d.next = self.init_psn.val();
                    self.hi_edge[q].d.next = self.init_psn.val();
                    self.ooo[q].d.next = bits::<15>(0);
                    self.bytes[q].d.next = bits::<32>(0);
                    self.remaining[q].d.next = self.ack_bytes.val();
                    self.first[q].d.next = true;
                    self.cnt_acc[q].d.next = bits::<32>(0);
                    self.cnt_dup[q].d.next = bits::<32>(0);
                    self.cnt_oow[q].d.next = bits::<32>(0);
                    self.cnt_trim[q].d.next = bits::<32>(0);
                }
                for b in 0..self._nb {
                    if self.qrst.val() {
                        self.ptr[q * n + b].d.next = self.bbyte.val() == self.byt[b].val();
                        self.cptr[q * n + b].d.next = false;
                        self.cptr2[q * n + b].d.next = false;
                    }
                }
            }
        }
        for j in 0..16 {
            if self.rst.val() {
                self.i_lohot[j].d.next = false;
                self.c_lohot[j].d.next = false;
            }
        }
        for g in 0..self._groups {
            if self.rst.val() {
                self.i_hihot[g].d.next = false;
                self.c_hihot[g].d.next = false;
            }
        }

        self.sack_valid.next = self.o_sack.q.val();
        self.nack_valid.next = self.o_nack.q.val();
        self.cack_out.next = bits::<24>(0);
        self.sack_offset.next = bits::<16>(0);
        self.sack_bitmap.next = bits::<64>(0);
        self.sack_m.next = bits::<2>(0);
        self.rsp_ev.next = bits::<32>(0);
        self.ooo_count.next = bits::<15>(0);
        self.rcvd_bytes.next = bits::<24>(0);
        self.nack_reason.next = bits::<8>(0);
        self.nack_psn.next = bits::<24>(0);
        self.rsp_qp.next = bits::<4>(0);
        if self.o_sack.q.val() | self.o_nack.q.val() {
            self.cack_out.next = self.o_cack.q.val();
            self.sack_offset.next = self.o_off.q.val();
            self.sack_bitmap.next = self.o_bm.q.val();
            self.sack_m.next = self.o_m.q.val();
            self.rsp_ev.next = self.o_ev.q.val();
            self.ooo_count.next = self.o_ooo.q.val();
            self.rcvd_bytes.next = self.o_bytes.q.val();
            self.nack_reason.next = self.o_reason.q.val();
            self.nack_psn.next = self.o_npsn.q.val();
            self.rsp_qp.next = self.o_qp.q.val();
        }
        // With more than one context: context 0's cack, the counters summed over contexts.
        self.cack_psn.next = self.cack[0].q.val();
        self.cnt_accepted.next = self.cnt_acc[0].q.val();
        self.cnt_duplicate.next = self.cnt_dup[0].q.val();
        self.cnt_out_of_window.next = self.cnt_oow[0].q.val();
        self.cnt_trimmed.next = self.cnt_trim[0].q.val();
        for q in 1..self._nq {
            self.cnt_accepted.next = self.cnt_accepted.val() + self.cnt_acc[q].q.val();
            self.cnt_duplicate.next = self.cnt_duplicate.val() + self.cnt_dup[q].q.val();
            self.cnt_out_of_window.next = self.cnt_out_of_window.val() + self.cnt_oow[q].q.val();
            self.cnt_trimmed.next = self.cnt_trimmed.val() + self.cnt_trim[q].q.val();
        }

        // The mirror (more than one context): at the edge that moves the R packet to B, the
        // bits its context's bitmap takes at that edge, so B's read of it is that context's
        // bitmap as it stands. Read from the `.d` inputs, after every assignment to them.
        // (`n`, one iteration: W/8 as a loop variable, which an index expression may use.)
        for e in self._mir..self._mir_end {
            for n in self._nb..self._nb_end {
                for k in 0..self._w {
                    self.bits[e + k].clock.next = self.clock.val();
                    self.t.next = false;
                    for q in 0..self._nq {
                        self.t.next = self.t.val()
                            | (self.rsel.val().get_bit(q) & self.bits[q * n * 8 + k].d.val());
                    }
                    self.bits[e + k].d.next = self.t.val();
                }
            }
        }
    }
}
