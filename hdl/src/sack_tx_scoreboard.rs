//! `sack_tx_scoreboard`: the sender's retransmission scoreboard for one QP (MRC notes 1, 3).
//!
//! ```text
//!  ports --I regs (i_*: op cleared by rst, psn % W as one-hots of its 16-slot group i_g
//!                  and in-group index i_j, msb(bitmap) as an 8 x 8 encoder, cack + 1,
//!                  cack + offset, hole ends less msb (hx, hc))
//!  op + fields --S0 regs (q_*, q_ghit / q_j = i_g / i_j, hole end mod W q_hh = hx + msb
//!                  (hc without a bitmap), the SEND's RTO exponents (head: head_tmo kept / + 1 / 0;
//!                  non-head); against una(S1) = una + pc_q: ca = cack + 1 - una, hole
//!                  length less msb (xb, cb), nxt - una; room = nxt - cack - off (for nxt
//!                  and nxt + 1); msb registered alone (q_t6);
//!                  psn - una(S1) < W and == 0;
//!                  the slot's flags as this edge leaves them per 16-slot group (p_oa, p_rt)
//!                  and whether the S1 op / a firing timeout hits the same slot (c_*))
//!                  |
//!  S1  checks against committed una/nxt + slot flags (OR of 16 group flops, c_* patches)
//!      SEND  new (psn == nxt, window vs una_d2: both sn_q outcomes, from dnu = nxt - una_d1
//!            registered off both of nxt') | retransmit (marked) | refused
//!            -> flags at this edge (the decision formed per 16-slot group from that
//!            group's copies of the op's controls, ctl_rep, q_ghit qualifying each;
//!            err's copy a clock late),
//!            EV RAM write registered (w_*), {ev, now + 2^e} one edge
//!            later; a read that missed a pending write takes its data (bya/mb -> byp)
//!      NACK  valid -> mark need_rtx at this edge; EV RAM data (read at S0) of the slot
//!      TICK  now++; EV RAM data (read at S0) of the head (una % W as S1 sees it)
//!      SACK  cack/offset/bitmap checks (stale / bad / good): one compare of two flops
//!            each (the S0 differences; nxt - una picked by sn_q); lengths; base slot q_x % W;
//!            the acked-bytes difference rb - last_rb (last_rb loads a clock after a good
//!            SACK, from s2_rb, which S1 reads in its place meanwhile);
//!            mask bounds lo = una % W, ends (cack + 1) % W and (hx + msb) % W decoded
//!            per 16-slot group (s2_*gt / s2_*eq / s2_*ge), cumulative full / wrapped / has-holes;
//!            the bitmap shifted by base % 8 (72 bits, s2_bm)
//!                  |  (s2_*; RAM data)
//!  S2  SACK masks: cum = (k - lo) % W < cack - una + 1, hole = ... < hr - thr, each a
//!      LUT or two per slot from the decoded bounds (k in [lo, end), or outside [end, lo)),
//!      the shifted bitmap placed as 9 bytes at abyte base / 8 (one-hot, 9:1 per abyte)
//!      head age from the RAM data: now - deadline >= 0 for now or now + 1 (TICK at S1),
//!      against the RAM's and the bypassed deadline in parallel;
//!      the timeout's scalar terms (TICK, una unchanged, not re-sent, age) -> s3_tok
//!      head flags as of S3, per 16-slot group (pg): the head (group s2_leq, in-group
//!      s2_ljeq) & alive & not killed by this edge's SACK apply; scalar kills (NACK on the
//!      head at S1, the previous TICK's mark)
//!                  |  (s3_ackm, s3_holem, s3_geq / s3_ljeq; d_ev, s3_tok, pg, s3_kill)
//!  S3  apply: acked |= mask & outstanding; holes -> need_rtx once
//!      head check: s3_tok & OR of 16 pg & !s3_kill (per slot: s3_tok & its own flags)
//!      feedback (SACK M / NACK trim / TIMEOUT) -> fb_* registered   (3 cycles after op)
//!
//!  una loop: cur (ptr's abyte, selected at the previous edge) + mask -> clr_q,
//!            pc_q = popcount(clr), cptr_q
//!            -> next edge: clear, una += pc_q (pc_q is the `una_adv` output)
//!  rtx pick: cand = need_rtx & out & ~acked; P1 per-16 first (at/after una, any) ->
//!            P1b per four groups (a quad): first group, its index and first slot ->
//!            P2 first quad (one-hot: prefix OR; slot an AND-OR, no mux chain) ->
//!            P3a re-validate per group against its flops (AND-OR by the one-hots, less
//!            this edge's SACK acks) -> 16 flops -> P3b OR -> rtx_valid;
//!            slot -> PSN (rtx_psn follows the P3 pick, read only with rtx_valid)
//! ```
//!
//! One op per clock, every output registered (`fb_idx` / `fb_kind` ANDed with `fb_valid`'s
//! flop). The ports are registered first (the I stage), so the slot one-hot and the bitmap's
//! msb start S0 from flops; every latency below counts
//! from S0, one more from the ports. Per slot (`psn % W`) there are four flops:
//! outstanding, acked, need-retransmit and hole-marked; the EV index and deadline live in a
//! RAM (40 bits: ev << 32 | deadline), written at S1 by a SEND and read for a NACK or TICK.
//! The read is addressed at S0 (a TICK's at `una + pc_q`, the una its S1 will see) and its
//! output registered raw at S1 (`ram_q`): without the DP16KD output register the RAM's
//! clock-to-out is about 5.8 ns, too much to put logic behind. The write is registered
//! (`w_*`) and lands at the edge after S1, so a read misses two writes: the one landing at
//! the read's own edge (`bya`, matched at S0) and the S1 op's (`mb`, its address matched at
//! S0, its enable seen at S1); the newer one's {ev, deadline} replace the read data (`byp`).
//! Every read therefore returns what a write at S1 would give (the model writes at S1).
//!
//! Timers: `now` counts TICKs (1.024 us). A SEND stores `now + 2^e`, `e = rto_exp` for a
//! non-head PSN and `rto_exp + max(head_tmo - rto_linear_retries, 0)` for the head, capped at
//! 30 so the 32-bit serial compare is exact. A head timeout marks the head, counts and emits
//! TIMEOUT with the stored EV; once `head_tmo` has reached linear + backoff retries the next
//! timeout sets the sticky `qp_error` (`err_psn` = una) instead; then every op is refused and
//! counted, no retransmit is offered. A TICK's check is dropped (the next TICK retries it) if
//! una moved or the head was (re)sent while the check was in flight.
//!
//! **Stale una (why SEND checks the window against `una_d2`).** A SACK's masks are computed
//! from the una of its S1 cycle t and applied at the S3 edge (end of t+2). Every mask bit
//! names a PSN q in [una_t, nxt_t) (cumulative part <= cack < nxt, bitmap checked < nxt, holes
//! below the highest SACKed PSN). The slot of q can only hold another PSN at apply time if
//! q + W was sent in S1 at cycle u <= t+1 (a send at t+2 commits at the apply edge, and the
//! apply reads the outstanding flop before it). A send of q + W needs
//! `q + W - una_d2(u) < W`, i.e. `una(u - 2) > q >= una_t`, so u - 2 > t: impossible for
//! u <= t+1. Hence a stale mask bit can only land on its own PSN or on a free slot, and
//! `acked |= mask & outstanding` never acks a PSN that was not SACKed. `can_send` uses the same
//! delayed una (it is at most 16 PSNs conservative, for two cycles).
//!
//! **una advance.** A short loop over the acked flops, 8 slots per clock: `ptr` (one-hot over
//! W/8 bytes) and `mask` (bits of that abyte already consumed); `p = prefix_and(cur | mask)`,
//! `clr = p & ~mask`; a full abyte rotates `ptr`. `cur` is the abyte's acked flags as of the
//! previous edge: the W/8:1 select is registered on its own (both this abyte and the next are
//! selected, `full` picks), so a new ack reaches una a cycle later. `clr` and the abyte are
//! registered, and at the next edge those slots are cleared and `una += popcount(clr)`
//! together, so una and the slot flags always agree. Acked is only set on outstanding slots,
//! so the loop never passes nxt.
//!
//! Latencies (step indices, op at step t): flags of SEND, NACK, refused ops at t+1 (`nxt`
//! in the outputs of step t+1), their counters at t+2 (every counter a clock late); SACK
//! acked flags at t+3, una from t+5 (up to 8 PSNs per clock); feedback and `acked_bytes` at
//! t+3; `rtx_psn` about 5 cycles after the mark. The golden model is
//! `mrc_model::sack_tx_scoreboard`.

