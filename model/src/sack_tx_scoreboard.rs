//! Golden model of `sack_tx_scoreboard`: the sender's retransmission scoreboard for one QP,
//! cycle- and bit-exact with the RTL (`mrc_hdl::sack_tx_scoreboard`, whose module doc has the
//! pipeline diagram and the stale-una argument).
//!
//! Contract: `step(inputs)` is one rising clock edge and returns the registers after it. Every
//! op's ports are registered first (the I stage; rst drops the op), then the op is registered
//! with what S0 forms from them, checked against the committed `una`/`nxt` and slot flags at S1,
//! and its path feedback leaves at one fixed stage, S3 (the outputs of the step four after the
//! op's). SEND/NACK change the slot flags at the S1 edge; a SACK's masks are built at S2 and
//! applied at the S3 edge; a TICK's head check reads the EV RAM at S1 and acts at S3.
//!
//! Within one edge the slot-flag updates apply in this order (later wins): SACK apply (S3),
//! timeout mark (S3), the S1 op (NACK mark / SEND), the una-advance clear, reset.

use crate::ev_spray_arbiter::FeedbackKind;
use mrc_config::NicConfig;

pub const OP_NOP: u8 = 0;
pub const OP_SEND: u8 = 1;
pub const OP_SACK: u8 = 2;
pub const OP_NACK: u8 = 3;
pub const OP_TICK: u8 = 4;

/// NACK reason codes with path feedback.
pub const NACK_TRIMMED: u8 = 0x01;
pub const NACK_TRIMMED_LASTHOP: u8 = 0x02;
pub const NACK_PSN_OOR_WINDOW: u8 = 0x0B;

pub const PSN_MASK: u32 = 0xFF_FFFF;
/// Largest RTO exponent: deadlines stay within 2^30 ticks of `now`, so the 32-bit serial
/// compare `now - deadline >= 0` is exact.
pub const EXP_CAP: u32 = 30;
/// RAM depth (address width 10 bits, W <= 1024).
pub const RAM_DEPTH: usize = 1024;

/// One cycle of inputs; field names are the RTL port names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxInputs {
    pub rst: bool,
    /// PSN loaded into `una`/`nxt` on reset.
    pub init_psn: u32,
    /// 0 NOP, 1 SEND, 2 SACK, 3 NACK, 4 TICK.
    pub op: u8,
    /// SEND / NACK PSN.
    pub psn: u32,
    /// SEND: the EV index the packet uses; SACK: the EV index the SACK reflects.
    pub ev_idx: u8,
    pub cack: u32,
    /// int16 bitmap base relative to `cack`, as raw bits.
    pub offset: u16,
    pub bitmap: u64,
    pub m: u8,
    pub rcvd_bytes: u32,
    pub reason: u8,
    pub rto_exp: u8,
    pub rto_linear_retries: u8,
    pub rto_backoff_retries: u8,
    pub rtx_ooo_threshold: u16,
}

impl TxInputs {
    /// NOP with the config's timer and threshold values on their ports.
    pub fn idle(cfg: &NicConfig) -> Self {
        TxInputs {
            rto_exp: cfg.rto_exp as u8,
            rto_linear_retries: cfg.rto_linear_retries as u8,
            rto_backoff_retries: cfg.rto_backoff_retries as u8,
            rtx_ooo_threshold: cfg.rtx_ooo_threshold as u16,
            ..Default::default()
        }
    }
}

