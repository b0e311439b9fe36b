//! Golden model of `sack_rx_tracker`: cycle- and bit-exact with the RTL, written to be read
//! against `shared/spec/mrc-notes.md` sections 1 and 3 (receiver side of one QP).
//!
//! Contract (the RTL's, restated): `step(inputs)` is one rising clock edge; the returned outputs
//! are the registers after that edge. A packet header presented at step t is answered (SACK,
//! NACK or nothing) in the outputs of step `t + RSP_LATENCY`.
//!
//! Registers, stage by stage (same names as the RTL):
//!
//! ```text
//! I  (edge of t)    input registers; i_same = this PSN equals the one now in I
//! C  (edge of t+1)  classify: window check against cack_p1 / hi_edge, bit read at psn mod W,
//!                   forwarding from the packet one stage ahead (i_same & c_new)
//! R  (edge of t+2)  commit: set the bit, counters, bytes, coalescing decision; snapshot
//!                   cack / ooo / rcvd_bytes as they are after this edge
//! B  (edge of t+3)  SACK base: offset, base slot (byte one-hot + bit shift)
//! E  (edge of t+4)  9 bytes of the circular bitmap from the base byte; fill = live cack -
//!                   base + 1, clipped to 0..=64 (PSNs the loop consumed since the snapshot)
//! O  (edge of t+5)  shift by base % 8, OR the low `fill` bits, outputs (all response fields
//!                   0 without a response)
//! ```
//!
//! The cumulative-advance loop runs beside the commit: `ptr` (the byte holding the loop head)
//! and `mask` (bits of that byte already consumed) walk the circular bitmap up to one byte per
//! clock; the consumed bits (`clr_q`, byte `cptr`) are cleared two edges later (one stage
//! counts them: `clr_q2`, `cptr2`, `ncl_q`), in the same edge that adds their count to `cack`, so the bitmap always holds exactly the received PSNs in
//! `(cack, cack + W]`.

use mrc_config::NicConfig;
use std::collections::BTreeSet;

/// Outputs of step `t + RSP_LATENCY` answer the packet presented at step t.
pub const RSP_LATENCY: usize = 5;
/// With the loop caught up, a PSN whose predecessors all arrived is covered by `cack_psn` in
/// the outputs of step `t + INORDER_CACK_LATENCY` (t = its arrival step).
pub const INORDER_CACK_LATENCY: usize = 5;

/// Bound on the cumulative advance: if every PSN up to q has arrived by step t (bits set at
/// the edge of t+2) and q - cack_psn(t) = k <= W, then cack_psn >= q from the outputs of step
/// `t + cack_lag_bound(k)` on: the loop walks at most one byte per clock, the k PSNs span at
/// most ceil(k/8) + 1 bytes, and the loop may still be finishing older work it saw (at most
/// W/8 bytes in total, since everything it walks is inside the window).
pub fn cack_lag_bound(w: u32) -> usize {
    (w / 8) as usize + 1 + INORDER_CACK_LATENCY
}

pub const NACK_TRIMMED: u8 = 0x01;
pub const NACK_TRIMMED_LASTHOP: u8 = 0x02;
pub const NACK_PSN_OOR_WINDOW: u8 = 0x0B;
pub const M_NONE: u8 = 0;
pub const M_SKIP_ONCE: u8 = 1;

const PSN_MASK: u32 = 0xFF_FFFF;

/// Serial PSN arithmetic: `a - b` mod 2^24.
pub fn psn_sub(a: u32, b: u32) -> u32 {
    a.wrapping_sub(b) & PSN_MASK
}
/// The low `n` bits set (`n` <= 64).
fn low_ones(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// `a + b` mod 2^24.
pub fn psn_add(a: u32, b: u32) -> u32 {
    a.wrapping_add(b) & PSN_MASK
}
fn sign24(x: u32) -> bool {
    x & 0x80_0000 != 0
}

/// One cycle of inputs; field names are the RTL port names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrackerInputs {
    pub rst: bool,
    pub init_psn: u32,
    pub pkt_valid: bool,
    pub pkt_psn: u32,
    pub pkt_len: u16,
    pub pkt_ecn: bool,
    pub pkt_trimmed: bool,
    pub pkt_lasthop: bool,
    pub pkt_ackreq: bool,
    pub pkt_ev: u32,
    /// Receive window in units of 128 PSNs.
    pub mpr: u8,
    /// Coalescing threshold in bytes (24 bits).
    pub ack_bytes: u32,
    /// The packet's receive context (4 bits): a tracker of one QP takes only context 0,
    /// [`SharedRxTracker`] routes context q to its QP q.
    pub pkt_qp: u8,
    /// Per-context synchronous reset, bit q for context q; with `rst`, all of them. For a
    /// tracker of one QP, bit 0 is a second `rst`.
    pub qp_rst: u16,
}