use mrc_config::NicConfig;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct SackTxScoreboard {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub init_psn: Signal<In, Bits<24>>,
    pub op: Signal<In, Bits<3>>,
    pub psn: Signal<In, Bits<24>>,
    pub ev_idx: Signal<In, Bits<8>>,
    pub cack: Signal<In, Bits<24>>,
    pub offset: Signal<In, Bits<16>>,
    pub bitmap: Signal<In, Bits<64>>,
    pub m: Signal<In, Bits<2>>,
    pub rcvd_bytes: Signal<In, Bits<24>>,
    pub reason: Signal<In, Bits<8>>,
    pub rto_exp: Signal<In, Bits<5>>,
    pub rto_linear_retries: Signal<In, Bits<3>>,
    pub rto_backoff_retries: Signal<In, Bits<5>>,
    pub rtx_ooo_threshold: Signal<In, Bits<10>>,
    pub una: Signal<Out, Bits<24>>,
    /// What `una` advances by at this edge (a register): next `una` is `init_psn` under
    /// `rst`, else `una + una_adv`, so a parent can keep a registered `nxt - una` without a
    /// subtractor behind `una` (and without a combinational path back through `rst`).
    pub una_adv: Signal<Out, Bits<4>>,
    pub nxt: Signal<Out, Bits<24>>,
    pub can_send: Signal<Out, Bit>,
    pub acked_pkts: Signal<Out, Bits<4>>,
    pub acked_bytes: Signal<Out, Bits<32>>,
    pub fb_valid: Signal<Out, Bit>,
    pub fb_idx: Signal<Out, Bits<8>>,
    pub fb_kind: Signal<Out, Bits<3>>,
    pub rtx_valid: Signal<Out, Bit>,
    pub rtx_psn: Signal<Out, Bits<24>>,
    pub qp_error: Signal<Out, Bit>,
    pub err_psn: Signal<Out, Bits<24>>,
    pub cnt_new_sends: Signal<Out, Bits<32>>,
    pub cnt_retransmits: Signal<Out, Bits<32>>,
    pub cnt_timeouts: Signal<Out, Bits<32>>,
    pub cnt_bad_send: Signal<Out, Bits<32>>,
    pub cnt_stale_sack: Signal<Out, Bits<32>>,
    pub cnt_bad_sack: Signal<Out, Bits<32>>,
    pub cnt_bad_nack: Signal<Out, Bits<32>>,
    wm: Constant<Bits<10>>,
    wc: Constant<Bits<24>>,
    wc_m1: Constant<Bits<24>>,
    k_ones: Constant<Bits<24>>,
    k_one24: Constant<Bits<24>>,
    /// 2W - 1: nxt - una <= W, so a cumulative ack within it fits under this mask.
    k_cum_m: Constant<Bits<24>>,
    wc12: Constant<Bits<12>>,
    lgw: Constant<Bits<5>>,
    /// 0..max(W/8, 16): abyte, 16-slot group and in-group indices.
    kc: Vec<Constant<Bits<10>>>,
    bbc: Vec<Constant<Bits<10>>>,
    c8: Vec<Constant<Bits<7>>>,
    c6: Vec<Constant<Bits<6>>>,
    nibble: Vec<Constant<Bits<4>>>,
    above8: Vec<Constant<Bits<8>>>,
    qbase: Vec<Constant<Bits<10>>>,
    ram: RAM<Bits<40>, 10>,
    // I stage: the ports registered (op cleared by rst) and what needs only them: the
    // bitmap's msb, cack + offset, the hole ends less the msb, the slot one-hot.
    i_op: DFF<Bits<3>>,
    i_psn: DFF<Bits<24>>,
    i_pm1: DFF<Bits<24>>,
    i_rel: DFF<Bits<24>>,
    i_ev: DFF<Bits<8>>,
    i_off: DFF<Bits<16>>,
    i_bm: DFF<Bits<64>>,
    i_m: DFF<Bits<2>>,
    i_rb: DFF<Bits<24>>,
    i_reason: DFF<Bits<8>>,
    i_exp: DFF<Bits<5>>,
    i_lin: DFF<Bits<3>>,
    i_lb: DFF<Bits<7>>,
    i_thr: DFF<Bits<10>>,
    i_t6: DFF<Bits<6>>,
    i_bmnz: DFF<Bit>,
    i_c1: DFF<Bits<24>>,
    i_xs: DFF<Bits<24>>,
    i_hx: DFF<Bits<18>>,
    i_hc: DFF<Bits<18>>,
    /// psn % W of the port's op as its 16-slot group one-hot (`i_g`) and in-group index
    /// one-hot (`i_j`); slot g * 16 + j is the op's when both are set. `q_j` is `i_j` at S0
    /// (`q_ghit` is `i_g`).
    i_g: Vec<DFF<Bit>>,
    i_j: Vec<DFF<Bit>>,
    q_op: DFF<Bits<3>>,
    q_psn: DFF<Bits<24>>,
    q_ev: DFF<Bits<8>>,
    q_off: DFF<Bits<16>>,
    q_bm: DFF<Bits<64>>,
    q_bmnz: DFF<Bit>,
    q_c1: DFF<Bits<24>>,
    q_x: DFF<Bits<18>>,
    q_room0: DFF<Bits<24>>,
    q_room1: DFF<Bits<24>>,
    q_t6: DFF<Bits<6>>,
    q_ca: DFF<Bits<24>>,
    q_xb: DFF<Bits<18>>,
    q_no0: DFF<Bits<24>>,
    q_no1: DFF<Bits<24>>,
    q_cb: DFF<Bits<18>>,
    /// The hole end mod W: (cack + offset + msb - threshold) % W, or (cack - threshold) % W
    /// without a bitmap.
    q_hh: DFF<Bits<10>>,
    q_m: DFF<Bits<2>>,
    q_rb: DFF<Bits<24>>,
    q_reason: DFF<Bits<8>>,
    q_thr: DFF<Bits<10>>,
    q_eq0: DFF<Bit>,
    q_eq1: DFF<Bit>,
    q_inw: DFF<Bit>,
    q_head: DFF<Bit>,
    // The SEND's RTO exponent, capped, formed at S0 for each head_tmo S1 can see: kept
    // (q_ek), incremented by a timeout at this edge (q_ei), cleared by una moving (q_hz),
    // and for a non-head PSN (q_e0).
    q_ek: DFF<Bits<5>>,
    q_ei: DFF<Bits<5>>,
    q_e0: DFF<Bits<5>>,
    q_hz: DFF<Bit>,
    q_hi: DFF<Bit>,
    r_una: DFF<Bits<24>>,
    r_nxt: DFF<Bits<24>>,
    una_d1: DFF<Bits<24>>,
    una_d2: DFF<Bits<24>>,
    now: DFF<Bits<32>>,
    now1: DFF<Bits<32>>,
    head_tmo: DFF<Bits<6>>,
    /// `head_tmo >= linear + backoff retries`, registered against the I stage's sum (`i_lb`)
    /// so the retry limit is a flop in front of `err`, not a compare; it lags head_tmo's + 1
    /// by the one clock after a timeout, when it is not read (see where it is formed).
    lim_q: DFF<Bit>,
    err: DFF<Bit>,
    r_err_psn: DFF<Bits<24>>,
    /// The last good SACK's rb, loaded a clock after the SACK (from s2_rb, when s2_sack) so
    /// its 24 enables hang off a flop, not off S1's SACK check; S1 reads s2_rb in its place
    /// while that load is pending.
    last_rb: DFF<Bits<24>>,
    s2_rb: DFF<Bits<24>>,
    /// last_rb as S1 sees it: s2_rb while its load is pending (= last_rb's next value).
    l_last_rb: Signal<Local, Bits<24>>,
    mask: DFF<Bits<8>>,
    /// The acked flags of the abyte the una loop works on next, selected a cycle early.
    cur: DFF<Bits<8>>,
    clr_q: DFF<Bits<8>>,
    pc_q: DFF<Bits<4>>,
    /// Copies of pc_q and of una's low 10 bits for the EV RAM's TICK read address (each
    /// takes its register's next value, so equal every clock): both also feed ports and
    /// the far side of the scoreboard, which pulled them 3.2 ns routes from the RAM
    /// (mrc_core seed 3 at 15cad00: pc_q -> una + pc_q -> raddr, 9.6 ns; the scoreboard
    /// alone at 7676d9a, seeds 1 / 2: pc_q, una -> raddr, 8.8 / 9.2 ns).
    pc_ra_rep: DFF<Bits<4>>,
    una_ra_rep: DFF<Bits<10>>,
    mcnt: DFF<Bits<4>>,
    s2_sack: DFF<Bit>,
    // SACK-mask bounds, decoded at S1 over 16-slot groups: for the start (una % W), the
    // cumulative end ((cack + 1) % W) and the hole end: group > (gt), group == (eq), in-group
    // index >= (ge); whether each range is all slots (f*), wraps past W - 1 (w*), has holes.
    s2_lgt: Vec<DFF<Bit>>,
    s2_leq: Vec<DFF<Bit>>,
    s2_lge: Vec<DFF<Bit>>,
    s2_cgt: Vec<DFF<Bit>>,
    s2_ceq: Vec<DFF<Bit>>,
    s2_cge: Vec<DFF<Bit>>,
    s2_hgt: Vec<DFF<Bit>>,
    s2_heq: Vec<DFF<Bit>>,
    s2_hge: Vec<DFF<Bit>>,
    s2_fc: DFF<Bit>,
    s2_wc: DFF<Bit>,
    s2_wh: DFF<Bit>,
    s2_hne: DFF<Bit>,
    s2_bm: DFF<Bits<72>>,
    s2_ev: DFF<Bits<8>>,
    s2_m: DFF<Bits<2>>,
    s2_ab: DFF<Bits<24>>,
    s2_nfb: DFF<Bit>,
    s2_nk: DFF<Bits<3>>,
    s2_tick: DFF<Bit>,
    s2_us: DFF<Bit>,
    s2_slot: DFF<Bits<10>>,
    /// Slot equalities a clock early, from the registers that load them (the I op's slot
    /// becomes `slot`, una's becomes `s2_slot`, `s2_slot` becomes S3's head slot): the op
    /// at S1 is on the S2 head (`m_head`); the op entering S1 is on S1's slot (`eq_s1`) or
    /// on S3's head slot (`eq_s3`); the S3 head is the S2 head (`eq_h3`). So `fire` and the
    /// NACK strobe reach `c_mark` and `s3_kill` through an AND, not beside 10-bit compares.
    m_head: DFF<Bit>,
    eq_s1: DFF<Bit>,
    eq_s3: DFF<Bit>,
    eq_h3: DFF<Bit>,
    s3_kill: DFF<Bit>,
    c_new: DFF<Bit>,
    c_rtx: DFF<Bit>,
    c_mark: DFF<Bit>,
    s3_sack: DFF<Bit>,
    s3_fbs: DFF<Bit>,
    s3_ev: DFF<Bits<8>>,
    s3_m: DFF<Bits<2>>,
    s3_ab: DFF<Bits<24>>,
    s3_nfb: DFF<Bit>,
    s3_nk: DFF<Bits<3>>,
    s3_tok: DFF<Bit>,
    w_en: DFF<Bit>,
    w_addr: DFF<Bits<10>>,
    w_ev: DFF<Bits<8>>,
    w_now: DFF<Bits<32>>,
    w_e: DFF<Bits<5>>,
    byp: DFF<Bit>,
    byp_ev: DFF<Bits<8>>,
    byp_dl: DFF<Bits<32>>,
    ram_q: DFF<Bits<40>>,
    bya: DFF<Bit>,
    bya_ev: DFF<Bits<8>>,
    bya_dl: DFF<Bits<32>>,
    mb: DFF<Bit>,
    /// nxt - una_d1 (the difference win0 / win1 compare), registered from both of the
    /// previous edge's nxt' so the window flags start at a flop, not behind a subtract.
    dnu: DFF<Bits<24>>,
    win0: DFF<Bit>,
    win1: DFF<Bit>,
    sn_q: DFF<Bit>,
    d_ev: DFF<Bits<8>>,
    p2_valid: DFF<Bit>,
    p2_slot: DFF<Bits<10>>,
    /// P3a: P2's pick a clock later (valid, slot for the PSN), and per 16-slot group "P2's
    /// pick is in this group and its slot is a candidate as this edge leaves it for a SACK"
    /// (p3c_g), formed beside the group's flags; P3b ORs the 16 flops.
    p3_valid: DFF<Bit>,
    p3_slot: DFF<Bits<10>>,
    p3c_g: Vec<DFF<Bit>>,
    o_cs: DFF<Bit>,
    o_ap: DFF<Bits<4>>,
    o_ab: DFF<Bits<32>>,
    o_fbv: DFF<Bit>,
    o_fbi: DFF<Bits<8>>,
    o_fbk: DFF<Bits<3>>,
    o_rv: DFF<Bit>,
    o_rpsn: DFF<Bits<24>>,
    c_new_sends: DFF<Bits<32>>,
    c_retransmits: DFF<Bits<32>>,
    c_timeouts: DFF<Bits<32>>,
    c_bad_send: DFF<Bits<32>>,
    c_stale_sack: DFF<Bits<32>>,
    c_bad_sack: DFF<Bits<32>>,
    c_bad_nack: DFF<Bits<32>>,
    /// The counters' events, registered (bit i: the i-th counter above, in order): each
    /// counter counts a clock late, so the decisions (send_new, send_rtx, fire, the refusals)
    /// end at these 7 flops, not at 32-flop enables placed beside the adders.
    c_ev: DFF<Bits<7>>,
    q_j: Vec<DFF<Bit>>,
    /// The S1 op's slot is in this 16-slot group.
    q_ghit: Vec<DFF<Bit>>,
    /// una % W at S2 and S3 as its 16-slot group one-hot (S2: `s2_leq`) and in-group index
    /// one-hot: slot g * 16 + j is the head when both bits are set (no 256 flops, no per-slot
    /// compare).
    s2_ljeq: Vec<DFF<Bit>>,
    s3_geq: Vec<DFF<Bit>>,
    s3_ljeq: Vec<DFF<Bit>>,
    pg: Vec<DFF<Bit>>,
    p_oa: Vec<DFF<Bit>>,
    p_rt: Vec<DFF<Bit>>,
    /// The op's slot is acked by the SACK apply at the S0 edge (per group, like p_oa).
    p_sa: Vec<DFF<Bit>>,
    out_f: Vec<DFF<Bit>>,
    ack_f: Vec<DFF<Bit>>,
    rtx_f: Vec<DFF<Bit>>,
    hole_f: Vec<DFF<Bit>>,
    ptr: Vec<DFF<Bit>>,
    cptr_q: Vec<DFF<Bit>>,
    s2_bext: Vec<DFF<Bit>>,
    s3_ackm: Vec<DFF<Bit>>,
    s3_holem: Vec<DFF<Bit>>,
    gh_any: Vec<DFF<Bit>>,
    p2_g: Vec<DFF<Bit>>,
    /// Per 16-slot group, copies of the scalar flops the slots' next flags read for the
    /// S1 op and the SACK apply: bit 0 s3_sack, 1 sn_q, 2 S1 op is a SEND, 3 a NACK,
    /// 4 err (a clock late: see l_ctl), 5 q_eq0, 6 q_eq1, 7 win0, 8 win1 (flops whose
    /// inputs are short: s3_tok, q_inw and clr_q end long paths, and a copy adds a route
    /// to each). A `_rep` flop is emitted as a module synthesis keeps whole
    /// (`keep_hierarchy`), so the copies are not merged back into one
    /// flop whose net would reach all 256 slots: each copy drives its own group's 16.
    ctl_rep: Vec<DFF<Bits<9>>>,
    p2_n: Vec<DFF<Bit>>,
    l_ctl: Signal<Local, Bits<9>>,
    l_cg: Signal<Local, Bits<9>>,
    g_sack: Signal<Local, Bit>,
    g_snew0: Signal<Local, Bit>,
    g_snew1: Signal<Local, Bit>,
    g_sr0: Signal<Local, Bit>,
    g_sr1: Signal<Local, Bit>,
    g_nk: Signal<Local, Bit>,
    cvg: Signal<Local, Bit>,
    gh_first: Vec<DFF<Bits<4>>>,
    ga_any: Vec<DFF<Bit>>,
    ga_first: Vec<DFF<Bits<4>>>,
    bh_any: Vec<DFF<Bit>>,
    bh_gi: Vec<DFF<Bits<2>>>,
    bh_m: Vec<DFF<Bits<4>>>,
    bh_f: Vec<DFF<Bits<4>>>,
    ba_any: Vec<DFF<Bit>>,
    ba_gi: Vec<DFF<Bits<2>>>,
    ba_m: Vec<DFF<Bits<4>>>,
    ba_f: Vec<DFF<Bits<4>>>,
    m2: Vec<Constant<Bits<2>>>,
    rel_lo: Signal<Local, Bits<4>>,
    rel_h0: Signal<Local, Bit>,
    rel_h1: Signal<Local, Bit>,
    rel_mz: Signal<Local, Bit>,
    slot: Signal<Local, Bits<10>>,
    una_slot: Signal<Local, Bits<10>>,
    foa_raw: Signal<Local, Bit>,
    frt_raw: Signal<Local, Bit>,
    sa_any: Signal<Local, Bit>,
    /// ca's bits above 2W - 1 are zero.
    ca_hz: Signal<Local, Bit>,
    foa: Signal<Local, Bit>,
    frt: Signal<Local, Bit>,
    hot0: Signal<Local, Bit>,
    oa_k: Signal<Local, Bit>,
    po_t: Signal<Local, Bit>,
    pr_t: Signal<Local, Bit>,
    ps_t: Signal<Local, Bit>,
    in_win: Signal<Local, Bit>,
    win_ok: Signal<Local, Bit>,
    is_send: Signal<Local, Bit>,
    is_sack: Signal<Local, Bit>,
    is_nack: Signal<Local, Bit>,
    is_tick: Signal<Local, Bit>,
    send_new: Signal<Local, Bit>,
    send_rtx: Signal<Local, Bit>,
    snew0: Signal<Local, Bit>,
    snew1: Signal<Local, Bit>,
    rtx_ok: Signal<Local, Bit>,
    nack_ok: Signal<Local, Bit>,
    sack_good: Signal<Local, Bit>,
    stale: Signal<Local, Bit>,
    ca: Signal<Local, Bits<24>>,
    cum_ok: Signal<Local, Bit>,
    cum_ok0: Signal<Local, Bit>,
    cum_ok1: Signal<Local, Bit>,
    bm_ok0: Signal<Local, Bit>,
    bm_ok1: Signal<Local, Bit>,
    off_pos: Signal<Local, Bit>,
    bmnz: Signal<Local, Bit>,
    rb: Signal<Local, Bits<18>>,
    bm_ok: Signal<Local, Bit>,
    hne: Signal<Local, Bit>,
    bs: Signal<Local, Bits<10>>,
    e7: Signal<Local, Bits<8>>,
    e7_i: Signal<Local, Bits<8>>,
    e8a: Signal<Local, Bits<8>>,
    e8b: Signal<Local, Bits<8>>,
    e8l: Signal<Local, Bits<8>>,
    e8s: Signal<Local, Bits<8>>,
    e8c: Signal<Local, Bits<8>>,
    e8s2: Signal<Local, Bits<8>>,
    e8c2: Signal<Local, Bits<8>>,
    e5: Signal<Local, Bits<5>>,
    dl: Signal<Local, Bits<32>>,
    raddr: Signal<Local, Bits<10>>,
    byb: Signal<Local, Bit>,
    t8: Signal<Local, Bits<8>>,
    hc10: Signal<Local, Bits<10>>,
    hh10: Signal<Local, Bits<10>>,
    drun: Signal<Local, Bit>,
    deq: Signal<Local, Bit>,
    ge_lo: Signal<Local, Bit>,
    ge_hc: Signal<Local, Bit>,
    ge_hh: Signal<Local, Bit>,
    in_c: Signal<Local, Bit>,
    in_h: Signal<Local, Bit>,
    hf: Signal<Local, Bit>,
    pgt: Signal<Local, Bit>,
    fire: Signal<Local, Bit>,
    limit: Signal<Local, Bit>,
    no: Signal<Local, Bit>,
    na: Signal<Local, Bit>,
    nr: Signal<Local, Bit>,
    nh: Signal<Local, Bit>,
    ppc: Signal<Local, Bits<4>>,
    abyte: Signal<Local, Bits<8>>,
    abyte1: Signal<Local, Bits<8>>,
    /// The acked flags as bytes (byte p = slots 8p..8p+7), gathered once for both selects.
    ack_byte: Vec<Signal<Local, Bits<8>>>,
    mm: Signal<Local, Bits<8>>,
    pp: Signal<Local, Bits<8>>,
    run: Signal<Local, Bit>,
    full: Signal<Local, Bit>,
    cand: Signal<Local, Bit>,
    t_any: Signal<Local, Bit>,
    t_first: Signal<Local, Bits<4>>,
    t_any2: Signal<Local, Bit>,
    t_first2: Signal<Local, Bits<4>>,
    fh: Signal<Local, Bit>,
    fa2: Signal<Local, Bit>,
    sel_h: Signal<Local, Bits<10>>,
    sel_a: Signal<Local, Bits<10>>,
    ph: Signal<Local, Bit>,
    pa: Signal<Local, Bit>,
    hh: Signal<Local, Bit>,
    ha: Signal<Local, Bit>,
    sx_h: Signal<Local, Bits<10>>,
    sx_a: Signal<Local, Bits<10>>,
    cv: Signal<Local, Bit>,
    t6: Signal<Local, Bits<6>>,
    hx: Signal<Local, Bits<18>>,
    t3: Signal<Local, Bits<3>>,
    tb: Signal<Local, Bit>,
    by8: Signal<Local, Bits<8>>,
    nzv: Signal<Local, Bits<8>>,
    xs24: Signal<Local, Bits<24>>,
    ixs: Signal<Local, Bits<24>>,
    ipsl: Signal<Local, Bits<10>>,
    hc: Signal<Local, Bits<18>>,
    una_nx: Signal<Local, Bits<24>>,
    psl: Signal<Local, Bits<10>>,
    nxt1: Signal<Local, Bits<24>>,
    f4: Signal<Local, Bits<4>>,
    f4b: Signal<Local, Bits<4>>,
    qm_h: Signal<Local, Bits<4>>,
    qm_a: Signal<Local, Bits<4>>,
    qi_h: Signal<Local, Bits<2>>,
    qi_a: Signal<Local, Bits<2>>,
    qf_h: Signal<Local, Bits<4>>,
    qf_a: Signal<Local, Bits<4>>,
    i2h: Signal<Local, Bits<2>>,
    i2a: Signal<Local, Bits<2>>,
    ca_nx: Signal<Local, Bits<24>>,
    dl2: Signal<Local, Bits<32>>,
    bdif0: Signal<Local, Bits<32>>,
    bdif1: Signal<Local, Bits<32>>,
    dif0: Signal<Local, Bits<32>>,
    dif1: Signal<Local, Bits<32>>,
    age_ok: Signal<Local, Bit>,
    gnew: Signal<Local, Bit>,
    gsr: Signal<Local, Bit>,
    nk_pre: Signal<Local, Bit>,
    t72: Signal<Local, Bits<72>>,
    _w: usize,
    _nb: usize,
    _nb_last: usize,
    _nb9: usize,
    _groups: usize,
    _quads: usize,
}