/// One cycle of outputs; field names are the RTL port names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxOutputs {
    pub una: u32,
    /// What `una` advances by at the next edge (the loop's registered clear count; 0 under
    /// reset), so a parent can form next cycle's `una` from registers.
    pub una_adv: u8,
    pub nxt: u32,
    pub can_send: bool,
    pub acked_pkts: u8,
    pub acked_bytes: u32,
    pub fb_valid: bool,
    pub fb_idx: u8,
    pub fb_kind: u8,
    pub rtx_valid: bool,
    /// The PSN of P3's pick whenever there is one (0 when none, or under `qp_error`);
    /// meaningful only with `rtx_valid`: P3's re-validation against the flags gates
    /// `rtx_valid` alone, so it does not also clear the 24 PSN flops.
    pub rtx_psn: u32,
    pub qp_error: bool,
    pub err_psn: u32,
    pub cnt_new_sends: u32,
    pub cnt_retransmits: u32,
    pub cnt_timeouts: u32,
    pub cnt_bad_send: u32,
    pub cnt_stale_sack: u32,
    pub cnt_bad_sack: u32,
    pub cnt_bad_nack: u32,
}

/// The registered op (stage S0).
#[derive(Debug, Clone, Copy, Default)]
struct Op {
    op: u8,
    psn: u32,
    ev: u8,
    off: u16,
    bm: u64,
    /// bitmap != 0
    bmnz: bool,
    /// una-independent SACK sums formed at S0: cack + 1; (cack + offset), + msb(bitmap),
    /// and the highest SACKed PSN + 1 (bitmap: cack + offset + msb + 1, else cack + 1), mod 2^18
    c1: u32,
    x: u32,
    xm: u32,
    h: u32,
    m: u8,
    rb: u32,
    reason: u8,
}

#[derive(Debug, Clone)]
pub struct SackTxScoreboard {
    w: usize,
    // S0: op and config ports, registered
    q: Op,
    q_exp: u32,
    q_lin: u32,
    q_back: u32,
    q_thr: u32,
    /// threshold + 1
    q_thr1: u32,
    // committed state
    una: u32,
    nxt: u32,
    una_d1: u32,
    una_d2: u32,
    now: u32,
    head_tmo: u32,
    err: bool,
    err_psn: u32,
    last_rb: u32,
    // per slot
    out: Vec<bool>,
    ack: Vec<bool>,
    rtx: Vec<bool>,
    hole: Vec<bool>,
    ram_ev: Vec<u8>,
    ram_dl: Vec<u32>,
    /// RAM read data register (rust-hdl RAM: synchronous, read-old-data).
    rd: (u8, u32),
    /// The I stage: the ports registered (the op cleared by rst); S0 registers from these.
    inp: TxInputs,
    // una advance loop
    ptr: Vec<bool>,
    mask: u8,
    /// The acked flags of the abyte `ptr` names, registered at the previous edge.
    cur: u8,
    clr_q: u8,
    cptr_q: Vec<bool>,
    // S2
    s2_sack: bool,
    s2_lo: usize,
    s2_lc: usize,
    s2_lh: usize,
    s2_bs: usize,
    s2_bm: u64,
    s2_ev: u8,
    s2_m: u8,
    s2_ab: u32,
    s2_nfb: bool,
    s2_nk: u8,
    s2_tick: bool,
    s2_una: u32,
    s2_slot: usize,
    // S3
    s3_sack: bool,
    s3_ackm: Vec<bool>,
    s3_holem: Vec<bool>,
    s3_fbs: bool,
    s3_ev: u8,
    s3_m: u8,
    s3_ab: u32,
    s3_nfb: bool,
    s3_nk: u8,
    s3_tick: bool,
    s3_una: u32,
    s3_slot: usize,
    s3_conf: bool,
    d_ev: u8,
    d_dl: u32,
    // retransmit pick
    ge_q: Vec<bool>,
    p1: Vec<(bool, usize, bool, usize)>,
    /// P1's result a clock later (the RTL's P1b stage, which picks per four groups: the first
    /// group over the four-group picks is the first group over P1's).
    p1b: Vec<(bool, usize, bool, usize)>,
    p2_valid: bool,
    p2_slot: usize,
    /// P3a: P2's pick a clock later, with its slot's candidate flag as this edge leaves it
    /// for a SACK (the RTL's per-group re-validation flops; P3b ORs them).
    p3_valid: bool,
    p3_slot: usize,
    p3_c: bool,
    /// The counters' events of the last step (new send, retransmit, timeout, refused SEND,
    /// stale / bad SACK, bad NACK): each counter counts its event a clock late, so the
    /// event's decision ends at one flop instead of a 32-flop enable.
    cnt_ev: [bool; 7],
    out_regs: TxOutputs,
}