impl TrackerInputs {
    /// No packet; `mpr` and `ack_bytes` from the config, `init_psn` 0.
    pub fn idle(cfg: &NicConfig) -> Self {
        TrackerInputs {
            mpr: cfg.mpr as u8,
            ack_bytes: cfg.sack_coalesce_bytes,
            ..Default::default()
        }
    }
}

/// One cycle of outputs; field names are the RTL port names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrackerOutputs {
    pub sack_valid: bool,
    pub nack_valid: bool,
    /// The response's cack_psn (snapshot).
    pub cack_out: u32,
    pub sack_offset: u16,
    pub sack_bitmap: u64,
    pub sack_m: u8,
    pub rsp_ev: u32,
    pub ooo_count: u16,
    pub rcvd_bytes: u32,
    pub nack_reason: u8,
    pub nack_psn: u32,
    /// The live committed cumulative ack.
    pub cack_psn: u32,
    pub cnt_accepted: u32,
    pub cnt_duplicate: u32,
    pub cnt_out_of_window: u32,
    pub cnt_trimmed: u32,
    /// The context of the response (`sack_valid` / `nack_valid`); 0 without one.
    pub rsp_qp: u8,
}

impl TrackerOutputs {
    /// PSN of bitmap bit 0 (the SACK base).
    pub fn sack_base(&self) -> u32 {
        psn_add(self.cack_out, u32::from(self.sack_offset))
    }
    /// Every PSN the response claims received: up to `cack_out`, plus the bitmap's set bits.
    pub fn claimed_bitmap_psns(&self) -> Vec<u32> {
        (0..64)
            .filter(|j| self.sack_bitmap >> j & 1 == 1)
            .map(|j| psn_add(self.sack_base(), j))
            .collect()
    }
}