fn dffs<T: Synth>(n: usize) -> Vec<DFF<T>> {
    (0..n).map(|_| DFF::default()).collect()
}

impl SackTxScoreboard {
    /// Elaborate for a validated config (W = `sack_window_bits`).
    pub fn new(cfg: &NicConfig) -> Self {
        let w = cfg.sack_window_bits as usize;
        let nb = w / 8;
        let groups = w / 16;
        Self {
            clock: Default::default(),
            rst: Default::default(),
            init_psn: Default::default(),
            op: Default::default(),
            psn: Default::default(),
            ev_idx: Default::default(),
            cack: Default::default(),
            offset: Default::default(),
            bitmap: Default::default(),
            m: Default::default(),
            rcvd_bytes: Default::default(),
            reason: Default::default(),
            rto_exp: Default::default(),
            rto_linear_retries: Default::default(),
            rto_backoff_retries: Default::default(),
            rtx_ooo_threshold: Default::default(),
            una: Default::default(),
            una_adv: Default::default(),
            nxt: Default::default(),
            can_send: Default::default(),
            acked_pkts: Default::default(),
            acked_bytes: Default::default(),
            fb_valid: Default::default(),
            fb_idx: Default::default(),
            fb_kind: Default::default(),
            rtx_valid: Default::default(),
            rtx_psn: Default::default(),
            qp_error: Default::default(),
            err_psn: Default::default(),
            cnt_new_sends: Default::default(),
            cnt_retransmits: Default::default(),
            cnt_timeouts: Default::default(),
            cnt_bad_send: Default::default(),
            cnt_stale_sack: Default::default(),
            cnt_bad_sack: Default::default(),
            cnt_bad_nack: Default::default(),
            wm: Constant::new(((w - 1) as u64).into()),
            wc: Constant::new((w as u64).into()),
            wc_m1: Constant::new((w as u64 - 1).into()),
            k_ones: Constant::new(0xff_ffffu64.into()),
            k_one24: Constant::new(1u64.into()),
            wc12: Constant::new((w as u64).into()),
            lgw: Constant::new((w.trailing_zeros() as u64).into()),
            kc: (0..(w as u64 / 8).max(16))
                .map(|k| Constant::new(k.into()))
                .collect(),
            bbc: (0..nb + 8)
                .map(|x| Constant::new((((x + 2 * nb - 8) % nb) as u64).into()))
                .collect(),
            k_cum_m: Constant::new((2 * w as u64 - 1).into()),
            c8: (0..9u64).map(|j| Constant::new((8 * j).into())).collect(),
            c6: (0..8u64).map(|j| Constant::new((j * 8).into())).collect(),
            nibble: (0..16u64).map(|j| Constant::new(j.into())).collect(),
            above8: (0..8u64)
                .map(|j| Constant::new((0xFFu64 & !((2u64 << j) - 1)).into()))
                .collect(),
            qbase: (0..groups as u64 / 4)
                .map(|k| Constant::new((64 * k).into()))
                .collect(),
            ram: RAM::new(
                (0..1024u64)
                    .map(|a| (Bits::<10>::from(a), Bits::<40>::from(0u64)))
                    .collect(),
            ),
            i_op: Default::default(),
            i_psn: Default::default(),
            i_pm1: Default::default(),
            i_rel: Default::default(),
            i_ev: Default::default(),
            i_off: Default::default(),
            i_bm: Default::default(),
            i_m: Default::default(),
            i_rb: Default::default(),
            i_reason: Default::default(),
            i_exp: Default::default(),
            i_lin: Default::default(),
            i_lb: Default::default(),
            i_thr: Default::default(),
            i_t6: Default::default(),
            i_bmnz: Default::default(),
            i_c1: Default::default(),
            i_xs: Default::default(),
            i_hx: Default::default(),
            i_hc: Default::default(),
            i_g: dffs(groups),
            i_j: dffs(16),
            q_op: Default::default(),
            q_psn: Default::default(),
            q_ev: Default::default(),
            q_off: Default::default(),
            q_bm: Default::default(),
            q_bmnz: Default::default(),
            q_c1: Default::default(),
            q_x: Default::default(),
            q_room0: Default::default(),
            q_room1: Default::default(),
            q_t6: Default::default(),
            q_ca: Default::default(),
            q_xb: Default::default(),
            q_no0: Default::default(),
            q_no1: Default::default(),
            q_cb: Default::default(),
            q_hh: Default::default(),
            q_m: Default::default(),
            q_rb: Default::default(),
            q_reason: Default::default(),
            q_thr: Default::default(),
            q_eq0: Default::default(),
            q_eq1: Default::default(),
            q_inw: Default::default(),
            q_head: Default::default(),
            q_ek: Default::default(),
            q_ei: Default::default(),
            q_e0: Default::default(),
            q_hz: Default::default(),
            q_hi: Default::default(),
            r_una: Default::default(),
            r_nxt: Default::default(),
            una_d1: Default::default(),
            una_d2: Default::default(),
            now: Default::default(),
            now1: Default::default(),
            head_tmo: Default::default(),
            lim_q: Default::default(),
            err: Default::default(),
            r_err_psn: Default::default(),
            last_rb: Default::default(),
            s2_rb: Default::default(),
            l_last_rb: Default::default(),
            mask: Default::default(),
            cur: Default::default(),
            clr_q: Default::default(),
            pc_q: Default::default(),
            pc_ra_rep: Default::default(),
            una_ra_rep: Default::default(),
            mcnt: Default::default(),
            s2_sack: Default::default(),
            s2_lgt: dffs(groups),
            s2_leq: dffs(groups),
            s2_lge: dffs(16),
            s2_cgt: dffs(groups),
            s2_ceq: dffs(groups),
            s2_cge: dffs(16),
            s2_hgt: dffs(groups),
            s2_heq: dffs(groups),
            s2_hge: dffs(16),
            s2_fc: Default::default(),
            s2_wc: Default::default(),
            s2_wh: Default::default(),
            s2_hne: Default::default(),
            s2_bm: Default::default(),
            s2_ev: Default::default(),
            s2_m: Default::default(),
            s2_ab: Default::default(),
            s2_nfb: Default::default(),
            s2_nk: Default::default(),
            s2_tick: Default::default(),
            s2_us: Default::default(),
            s2_slot: Default::default(),
            eq_s1: Default::default(),
            eq_s3: Default::default(),
            eq_h3: Default::default(),
            s3_kill: Default::default(),
            c_new: Default::default(),
            c_rtx: Default::default(),
            c_mark: Default::default(),
            s3_sack: Default::default(),
            s3_fbs: Default::default(),
            s3_ev: Default::default(),
            s3_m: Default::default(),
            s3_ab: Default::default(),
            s3_nfb: Default::default(),
            s3_nk: Default::default(),
            s3_tok: Default::default(),
            w_en: Default::default(),
            w_addr: Default::default(),
            w_ev: Default::default(),
            w_now: Default::default(),
            w_e: Default::default(),
            byp: Default::default(),
            byp_ev: Default::default(),
            byp_dl: Default::default(),
            ram_q: Default::default(),
            bya: Default::default(),
            bya_ev: Default::default(),
            bya_dl: Default::default(),
            mb: Default::default(),
            dnu: Default::default(),
            win0: Default::default(),
            win1: Default::default(),
            sn_q: Default::default(),
            d_ev: Default::default(),
            p2_valid: Default::default(),
            p2_slot: Default::default(),
            p3_valid: Default::default(),
            p3_slot: Default::default(),
            p3c_g: dffs(groups),
            o_cs: Default::default(),
            o_ap: Default::default(),
            o_ab: Default::default(),
            o_fbv: Default::default(),
            o_fbi: Default::default(),
            o_fbk: Default::default(),
            o_rv: Default::default(),
            o_rpsn: Default::default(),
            c_new_sends: Default::default(),
            c_retransmits: Default::default(),
            c_timeouts: Default::default(),
            c_bad_send: Default::default(),
            c_stale_sack: Default::default(),
            c_bad_sack: Default::default(),
            c_bad_nack: Default::default(),
            c_ev: Default::default(),
            q_j: dffs(16),
            q_ghit: dffs(groups),
            s2_ljeq: dffs(16),
            s3_geq: dffs(groups),
            s3_ljeq: dffs(16),
            pg: dffs(groups),
            p_oa: dffs(groups),
            p_rt: dffs(groups),
            p_sa: dffs(groups),
            out_f: dffs(w),
            ack_f: dffs(w),
            rtx_f: dffs(w),
            hole_f: dffs(w),
            ptr: dffs(nb),
            cptr_q: dffs(nb),
            s2_bext: dffs(nb + 8),
            s3_ackm: dffs(w),
            s3_holem: dffs(w),
            gh_any: dffs(groups),
            p2_g: dffs(groups),
            ctl_rep: dffs(groups),
            p2_n: dffs(16),
            l_ctl: Default::default(),
            l_cg: Default::default(),
            g_sack: Default::default(),
            g_snew0: Default::default(),
            g_snew1: Default::default(),
            g_sr0: Default::default(),
            g_sr1: Default::default(),
            g_nk: Default::default(),
            cvg: Default::default(),
            gh_first: dffs(groups),
            ga_any: dffs(groups),
            ga_first: dffs(groups),
            bh_any: dffs(groups / 4),
            bh_gi: dffs(groups / 4),
            bh_m: dffs(groups / 4),
            bh_f: dffs(groups / 4),
            ba_any: dffs(groups / 4),
            ba_gi: dffs(groups / 4),
            ba_m: dffs(groups / 4),
            ba_f: dffs(groups / 4),
            m2: (0..4u64).map(|m| Constant::new(m.to_bits())).collect(),
            rel_lo: Default::default(),
            rel_h0: Default::default(),
            rel_h1: Default::default(),
            rel_mz: Default::default(),
            slot: Default::default(),
            una_slot: Default::default(),
            foa_raw: Default::default(),
            sa_any: Default::default(),
            frt_raw: Default::default(),
            foa: Default::default(),
            frt: Default::default(),
            hot0: Default::default(),
            oa_k: Default::default(),
            po_t: Default::default(),
            pr_t: Default::default(),
            ca_hz: Default::default(),
            ps_t: Default::default(),
            in_win: Default::default(),
            win_ok: Default::default(),
            is_send: Default::default(),
            is_sack: Default::default(),
            is_nack: Default::default(),
            is_tick: Default::default(),
            send_new: Default::default(),
            send_rtx: Default::default(),
            snew0: Default::default(),
            snew1: Default::default(),
            rtx_ok: Default::default(),
            nack_ok: Default::default(),
            sack_good: Default::default(),
            stale: Default::default(),
            ca: Default::default(),
            cum_ok: Default::default(),
            cum_ok0: Default::default(),
            cum_ok1: Default::default(),
            bm_ok0: Default::default(),
            bm_ok1: Default::default(),
            off_pos: Default::default(),
            bmnz: Default::default(),
            rb: Default::default(),
            bm_ok: Default::default(),
            hne: Default::default(),
            bs: Default::default(),
            e7: Default::default(),
            e7_i: Default::default(),
            e8a: Default::default(),
            e8b: Default::default(),
            e8l: Default::default(),
            e8s: Default::default(),
            e8c: Default::default(),
            e8s2: Default::default(),
            e8c2: Default::default(),
            e5: Default::default(),
            dl: Default::default(),
            raddr: Default::default(),
            byb: Default::default(),
            t8: Default::default(),
            hc10: Default::default(),
            hh10: Default::default(),
            drun: Default::default(),
            deq: Default::default(),
            ge_lo: Default::default(),
            ge_hc: Default::default(),
            ge_hh: Default::default(),
            in_c: Default::default(),
            in_h: Default::default(),
            hf: Default::default(),
            pgt: Default::default(),
            m_head: Default::default(),
            fire: Default::default(),
            limit: Default::default(),
            no: Default::default(),
            na: Default::default(),
            nr: Default::default(),
            nh: Default::default(),
            ppc: Default::default(),
            abyte: Default::default(),
            abyte1: Default::default(),
            ack_byte: (0..nb).map(|_| Default::default()).collect(),
            mm: Default::default(),
            pp: Default::default(),
            run: Default::default(),
            full: Default::default(),
            cand: Default::default(),
            t_any: Default::default(),
            t_first: Default::default(),
            t_any2: Default::default(),
            t_first2: Default::default(),
            fh: Default::default(),
            fa2: Default::default(),
            sel_h: Default::default(),
            sel_a: Default::default(),
            ph: Default::default(),
            pa: Default::default(),
            hh: Default::default(),
            ha: Default::default(),
            sx_h: Default::default(),
            sx_a: Default::default(),
            cv: Default::default(),
            t6: Default::default(),
            hx: Default::default(),
            t3: Default::default(),
            tb: Default::default(),
            by8: Default::default(),
            nzv: Default::default(),
            xs24: Default::default(),
            ixs: Default::default(),
            ipsl: Default::default(),
            hc: Default::default(),
            una_nx: Default::default(),
            psl: Default::default(),
            nxt1: Default::default(),
            f4: Default::default(),
            f4b: Default::default(),
            qm_h: Default::default(),
            qm_a: Default::default(),
            qi_h: Default::default(),
            qi_a: Default::default(),
            qf_h: Default::default(),
            qf_a: Default::default(),
            i2h: Default::default(),
            i2a: Default::default(),
            ca_nx: Default::default(),
            dl2: Default::default(),
            bdif0: Default::default(),
            bdif1: Default::default(),
            dif0: Default::default(),
            dif1: Default::default(),
            age_ok: Default::default(),
            gnew: Default::default(),
            gsr: Default::default(),
            nk_pre: Default::default(),
            t72: Default::default(),
            _w: w,
            _nb: nb,
            _nb_last: nb - 1,
            _nb9: nb + 8,
            _groups: groups,
            _quads: groups / 4,
        }
    }
}