fn first_in_group(v: &[bool], g: usize) -> (bool, usize) {
    match (0..16).find(|&j| v[g * 16 + j]) {
        Some(j) => (true, j),
        None => (false, 0),
    }
}

impl SackTxScoreboard {
    /// Power-on state equals the RTL's initial blocks: every register 0.
    pub fn new(cfg: &NicConfig) -> Self {
        let w = cfg.sack_window_bits as usize;
        let nb = w / 8;
        SackTxScoreboard {
            w,
            q: Op::default(),
            q_exp: 0,
            q_lin: 0,
            q_back: 0,
            q_thr: 0,
            q_thr1: 0,
            una: 0,
            nxt: 0,
            una_d1: 0,
            una_d2: 0,
            now: 0,
            head_tmo: 0,
            err: false,
            err_psn: 0,
            last_rb: 0,
            out: vec![false; w],
            ack: vec![false; w],
            rtx: vec![false; w],
            hole: vec![false; w],
            ram_ev: vec![0; RAM_DEPTH],
            ram_dl: vec![0; RAM_DEPTH],
            rd: (0, 0),
            ptr: vec![false; nb],
            inp: TxInputs::default(),
            mask: 0,
            cur: 0,
            clr_q: 0,
            cptr_q: vec![false; nb],
            s2_sack: false,
            s2_lo: 0,
            s2_lc: 0,
            s2_lh: 0,
            s2_bs: 0,
            s2_bm: 0,
            s2_ev: 0,
            s2_m: 0,
            s2_ab: 0,
            s2_nfb: false,
            s2_nk: 0,
            s2_tick: false,
            s2_una: 0,
            s2_slot: 0,
            s3_sack: false,
            s3_ackm: vec![false; w],
            s3_holem: vec![false; w],
            s3_fbs: false,
            s3_ev: 0,
            s3_m: 0,
            s3_ab: 0,
            s3_nfb: false,
            s3_nk: 0,
            s3_tick: false,
            s3_una: 0,
            s3_slot: 0,
            s3_conf: false,
            d_ev: 0,
            d_dl: 0,
            ge_q: vec![false; w],
            p1: vec![(false, 0, false, 0); w / 16],
            p1b: vec![(false, 0, false, 0); w / 16],
            p2_valid: false,
            p2_slot: 0,
            p3_valid: false,
            p3_slot: 0,
            p3_c: false,
            cnt_ev: [false; 7],
            out_regs: TxOutputs::default(),
        }
    }

    pub fn window(&self) -> usize {
        self.w
    }

    /// The registered outputs as they stand (power-on: the reset state).
    pub fn outputs(&self) -> &TxOutputs {
        &self.out_regs
    }