/// Window limit in PSNs: min(W, mpr * 128 - 1), 0 for mpr = 0.
pub fn window_limit(w: u32, mpr: u8) -> u32 {
    if mpr == 0 {
        0
    } else {
        (u32::from(mpr) * 128 - 1).min(w)
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Pkt {
    v: bool,
    psn: u32,
    len: u16,
    ecn: bool,
    trim: bool,
    lh: bool,
    ackreq: bool,
    ev: u32,
}

#[derive(Debug, Clone, Copy, Default)]
struct Classified {
    new: bool,
    dup: bool,
    oow: bool,
    trim: bool,
    inwin: bool,
    slot: usize,
    p: Pkt,
}

/// Response fields travelling down R -> B -> E -> O.
#[derive(Debug, Clone, Copy, Default)]
struct Rsp {
    sack: bool,
    nack: bool,
    reason: u8,
    psn: u32,
    ev: u32,
    m: u8,
    inwin: bool,
    cack: u32,
    ooo: u16,
    bytes: u32,
}

#[derive(Debug, Clone)]
pub struct SackRxTracker {
    w: usize,
    nb: usize,
    // stage I
    i: Pkt,
    i_same: bool,
    // stage C
    c: Classified,
    // bitmap and advance loop
    bits: Vec<bool>,
    ptr: usize,
    mask: u8,
    clr_q: u8,
    cptr: usize,
    /// One stage later: the consumed bits to clear at the next edge, and their count.
    clr_q2: u8,
    cptr2: usize,
    ncl_q: u32,
    cack: u32,
    cack_p1: u32,
    hi_edge: u32,
    lim_q: u32,
    ooo: u16,
    // commit state
    bytes: u32,
    remaining: u32,
    first: bool,
    cnt: [u32; 4],
    // response pipeline
    r: Rsp,
    b: Rsp,
    b_off: u16,
    b_byte: usize,
    b_sh: u32,
    /// The bitmap's first PSN (cack + offset).
    b_base: u32,
    e: Rsp,
    e_off: u16,
    e_sh: u32,
    e_ext: u128,
    /// Bitmap bits at and after the base that the live cack covers (0..=64), see E.
    e_fill: u32,
    out: TrackerOutputs,
}

impl SackRxTracker {
    /// Power-on state equals the RTL's initial blocks: every register 0.
    pub fn new(cfg: &NicConfig) -> Self {
        let w = cfg.sack_window_bits as usize;
        SackRxTracker {
            w,
            nb: w / 8,
            i: Pkt::default(),
            i_same: false,
            c: Classified::default(),
            bits: vec![false; w],
            ptr: 0,
            mask: 0,
            clr_q: 0,
            cptr: 0,
            clr_q2: 0,
            cptr2: 0,
            ncl_q: 0,
            cack: 0,
            cack_p1: 0,
            hi_edge: 0,
            lim_q: 0,
            ooo: 0,
            bytes: 0,
            remaining: 0,
            first: false,
            cnt: [0; 4],
            r: Rsp::default(),
            b: Rsp::default(),
            b_off: 0,
            b_byte: 0,
            b_sh: 0,
            b_base: 0,
            e: Rsp::default(),
            e_off: 0,
            e_sh: 0,
            e_ext: 0,
            e_fill: 0,
            out: TrackerOutputs::default(),
        }
    }

    pub fn window_bits(&self) -> u32 {
        self.w as u32
    }

    /// The bitmap's contents as PSNs (slot k holds the PSN in (cack, cack + W] congruent to k).
    pub fn bitmap_psns(&self) -> Vec<u32> {
        (0..self.w)
            .filter(|&k| self.bits[k])
            .map(|k| {
                let d = psn_sub(k as u32, psn_add(self.cack, 1)) % self.w as u32;
                psn_add(self.cack, 1 + d)
            })
            .collect()
    }

    /// The registered outputs as they stand (power-on: the reset state).
    pub fn outputs(&self) -> &TrackerOutputs {
        &self.out
    }

    pub fn step(&mut self, x: &TrackerInputs) -> TrackerOutputs {
        let w = self.w;
        let wm = w as u32 - 1;
        let rst = x.rst || x.qp_rst & 1 != 0;
        let pkt_valid = x.pkt_valid && x.pkt_qp == 0;

        // ---- C: classify the packet in I ---------------------------------------------------
        let lo_ok = !sign24(psn_sub(self.i.psn, self.cack_p1));
        let hi_ok = sign24(psn_sub(self.i.psn, self.hi_edge));
        let slot = (self.i.psn & wm) as usize;
        let seen = self.bits[slot] | (self.i_same & self.c.new);
        let v = self.i.v;
        let inwin = lo_ok & hi_ok;
        let c_next = Classified {
            oow: v & lo_ok & !hi_ok,
            dup: v & (!lo_ok | (hi_ok & seen)),
            trim: v & inwin & !seen & self.i.trim,
            new: v & inwin & !seen & !self.i.trim,
            inwin,
            slot,
            p: self.i,
        };

        // ---- advance loop (reads the bitmap before this edge's set/clear) ------------------
        let byte = (0..8).fold(0u8, |a, j| a | (u8::from(self.bits[self.ptr * 8 + j]) << j));
        let m = byte | self.mask;
        let mut p = 0u8;
        for j in 0..8 {
            if m >> j & 1 == 1 && (j == 0 || p >> (j - 1) & 1 == 1) {
                p |= 1 << j;
            }
        }
        let full = p == 0xFF;
        let clr = p & !self.mask;

        // ---- R: commit the packet in C ---------------------------------------------------
        let c = self.c;
        let n_clr = self.ncl_q;
        let cack_n = psn_add(self.cack, n_clr);
        let ooo_n = self
            .ooo
            .wrapping_add(u16::from(c.new))
            .wrapping_sub(n_clr as u16)
            & 0x7FFF;
        let bytes_n = if c.new {
            self.bytes.wrapping_add(u32::from(c.p.len))
        } else {
            self.bytes
        };
        let trig =
            c.new & (self.first | c.p.ecn | c.p.ackreq | (u32::from(c.p.len) >= self.remaining));
        let sack = c.dup | trig;
        let nack = c.oow | c.trim;
        let remaining_n = if sack {
            x.ack_bytes & PSN_MASK
        } else if c.new {
            self.remaining - u32::from(c.p.len)
        } else {
            self.remaining
        };
        let r_next = Rsp {
            sack,
            nack,
            reason: if c.oow {
                NACK_PSN_OOR_WINDOW
            } else if c.trim {
                if c.p.lh {
                    NACK_TRIMMED_LASTHOP
                } else {
                    NACK_TRIMMED
                }
            } else {
                0
            },
            psn: c.p.psn,
            ev: c.p.ev,
            m: if c.p.ecn { M_SKIP_ONCE } else { M_NONE },
            inwin: c.inwin,
            cack: cack_n,
            ooo: ooo_n,
            bytes: bytes_n >> 8,
        };

        // ---- B: SACK base from the snapshot ----------------------------------------------
        let r = self.r;
        let use_psn = r.inwin & !sign24(psn_sub(r.psn, psn_add(r.cack, 64)));
        let (b_off_n, base_slot, b_base_n) = if use_psn {
            (
                psn_sub(r.psn, psn_add(r.cack, 63)) as u16,
                psn_sub(r.psn, 63) & wm,
                psn_sub(r.psn, 63),
            )
        } else {
            (1, psn_add(r.cack, 1) & wm, psn_add(r.cack, 1))
        };

        // ---- E: 9 bytes of the circular bitmap from the base byte -------------------------
        // The snapshot cack is from R, two edges before this read; PSNs the loop consumed since
        // are no longer in the bitmap, only in the live cack. Every bit from the base up to
        // the live cack is therefore set at O, so a SACK never leaves out a PSN that arrived
        // before its trigger (a final SACK that did would leave the sender to its RTO).
        let fill_d = psn_sub(self.cack, self.b_base);
        let fill_n = if sign24(fill_d) {
            0
        } else {
            (fill_d + 1).min(64)
        };
        let mut ext = 0u128;
        for k in 0..9 {
            let bi = (self.b_byte + k) % self.nb;
            for j in 0..8 {
                if self.bits[bi * 8 + j] {
                    ext |= 1u128 << (8 * k + j);
                }
            }
        }

        // ---- O: shift, outputs --------------------------------------------------------------
        let e = self.e;
        let any = e.sack | e.nack;
        let out_n = TrackerOutputs {
            rsp_qp: 0,
            sack_valid: e.sack,
            nack_valid: e.nack,
            cack_out: if any { e.cack } else { 0 },
            sack_offset: if any { self.e_off } else { 0 },
            sack_bitmap: if any {
                (self.e_ext >> self.e_sh) as u64 | low_ones(self.e_fill)
            } else {
                0
            },
            sack_m: if any { e.m } else { 0 },
            rsp_ev: if any { e.ev } else { 0 },
            ooo_count: if any { e.ooo } else { 0 },
            rcvd_bytes: if any { e.bytes } else { 0 },
            nack_reason: if any { e.reason } else { 0 },
            nack_psn: if any { e.psn } else { 0 },
            cack_psn: cack_n,
            cnt_accepted: self.cnt[0].wrapping_add(u32::from(c.new)),
            cnt_duplicate: self.cnt[1].wrapping_add(u32::from(c.dup)),
            cnt_out_of_window: self.cnt[2].wrapping_add(u32::from(c.oow)),
            cnt_trimmed: self.cnt[3].wrapping_add(u32::from(c.trim)),
        };

        // ---- the edge ---------------------------------------------------------------------
        // Bitmap: clear what the loop consumed last cycle, set this cycle's NEW. A slot being
        // cleared is never the one being set: the consumed PSNs had their bits set when the
        // packet now in C was classified, so that packet was a duplicate (see the RTL doc).
        for j in 0..8 {
            if self.clr_q2 >> j & 1 == 1 {
                self.bits[self.cptr2 * 8 + j] = false;
            }
        }
        if c.new {
            self.bits[c.slot] = true;
        }
        self.clr_q2 = self.clr_q;
        self.cptr2 = self.cptr;
        self.ncl_q = self.clr_q.count_ones();
        self.clr_q = clr;
        self.cptr = self.ptr;
        if full {
            self.ptr = (self.ptr + 1) % self.nb;
            self.mask = 0;
        } else {
            self.mask = p;
        }
        self.hi_edge = psn_add(self.cack_p1, self.lim_q);
        self.cack_p1 = psn_add(self.cack_p1, n_clr);
        self.cack = cack_n;
        self.lim_q = window_limit(self.w as u32, x.mpr);
        self.ooo = ooo_n;
        self.bytes = bytes_n;
        self.remaining = remaining_n;
        self.first &= !c.new;
        self.cnt = [
            out_n.cnt_accepted,
            out_n.cnt_duplicate,
            out_n.cnt_out_of_window,
            out_n.cnt_trimmed,
        ];
        self.out = out_n;
        self.e = self.b;
        self.e_off = self.b_off;
        self.e_sh = self.b_sh;
        self.e_ext = ext;
        self.e_fill = fill_n;
        self.b_base = b_base_n;
        self.b = r;
        self.b_off = b_off_n;
        self.b_byte = (base_slot >> 3) as usize;
        self.b_sh = base_slot & 7;
        self.r = r_next;
        self.c = c_next;
        self.i_same = pkt_valid & self.i.v & (x.pkt_psn & PSN_MASK == self.i.psn);
        self.i = Pkt {
            v: pkt_valid,
            psn: x.pkt_psn & PSN_MASK,
            len: x.pkt_len,
            ecn: x.pkt_ecn,
            trim: x.pkt_trimmed,
            lh: x.pkt_lasthop,
            ackreq: x.pkt_ackreq,
            ev: x.pkt_ev,
        };

        if rst {
            let init = x.init_psn & PSN_MASK;
            let head = (init & wm) as usize;
            self.i = Pkt::default();
            self.i_same = false;
            self.c = Classified::default();
            self.bits.iter_mut().for_each(|b| *b = false);
            self.ptr = head / 8;
            self.mask = (1u8 << (head % 8)).wrapping_sub(1);
            self.clr_q = 0;
            self.cptr = 0;
            self.clr_q2 = 0;
            self.cptr2 = 0;
            self.ncl_q = 0;
            self.cack = psn_sub(init, 1);
            self.cack_p1 = init;
            self.hi_edge = init;
            self.ooo = 0;
            self.bytes = 0;
            self.remaining = x.ack_bytes & PSN_MASK;
            self.first = true;
            self.cnt = [0; 4];
            self.r = Rsp::default();
            self.b = Rsp::default();
            self.b_base = 0;
            self.e = Rsp::default();
            self.e_fill = 0;
            self.out = TrackerOutputs {
                cack_psn: self.cack,
                ..TrackerOutputs::default()
            };
        }
        self.out
    }
}

/// The receive side of every QP in one block, as `mrc_core` has it: one classify / SACK
/// pipeline shared by all QPs, each QP's bitmap, advance loop and counters its own. A packet
/// (one per clock, any QP) belongs to context `pkt_qp`; the block behaves exactly as one
/// [`SackRxTracker`] per context fed that context's packets, with `rst | qp_rst[q]` as its
/// reset, so the per-QP trackers are its reference, and with one context it is
/// [`SackRxTracker`] itself. Outputs: the response of whichever context has one (packets enter
/// one per clock and all take [`RSP_LATENCY`], so there is at most one), tagged `rsp_qp`; the
/// counters summed over contexts (mod 2^32); `cack_psn` of context 0. A packet for a context
/// the block does not have is dropped and counted nowhere (`mrc_core` only sends it its QPs').
#[derive(Debug, Clone, Default)]
pub struct SharedRxTracker {
    ctx: Vec<SackRxTracker>,
    out: TrackerOutputs,
}

impl SharedRxTracker {
    /// `cfg.qps` contexts (1..=16).
    pub fn new(cfg: &NicConfig) -> Self {
        let n = cfg.qps.clamp(1, 16) as usize;
        SharedRxTracker {
            ctx: (0..n).map(|_| SackRxTracker::new(cfg)).collect(),
            out: TrackerOutputs::default(),
        }
    }

    pub fn contexts(&self) -> usize {
        self.ctx.len()
    }

    /// One context's tracker.
    pub fn context(&self, q: usize) -> &SackRxTracker {
        &self.ctx[q]
    }

    /// The registered outputs as they stand.
    pub fn outputs(&self) -> &TrackerOutputs {
        &self.out
    }

    pub fn step(&mut self, x: &TrackerInputs) -> TrackerOutputs {
        let ys: Vec<TrackerOutputs> = (self.ctx.iter_mut().enumerate())
            .map(|(q, t)| {
                t.step(&TrackerInputs {
                    rst: x.rst || x.qp_rst >> q & 1 != 0,
                    qp_rst: 0,
                    pkt_valid: x.pkt_valid && usize::from(x.pkt_qp & 15) == q,
                    pkt_qp: 0,
                    ..*x
                })
            })
            .collect();
        let responding: Vec<usize> = (0..ys.len())
            .filter(|&q| ys[q].sack_valid || ys[q].nack_valid)
            .collect();
        assert!(responding.len() <= 1, "two contexts answered at once");
        let mut out = match responding.first().copied() {
            Some(q) => TrackerOutputs {
                rsp_qp: q as u8,
                ..ys[q]
            },
            None => TrackerOutputs::default(),
        };
        out.cack_psn = ys[0].cack_psn;
        let sum = |f: fn(&TrackerOutputs) -> u32| ys.iter().fold(0u32, |s, y| s.wrapping_add(f(y)));
        out.cnt_accepted = sum(|y| y.cnt_accepted);
        out.cnt_duplicate = sum(|y| y.cnt_duplicate);
        out.cnt_out_of_window = sum(|y| y.cnt_out_of_window);
        out.cnt_trimmed = sum(|y| y.cnt_trimmed);
        self.out = out;
        out
    }
}

/// An ideal receiver for checking the tracker's safety: the set of PSNs whose packets arrived
/// whole (untrimmed) since the last reset, and the contiguous prefix from `init_psn`.
#[derive(Debug, Clone, Default)]
pub struct IdealReceiver {
    pub init_psn: u32,
    /// Offsets (psn - init_psn) of untrimmed packets seen.
    got: BTreeSet<u32>,
    /// Offsets below this are all in `got`.
    prefix: u32,
}

impl IdealReceiver {
    /// Follow one input cycle (a reset clears it; packets presented with `rst` are dropped).
    pub fn observe(&mut self, x: &TrackerInputs) {
        if x.rst {
            *self = IdealReceiver {
                init_psn: x.init_psn & PSN_MASK,
                ..Default::default()
            };
            return;
        }
        if x.pkt_valid && !x.pkt_trimmed {
            self.got.insert(psn_sub(x.pkt_psn, self.init_psn));
            while self.got.contains(&self.prefix) {
                self.prefix += 1;
            }
        }
    }
    pub fn received(&self, psn: u32) -> bool {
        self.got.contains(&psn_sub(psn, self.init_psn))
    }
    /// The highest PSN with everything from `init_psn` up to it received (init_psn - 1 if none).
    pub fn contiguous(&self) -> u32 {
        psn_add(self.init_psn, self.prefix.wrapping_sub(1))
    }
    /// How many PSNs from `init_psn` on are contiguously received.
    pub fn prefix_len(&self) -> u32 {
        self.prefix
    }
    /// Every PSN in (init_psn - 1, psn] received?
    pub fn all_up_to(&self, psn: u32) -> bool {
        psn_sub(psn.wrapping_add(1), self.init_psn) <= self.prefix
    }
    /// Check one cycle of outputs: the live cack and, on a SACK, cack_out and every bitmap bit
    /// claim only PSNs that were received. Err names the first false claim.
    pub fn check(&self, y: &TrackerOutputs) -> Result<(), String> {
        if !self.all_up_to(y.cack_psn) {
            return Err(format!(
                "cack_psn {:#x} covers an unreceived PSN (contiguous {:#x})",
                y.cack_psn,
                self.contiguous()
            ));
        }
        if y.sack_valid {
            if !self.all_up_to(y.cack_out) {
                return Err(format!("SACK cack_out {:#x} not all received", y.cack_out));
            }
            for q in y.claimed_bitmap_psns() {
                if !self.received(q) {
                    return Err(format!(
                        "SACK bitmap claims PSN {q:#x} (base {:#x}) never received",
                        y.sack_base()
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn cfg(w: u32) -> NicConfig {
        NicConfig {
            sack_window_bits: w,
            ..NicConfig::default()
        }
    }

    struct Run {
        m: SackRxTracker,
        base: TrackerInputs,
        ideal: IdealReceiver,
        log: Vec<TrackerOutputs>,
    }

    impl Run {
        fn new(w: u32, init: u32) -> Self {
            let c = cfg(w);
            let base = TrackerInputs {
                init_psn: init,
                ..TrackerInputs::idle(&c)
            };
            let mut r = Run {
                m: SackRxTracker::new(&c),
                base,
                ideal: IdealReceiver::default(),
                log: vec![],
            };
            r.step(TrackerInputs { rst: true, ..base });
            r.step(TrackerInputs { rst: true, ..base });
            r
        }
        fn step(&mut self, x: TrackerInputs) -> TrackerOutputs {
            self.ideal.observe(&x);
            let y = self.m.step(&x);
            self.ideal.check(&y).unwrap();
            self.log.push(y);
            y
        }
        fn pkt(&mut self, psn: u32, f: impl Fn(&mut TrackerInputs)) -> usize {
            let mut x = TrackerInputs {
                pkt_valid: true,
                pkt_psn: psn & PSN_MASK,
                pkt_len: 1024,
                pkt_ev: psn ^ 0x5A5A_0000,
                ..self.base
            };
            f(&mut x);
            self.step(x);
            self.log.len() - 1
        }
        fn idle(&mut self, n: usize) {
            for _ in 0..n {
                self.step(self.base);
            }
        }
        fn rsp(&mut self, t: usize) -> TrackerOutputs {
            while self.log.len() <= t + RSP_LATENCY {
                self.idle(1);
            }
            self.log[t + RSP_LATENCY]
        }
    }

    #[test]
    fn first_packet_is_sacked_and_cack_follows_in_order() {
        let mut r = Run::new(256, 100);
        assert_eq!(r.log.last().unwrap().cack_psn, 99);
        let t = r.pkt(100, |_| {});
        let y = r.rsp(t);
        assert!(y.sack_valid && !y.nack_valid);
        assert_eq!(y.rsp_ev, 100 ^ 0x5A5A_0000);
        assert_eq!(r.log[t + INORDER_CACK_LATENCY].cack_psn, 100);
        assert_eq!(r.log[t + INORDER_CACK_LATENCY - 1].cack_psn, 99);
        // in order, one per clock: cack trails by the fixed latency, no NACK, no DUP
        let mut ts = vec![];
        for q in 101..400 {
            ts.push((q, r.pkt(q, |_| {})));
        }
        r.idle(8);
        for (q, t) in ts {
            assert_eq!(r.log[t + INORDER_CACK_LATENCY].cack_psn, q);
        }
        assert!(r.log.iter().all(|y| !y.nack_valid));
        assert_eq!(r.log.last().unwrap().cnt_accepted, 300);
        assert_eq!(r.log.last().unwrap().cnt_duplicate, 0);
    }

    #[test]
    fn duplicates_behind_and_in_window_are_sacked_with_base_at_cack_plus_one() {
        let mut r = Run::new(256, 0);
        for q in 0..10 {
            r.pkt(q, |_| {});
        }
        r.pkt(20, |_| {});
        r.idle(10);
        let t = r.pkt(5, |_| {}); // behind cack
        let y = r.rsp(t);
        assert!(y.sack_valid);
        assert_eq!(y.cack_out, 9);
        assert_eq!(y.sack_offset, 1);
        assert_eq!(y.sack_bitmap, 1 << 10); // PSN 20 = base 10 + 10
        let t = r.pkt(20, |_| {}); // in-window duplicate
        assert!(r.rsp(t).sack_valid);
        let t = r.pkt(20, |_| {}); // back-to-back duplicate (forwarding path)
        let t2 = r.pkt(20, |_| {});
        assert!(r.rsp(t).sack_valid && r.rsp(t2).sack_valid);
        let last = *r.log.last().unwrap();
        assert_eq!(last.cnt_duplicate, 4);
        assert_eq!(last.cnt_accepted, 11);
        // same PSN twice back to back, first time: one NEW, one DUP
        let t = r.pkt(30, |x| x.pkt_ackreq = true);
        r.pkt(30, |_| {});
        r.idle(8);
        let last = *r.log.last().unwrap();
        assert_eq!(last.cnt_accepted, 12);
        assert_eq!(last.cnt_duplicate, 5);
        assert_eq!(r.log[t + RSP_LATENCY].ooo_count, 2);
    }

    #[test]
    fn base_is_max_of_psn_minus_63_and_cack_plus_one() {
        let mut r = Run::new(256, 1000);
        r.pkt(1000, |_| {});
        r.idle(6);
        let t = r.pkt(1000 + 100, |x| x.pkt_ackreq = true);
        let y = r.rsp(t);
        assert_eq!(y.cack_out, 1000);
        assert_eq!(y.sack_base(), 1100 - 63);
        assert_eq!(y.sack_offset, 100 - 63);
        assert_eq!(y.sack_bitmap, 1 << 63);
        let t = r.pkt(1000 + 30, |x| x.pkt_ecn = true);
        let y = r.rsp(t);
        assert_eq!(y.sack_base(), 1001);
        assert_eq!(y.sack_m, M_SKIP_ONCE);
        assert_eq!(y.sack_bitmap, 1 << 29);
        assert_eq!(y.ooo_count, 2);
    }

    #[test]
    fn out_of_window_at_both_edges_and_trims() {
        for (w, mpr) in [(256u32, 255u8), (256, 1), (64, 255), (256, 2)] {
            let lim = window_limit(w, mpr);
            let mut r = Run::new(w, 0xFF_FFF0);
            r.base.mpr = mpr;
            r.pkt(0xFF_FFF0, |x| x.mpr = mpr);
            r.idle(8);
            let cack = r.log.last().unwrap().cack_psn;
            assert_eq!(cack, 0xFF_FFF0);
            let t_in = r.pkt(psn_add(cack, lim), |_| {});
            let t_out = r.pkt(psn_add(cack, lim + 1), |_| {});
            let y_in = r.rsp(t_in);
            let y_out = r.rsp(t_out);
            assert!(y_in.sack_valid || !y_in.nack_valid, "w {w} mpr {mpr}");
            assert!(y_out.nack_valid && y_out.nack_reason == NACK_PSN_OOR_WINDOW);
            assert_eq!(y_out.nack_psn, psn_add(cack, lim + 1));
            let t = r.pkt(psn_add(cack, 3), |x| x.pkt_trimmed = true);
            let y = r.rsp(t);
            assert!(y.nack_valid && y.nack_reason == NACK_TRIMMED);
            let t = r.pkt(psn_add(cack, 4), |x| {
                x.pkt_trimmed = true;
                x.pkt_lasthop = true
            });
            assert_eq!(r.rsp(t).nack_reason, NACK_TRIMMED_LASTHOP);
            // trimmed set no bit: the PSN is still new afterwards
            let t = r.pkt(psn_add(cack, 3), |x| x.pkt_ackreq = true);
            assert!(r.rsp(t).sack_valid);
            let last = *r.log.last().unwrap();
            assert_eq!(last.cnt_out_of_window, 1);
            assert_eq!(last.cnt_trimmed, 2);
            assert_eq!(last.cnt_accepted, 3);
        }
    }

    #[test]
    fn wraps_across_2_pow_24() {
        let mut r = Run::new(64, 0xFF_FFC0);
        for k in 0..200u32 {
            r.pkt(psn_add(0xFF_FFC0, k), |_| {});
        }
        r.idle(8);
        assert_eq!(r.log.last().unwrap().cack_psn, psn_add(0xFF_FFC0, 199));
        assert_eq!(r.log.last().unwrap().cnt_duplicate, 0);
    }

    #[test]
    fn coalesces_one_sack_per_threshold() {
        let mut r = Run::new(256, 0);
        let mut sacks = 0;
        let n = 160u32; // 160 KB in 1 KB packets
        for q in 0..n {
            let t = r.pkt(q, |_| {});
            if r.rsp(t).sack_valid {
                sacks += 1;
            }
        }
        // first packet, then one per 16 KB
        assert_eq!(sacks, 1 + (n - 1) as usize / 16);
        assert_eq!(
            r.log.last().unwrap().cack_psn,
            n - 1,
            "everything acked cumulatively"
        );
        let t = r.pkt(n, |_| {});
        assert_eq!(r.rsp(t).rcvd_bytes, ((n + 1) * 1024) >> 8);
    }

    /// Random loss / reordering / duplication: the ideal reference (checked every step in
    /// `Run::step`) never sees a false claim, and cack always catches up within the bound.
    #[test]
    fn random_traffic_is_safe_and_cack_meets_the_bound() {
        for w in [64u32, 256, 1024] {
            let mut rng = SplitMix64::new(u64::from(w));
            let mut r = Run::new(w, 0xFF_FF00);
            let bound = cack_lag_bound(w);
            let lim = window_limit(w, 255);
            let mut nxt = 0u32;
            for _ in 0..20_000 {
                // offsets from init_psn; una = cack + 1; never beyond cack + lim
                let una = psn_sub(r.log.last().unwrap().cack_psn.wrapping_add(1), 0xFF_FF00);
                let top = una + lim - 1;
                let off = if rng.chance(30, 100) || nxt >= top {
                    una + rng.below(u64::from((nxt.max(una + 1) - una).max(1))) as u32
                } else {
                    nxt += 1;
                    (nxt - 1 + rng.below(3) as u32).min(top)
                };
                nxt = nxt.max(off + 1);
                let trimmed = rng.chance(3, 100);
                if rng.chance(10, 100) {
                    r.idle(1); // lost
                } else {
                    r.pkt(psn_add(0xFF_FF00, off), |x| x.pkt_trimmed = trimmed);
                }
            }
            // after the traffic, fill everything and check the bound
            let top = nxt;
            let t0 = r.log.len();
            for off in 0..top {
                let psn = psn_add(0xFF_FF00, off);
                if !r.ideal.received(psn) {
                    r.pkt(psn, |_| {});
                }
            }
            let t_last = r.log.len() - 1;
            r.idle(bound + 2);
            assert!(r.log.len() > t0);
            let want = psn_add(0xFF_FF00, top - 1);
            assert_eq!(r.ideal.contiguous(), want);
            assert_eq!(r.log[t_last + bound].cack_psn, want, "w {w}");
        }
    }

    /// The lag bound is met for the worst placement: a hole at the head, then W - 1 PSNs above
    /// it, then the hole filled.
    #[test]
    fn worst_case_cack_lag_is_within_the_bound() {
        for w in [64u32, 128, 256, 512, 1024] {
            for head in [0u32, 3, 7] {
                let init = 0xFF_FFF8 + head;
                let mut r = Run::new(w, init);
                for k in 1..w {
                    r.pkt(psn_add(init, k), |_| {});
                }
                let t = r.pkt(init, |_| {});
                r.idle(cack_lag_bound(w) + 2);
                let want = psn_add(init, w - 1);
                let reached = (t..r.log.len())
                    .find(|&s| r.log[s].cack_psn == want)
                    .expect("cack reaches the top");
                eprintln!("W {w} head {head}: worst-case lag {} steps", reached - t);
                assert!(
                    reached - t <= cack_lag_bound(w),
                    "w {w} head {head}: {} steps",
                    reached - t
                );
            }
        }
    }
}