impl Logic for SackTxScoreboard {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            i_op,
            i_psn,
            i_pm1,
            i_rel,
            i_ev,
            i_off,
            i_bm,
            i_m,
            i_rb,
            i_reason,
            i_exp,
            i_lin,
            i_lb,
            i_thr,
            i_t6,
            i_bmnz,
            i_c1,
            i_xs,
            i_hx,
            i_hc,
            q_op,
            q_psn,
            q_ev,
            q_off,
            q_bm,
            q_bmnz,
            q_c1,
            q_x,
            q_room0,
            q_room1,
            q_t6,
            q_ca,
            q_xb,
            q_no0,
            q_no1,
            q_cb,
            q_hh,
            q_m,
            q_rb,
            q_reason,
            q_thr,
            q_eq0,
            q_eq1,
            q_inw,
            q_head,
            q_ek,
            q_ei,
            q_e0,
            q_hz,
            q_hi,
            r_una,
            r_nxt,
            una_d1,
            una_d2,
            now,
            now1,
            head_tmo,
            lim_q,
            err,
            r_err_psn,
            last_rb,
            s2_rb,
            mask,
            cur,
            clr_q,
            pc_q,
            pc_ra_rep,
            una_ra_rep,
            mcnt,
            s2_sack,
            s2_fc,
            s2_wc,
            s2_wh,
            s2_hne,
            s2_bm,
            s2_ev,
            s2_m,
            s2_ab,
            s2_nfb,
            s2_nk,
            s2_tick,
            s2_us,
            s2_slot,
            m_head,
            eq_s1,
            eq_s3,
            eq_h3,
            s3_kill,
            c_new,
            c_rtx,
            c_mark,
            s3_sack,
            s3_fbs,
            s3_ev,
            s3_m,
            s3_ab,
            s3_nfb,
            s3_nk,
            s3_tok,
            w_en,
            w_addr,
            w_ev,
            w_now,
            w_e,
            byp,
            byp_ev,
            byp_dl,
            ram_q,
            bya,
            bya_ev,
            bya_dl,
            mb,
            dnu,
            win0,
            win1,
            sn_q,
            d_ev,
            p2_valid,
            p2_slot,
            p3_valid,
            p3_slot,
            o_cs,
            o_ap,
            o_ab,
            o_fbv,
            o_fbi,
            o_fbk,
            o_rv,
            o_rpsn,
            c_new_sends,
            c_retransmits,
            c_timeouts,
            c_bad_send,
            c_stale_sack,
            c_bad_sack,
            c_bad_nack,
            c_ev
        );
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();

        // ---------------- S1: the registered op against the committed state ------------
        self.una_slot.next = bit_cast::<10, 24>(self.r_una.q.val()) & self.wm.val();
        self.slot.next = bit_cast::<10, 24>(self.q_psn.q.val()) & self.wm.val();
        // The op slot's flags, read at S0 per 16-slot group (p_oa: outstanding and unacked,
        // p_rt: that and marked) and corrected here for the previous op's own update of the
        // same slot and a timeout mark on it (c_*, scalar); see the S0 section.
        // The SACK apply's ack is its own read (p_sa): the slot is one-hot, so "outstanding,
        // unacked and not acked now" is the OR of the first less the OR of the second.
        self.foa_raw.next = false;
        self.frt_raw.next = false;
        self.sa_any.next = false;
        for g in 0..self._groups {
            self.foa_raw.next = self.foa_raw.val() | self.p_oa[g].q.val();
            self.frt_raw.next = self.frt_raw.val() | self.p_rt[g].q.val();
            self.sa_any.next = self.sa_any.val() | self.p_sa[g].q.val();
        }
        self.foa_raw.next = self.foa_raw.val() & !self.sa_any.val();
        self.frt_raw.next = self.frt_raw.val() & !self.sa_any.val();
        self.foa.next = self.foa_raw.val() | self.c_new.q.val();
        if self.c_mark.q.val() {
            self.frt.next = self.foa_raw.val();
        } else {
            self.frt.next = self.frt_raw.val();
        }
        if self.c_new.q.val() | self.c_rtx.q.val() {
            self.frt.next = false;
        }
        // psn in [una, nxt), needed only together with the slot's outstanding flag: a slot is
        // outstanding exactly when the one PSN of [una, nxt) that maps to it (nxt - una <= W)
        // was sent, so "in window and outstanding" is "psn - una < W and outstanding". That
        // is one subtract and a NOR of its high bits instead of a subtract and a compare, and
        // both are done at S0 (q_inw), off the path from una to the op's decision.
        self.in_win.next = self.q_inw.q.val();
        // win_ok = nxt - una_d2 < W, formed a cycle early for both outcomes of that cycle's
        // SEND (una_d2 = the previous una_d1): win0 if nxt stayed, win1 if it advanced.
        if self.sn_q.q.val() {
            self.win_ok.next = self.win1.q.val();
        } else {
            self.win_ok.next = self.win0.q.val();
        }
        self.is_send.next = self.q_op.q.val() == 1;
        self.is_sack.next = self.q_op.q.val() == 2;
        self.is_nack.next = self.q_op.q.val() == 3;
        self.is_tick.next = self.q_op.q.val() == 4;
        // psn == nxt was compared at S0 against nxt and nxt + 1; this cycle's nxt is the
        // latter exactly when the previous cycle's SEND was new (sn_q). The decision is formed
        // for both outcomes from flops and sn_q (a loop: sn_q is the last send_new) only
        // selects, so it meets one LUT on its way to the counters and the RAM write.
        self.snew0.next =
            self.is_send.val() & !self.err.q.val() & self.q_eq0.q.val() & self.win0.q.val();
        self.snew1.next =
            self.is_send.val() & !self.err.q.val() & self.q_eq1.q.val() & self.win1.q.val();
        if self.sn_q.q.val() {
            self.send_new.next = self.snew1.val();
        } else {
            self.send_new.next = self.snew0.val();
        }
        // The per-slot flag updates use these prefixes with the slot's own flags (the slot is
        // the one q_ghit and q_j select, so its flags are what fo/fa/fr would mux): the 256-way mux
        // then feeds only the few global consumers below, not every slot's next state.
        self.nk_pre.next = self.is_nack.val() & !self.err.q.val() & self.in_win.val();
        // A retransmit is "sendable as one" (rtx_ok, no sn_q in it) and not new; the RAM write,
        // the head check and the bad-SEND count use rtx_ok directly (send_new | send_rtx is
        // send_new | rtx_ok; a SEND neither new nor retransmitted is !send_new & !rtx_ok).
        self.rtx_ok.next =
            self.is_send.val() & !self.err.q.val() & self.in_win.val() & self.frt.val();
        self.send_rtx.next = self.rtx_ok.val() & !self.send_new.val();
        self.nack_ok.next = self.nk_pre.val() & self.foa.val();
        // SACK checks: every una-relative quantity was subtracted at S0 from the una this
        // cycle sees (ca = cack + 1 - una; the hole length less the msb), so each check
        // here is one compare of two flops. The bitmap's end needs no una at all: it only
        // matters when cum_ok and off_pos hold, and then cack + offset - una is in
        // [0, n_out + 32766] (no 18-bit wrap), so "cack + offset + msb - una < nxt - una" is
        // "msb < room", room = nxt - cack - offset as a signed 24-bit value (S0, both nxt).
        self.ca.next = self.q_ca.q.val();
        // Both outcomes of the previous SEND (nxt or nxt + 1) are checked, and sn_q only
        // selects (as for send_new): it does not start the compares.
        self.off_pos.next = !self.q_off.q.val().get_bit(15) & (self.q_off.q.val() != 0);
        self.bmnz.next = self.q_bmnz.q.val();
        // ca <= no, where no (nxt - una, for either nxt) is at most W: "ca's bits above the
        // window's are zero and its low bits are <= no's", a zero test beside a compare of
        // log2(W) + 1 bits instead of a 24-bit compare (ABC had made it a five-level LUT and
        // L6MUX tree, critical at seeds 1 and 3).
        self.ca_hz.next = (self.ca.val() & !self.k_cum_m.val()) == 0;
        self.cum_ok0.next = self.ca_hz.val()
            & ((self.ca.val() & self.k_cum_m.val()) <= (self.q_no0.q.val() & self.k_cum_m.val()));
        self.cum_ok1.next = self.ca_hz.val()
            & ((self.ca.val() & self.k_cum_m.val()) <= (self.q_no1.q.val() & self.k_cum_m.val()));
        self.bm_ok0.next = !self.bmnz.val()
            | (!self.q_room0.q.val().get_bit(23)
                & (bit_cast::<24, 6>(self.q_t6.q.val()) < self.q_room0.q.val()));
        self.bm_ok1.next = !self.bmnz.val()
            | (!self.q_room1.q.val().get_bit(23)
                & (bit_cast::<24, 6>(self.q_t6.q.val()) < self.q_room1.q.val()));
        if self.sn_q.q.val() {
            self.cum_ok.next = self.cum_ok1.val();
            self.bm_ok.next = self.cum_ok1.val() & self.bm_ok1.val();
        } else {
            self.cum_ok.next = self.cum_ok0.val();
            self.bm_ok.next = self.cum_ok0.val() & self.bm_ok0.val();
        }
        self.sack_good.next =
            self.is_sack.val() & !self.err.q.val() & self.off_pos.val() & self.bm_ok.val();
        self.stale.next =
            self.is_sack.val() & !self.err.q.val() & !self.cum_ok.val() & self.ca.val().get_bit(23);
        // The hole range's length, rb = hr1 - (threshold + 1) with hr1 = highest SACKed + 1
        // - una: S0 formed it without the bitmap's msb (xb, and cb for an empty bitmap), so
        // the encoder meets one short add here, not two carry chains at S0. It matters only
        // for a good SACK, where hr1 is in [0, nxt - una], so rb > 0 is "bit 17 clear and
        // non-zero" and no 18-bit wrap is involved.
        if self.bmnz.val() {
            self.rb.next = self.q_xb.q.val() + bit_cast::<18, 6>(self.q_t6.q.val());
        } else {
            self.rb.next = self.q_cb.q.val();
        }
        // Unlike the cumulative range, the hole range is never full: rb <= (nxt - una) -
        // (threshold + 1) < W, so it needs no "L >= W" flag.
        self.hne.next =
            (self.q_thr.q.val() != 0) & !self.rb.val().get_bit(17) & (self.rb.val() != 0);
        // base slot = (una + cack + offset - una) % W
        self.bs.next = bit_cast::<10, 18>(self.q_x.q.val()) & self.wm.val();

        // EV RAM: one read (TICK: the head; otherwise the op's PSN), addressed at S0 (below)
        // so the RAM's output is registered raw here (ram_q); the SEND's write.
        // The exponent for a head PSN and for any other, both capped, formed at S0; q_head (a
        // wide fan-out) and what happened to head_tmo at the S0 edge only select.
        self.e5.next = self.q_e0.q.val();
        if self.q_head.q.val() {
            if self.q_hz.q.val() {
                self.e5.next = self.q_e0.q.val();
            } else if self.q_hi.q.val() {
                self.e5.next = self.q_ei.q.val();
            } else {
                self.e5.next = self.q_ek.q.val();
            }
        }
        // The SEND's write is registered (slot, ev, now, exponent) and lands one edge later;
        // a read meeting that pending write in the same cycle takes the written data (byp).
        self.w_en.d.next = self.send_new.val() | self.rtx_ok.val();
        self.w_addr.d.next = self.slot.val();
        self.w_ev.d.next = self.q_ev.q.val();
        self.w_now.d.next = self.now.q.val();
        self.w_e.d.next = self.e5.val();
        self.dl.next = self.w_now.q.val() + (bits::<32>(1) << self.w_e.q.val());
        self.ram.write_address.next = self.w_addr.q.val();
        self.ram.write_data.next =
            (bit_cast::<40, 8>(self.w_ev.q.val()) << 32) | bit_cast::<40, 32>(self.dl.val());
        self.ram.write_enable.next = self.w_en.q.val();
        // The read (at S0, last cycle) missed two writes: the one that landed at the read's
        // own edge (bya: matched then, its data kept) and the one landing at this edge (the
        // previous S1 op's: its address matched then (mb), enabled now). The newer wins.
        self.ram_q.d.next = self.ram.read_data.val();
        self.byb.next = self.mb.q.val() & self.w_en.q.val();
        self.byp.d.next = self.byb.val() | self.bya.q.val();
        if self.byb.val() {
            self.byp_ev.d.next = self.w_ev.q.val();
            self.byp_dl.d.next = self.dl.val();
        } else {
            self.byp_ev.d.next = self.bya_ev.q.val();
            self.byp_dl.d.next = self.bya_dl.q.val();
        }

        // ---------------- S2 -> S3: registers of the op in S2 -----------------------------
        self.s3_sack.d.next = self.s2_sack.q.val();
        self.s3_fbs.d.next = self.s2_sack.q.val() & (self.s2_m.q.val() != 3);
        self.s3_ev.d.next = self.s2_ev.q.val();
        self.s3_m.d.next = self.s2_m.q.val();
        self.s3_ab.d.next = self.s2_ab.q.val();
        self.s3_nfb.d.next = self.s2_nfb.q.val();
        self.s3_nk.d.next = self.s2_nk.q.val();
        if self.byp.q.val() {
            self.d_ev.d.next = self.byp_ev.q.val();
        } else {
            self.d_ev.d.next = bit_cast::<8, 40>(self.ram_q.q.val() >> 32);
        }
        // The head's age (now - deadline >= 0) is decided here for both values `now` can
        // have at S3 (now, or now + 1 after a TICK in S1 this cycle), so S3 only selects;
        // and for both deadlines (the RAM's, the bypassed write's), so the RAM output (slow
        // without its output register) goes straight into the subtract, not through a mux.
        self.dl2.next = bit_cast::<32, 40>(self.ram_q.q.val());
        self.dif0.next = self.now.q.val() - self.dl2.val();
        self.dif1.next = self.now1.q.val() - self.dl2.val();
        self.bdif0.next = self.now.q.val() - self.byp_dl.q.val();
        self.bdif1.next = self.now1.q.val() - self.byp_dl.q.val();
        if self.is_tick.val() {
            if self.byp.q.val() {
                self.age_ok.next = (self.bdif1.val() >> 31) == 0;
            } else {
                self.age_ok.next = (self.dif1.val() >> 31) == 0;
            }
        } else if self.byp.q.val() {
            self.age_ok.next = (self.bdif0.val() >> 31) == 0;
        } else {
            self.age_ok.next = (self.dif0.val() >> 31) == 0;
        }
        // Everything of the S3 timeout but the head's flags, registered (s3_tok), so the
        // 256 per-slot marks and `fire` start from one flop: a TICK, the head not (re)sent
        // at S1 this cycle, una unchanged since S1 (it moves exactly on the edges where clr_q
        // is non-zero), the age, no error. `err` is taken here a cycle early: it is set only
        // by a firing timeout, which marks the head, so the TICK behind it finds the head
        // marked (s3_kill, or the flops for the mark) and cannot fire either.
        self.s3_tok.d.next = self.s2_tick.q.val()
            & !((self.send_new.val() | self.rtx_ok.val()) & self.m_head.q.val())
            & self.s2_us.q.val()
            & (self.clr_q.q.val() == 0)
            & self.age_ok.val()
            & !self.err.q.val();
        for g in 0..self._groups {
            self.s3_geq[g].clock.next = self.clock.val();
            self.s3_geq[g].d.next = self.s2_leq[g].q.val();
        }
        for j in 0..16 {
            self.s3_ljeq[j].clock.next = self.clock.val();
            self.s3_ljeq[j].d.next = self.s2_ljeq[j].q.val();
        }
        // The head's flags as they will be at S3, read a cycle early and in 16-slot groups
        // (pg), so S3 ORs 16 flops instead of 256 slots. Between now and S3 the head can
        // only come alive by a SEND at S1 (s3_tok drops the check) and can be killed by
        // this edge's SACK apply (acked, or a new hole: per slot, here), by a NACK at S1 on
        // the head or by the previous TICK marking the same head (both scalar: s3_kill).
        for g in 0..self._groups {
            self.pg[g].clock.next = self.clock.val();
            self.pgt.next = false;
            for j in 0..16 {
                self.pgt.next = self.pgt.val()
                    | (self.s2_ljeq[j].q.val()
                        & self.out_f[g * 16 + j].q.val()
                        & !self.ack_f[g * 16 + j].q.val()
                        & !self.rtx_f[g * 16 + j].q.val()
                        & !(self.ctl_rep[g].q.val().get_bit(0)
                            & (self.s3_ackm[g * 16 + j].q.val()
                                | (self.s3_holem[g * 16 + j].q.val()
                                    & !self.hole_f[g * 16 + j].q.val()))));
            }
            self.pg[g].d.next = self.s2_leq[g].q.val() & self.pgt.val() & !self.rst.val();
        }

        // S2 masks: cumulative and hole ranges from una_slot at S1, the bitmap (shifted by
        // base % 8 at S1) placed as 9 bytes from abyte base / 8 (one-hot s2_bext).
        // A slot k is in a range of length L from lo when (k - lo) % W < L: all slots when
        // L >= W; else, with e = (lo + L) % W, k >= lo and k < e, or (wrapped: e < lo)
        // k >= lo or k < e. k >= x is decoded at S1 over 16-slot groups (k = 16 kh + kl:
        // kh > xh, or kh == xh and kl >= xl), so a slot costs a LUT or two per bound where a
        // subtract and a compare per slot took about 17 carry cells.
        for g in 0..self._groups {
            for h in 0..2 {
                self.t8.next = bits::<8>(0);
                for j in 0..9 {
                    self.t72.next = self.s2_bm.q.val() >> self.c8[j].val();
                    if self.s2_bext[g * 2 + h + 8 - j].q.val() {
                        self.t8.next = self.t8.val() | bit_cast::<8, 72>(self.t72.val());
                    }
                }
                for i in 0..8 {
                    self.s3_ackm[g * 16 + h * 8 + i].clock.next = self.clock.val();
                    self.s3_holem[g * 16 + h * 8 + i].clock.next = self.clock.val();
                    self.ge_lo.next = self.s2_lgt[g].q.val()
                        | (self.s2_leq[g].q.val() & self.s2_lge[h * 8 + i].q.val());
                    self.ge_hc.next = self.s2_cgt[g].q.val()
                        | (self.s2_ceq[g].q.val() & self.s2_cge[h * 8 + i].q.val());
                    self.ge_hh.next = self.s2_hgt[g].q.val()
                        | (self.s2_heq[g].q.val() & self.s2_hge[h * 8 + i].q.val());
                    if self.s2_wc.q.val() {
                        self.in_c.next = self.ge_lo.val() | !self.ge_hc.val();
                    } else {
                        self.in_c.next = self.ge_lo.val() & !self.ge_hc.val();
                    }
                    if self.s2_wh.q.val() {
                        self.in_h.next = self.ge_lo.val() | !self.ge_hh.val();
                    } else {
                        self.in_h.next = self.ge_lo.val() & !self.ge_hh.val();
                    }
                    self.s3_ackm[g * 16 + h * 8 + i].d.next = self.s2_sack.q.val()
                        & (self.s2_fc.q.val() | self.in_c.val() | self.t8.val().get_bit(i));
                    self.s3_holem[g * 16 + h * 8 + i].d.next =
                        self.s2_sack.q.val() & self.s2_hne.q.val() & self.in_h.val();
                }
            }
        }

        // ---------------- S3: head check, feedback --------------------------------------
        self.hf.next = false;
        for g in 0..self._groups {
            self.hf.next = self.hf.val() | self.pg[g].q.val();
        }
        self.hf.next = self.hf.val() & !self.s3_kill.q.val();
        self.limit.next = self.lim_q.q.val();
        // s3_tok is everything of a timeout but the head slot's own flags: each slot ANDs in
        // its own (s3_geq & s3_ljeq select one), so the 256-way hf only feeds the feedback and
        // counters.
        self.fire.next = self.s3_tok.q.val() & self.hf.val();
        // The S2 head's scalar kills (see pg): a NACK at S1 on it, or this timeout's mark
        // (`fire`: at the limit the QP errors instead and the next check cannot fire anyway).
        self.s3_kill.d.next =
            (self.nk_pre.val() & self.m_head.q.val()) | (self.eq_h3.q.val() & self.fire.val());
        // The three feedback sources are one op each at S3 (SACK, NACK, TICK), so they never
        // coincide: the EV and kind load every clock from the two op flops alone, the
        // timeout's `fire` (the 256-way head OR) reaching only the valid, and the ports AND
        // them with it. As `fire ? 5 : ..` the kind's flops took `fire` on their set/reset
        // pins (seed 2 at 006a1d6: pg -> fire -> o_fbk LSR, 10.0 ns, the core's critical path).
        self.o_fbv.d.next = self.s3_fbs.q.val() | self.s3_nfb.q.val() | self.fire.val();
        self.o_fbi.d.next = self.d_ev.q.val();
        self.o_fbk.d.next = bits::<3>(5);
        if self.s3_nfb.q.val() {
            self.o_fbk.d.next = self.s3_nk.q.val();
        }
        if self.s3_fbs.q.val() {
            self.o_fbi.d.next = self.s3_ev.q.val();
            self.o_fbk.d.next = bit_cast::<3, 2>(self.s3_m.q.val());
        }
        self.o_ab.d.next = bits::<32>(0);
        if self.s3_sack.q.val() {
            self.o_ab.d.next = bit_cast::<32, 24>(self.s3_ab.q.val()) << 8;
        }
        if self.fire.val() {
            if self.limit.val() {
                self.err.d.next = true;
            } else {
                self.head_tmo.d.next = self.head_tmo.q.val() + 1;
            }
        }

        // err_psn follows una until the error, so it is una at the edge that sets err without
        // `fire` (a 24-flop enable) on its input; the port shows it only in error.
        if !self.err.q.val() {
            self.r_err_psn.d.next = self.r_una.q.val();
        }

        // ---------------- una advance loop ----------------------------------------------
        self.r_una.d.next = self.r_una.q.val() + bit_cast::<24, 4>(self.pc_q.q.val());
        if self.pc_q.q.val() != 0 {
            self.head_tmo.d.next = bits::<6>(0);
        }
        // lim_q: head_tmo against the limit's next value, cleared with head_tmo when una moves.
        // `fire` is not an input: `limit` is read only when a timeout fires, and no timeout
        // fires the clock after one (its head is marked: s3_kill or its rtx flag hides it;
        // at the limit err stops the QP), so lim_q may miss head_tmo's + 1 for exactly the
        // clock in which nobody reads it. That keeps fire's long route off lim_q.
        self.lim_q.d.next = bit_cast::<7, 6>(self.head_tmo.q.val()) >= self.i_lb.q.val();
        if self.pc_q.q.val() != 0 {
            self.lim_q.d.next = self.i_lb.q.val() == 0;
        }
        // The loop works on `cur`, the acked flags of its abyte as of the previous edge: the
        // 32:1 select from 256 flags is a cycle ahead of the prefix, its own registered step.
        // Both candidates for the next abyte are selected (this one, and the next when this
        // one completes) and `full` only picks. A flag one cycle old only delays una: acks
        // are only set until the loop consumes them, and those it consumed are in `mask`
        // until the abyte completes (and W >= 64 is 8 abytes, so the next one holds none).
        for p in 0..self._nb {
            self.ack_byte[p].next = bits::<8>(0);
            for i in 0..8 {
                self.ack_byte[p].next = self.ack_byte[p]
                    .val()
                    .replace_bit(i, self.ack_f[p * 8 + i].q.val());
            }
        }
        self.abyte.next = bits::<8>(0);
        self.abyte1.next = bits::<8>(0);
        for p in 0..self._nb {
            if self.ptr[p].q.val() {
                self.abyte.next = self.abyte.val() | self.ack_byte[p].val();
            }
        }
        for p in 1..self._nb {
            if self.ptr[p - 1].q.val() {
                self.abyte1.next = self.abyte1.val() | self.ack_byte[p].val();
            }
        }
        // The last abyte's successor wraps to byte 0.
        for p in self._nb_last..self._nb {
            if self.ptr[p].q.val() {
                self.abyte1.next = self.abyte1.val() | self.ack_byte[0].val();
            }
        }
        self.mm.next = self.cur.q.val() | self.mask.q.val();
        self.run.next = true;
        self.pp.next = bits::<8>(0);
        for i in 0..8 {
            self.run.next = self.run.val() & self.mm.val().get_bit(i);
            self.pp.next = self.pp.val().replace_bit(i, self.run.val());
        }
        self.full.next = self.pp.val() == 0xFF;
        self.clr_q.d.next = self.pp.val() & !self.mask.q.val();
        // popcount(clr) registered beside clr: pp and mask are both thermometers from bit 0
        // (mask within pp), so it is count(pp) - count(mask), count(mask) kept in a flop.
        // Taken from clr_q at the next edge it sat in front of una's adder and `psn - una`.
        // (count of a thermometer as sums of products: its 1 -> 0 edge, encoded)
        self.ppc.next = bits::<4>(0)
            .replace_bit(3, self.pp.val().get_bit(7))
            .replace_bit(2, self.pp.val().get_bit(3) & !self.pp.val().get_bit(7))
            .replace_bit(
                1,
                (self.pp.val().get_bit(1) & !self.pp.val().get_bit(3))
                    | (self.pp.val().get_bit(5) & !self.pp.val().get_bit(7)),
            )
            .replace_bit(
                0,
                (self.pp.val().get_bit(0) & !self.pp.val().get_bit(1))
                    | (self.pp.val().get_bit(2) & !self.pp.val().get_bit(3))
                    | (self.pp.val().get_bit(4) & !self.pp.val().get_bit(5))
                    | (self.pp.val().get_bit(6) & !self.pp.val().get_bit(7)),
            );
        self.pc_q.d.next = self.ppc.val() - self.mcnt.q.val();
        if self.full.val() {
            self.mask.d.next = bits::<8>(0);
            self.mcnt.d.next = bits::<4>(0);
            self.cur.d.next = self.abyte1.val();
        } else {
            self.mask.d.next = self.pp.val();
            self.mcnt.d.next = self.ppc.val();
            self.cur.d.next = self.abyte.val();
        }
        for p in 0..self._nb {
            self.ptr[p].clock.next = self.clock.val();
            self.cptr_q[p].clock.next = self.clock.val();
            self.cptr_q[p].d.next = self.ptr[p].q.val();
        }
        for p in 1..self._nb {
            if self.full.val() {
                self.ptr[p].d.next = self.ptr[p - 1].q.val();
            } else {
                self.ptr[p].d.next = self.ptr[p].q.val();
            }
        }
        for p in self._nb_last..self._nb {
            if self.full.val() {
                self.ptr[0].d.next = self.ptr[p].q.val();
            } else {
                self.ptr[0].d.next = self.ptr[0].q.val();
            }
        }

        // ---------------- per-slot flags: SACK apply, timeout, S1 op, clear, reset ------
        for p in 0..self._nb {
            // This group's copies of the scalar controls (ctl_rep), so the S1 op's decision
            // is formed here from flops beside the group, not on one net to all 256 slots.
            self.l_cg.next = self.ctl_rep[p / 2].q.val();
            self.g_sack.next = self.l_cg.val().get_bit(0);
            self.g_snew0.next = self.l_cg.val().get_bit(2)
                & !self.l_cg.val().get_bit(4)
                & self.l_cg.val().get_bit(5)
                & self.l_cg.val().get_bit(7);
            self.g_snew1.next = self.l_cg.val().get_bit(2)
                & !self.l_cg.val().get_bit(4)
                & self.l_cg.val().get_bit(6)
                & self.l_cg.val().get_bit(8);
            self.g_sr0.next = self.l_cg.val().get_bit(2)
                & !self.l_cg.val().get_bit(4)
                & !self.g_snew0.val()
                & self.in_win.val();
            self.g_sr1.next = self.l_cg.val().get_bit(2)
                & !self.l_cg.val().get_bit(4)
                & !self.g_snew1.val()
                & self.in_win.val();
            self.g_nk.next = self.q_ghit[p / 2].q.val()
                & self.l_cg.val().get_bit(3)
                & !self.l_cg.val().get_bit(4)
                & self.in_win.val();
            for i in 0..8 {
                self.out_f[p * 8 + i].clock.next = self.clock.val();
                self.ack_f[p * 8 + i].clock.next = self.clock.val();
                self.rtx_f[p * 8 + i].clock.next = self.clock.val();
                self.hole_f[p * 8 + i].clock.next = self.clock.val();
                self.no.next = self.out_f[p * 8 + i].q.val();
                self.na.next = self.ack_f[p * 8 + i].q.val();
                self.nr.next = self.rtx_f[p * 8 + i].q.val();
                self.nh.next = self.hole_f[p * 8 + i].q.val();
                if self.g_sack.val() {
                    if self.s3_ackm[p * 8 + i].q.val() & self.out_f[p * 8 + i].q.val() {
                        self.na.next = true;
                    }
                    if self.s3_holem[p * 8 + i].q.val()
                        & self.out_f[p * 8 + i].q.val()
                        & !self.ack_f[p * 8 + i].q.val()
                        & !self.s3_ackm[p * 8 + i].q.val()
                        & !self.hole_f[p * 8 + i].q.val()
                    {
                        self.nr.next = true;
                        self.nh.next = true;
                    }
                }
                // No `!limit` here: at the limit the QP errors at this edge, and a marked head
                // is then invisible (every op refused, nothing offered, reset clears it); it
                // keeps `limit` off this 256-sink net.
                if self.s3_geq[p / 2].q.val()
                    & self.s3_ljeq[(p % 2) * 8 + i].q.val()
                    & self.s3_tok.q.val()
                    & self.out_f[p * 8 + i].q.val()
                    & !self.ack_f[p * 8 + i].q.val()
                    & !self.rtx_f[p * 8 + i].q.val()
                {
                    self.nr.next = true;
                }
                // The S1 op's SEND decisions, formed per group from its copies and qualified
                // by "the op's slot is in this group"; the copy of sn_q selects.
                if self.l_cg.val().get_bit(1) {
                    self.gnew.next = self.q_ghit[p / 2].q.val() & self.g_snew1.val();
                    self.gsr.next = self.q_ghit[p / 2].q.val() & self.g_sr1.val();
                } else {
                    self.gnew.next = self.q_ghit[p / 2].q.val() & self.g_snew0.val();
                    self.gsr.next = self.q_ghit[p / 2].q.val() & self.g_sr0.val();
                }
                // (gnew, gsr and g_nk are qualified by the group, q_ghit)
                if self.q_j[(p % 2) * 8 + i].q.val() {
                    if self.gnew.val() {
                        self.no.next = true;
                        self.na.next = false;
                        self.nr.next = false;
                        self.nh.next = false;
                    }
                    if self.gsr.val()
                        & self.out_f[p * 8 + i].q.val()
                        & !self.ack_f[p * 8 + i].q.val()
                        & self.rtx_f[p * 8 + i].q.val()
                    {
                        self.nr.next = false;
                    }
                    if self.g_nk.val()
                        & self.out_f[p * 8 + i].q.val()
                        & !self.ack_f[p * 8 + i].q.val()
                    {
                        self.nr.next = true;
                    }
                }
                if self.cptr_q[p].q.val() & self.clr_q.q.val().get_bit(i) {
                    self.no.next = false;
                    self.na.next = false;
                    self.nr.next = false;
                    self.nh.next = false;
                }
                if self.rst.val() {
                    self.no.next = false;
                    self.na.next = false;
                    self.nr.next = false;
                    self.nh.next = false;
                }
                self.out_f[p * 8 + i].d.next = self.no.val();
                self.ack_f[p * 8 + i].d.next = self.na.val();
                self.rtx_f[p * 8 + i].d.next = self.nr.val();
                self.hole_f[p * 8 + i].d.next = self.nh.val();
            }
        }

        // ---------------- retransmit pick: per 16-slot group, groups, validate ----------
        for g in 0..self._groups {
            self.gh_any[g].clock.next = self.clock.val();
            self.gh_first[g].clock.next = self.clock.val();
            self.ga_any[g].clock.next = self.clock.val();
            self.ga_first[g].clock.next = self.clock.val();
            self.t_any.next = false;
            self.t_first.next = bits::<4>(0);
            self.t_any2.next = false;
            self.t_first2.next = bits::<4>(0);
            // descending, so the last assignment is the lowest candidate
            for j in 0..16 {
                self.cand.next = self.rtx_f[g * 16 + 15 - j].q.val()
                    & self.out_f[g * 16 + 15 - j].q.val()
                    & !self.ack_f[g * 16 + 15 - j].q.val();
                if self.cand.val() & self.s2_lge[15 - j].q.val() {
                    self.t_any.next = true;
                    self.t_first.next = self.nibble[15 - j].val();
                }
                if self.cand.val() {
                    self.t_any2.next = true;
                    self.t_first2.next = self.nibble[15 - j].val();
                }
            }
            // At or after una: the whole group when una's slot is in an earlier group
            // (s2_lgt), the slots at or above its in-group index when in this one (s2_leq),
            // none otherwise; the S1 decode of una % W, no per-slot compare.
            if self.s2_lgt[g].q.val() {
                self.gh_any[g].d.next = self.t_any2.val();
                self.gh_first[g].d.next = self.t_first2.val();
            } else if self.s2_leq[g].q.val() {
                self.gh_any[g].d.next = self.t_any.val();
                self.gh_first[g].d.next = self.t_first.val();
            } else {
                self.gh_any[g].d.next = false;
                self.gh_first[g].d.next = bits::<4>(0);
            }
            self.ga_any[g].d.next = self.t_any2.val();
            self.ga_first[g].d.next = self.t_first2.val();
            if self.rst.val() {
                self.gh_any[g].d.next = false;
                self.gh_first[g].d.next = bits::<4>(0);
                self.ga_any[g].d.next = false;
                self.ga_first[g].d.next = bits::<4>(0);
            }
        }
        // P1b: per four groups (a quad), the first group with a candidate at or after una
        // (bh_*) and the first with any (ba_*): its index in the quad (binary and one-hot)
        // and its first slot, so P2 picks over G/4 quads, not G groups.
        for k in 0..self._quads {
            self.bh_any[k].clock.next = self.clock.val();
            self.bh_gi[k].clock.next = self.clock.val();
            self.bh_m[k].clock.next = self.clock.val();
            self.bh_f[k].clock.next = self.clock.val();
            self.ba_any[k].clock.next = self.clock.val();
            self.ba_gi[k].clock.next = self.clock.val();
            self.ba_m[k].clock.next = self.clock.val();
            self.ba_f[k].clock.next = self.clock.val();
            self.ph.next = false;
            self.pa.next = false;
            self.qm_h.next = bits::<4>(0);
            self.qm_a.next = bits::<4>(0);
            self.qi_h.next = bits::<2>(0);
            self.qi_a.next = bits::<2>(0);
            self.qf_h.next = bits::<4>(0);
            self.qf_a.next = bits::<4>(0);
            for m in 0..4 {
                self.hh.next = self.gh_any[k * 4 + m].q.val() & !self.ph.val();
                self.ha.next = self.ga_any[k * 4 + m].q.val() & !self.pa.val();
                self.f4.next = bits::<4>(0);
                self.f4b.next = bits::<4>(0);
                self.i2h.next = bits::<2>(0);
                self.i2a.next = bits::<2>(0);
                if self.hh.val() {
                    self.f4.next = self.gh_first[k * 4 + m].q.val();
                    self.i2h.next = self.m2[m].val();
                }
                if self.ha.val() {
                    self.f4b.next = self.ga_first[k * 4 + m].q.val();
                    self.i2a.next = self.m2[m].val();
                }
                // (ORed outside the ifs: an accumulation inside one is a mux chain)
                self.qf_h.next = self.qf_h.val() | self.f4.val();
                self.qf_a.next = self.qf_a.val() | self.f4b.val();
                self.qi_h.next = self.qi_h.val() | self.i2h.val();
                self.qi_a.next = self.qi_a.val() | self.i2a.val();
                self.qm_h.next = self.qm_h.val().replace_bit(m, self.hh.val());
                self.qm_a.next = self.qm_a.val().replace_bit(m, self.ha.val());
                self.ph.next = self.ph.val() | self.gh_any[k * 4 + m].q.val();
                self.pa.next = self.pa.val() | self.ga_any[k * 4 + m].q.val();
            }
            self.bh_any[k].d.next = self.ph.val();
            self.ba_any[k].d.next = self.pa.val();
            self.bh_m[k].d.next = self.qm_h.val();
            self.ba_m[k].d.next = self.qm_a.val();
            self.bh_gi[k].d.next = self.qi_h.val();
            self.ba_gi[k].d.next = self.qi_a.val();
            self.bh_f[k].d.next = self.qf_h.val();
            self.ba_f[k].d.next = self.qf_a.val();
            if self.rst.val() {
                self.bh_any[k].d.next = false;
                self.ba_any[k].d.next = false;
                self.bh_m[k].d.next = bits::<4>(0);
                self.ba_m[k].d.next = bits::<4>(0);
                self.bh_gi[k].d.next = bits::<2>(0);
                self.ba_gi[k].d.next = bits::<2>(0);
                self.bh_f[k].d.next = bits::<4>(0);
                self.ba_f[k].d.next = bits::<4>(0);
            }
        }
        // P2 picks the first quad with a candidate at or after una (bh_*), else the first
        // with any (ba_*). Written as a one-hot and AND-OR, not as "last assignment wins":
        // a quad is hot when it has a candidate and no earlier quad does (the prefix OR
        // ph / pa), and the slot is the OR of the hot quad's base, group and first index, so
        // synthesis sees a balanced OR, not a mux chain as deep as there are quads.
        self.fh.next = false;
        self.fa2.next = false;
        for k in 0..self._quads {
            self.fh.next = self.fh.val() | self.bh_any[k].q.val();
            self.fa2.next = self.fa2.val() | self.ba_any[k].q.val();
        }
        self.ph.next = false;
        self.pa.next = false;
        self.sel_h.next = bits::<10>(0);
        self.sel_a.next = bits::<10>(0);
        for k in 0..self._quads {
            self.hh.next = self.bh_any[k].q.val() & !self.ph.val();
            self.ha.next = self.ba_any[k].q.val() & !self.pa.val();
            self.sx_h.next = bits::<10>(0);
            self.sx_a.next = bits::<10>(0);
            // (bit_cast cannot take an indexed field: through locals)
            self.i2h.next = self.bh_gi[k].q.val();
            self.i2a.next = self.ba_gi[k].q.val();
            self.f4.next = self.bh_f[k].q.val();
            self.f4b.next = self.ba_f[k].q.val();
            if self.hh.val() {
                self.sx_h.next = self.qbase[k].val()
                    | (bit_cast::<10, 2>(self.i2h.val()) << 4)
                    | bit_cast::<10, 4>(self.f4.val());
            }
            if self.ha.val() {
                self.sx_a.next = self.qbase[k].val()
                    | (bit_cast::<10, 2>(self.i2a.val()) << 4)
                    | bit_cast::<10, 4>(self.f4b.val());
            }
            self.sel_h.next = self.sel_h.val() | self.sx_h.val();
            self.sel_a.next = self.sel_a.val() | self.sx_a.val();
            // P2's group, registered one-hot, so the re-validation is an AND-OR over the
            // flags, not a compare per slot.
            for m in 0..4 {
                self.p2_g[k * 4 + m].clock.next = self.clock.val();
                self.p2_g[k * 4 + m].d.next = (self.hh.val() & self.bh_m[k].q.val().get_bit(m))
                    | (self.ha.val() & !self.fh.val() & self.ba_m[k].q.val().get_bit(m));
            }
            self.ph.next = self.ph.val() | self.bh_any[k].q.val();
            self.pa.next = self.pa.val() | self.ba_any[k].q.val();
        }
        self.p2_valid.d.next = self.fh.val() | self.fa2.val();
        if self.fh.val() {
            self.p2_slot.d.next = self.sel_h.val();
        } else {
            self.p2_slot.d.next = self.sel_a.val();
        }
        // and its in-group index one-hot, decoded from the 4 bits just formed
        for j in 0..16 {
            self.p2_n[j].clock.next = self.clock.val();
            self.p2_n[j].d.next = (self.p2_slot.d.val() & 15) == self.kc[j].val();
        }
        // P3a, per group beside its flags: the pick's slot is still a candidate, less an
        // ack this edge's SACK apply sets (ctl_rep bit 0 is s3_sack). P3b ORs the groups'
        // flops, so neither stage has both the broadcast of P2's one-hots to every group
        // and the gather from them.
        self.p3_valid.d.next = self.p2_valid.q.val();
        self.p3_slot.d.next = self.p2_slot.q.val();
        for g in 0..self._groups {
            self.p3c_g[g].clock.next = self.clock.val();
            self.cvg.next = false;
            for j in 0..16 {
                self.cvg.next = self.cvg.val()
                    | (self.p2_n[j].q.val()
                        & self.rtx_f[g * 16 + j].q.val()
                        & self.out_f[g * 16 + j].q.val()
                        & !self.ack_f[g * 16 + j].q.val()
                        & !(self.ctl_rep[g].q.val().get_bit(0) & self.s3_ackm[g * 16 + j].q.val()));
            }
            self.p3c_g[g].d.next = self.p2_g[g].q.val() & self.cvg.val() & !self.rst.val();
        }
        self.cv.next = false;
        for g in 0..self._groups {
            self.cv.next = self.cv.val() | self.p3c_g[g].q.val();
        }
        self.o_rv.d.next = self.p3_valid.q.val() & self.cv.val() & !self.err.q.val();
        // The PSN follows P3's pick; the re-validation (cv) gates rtx_valid alone, not the
        // clear of these 24 flops (rtx_psn is read with rtx_valid).
        self.o_rpsn.d.next = bits::<24>(0);
        if self.p3_valid.q.val() & !self.err.q.val() {
            self.o_rpsn.d.next = self.r_una.q.val()
                + bit_cast::<24, 10>((self.p3_slot.q.val() - self.una_slot.val()) & self.wm.val());
        }

        // ---------------- committed state, counters, outputs ------------------------------
        self.nxt1.next = self.r_nxt.q.val() + 1;
        self.una_d1.d.next = self.r_una.q.val();
        // una_d1' is this una, so dnu' = nxt' - una: both of nxt' formed, send_new selects.
        if self.send_new.val() {
            self.r_nxt.d.next = self.nxt1.val();
            self.dnu.d.next = self.nxt1.val() - self.r_una.q.val();
        } else {
            self.dnu.d.next = self.r_nxt.q.val() - self.r_una.q.val();
        }
        self.win0.d.next = self.dnu.q.val() < self.wc.val();
        // nxt + 1 - una < W as dnu < W - 1 (or dnu + 1 wrapping to 0): one subtract, and
        // win1's copies in ctl_rep are not behind a second carry chain.
        self.win1.d.next =
            (self.dnu.q.val() < self.wc_m1.val()) | (self.dnu.q.val() == self.k_ones.val());
        self.sn_q.d.next = self.send_new.val();
        self.una_d2.d.next = self.una_d1.q.val();
        if self.is_tick.val() {
            self.now.d.next = self.now.q.val() + 1;
            self.now1.d.next = self.now1.q.val() + 1;
        }
        self.s2_rb.d.next = self.q_rb.q.val();
        self.l_last_rb.next = self.last_rb.q.val();
        if self.s2_sack.q.val() {
            self.l_last_rb.next = self.s2_rb.q.val();
        }
        self.last_rb.d.next = self.l_last_rb.val();
        self.o_cs.d.next = !self.err.q.val() & self.win_ok.val();
        self.o_ap.d.next = self.pc_q.q.val();
        // counters: each counts last clock's event (c_ev), the +1 formed from the flop alone
        self.c_ev.d.next = bits::<7>(0);
        self.c_ev.d.next = self.c_ev.d.val().replace_bit(0, self.send_new.val());
        self.c_ev.d.next = self.c_ev.d.val().replace_bit(1, self.send_rtx.val());
        self.c_ev.d.next = self.c_ev.d.val().replace_bit(2, self.fire.val());
        self.c_ev.d.next = self.c_ev.d.val().replace_bit(
            3,
            self.is_send.val() & !self.send_new.val() & !self.rtx_ok.val(),
        );
        self.c_ev.d.next = self.c_ev.d.val().replace_bit(4, self.stale.val());
        self.c_ev.d.next = self.c_ev.d.val().replace_bit(
            5,
            self.is_sack.val() & !self.sack_good.val() & !self.stale.val(),
        );
        self.c_ev.d.next = self
            .c_ev
            .d
            .val()
            .replace_bit(6, self.is_nack.val() & !self.nack_ok.val());
        if self.c_ev.q.val().get_bit(0) {
            self.c_new_sends.d.next = self.c_new_sends.q.val() + 1;
        }
        if self.c_ev.q.val().get_bit(1) {
            self.c_retransmits.d.next = self.c_retransmits.q.val() + 1;
        }
        if self.c_ev.q.val().get_bit(2) {
            self.c_timeouts.d.next = self.c_timeouts.q.val() + 1;
        }
        if self.c_ev.q.val().get_bit(3) {
            self.c_bad_send.d.next = self.c_bad_send.q.val() + 1;
        }
        if self.c_ev.q.val().get_bit(4) {
            self.c_stale_sack.d.next = self.c_stale_sack.q.val() + 1;
        }
        if self.c_ev.q.val().get_bit(5) {
            self.c_bad_sack.d.next = self.c_bad_sack.q.val() + 1;
        }
        if self.c_ev.q.val().get_bit(6) {
            self.c_bad_nack.d.next = self.c_bad_nack.q.val() + 1;
        }

        // S1 -> S2
        self.s2_sack.d.next = self.sack_good.val();
        // Mask bounds (see S2). The ends need no una: (una % W + cack + 1 - una) % W is
        // (cack + 1) % W, and the hole end (una % W + rb) % W is (hx + msb) % W (hc if no bitmap);
        // so they are decoded from S0 flops beside the S1 checks. Lengths as before (11 bits).
        self.s2_fc.d.next =
            bit_cast::<12, 11>(bit_cast::<11, 24>(self.ca.val())) >= self.wc12.val();
        self.s2_hne.d.next = self.hne.val();
        self.hc10.next = bit_cast::<10, 24>(self.q_c1.q.val()) & self.wm.val();
        self.hh10.next = self.q_hh.q.val();
        self.s2_wc.d.next = self.hc10.val() < self.una_slot.val();
        self.s2_wh.d.next = self.hh10.val() < self.una_slot.val();
        // (gt: an earlier group matched; ge: an in-group index at or below this one did)
        self.drun.next = false;
        for g in 0..self._groups {
            self.s2_lgt[g].clock.next = self.clock.val();
            self.s2_leq[g].clock.next = self.clock.val();
            self.deq.next = (self.una_slot.val() >> 4) == self.kc[g].val();
            self.s2_lgt[g].d.next = self.drun.val();
            self.s2_leq[g].d.next = self.deq.val();
            self.drun.next = self.drun.val() | self.deq.val();
        }
        self.drun.next = false;
        for j in 0..16 {
            self.s2_lge[j].clock.next = self.clock.val();
            self.s2_ljeq[j].clock.next = self.clock.val();
            self.deq.next = (self.una_slot.val() & 15) == self.kc[j].val();
            self.drun.next = self.drun.val() | self.deq.val();
            self.s2_lge[j].d.next = self.drun.val();
            self.s2_ljeq[j].d.next = self.deq.val();
        }
        self.drun.next = false;
        for g in 0..self._groups {
            self.s2_cgt[g].clock.next = self.clock.val();
            self.s2_ceq[g].clock.next = self.clock.val();
            self.deq.next = (self.hc10.val() >> 4) == self.kc[g].val();
            self.s2_cgt[g].d.next = self.drun.val();
            self.s2_ceq[g].d.next = self.deq.val();
            self.drun.next = self.drun.val() | self.deq.val();
        }
        self.drun.next = false;
        for j in 0..16 {
            self.s2_cge[j].clock.next = self.clock.val();
            self.drun.next = self.drun.val() | ((self.hc10.val() & 15) == self.kc[j].val());
            self.s2_cge[j].d.next = self.drun.val();
        }
        self.drun.next = false;
        for g in 0..self._groups {
            self.s2_hgt[g].clock.next = self.clock.val();
            self.s2_heq[g].clock.next = self.clock.val();
            self.deq.next = (self.hh10.val() >> 4) == self.kc[g].val();
            self.s2_hgt[g].d.next = self.drun.val();
            self.s2_heq[g].d.next = self.deq.val();
            self.drun.next = self.drun.val() | self.deq.val();
        }
        self.drun.next = false;
        for j in 0..16 {
            self.s2_hge[j].clock.next = self.clock.val();
            self.drun.next = self.drun.val() | ((self.hh10.val() & 15) == self.kc[j].val());
            self.s2_hge[j].d.next = self.drun.val();
        }
        for x in 0..self._nb9 {
            self.s2_bext[x].clock.next = self.clock.val();
            self.s2_bext[x].d.next = (self.bs.val() >> 3) == self.bbc[x].val();
        }
        // The bit shift by base % 8 is done here, on S1's flops, so S2 only places bytes.
        self.s2_bm.d.next =
            bit_cast::<72, 64>(self.q_bm.q.val()) << bit_cast::<3, 10>(self.bs.val());
        self.s2_ev.d.next = self.q_ev.q.val();
        self.s2_m.d.next = self.q_m.q.val();
        self.s2_ab.d.next = self.q_rb.q.val() - self.l_last_rb.val();
        self.s2_nfb.d.next =
            self.nack_ok.val() & ((self.q_reason.q.val() == 1) | (self.q_reason.q.val() == 2));
        if self.q_reason.q.val() == 1 {
            self.s2_nk.d.next = bits::<3>(3);
        } else {
            self.s2_nk.d.next = bits::<3>(4);
        }
        self.s2_tick.d.next = self.is_tick.val() & !self.err.q.val();
        self.s2_us.d.next = self.clr_q.q.val() == 0;
        self.s2_slot.d.next = self.una_slot.val();

        // S0: the EV RAM read for the op's S1 (TICK: the head, at una as S1 will see it,
        // una + pc_q; otherwise psn % W), and the two writes it cannot see (see S1).
        if self.i_op.q.val() == 4 {
            self.raddr.next = (self.una_ra_rep.q.val() + bit_cast::<10, 4>(self.pc_ra_rep.q.val()))
                & self.wm.val();
        } else {
            self.raddr.next = bit_cast::<10, 24>(self.i_psn.q.val()) & self.wm.val();
        }
        self.ram.read_address.next = self.raddr.val();
        self.bya.d.next = self.w_en.q.val() & (self.w_addr.q.val() == self.raddr.val());
        self.bya_ev.d.next = self.w_ev.q.val();
        self.bya_dl.d.next = self.dl.val();
        self.mb.d.next = self.slot.val() == self.raddr.val();

        // S0: register the op and the config ports
        self.q_op.d.next = self.i_op.q.val();
        self.q_psn.d.next = self.i_psn.q.val();
        self.q_ev.d.next = self.i_ev.q.val();
        self.q_off.d.next = self.i_off.q.val();
        self.q_bm.d.next = self.i_bm.q.val();
        // msb(bitmap) = 8 x (highest non-zero byte) + (its highest set bit), both as sums of
        // products over mutually exclusive terms: the priority-if form synthesised to a
        // 12-deep mux chain, the critical path of the module.
        self.nzv.next = bits::<8>(0);
        for j in 0..8 {
            self.tb.next = false;
            for i in 0..8 {
                self.tb.next = self.tb.val() | self.bitmap.val().get_bit(j * 8 + i);
            }
            self.nzv.next = self.nzv.val().replace_bit(j, self.tb.val());
        }
        self.t6.next = bits::<6>(0);
        for j in 0..8 {
            self.by8.next = bits::<8>(0);
            for i in 0..8 {
                self.by8.next = self
                    .by8
                    .val()
                    .replace_bit(i, self.bitmap.val().get_bit(j * 8 + i));
            }
            self.t3.next = bits::<3>(0);
            if self.by8.val().get_bit(7)
                | self.by8.val().get_bit(6)
                | self.by8.val().get_bit(5)
                | self.by8.val().get_bit(4)
            {
                self.t3.next = self.t3.val() | bits::<3>(4);
            }
            if self.by8.val().get_bit(7)
                | self.by8.val().get_bit(6)
                | (!self.by8.val().get_bit(5)
                    & !self.by8.val().get_bit(4)
                    & (self.by8.val().get_bit(3) | self.by8.val().get_bit(2)))
            {
                self.t3.next = self.t3.val() | bits::<3>(2);
            }
            if self.by8.val().get_bit(7)
                | (!self.by8.val().get_bit(6) & self.by8.val().get_bit(5))
                | (!self.by8.val().get_bit(6)
                    & !self.by8.val().get_bit(4)
                    & self.by8.val().get_bit(3))
                | (!self.by8.val().get_bit(6)
                    & !self.by8.val().get_bit(4)
                    & !self.by8.val().get_bit(2)
                    & self.by8.val().get_bit(1))
            {
                self.t3.next = self.t3.val() | bits::<3>(1);
            }
            // this byte is the highest non-zero one
            self.tb.next =
                self.nzv.val().get_bit(j) & ((self.nzv.val() & self.above8[j].val()) == 0);
            if self.tb.val() {
                self.t6.next = self.t6.val() | self.c6[j].val() | bit_cast::<6, 3>(self.t3.val());
            }
        }
        self.i_t6.d.next = self.t6.val();
        self.i_bmnz.d.next = self.bitmap.val() != 0;
        self.q_bmnz.d.next = self.i_bmnz.q.val();
        // una-independent SACK sums (mod 2^18 where 18 bits suffice)
        self.i_c1.d.next = self.cack.val() + 1;
        self.q_c1.d.next = self.i_c1.q.val();
        // una as S1 will see it: this edge adds popcount(clr_q). Every S1 quantity relative
        // to una is subtracted here, so S1's checks start from flops (after a reset S1 holds
        // no op, so a stale una_nx is never used).
        self.una_nx.next = self.r_una.q.val() + bit_cast::<24, 4>(self.pc_q.q.val());
        self.ca_nx.next = self.i_c1.q.val() - self.una_nx.val();
        self.q_ca.d.next = self.ca_nx.val();
        self.q_no0.d.next = self.r_nxt.q.val() - self.una_nx.val();
        self.q_no1.d.next = self.nxt1.val() - self.una_nx.val();
        self.ixs.next = self.cack.val() + bit_cast::<24, 16>(self.offset.val());
        self.i_xs.d.next = self.ixs.val();
        self.xs24.next = self.i_xs.q.val();
        self.q_x.d.next = bit_cast::<18, 24>(self.xs24.val());
        self.q_room0.d.next = self.r_nxt.q.val() - self.xs24.val();
        self.q_room1.d.next = self.nxt1.val() - self.xs24.val();
        self.q_t6.d.next = self.i_t6.q.val();
        // The hole end less the msb: highest SACKed + 1 - (threshold + 1) is
        // cack + offset + msb - threshold (bitmap) or cack - threshold (none); S1 adds the
        // msb. Against una as S1 sees it for the length (xb, cb), mod W for the end (hx, hc).
        self.i_hx.d.next =
            bit_cast::<18, 24>(self.ixs.val()) - bit_cast::<18, 10>(self.rtx_ooo_threshold.val());
        self.i_hc.d.next =
            bit_cast::<18, 24>(self.cack.val()) - bit_cast::<18, 10>(self.rtx_ooo_threshold.val());
        self.hx.next = self.i_hx.q.val();
        self.hc.next = self.i_hc.q.val();
        // The hole end mod W, for S1's decode (the msb was found at the I stage).
        if self.i_bmnz.q.val() {
            self.q_hh.d.next = (bit_cast::<10, 18>(self.hx.val())
                + bit_cast::<10, 6>(self.i_t6.q.val()))
                & self.wm.val();
        } else {
            self.q_hh.d.next = bit_cast::<10, 18>(self.hc.val()) & self.wm.val();
        }
        self.q_xb.d.next = self.hx.val() - bit_cast::<18, 24>(self.una_nx.val());
        self.q_cb.d.next = self.hc.val() - bit_cast::<18, 24>(self.una_nx.val());
        self.q_m.d.next = self.i_m.q.val();
        self.q_rb.d.next = self.i_rb.q.val();
        self.q_reason.d.next = self.i_reason.q.val();
        // linear + backoff retries, summed here so the limit check is one compare
        self.i_lb.d.next = bit_cast::<7, 3>(self.rto_linear_retries.val())
            + bit_cast::<7, 5>(self.rto_backoff_retries.val());
        // The RTO exponents (see S1): e + max(head_tmo - linear, 0) capped at 30, for this
        // head_tmo and for one more; una moving (pc_q) clears head_tmo at this edge and
        // takes precedence; a timeout at the limit errors the QP instead, and S1 then
        // refuses every op, so `fire` alone picks the increment.
        // exp + head_tmo - linear (+ 1) as carry-save sums with one carry chain each, the
        // "head_tmo > linear" (>=) compares beside them, the cap at 30 as a bit test: no
        // chain waits for another.
        self.e8a.next = bit_cast::<8, 5>(self.i_exp.q.val());
        self.e8b.next = bit_cast::<8, 6>(self.head_tmo.q.val());
        self.e8l.next = !bit_cast::<8, 3>(self.i_lin.q.val());
        self.e8s.next = self.e8a.val() ^ self.e8b.val() ^ self.e8l.val();
        self.e8c.next = ((self.e8a.val() & self.e8b.val())
            | (self.e8a.val() & self.e8l.val())
            | (self.e8b.val() & self.e8l.val()))
            << 1;
        self.e7.next = self.e8s.val() + (self.e8c.val() | bits::<8>(1));
        self.e8s2.next = self.e8s.val() ^ self.e8c.val() ^ bits::<8>(2);
        self.e8c2.next = ((self.e8s.val() & self.e8c.val())
            | (self.e8s.val() & bits::<8>(2))
            | (self.e8c.val() & bits::<8>(2)))
            << 1;
        self.e7_i.next = self.e8s2.val() + self.e8c2.val();
        if self.head_tmo.q.val() <= bit_cast::<6, 3>(self.i_lin.q.val()) {
            self.e7.next = self.e8a.val();
        }
        if self.head_tmo.q.val() < bit_cast::<6, 3>(self.i_lin.q.val()) {
            self.e7_i.next = self.e8a.val();
        }
        self.q_ek.d.next = bit_cast::<5, 8>(self.e7.val());
        if self.e7.val().get_bit(7)
            | self.e7.val().get_bit(6)
            | self.e7.val().get_bit(5)
            | (bit_cast::<5, 8>(self.e7.val()) == 31)
        {
            self.q_ek.d.next = bits::<5>(30);
        }
        self.q_ei.d.next = bit_cast::<5, 8>(self.e7_i.val());
        if self.e7_i.val().get_bit(7)
            | self.e7_i.val().get_bit(6)
            | self.e7_i.val().get_bit(5)
            | (bit_cast::<5, 8>(self.e7_i.val()) == 31)
        {
            self.q_ei.d.next = bits::<5>(30);
        }
        self.q_e0.d.next = self.i_exp.q.val();
        if self.i_exp.q.val() > 30 {
            self.q_e0.d.next = bits::<5>(30);
        }
        self.q_hz.d.next = self.pc_q.q.val() != 0;
        self.q_hi.d.next = self.fire.val();
        self.q_thr.d.next = self.i_thr.q.val();
        self.q_eq0.d.next = self.i_psn.q.val() == self.r_nxt.q.val();
        // psn == nxt + 1 as psn - 1 == nxt (i_pm1, formed as the port is registered): an
        // equality of two flops, with no carry chain in front of q_eq1's group copies.
        self.q_eq1.d.next = self.i_pm1.q.val() == self.r_nxt.q.val();
        // psn - una at S1 (una at S1 is this edge's una + pc_q) from i_rel = psn - una, which
        // the I edge formed against this edge's una (una_nx there): relp = i_rel - pc_q with
        // pc_q <= 8 < 64 <= W, so "in the window" and "the head" are tests of i_rel's bits
        // against pc_q, no carry chain: i_rel in [pc_q, pc_q + W) is i_rel / W == 0 and
        // i_rel >= pc_q, or i_rel / W == 1 and i_rel % W < pc_q. (After a reset at the I edge
        // I holds no op, so the una it used is never wrong for an op.)
        self.rel_lo.next = bit_cast::<4, 24>(self.i_rel.q.val() & 15);
        self.rel_h0.next = (self.i_rel.q.val() >> self.lgw.val()) == 0;
        self.rel_h1.next = (self.i_rel.q.val() >> self.lgw.val()) == 1;
        self.rel_mz.next = ((bit_cast::<10, 24>(self.i_rel.q.val()) & self.wm.val()) >> 4) == 0;
        self.q_inw.d.next = (self.rel_h0.val()
            & (!self.rel_mz.val() | (self.rel_lo.val() >= self.pc_q.q.val())))
            | (self.rel_h1.val() & self.rel_mz.val() & (self.rel_lo.val() < self.pc_q.q.val()));
        self.q_head.d.next =
            self.rel_h0.val() & self.rel_mz.val() & (self.rel_lo.val() == self.pc_q.q.val());
        self.psl.next = bit_cast::<10, 24>(self.i_psn.q.val()) & self.wm.val();
        // I stage: the ports; the op slot as group and in-group one-hots, so S0's slot read
        // and the S1 flag update start from flops, not from a decode of one PSN register.
        self.i_op.d.next = self.op.val();
        if self.rst.val() {
            self.i_op.d.next = bits::<3>(0);
        }
        self.i_psn.d.next = self.psn.val();
        self.i_pm1.d.next = self.psn.val() - self.k_one24.val();
        self.i_rel.d.next = self.psn.val() - self.una_nx.val();
        self.i_ev.d.next = self.ev_idx.val();
        self.i_off.d.next = self.offset.val();
        self.i_bm.d.next = self.bitmap.val();
        self.i_m.d.next = self.m.val();
        self.i_rb.d.next = self.rcvd_bytes.val();
        self.i_reason.d.next = self.reason.val();
        self.i_exp.d.next = self.rto_exp.val();
        self.i_lin.d.next = self.rto_linear_retries.val();
        self.i_thr.d.next = self.rtx_ooo_threshold.val();
        self.ipsl.next = bit_cast::<10, 24>(self.psn.val()) & self.wm.val();
        for g in 0..self._groups {
            self.i_g[g].clock.next = self.clock.val();
            self.i_g[g].d.next = (self.ipsl.val() >> 4) == self.kc[g].val();
            self.q_ghit[g].clock.next = self.clock.val();
            self.q_ghit[g].d.next = self.i_g[g].q.val();
        }
        for j in 0..16 {
            self.i_j[j].clock.next = self.clock.val();
            self.i_j[j].d.next = (self.ipsl.val() & 15) == self.kc[j].val();
            self.q_j[j].clock.next = self.clock.val();
            self.q_j[j].d.next = self.i_j[j].q.val();
        }
        // The S1 slot read, a cycle early: each slot's flags as this edge leaves them, apart
        // from the S1 op's and the timeout's updates (their slot is one compare away, c_*):
        // cleared by the una loop, acked by the SACK apply, or made a hole by it. ORed per
        // 16-slot group, so S1 ORs 16 flops, not 256 slots. The SACK apply's ack is read on
        // its own (p_sa; S1 takes it off both), so s3_ackm, whose flops sit by the flags
        // they set, meets one short OR and not the outstanding / marked terms.
        for g in 0..self._groups {
            self.p_oa[g].clock.next = self.clock.val();
            self.p_rt[g].clock.next = self.clock.val();
            self.p_sa[g].clock.next = self.clock.val();
            self.l_cg.next = self.ctl_rep[g].q.val();
            self.po_t.next = false;
            self.pr_t.next = false;
            self.ps_t.next = false;
            for h in 0..2 {
                for i in 0..8 {
                    self.hot0.next = self.i_j[h * 8 + i].q.val();
                    self.oa_k.next = self.out_f[g * 16 + h * 8 + i].q.val()
                        & !self.ack_f[g * 16 + h * 8 + i].q.val()
                        & !(self.cptr_q[g * 2 + h].q.val() & self.clr_q.q.val().get_bit(i));
                    self.ps_t.next = self.ps_t.val()
                        | (self.hot0.val() & self.s3_ackm[g * 16 + h * 8 + i].q.val());
                    self.po_t.next = self.po_t.val() | (self.hot0.val() & self.oa_k.val());
                    self.pr_t.next = self.pr_t.val()
                        | (self.hot0.val()
                            & self.oa_k.val()
                            & (self.rtx_f[g * 16 + h * 8 + i].q.val()
                                | (self.l_cg.val().get_bit(0)
                                    & self.s3_holem[g * 16 + h * 8 + i].q.val()
                                    & !self.hole_f[g * 16 + h * 8 + i].q.val())));
                }
            }
            self.p_oa[g].d.next = self.i_g[g].q.val() & self.po_t.val() & !self.rst.val();
            self.p_rt[g].d.next = self.i_g[g].q.val() & self.pr_t.val() & !self.rst.val();
            self.p_sa[g].d.next = self.i_g[g].q.val()
                & self.l_cg.val().get_bit(0)
                & self.ps_t.val()
                & !self.rst.val();
        }
        // The S1 op (the previous op) on the same slot overrides: a new SEND leaves it
        // outstanding, unacked, unmarked; a retransmit unmarks it; a NACK marks it, as does a
        // timeout firing on it (the head in S3).
        self.c_new.d.next = self.send_new.val() & self.eq_s1.q.val();
        self.c_rtx.d.next = self.send_rtx.val() & self.eq_s1.q.val();
        // `fire` without `!limit`: at the limit the QP errors at this edge and S1 refuses
        // every op, so the patch is moot; leaving `limit` out keeps these scalar flops off the
        // 256-sink timeout-mark net.
        self.c_mark.d.next =
            (self.nack_ok.val() & self.eq_s1.q.val()) | (self.fire.val() & self.eq_s3.q.val());
        // Their slot equalities for the next clock (see eq_s1), before the reset below
        // re-aims psl.
        self.m_head.d.next = self.psl.val() == self.una_slot.val();
        self.eq_s1.d.next = self.ipsl.val() == self.psl.val();
        self.eq_s3.d.next = self.ipsl.val() == self.s2_slot.q.val();
        self.eq_h3.d.next = self.s2_slot.q.val() == self.una_slot.val();

        // ---------------- synchronous reset -----------------------------------------------
        if self.rst.val() {
            self.q_op.d.next = bits::<3>(0);
            self.r_una.d.next = self.init_psn.val();
            self.r_nxt.d.next = self.init_psn.val();
            self.una_d1.d.next = self.init_psn.val();
            self.una_d2.d.next = self.init_psn.val();
            self.dnu.d.next = bits::<24>(0);
            self.win0.d.next = true;
            self.sn_q.d.next = false;
            self.now.d.next = bits::<32>(0);
            self.now1.d.next = bits::<32>(1);
            self.head_tmo.d.next = bits::<6>(0);
            self.lim_q.d.next = self.i_lb.q.val() == 0;
            self.err.d.next = false;
            self.r_err_psn.d.next = bits::<24>(0);
            self.last_rb.d.next = bits::<24>(0);
            self.psl.next = bit_cast::<10, 24>(self.init_psn.val()) & self.wm.val();
            for p in 0..self._nb {
                self.ptr[p].d.next = (self.psl.val() >> 3) == self.kc[p].val();
            }
            self.mask.d.next = (bits::<8>(1) << bit_cast::<3, 10>(self.psl.val())) - 1;
            self.mcnt.d.next = bit_cast::<4, 10>(self.psl.val() & 7);
            self.cur.d.next = bits::<8>(0);
            self.clr_q.d.next = bits::<8>(0);
            self.pc_q.d.next = bits::<4>(0);
            self.s2_sack.d.next = false;
            self.s2_nfb.d.next = false;
            self.s2_tick.d.next = false;
            self.s3_sack.d.next = false;
            self.s3_nfb.d.next = false;
            self.s3_tok.d.next = false;
            self.s3_fbs.d.next = false;
            self.p2_valid.d.next = false;
            self.p3_valid.d.next = false;
            self.o_cs.d.next = false;
            self.o_ap.d.next = bits::<4>(0);
            self.o_ab.d.next = bits::<32>(0);
            self.o_fbv.d.next = false;
            self.o_rv.d.next = false;
            self.o_rpsn.d.next = bits::<24>(0);
            self.c_new_sends.d.next = bits::<32>(0);
            self.c_retransmits.d.next = bits::<32>(0);
            self.c_timeouts.d.next = bits::<32>(0);
            self.c_bad_send.d.next = bits::<32>(0);
            self.c_stale_sack.d.next = bits::<32>(0);
            self.c_bad_sack.d.next = bits::<32>(0);
            self.c_bad_nack.d.next = bits::<32>(0);
            self.c_ev.d.next = bits::<7>(0);
        }

        // The group copies take what their originals take, reset included, so they are
        // formed after every assignment to those.
        self.l_ctl.next = bits::<9>(0);
        self.l_ctl.next = self.l_ctl.val().replace_bit(0, self.s3_sack.d.val());
        self.l_ctl.next = self.l_ctl.val().replace_bit(1, self.sn_q.d.val());
        self.l_ctl.next = self.l_ctl.val().replace_bit(2, self.q_op.d.val() == 1);
        self.l_ctl.next = self.l_ctl.val().replace_bit(3, self.q_op.d.val() == 3);
        // err's copy lags err by a clock (err.q): err.d ends the timeout path (pg -> fire ->
        // limit), which was critical into these copies. In the one clock where the copy is
        // stale the groups may take an S1 op that S1 refuses; that leaves no trace: in error
        // every reader of the flags is gated by err (offer, timeout, SACK apply, every op), the
        // una loop only consumes acks (a SEND's slot holds none it has not consumed), and only
        // rst leaves the error, clearing every flag. (After rst the first S1 op is two clocks
        // on, when the copy is clear.)
        self.l_ctl.next = self.l_ctl.val().replace_bit(4, self.err.q.val());
        self.l_ctl.next = self.l_ctl.val().replace_bit(5, self.q_eq0.d.val());
        self.l_ctl.next = self.l_ctl.val().replace_bit(6, self.q_eq1.d.val());
        self.l_ctl.next = self.l_ctl.val().replace_bit(7, self.win0.d.val());
        self.l_ctl.next = self.l_ctl.val().replace_bit(8, self.win1.d.val());
        for g in 0..self._groups {
            self.ctl_rep[g].clock.next = self.clock.val();
            self.ctl_rep[g].d.next = self.l_ctl.val();
        }
        // After every write of pc_q's and una's next values, the reset's included.
        self.pc_ra_rep.d.next = self.pc_q.d.val();
        self.una_ra_rep.d.next = self.r_una.d.val().get_bits::<10>(0);

        self.una.next = self.r_una.q.val();
        self.una_adv.next = self.pc_q.q.val();
        self.nxt.next = self.r_nxt.q.val();
        self.can_send.next = self.o_cs.q.val();
        self.acked_pkts.next = self.o_ap.q.val();
        self.acked_bytes.next = self.o_ab.q.val();
        self.fb_valid.next = self.o_fbv.q.val();
        self.fb_idx.next = 0.into();
        self.fb_kind.next = 0.into();
        if self.o_fbv.q.val() {
            self.fb_idx.next = self.o_fbi.q.val();
            self.fb_kind.next = self.o_fbk.q.val();
        }
        self.rtx_valid.next = self.o_rv.q.val();
        self.rtx_psn.next = self.o_rpsn.q.val();
        self.qp_error.next = self.err.q.val();
        self.err_psn.next = bits::<24>(0);
        if self.err.q.val() {
            self.err_psn.next = self.r_err_psn.q.val();
        }
        self.cnt_new_sends.next = self.c_new_sends.q.val();
        self.cnt_retransmits.next = self.c_retransmits.q.val();
        self.cnt_timeouts.next = self.c_timeouts.q.val();
        self.cnt_bad_send.next = self.c_bad_send.q.val();
        self.cnt_stale_sack.next = self.c_stale_sack.q.val();
        self.cnt_bad_sack.next = self.c_bad_sack.q.val();
        self.cnt_bad_nack.next = self.c_bad_nack.q.val();
    }
}