    /// One rising clock edge.
    pub fn step(&mut self, x: &TxInputs) -> TxOutputs {
        let (rst, init_psn) = (x.rst, x.init_psn);
        let w = self.w;
        let wm = w - 1;
        let nb = w / 8;
        let groups = w / 16;
        let q = self.q;
        let una = self.una;
        let nxt = self.nxt;
        let una_slot = una as usize & wm;
        let cand: Vec<bool> = (0..w)
            .map(|k| self.rtx[k] && self.out[k] && !self.ack[k])
            .collect();

        // ---------------- S1: the registered op against the committed state -------------
        let n_out = nxt.wrapping_sub(una) & PSN_MASK;
        let rel = q.psn.wrapping_sub(una) & PSN_MASK;
        let slot = q.psn as usize & wm;
        let (fo, fa, fr) = (self.out[slot], self.ack[slot], self.rtx[slot]);
        let in_win = rel < n_out;
        // (the RTL forms this a cycle early, for both outcomes of that cycle's SEND)
        let win_ok = (nxt.wrapping_sub(self.una_d2) & PSN_MASK) < w as u32;
        let err = self.err;
        let is = |o: u8| q.op == o;
        let send_new = is(OP_SEND) && !err && q.psn == nxt && win_ok;
        let send_rtx = is(OP_SEND) && !err && !send_new && in_win && fo && !fa && fr;
        let bad_send = is(OP_SEND) && !send_new && !send_rtx;
        let nack_ok = is(OP_NACK) && !err && in_win && fo && !fa;
        let bad_nack = is(OP_NACK) && !nack_ok;
        // each SACK quantity is one subtract of una from an S0 sum
        let ca = q.c1.wrapping_sub(una) & PSN_MASK;
        let cum_ok = ca <= n_out;
        let off_pos = (q.off as i16) >= 1;
        let bmnz = q.bmnz;
        // (base + msb) - una (only meaningful when cum_ok and off_pos)
        let rbm = q.xm.wrapping_sub(una) & 0x3_FFFF;
        let bm_ok = !bmnz || rbm < n_out;
        let sack_good = is(OP_SACK) && !err && cum_ok && off_pos && bm_ok;
        let stale_sack = is(OP_SACK) && !err && !cum_ok && (ca >> 23) & 1 == 1;
        let bad_sack = is(OP_SACK) && !sack_good && !stale_sack;
        // highest SACKed PSN relative to una, plus one; hole length below it
        let hr1 = q.h.wrapping_sub(una) & 0x3_FFFF;
        let thr1 = self.q_thr1;
        let lh = if self.q_thr != 0 && hr1 > thr1 {
            ((hr1 - thr1) & 0x7FF) as usize
        } else {
            0
        };
        // base slot: (una + (cack + offset - una)) % W
        let bs = q.x as usize & wm;
        let tick_chk = is(OP_TICK) && !err;
        let ab_delta = q.rb.wrapping_sub(self.last_rb) & PSN_MASK;

        // EV RAM: read (old data), then the SEND's write. (The RTL registers the write and
        // lands it one edge later, with a bypass for a read of that slot in between; the data
        // any read returns is the same, so the model writes here.)
        let raddr = if is(OP_TICK) { una_slot } else { slot };
        let rd_next = (self.ram_ev[raddr], self.ram_dl[raddr]);
        if send_new || send_rtx {
            let extra = if q.psn == una {
                self.head_tmo.saturating_sub(self.q_lin)
            } else {
                0
            };
            let e = (self.q_exp + extra).min(EXP_CAP);
            self.ram_ev[slot] = q.ev;
            self.ram_dl[slot] = self.now.wrapping_add(1u32 << e);
        }

        // ---------------- S2: masks of the SACK in S2 -----------------------------------
        let mut ackm = vec![false; w];
        let mut holem = vec![false; w];
        if self.s2_sack {
            for k in 0..w {
                let relk = k.wrapping_sub(self.s2_lo) & wm;
                let j = k.wrapping_sub(self.s2_bs) & wm;
                let placed = j < 64 && (self.s2_bm >> j) & 1 == 1;
                ackm[k] = relk < self.s2_lc || placed;
                holem[k] = relk < self.s2_lh;
            }
        }

        // ---------------- S3: apply the SACK, the head check, feedback ------------------
        let mut n_ack = self.ack.clone();
        let mut n_rtx = self.rtx.clone();
        let mut n_out_f = self.out.clone();
        let mut n_hole = self.hole.clone();
        if self.s3_sack {
            for k in 0..w {
                if self.s3_ackm[k] && self.out[k] {
                    n_ack[k] = true;
                }
                if self.s3_holem[k]
                    && self.out[k]
                    && !self.ack[k]
                    && !self.s3_ackm[k]
                    && !self.hole[k]
                {
                    n_rtx[k] = true;
                    n_hole[k] = true;
                }
            }
        }
        let hs = self.s3_slot;
        let expired = (self.now.wrapping_sub(self.d_dl) >> 31) == 0;
        let fire = self.s3_tick
            && !self.s3_conf
            && una == self.s3_una
            && self.out[hs]
            && !self.ack[hs]
            && !self.rtx[hs]
            && expired
            && !err;
        let limit = self.head_tmo >= self.q_lin + self.q_back;
        let mut n_head_tmo = self.head_tmo;
        let mut n_err = err;
        let mut n_err_psn = self.err_psn;
        if fire {
            if limit {
                n_err = true;
                n_err_psn = una;
            } else {
                n_head_tmo = self.head_tmo + 1;
                n_rtx[hs] = true;
            }
        }
        let (fbv, fbi, fbk) = if fire {
            (true, self.d_ev, FeedbackKind::Timeout as u8)
        } else if self.s3_nfb {
            (true, self.d_ev, self.s3_nk)
        } else if self.s3_fbs {
            (true, self.s3_ev, self.s3_m)
        } else {
            (false, 0, 0)
        };
        let ab = if self.s3_sack { self.s3_ab << 8 } else { 0 };

        // S1 slot updates.
        if send_new {
            n_out_f[slot] = true;
            n_ack[slot] = false;
            n_rtx[slot] = false;
            n_hole[slot] = false;
        }
        if send_rtx {
            n_rtx[slot] = false;
        }
        if nack_ok {
            n_rtx[slot] = true;
        }

        // ---------------- una advance: apply last cycle's clear, run the byte loop ------
        let pc = self.clr_q.count_ones();
        for k in 0..nb {
            if self.cptr_q[k] {
                for i in 0..8 {
                    if (self.clr_q >> i) & 1 == 1 {
                        let s = 8 * k + i;
                        n_out_f[s] = false;
                        n_ack[s] = false;
                        n_rtx[s] = false;
                        n_hole[s] = false;
                    }
                }
            }
        }
        // `cur`: the acked flags of the loop's abyte as of the previous edge (the RTL selects
        // them a cycle ahead of the prefix); a stale flag only delays una.
        let mm = self.cur | self.mask;
        let mut p = 0u8;
        let mut run = true;
        for i in 0..8 {
            run = run && (mm >> i) & 1 == 1;
            p |= (run as u8) << i;
        }
        let full = p == 0xFF;
        let clr = p & !self.mask;
        let n_ptr: Vec<bool> = if full {
            (0..nb).map(|k| self.ptr[(k + nb - 1) % nb]).collect()
        } else {
            self.ptr.clone()
        };
        let n_mask = if full { 0 } else { p };
        let mut n_cur = 0u8;
        for (k, _) in n_ptr.iter().enumerate().filter(|(_, &on)| on) {
            for i in 0..8 {
                n_cur |= (self.ack[8 * k + i] as u8) << i;
            }
        }
        if pc != 0 {
            n_head_tmo = 0;
        }

        // ---------------- retransmit pick -------------------------------------------------
        let hi: Vec<bool> = (0..w).map(|k| cand[k] && self.ge_q[k]).collect();
        let n_p1: Vec<_> = (0..groups)
            .map(|g| {
                let (ha, hf) = first_in_group(&hi, g);
                let (aa, af) = first_in_group(&cand, g);
                (ha, hf, aa, af)
            })
            .collect();
        let (n_p2_valid, n_p2_slot) = match self.p1b.iter().position(|e| e.0) {
            Some(g) => (true, g * 16 + self.p1b[g].1),
            None => match self.p1b.iter().position(|e| e.2) {
                Some(g) => (true, g * 16 + self.p1b[g].3),
                None => (false, 0),
            },
        };
        // P3a re-validates P2's pick against this clock's flags, less a SACK acking it at
        // this edge; P3b offers it. A mark at this edge (hole, timeout, NACK) is not seen,
        // and the slot's own retransmit at this edge is not either: the core's RTX_HOLD
        // covers that.
        let p2s = self.p2_slot;
        let n_p3_c = cand[p2s] && !(self.s3_sack && self.s3_ackm[p2s]);
        let rv = self.p3_valid && self.p3_c && !err;
        let rpsn = if self.p3_valid && !err {
            una.wrapping_add((self.p3_slot.wrapping_sub(una_slot) & wm) as u32) & PSN_MASK
        } else {
            0
        };

        // ---------------- commit -------------------------------------------------------------
        let o = &mut self.out_regs;
        o.una = (una + pc) & PSN_MASK;
        o.nxt = if send_new { (nxt + 1) & PSN_MASK } else { nxt };
        o.can_send = !err && win_ok;
        o.acked_pkts = pc as u8;
        o.acked_bytes = ab;
        o.fb_valid = fbv;
        o.fb_idx = fbi;
        o.fb_kind = fbk;
        o.rtx_valid = rv;
        o.rtx_psn = rpsn;
        o.qp_error = n_err;
        o.err_psn = n_err_psn;
        let inc = |c: &mut u32, b: bool| *c = c.wrapping_add(b as u32);
        let ev = std::mem::replace(
            &mut self.cnt_ev,
            [
                send_new, send_rtx, fire, bad_send, stale_sack, bad_sack, bad_nack,
            ],
        );
        inc(&mut o.cnt_new_sends, ev[0]);
        inc(&mut o.cnt_retransmits, ev[1]);
        inc(&mut o.cnt_timeouts, ev[2]);
        inc(&mut o.cnt_bad_send, ev[3]);
        inc(&mut o.cnt_stale_sack, ev[4]);
        inc(&mut o.cnt_bad_sack, ev[5]);
        inc(&mut o.cnt_bad_nack, ev[6]);

        self.una = o.una;
        self.nxt = o.nxt;
        self.una_d2 = self.una_d1;
        self.una_d1 = una;
        if is(OP_TICK) {
            self.now = self.now.wrapping_add(1);
        }
        self.head_tmo = n_head_tmo;
        self.err = n_err;
        self.err_psn = n_err_psn;
        if sack_good {
            self.last_rb = q.rb;
        }
        self.out = n_out_f;
        self.ack = n_ack;
        self.rtx = n_rtx;
        self.hole = n_hole;
        // S3 <- S2 (the RAM data loaded at the last edge is registered now)
        self.d_ev = self.rd.0;
        self.d_dl = self.rd.1;
        self.rd = rd_next;
        // the byte just examined and its clear bits, applied at the next edge
        self.cptr_q = std::mem::replace(&mut self.ptr, n_ptr);
        self.mask = n_mask;
        self.cur = n_cur;
        self.clr_q = clr;
        self.s3_sack = self.s2_sack;
        self.s3_ackm = ackm;
        self.s3_holem = holem;
        self.s3_fbs = self.s2_sack && self.s2_m < 3;
        self.s3_ev = self.s2_ev;
        self.s3_m = self.s2_m;
        self.s3_ab = self.s2_ab;
        self.s3_nfb = self.s2_nfb;
        self.s3_nk = self.s2_nk;
        self.s3_tick = self.s2_tick;
        self.s3_una = self.s2_una;
        self.s3_slot = self.s2_slot;
        self.s3_conf = (send_new || send_rtx) && slot == self.s2_slot;
        // S2 <- S1
        self.s2_sack = sack_good;
        self.s2_lo = una_slot;
        self.s2_lc = ca as usize & 0x7FF;
        self.s2_lh = lh;
        self.s2_bs = bs;
        self.s2_bm = q.bm;
        self.s2_ev = q.ev;
        self.s2_m = q.m;
        self.s2_ab = ab_delta;
        self.s2_nfb = nack_ok && (q.reason == NACK_TRIMMED || q.reason == NACK_TRIMMED_LASTHOP);
        self.s2_nk = if q.reason == NACK_TRIMMED {
            FeedbackKind::NackTrimmed as u8
        } else {
            FeedbackKind::NackTrimmedLastHop as u8
        };
        self.s2_tick = tick_chk;
        self.s2_una = una;
        self.s2_slot = una_slot;
        // pick pipeline
        self.ge_q = (0..w).map(|k| k >= una_slot).collect();
        self.p1b = std::mem::replace(&mut self.p1, n_p1);
        self.p3_valid = self.p2_valid;
        self.p3_slot = self.p2_slot;
        self.p3_c = n_p3_c;
        self.p2_valid = n_p2_valid;
        self.p2_slot = n_p2_slot;
        // S0 <- I stage <- inputs
        let x = &std::mem::replace(
            &mut self.inp,
            TxInputs {
                op: if x.rst { OP_NOP } else { x.op },
                ..*x
            },
        );
        let cack = x.cack & PSN_MASK;
        let msb = if x.bitmap == 0 {
            0
        } else {
            63 - x.bitmap.leading_zeros()
        };
        let xs = (cack + u32::from(x.offset)) & 0x3_FFFF;
        self.q = Op {
            op: x.op & 7,
            psn: x.psn & PSN_MASK,
            ev: x.ev_idx,
            off: x.offset,
            bm: x.bitmap,
            bmnz: x.bitmap != 0,
            c1: (cack + 1) & PSN_MASK,
            x: xs,
            xm: (xs + msb) & 0x3_FFFF,
            h: if x.bitmap != 0 {
                (xs + msb + 1) & 0x3_FFFF
            } else {
                (cack + 1) & 0x3_FFFF
            },
            m: x.m & 3,
            rb: x.rcvd_bytes & PSN_MASK,
            reason: x.reason,
        };
        self.q_exp = u32::from(x.rto_exp & 31);
        self.q_lin = u32::from(x.rto_linear_retries & 7);
        self.q_back = u32::from(x.rto_backoff_retries & 31);
        self.q_thr = u32::from(x.rtx_ooo_threshold & 0x3FF);
        self.q_thr1 = self.q_thr + 1;
        if rst {
            self.reset(init_psn & PSN_MASK);
        }
        self.out_regs.una_adv = self.clr_q.count_ones() as u8;
        self.out_regs
    }

    /// Synchronous reset: state as at power-on except `una`/`nxt` (and the loop pointer) at
    /// `init_psn`; the config registers and the RAM keep loading.
    fn reset(&mut self, init: u32) {
        let w = self.w;
        let nb = w / 8;
        self.q.op = OP_NOP;
        self.una = init;
        self.nxt = init;
        self.una_d1 = init;
        self.una_d2 = init;
        self.now = 0;
        self.head_tmo = 0;
        self.err = false;
        self.err_psn = 0;
        self.last_rb = 0;
        for v in [&mut self.out, &mut self.ack, &mut self.rtx, &mut self.hole] {
            v.iter_mut().for_each(|b| *b = false);
        }
        let s = init as usize & (w - 1);
        self.ptr = (0..nb).map(|k| k == s / 8).collect();
        self.mask = ((1u32 << (s % 8)) - 1) as u8;
        self.cur = 0;
        self.clr_q = 0;
        self.s2_sack = false;
        self.s2_nfb = false;
        self.s2_tick = false;
        self.s3_sack = false;
        self.s3_nfb = false;
        self.s3_tick = false;
        self.s3_fbs = false;
        self.ge_q.iter_mut().for_each(|b| *b = false);
        self.p1.iter_mut().for_each(|e| *e = (false, 0, false, 0));
        self.p1b.iter_mut().for_each(|e| *e = (false, 0, false, 0));
        self.p2_valid = false;
        self.p3_valid = false;
        self.p3_c = false;
        self.cnt_ev = [false; 7];
        self.out_regs = TxOutputs {
            una: init,
            nxt: init,
            ..TxOutputs::default()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(w: u32) -> NicConfig {
        NicConfig {
            sack_window_bits: w,
            ..NicConfig::default()
        }
    }

    fn run(m: &mut SackTxScoreboard, x: TxInputs, n: usize) -> TxOutputs {
        let mut y = m.step(&x);
        let idle = TxInputs { op: OP_NOP, ..x };
        for _ in 1..n {
            y = m.step(&idle);
        }
        y
    }

    fn start(w: u32, init: u32) -> (SackTxScoreboard, TxInputs) {
        let c = cfg(w);
        let mut m = SackTxScoreboard::new(&c);
        let base = TxInputs::idle(&c);
        run(
            &mut m,
            TxInputs {
                rst: true,
                init_psn: init,
                ..base
            },
            2,
        );
        (m, base)
    }

    #[test]
    fn the_window_fills_and_a_cumulative_sack_drains_it_across_the_wrap() {
        let init = PSN_MASK - 10;
        let (mut m, base) = start(64, init);
        let mut sent = 0u32;
        for _ in 0..200 {
            let y = m.step(&TxInputs {
                op: OP_SEND,
                psn: (init + sent) & PSN_MASK,
                ..base
            });
            // the SEND of the previous step was judged at this edge (its counter counts a
            // clock later)
            sent = y.nxt.wrapping_sub(init) & PSN_MASK;
        }
        assert_eq!(sent, 64, "the window holds W PSNs");
        let y = run(&mut m, base, 4);
        assert_eq!(y.cnt_new_sends, 64, "every new send counted");
        assert_eq!(y.cnt_bad_send, 200 - 64, "every refused SEND counted");
        let y = run(
            &mut m,
            TxInputs {
                op: OP_SACK,
                cack: (init + 63) & PSN_MASK,
                offset: 1,
                ..base
            },
            20,
        );
        assert_eq!(y.una, (init + 64) & PSN_MASK);
        assert!(y.can_send);
    }

    #[test]
    fn a_counter_counts_its_event_a_clock_after_the_event_shows() {
        let (mut m, base) = start(256, 7);
        let mut ys = vec![m.step(&TxInputs {
            op: OP_SEND,
            psn: 7,
            ..base
        })];
        ys.extend((0..6).map(|_| m.step(&base)));
        let t_nxt = ys
            .iter()
            .position(|y| y.nxt == 8)
            .expect("the SEND is taken");
        let t_cnt = ys
            .iter()
            .position(|y| y.cnt_new_sends == 1)
            .expect("and counted");
        assert_eq!(t_cnt, t_nxt + 1);
    }

    #[test]
    fn una_advances_at_most_eight_per_clock() {
        let (mut m, base) = start(256, 0);
        for p in 0..100 {
            m.step(&TxInputs {
                op: OP_SEND,
                psn: p,
                ..base
            });
        }
        m.step(&TxInputs {
            op: OP_SACK,
            cack: 99,
            offset: 1,
            ..base
        });
        let mut prev = 0;
        for _ in 0..30 {
            let y = m.step(&base);
            assert!(y.una - prev <= 8 && u32::from(y.acked_pkts) == y.una - prev);
            prev = y.una;
        }
        assert_eq!(prev, 100);
    }

    #[test]
    fn acked_bytes_is_the_rcvd_bytes_delta_in_256_byte_units() {
        let (mut m, base) = start(64, 0);
        m.step(&TxInputs {
            op: OP_SEND,
            psn: 0,
            ..base
        });
        m.step(&base);
        let sack = TxInputs {
            op: OP_SACK,
            cack: 0,
            offset: 1,
            rcvd_bytes: 5,
            ..base
        };
        m.step(&sack);
        // feedback four edges after the op: the I stage, then S0 .. S3
        let y = run(&mut m, base, 4);
        assert_eq!(y.acked_bytes, 5 << 8);
        assert!(y.fb_valid && y.fb_kind == FeedbackKind::AckGood as u8);
        m.step(&TxInputs {
            rcvd_bytes: 2,
            ..sack
        });
        let y = run(&mut m, base, 4);
        assert_eq!(y.acked_bytes, ((2u32.wrapping_sub(5)) & PSN_MASK) << 8);
    }
}
