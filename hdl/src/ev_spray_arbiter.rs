//! `ev_spray_arbiter`: per-QP EV table, pseudo-random rotation, path-feedback state machine.
//!
//! ```text
//!            req, plane_ready            fb_{valid,idx,kind}     ctl_{op,idx,ev}
//!                  |                              |                      |
//!   ctr,lfsr --> s (rotation pointer) ----> E1: one-hot decode of landing / fb / ctl (regs)
//!                  |                              |
//!                  v                     +--------v------------------------------+
//!                  |                     | E2: per-entry state st[i], pen[i]:     |
//!  R: elig[i] = valid & ready(plane) &   |  1. rotation landed: SKIP->GOOD         |
//!     GOOD & (MRC | pen==0)   <----------|     (BITMAP: pen-1)                   |
//!     A = elig & (i%16 <= s%16), E = elig|  2. feedback: section 2 state machine |
//!                  | (regs s1a, s1e)     |  3. controller: DENY / ALLOW / LOAD   |
//!  G: per 16-entry group: any + highest  +---------------------------------------+
//!  (and its plane) | (s2any*, s2max*, s2p*)    |  popcount pipeline c4 -> c16 -> c64 -> active
//!                  |                           v  ok = active - recent retires/denies > min
//!  S: round-robin over groups with an E hit (rr); in that group the A hit, else the E hit
//!                  | (regs g_*, rr)
//!  M: EV RAM (LUT RAM) read at the registered selection
//!                  | (RAM data, regs h_*)
//!  O: RAM data registered (o_ev), fields aligned (o_*)
//!                  v
//!        grant_valid/none, grant_idx, grant_plane, grant_ev    (4 cycles after req)
//! ```
//!
//! Selection has two levels. The 16-entry group (a plane, in the default 8 x 16 layout) is
//! chosen by round-robin among the groups that hold an eligible EV, so when a plane dies or
//! has no transmit space its share spreads evenly over the others instead of landing on a
//! neighbour. Inside the group, the grant is the highest eligible entry whose low nibble is at
//! or below the rotation pointer's, else the group's highest eligible entry. The pointer is
//! `s = (bitrev8(ctr) >> (8 - IW)) ^ lfsr`, masked to the table: it visits every entry once per
//! rotation (`N` requests) in an order scrambled per rotation by a 16-bit Galois LFSR seeded per
//! QP, so QPs sharing a profile do not lock-step. Its low nibble holds for `G = N/16`
//! consecutive requests and a continuously eligible group is served at least once per `G`
//! requests, so an EV that stays eligible is granted within `2N - 1` consecutive requests.
//! A SKIP entry (under BITMAP, a penalised one) is passed over until the rotation lands on it,
//! which returns it to GOOD (decrements its penalty): "skip for one rotation".
//!
//! Throughput: one request, one feedback and one controller op per clock. The grant of a
//! request at cycle t uses the table as it stood at t and appears on the outputs after the
//! edge of cycle t+4. Feedback, controller ops and the rotation landing of cycle t are decoded
//! to one-hot registers (E1) and applied to the table at the edge of cycle t+1 (E2), so every
//! per-entry update starts from flops. The find-first is split over three register stages so
//! no path spans the whole table.
//!
//! `ev_min_active`: the active count is a pipelined popcount of the table (`active_count`,
//! four cycles behind). A retirement is allowed when that count, minus every retirement and
//! denial decided since it was sampled, exceeds `min_active` (`ok`, registered; `min_active` is
//! sampled a cycle before it is used). Events that
//! turn out not to retire anything (the target was already retired) are still subtracted for
//! those few cycles, so the rule is conservative: feedback can never take the profile below
//! the minimum, and is exact once the window has passed. No 128-wide sum sits in a loop.
//!
//! Port widths are fixed (8-bit EV index = the 256-EV MRC maximum); the table size `N` and the
//! plane layout come from the config as elaboration constants, so one Rust description serves
//! every config. The golden model is `mrc_model::ev_spray_arbiter`.

// The feedback arms nest "which event" then "which state", one level per column of the notes'
// transition table; collapsing them would hide that correspondence.
#![allow(clippy::collapsible_if)]

use crate::lut_ram::LutRam;
use mrc_config::NicConfig;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct EvSprayArbiter {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: table back to GOOD (padding DENIED), pipelines emptied, LFSR reseeded.
    pub rst: Signal<In, Bit>,
    /// A packet wants an EV this cycle.
    pub req: Signal<In, Bit>,
    /// Bit p: plane p has transmit space.
    pub plane_ready: Signal<In, Bits<8>>,
    pub fb_valid: Signal<In, Bit>,
    pub fb_idx: Signal<In, Bits<8>>,
    /// 0 ACK_GOOD, 1 SKIP_ONCE/ECN, 2 ALWAYS_SKIP, 3 NACK_TRIMMED, 4 NACK_TRIMMED_LASTHOP,
    /// 5 TIMEOUT, 6 PROBE_NONE, 7 PROBE_SKIP.
    pub fb_kind: Signal<In, Bits<3>>,
    /// 0 none, 1 DENY, 2 ALLOW, 3 LOAD (write `ctl_ev`, entry back to GOOD).
    pub ctl_op: Signal<In, Bits<2>>,
    pub ctl_idx: Signal<In, Bits<8>>,
    pub ctl_ev: Signal<In, Bits<32>>,
    /// 0 MRC state machine, 1 BITMAP penalties. An event is applied under the policy in force
    /// when it arrived.
    pub policy: Signal<In, Bit>,
    /// Feedback never takes the active count below this.
    pub min_active: Signal<In, Bits<9>>,
    /// Per-QP LFSR seed, loaded on reset (0 is replaced by 0xACE1).
    pub seed: Signal<In, Bits<16>>,
    /// State readback address (CSR path); `rd_state`/`rd_pen` in the outputs two cycles later.
    pub rd_idx: Signal<In, Bits<8>>,

    pub grant_valid: Signal<Out, Bit>,
    /// A request found no eligible EV.
    pub grant_none: Signal<Out, Bit>,
    pub grant_idx: Signal<Out, Bits<8>>,
    pub grant_plane: Signal<Out, Bits<3>>,
    /// EV value of the granted entry (meaningful with `grant_valid`).
    pub grant_ev: Signal<Out, Bits<32>>,
    /// Entries in GOOD or SKIP, as of four cycles earlier (pipelined popcount).
    pub active_count: Signal<Out, Bits<9>>,
    /// Feedback for an index outside the profile was dropped.
    pub fb_drop: Signal<Out, Bit>,
    /// Controller op for an index outside the profile was dropped.
    pub ctl_drop: Signal<Out, Bit>,
    /// ALWAYS_SKIP / TIMEOUT feedback arrived while `min_active` was binding: a target still
    /// active was held to SKIP instead of retired.
    pub retire_held: Signal<Out, Bit>,
    pub rd_state: Signal<Out, Bits<2>>,
    pub rd_pen: Signal<Out, Bits<4>>,

    // Elaboration constants (emitted as localparams).
    n_mask: Constant<Bits<8>>,
    rev_shift: Constant<Bits<8>>,
    total: Constant<Bits<9>>,
    lfsr_taps: Constant<Bits<16>>,
    ent_index: Vec<Constant<Bits<8>>>,
    ent_valid: Vec<Constant<Bit>>,
    ent_plane: Vec<Constant<Bits<3>>>,
    nibble: Vec<Constant<Bits<4>>>,
    group_base: Vec<Constant<Bits<8>>>,
    group_last: Constant<Bits<4>>,
    /// Popcount pipeline values right after reset (valid entries per quad / group / 64).
    rst_c4: Vec<Constant<Bits<3>>>,
    rst_c16: Vec<Constant<Bits<5>>>,
    rst_c64: Vec<Constant<Bits<7>>>,

    // Table.
    st: Vec<DFF<Bits<2>>>,
    pen: Vec<DFF<Bits<4>>>,
    ev_ram: LutRam<Bits<32>, 8>,
    // Rotation.
    ctr: DFF<Bits<8>>,
    lfsr: DFF<Bits<16>>,
    // E1 -> E2 event registers.
    e_land: Vec<DFF<Bit>>,
    e_fb: Vec<DFF<Bit>>,
    e_ctl: Vec<DFF<Bit>>,
    e_fbv: DFF<Bit>,
    e_ctlv: DFF<Bit>,
    e_op: DFF<Bits<2>>,
    e_idx: DFF<Bits<8>>,
    e_ev: DFF<Bits<32>>,
    // The accepted event's global effects: an MRC retire (the min-active bookkeeping) and a
    // DENY.
    e_kretire: DFF<Bit>,
    e_deny: DFF<Bit>,
    // The event kinds decoded at E1 so each entry's E2 update is a small function of flops:
    // MRC ->SKIP, MRC retire, probe NONE, probe SKIP, BITMAP penalty add (0 none, 1 +1, 2 +4,
    // 3 =15), landing under MRC / under BITMAP, DENY. One copy per 16-entry group, each
    // qualified by "the event's index is in this group" (no two copies are equal, so synthesis
    // keeps them apart): a copy drives 16 entries, where one flop driving the whole table put
    // two ~3 ns routes on the path into the penalty update.
    gq_kskip: Vec<DFF<Bit>>,
    gq_kretire: Vec<DFF<Bit>>,
    gq_kpnone: Vec<DFF<Bit>>,
    gq_kpskip: Vec<DFF<Bit>>,
    gq_padd: Vec<DFF<Bits<2>>>,
    gq_lskip: Vec<DFF<Bit>>,
    gq_lpen: Vec<DFF<Bit>>,
    gq_deny: Vec<DFF<Bit>>,
    // Min-active bookkeeping.
    c4: Vec<DFF<Bits<3>>>,
    c16: Vec<DFF<Bits<5>>>,
    c64: Vec<DFF<Bits<7>>>,
    active: DFF<Bits<9>>,
    ok: DFF<Bit>,
    retire_hist: DFF<Bits<4>>,
    pend: DFF<Bits<4>>,
    am: DFF<Bits<10>>,
    thr_q: DFF<Bits<10>>,
    thr1_q: DFF<Bits<10>>,
    deny_hist: DFF<Bits<4>>,
    // Grant pipeline.
    s1v: DFF<Bit>,
    s1a: Vec<DFF<Bit>>,
    s1e: Vec<DFF<Bit>>,
    s2v: DFF<Bit>,
    s2anya: Vec<DFF<Bit>>,
    s2maxa: Vec<DFF<Bits<4>>>,
    s2anye: Vec<DFF<Bit>>,
    s2maxe: Vec<DFF<Bits<4>>>,
    // The plane of each group's two candidates (a constant per entry, selected beside the
    // index), so the plane is not decoded from the index behind the stage-S select.
    s2pa: Vec<DFF<Bits<3>>>,
    s2pe: Vec<DFF<Bits<3>>>,
    rr: DFF<Bits<4>>,
    g_v: DFF<Bit>,
    g_n: DFF<Bit>,
    g_i: DFF<Bits<8>>,
    g_p: DFF<Bits<3>>,
    h_v: DFF<Bit>,
    h_n: DFF<Bit>,
    h_i: DFF<Bits<8>>,
    h_p: DFF<Bits<3>>,
    // Registered outputs.
    o_ev: DFF<Bits<32>>,
    o_gv: DFF<Bit>,
    o_gn: DFF<Bit>,
    o_gi: DFF<Bits<8>>,
    o_gp: DFF<Bits<3>>,
    o_fbd: DFF<Bit>,
    o_ctd: DFF<Bit>,
    o_rh: DFF<Bit>,
    rd_q: DFF<Bits<8>>,
    rd_q2: DFF<Bits<8>>,
    rd_hot: Vec<DFF<Bit>>,
    rdg_st: Vec<DFF<Bits<2>>>,
    rdg_pen: Vec<DFF<Bits<4>>>,
    o_rds: DFF<Bits<2>>,
    o_rdp: DFF<Bits<4>>,

    // Combinational intermediates (reused per unrolled iteration).
    rev: Signal<Local, Bits<8>>,
    s: Signal<Local, Bits<8>>,
    s_lo: Signal<Local, Bits<4>>,
    fb_in: Signal<Local, Bit>,
    ctl_in: Signal<Local, Bit>,
    fb_grp: Signal<Local, Bit>,
    k_skip: Signal<Local, Bit>,
    k_retire: Signal<Local, Bit>,
    k_pnone: Signal<Local, Bit>,
    k_pskip: Signal<Local, Bit>,
    k_padd: Signal<Local, Bits<2>>,
    land_grp: Signal<Local, Bit>,
    retire_now: Signal<Local, Bit>,
    deny_now: Signal<Local, Bit>,
    pend1: Signal<Local, Bits<4>>,
    pend2: Signal<Local, Bits<4>>,
    elig: Signal<Local, Bit>,
    nst: Signal<Local, Bits<2>>,
    npen: Signal<Local, Bits<4>>,
    t3: Signal<Local, Bits<3>>,
    t5: Signal<Local, Bits<5>>,
    t7: Signal<Local, Bits<7>>,
    t9: Signal<Local, Bits<9>>,
    t_any: Signal<Local, Bit>,
    t_max: Signal<Local, Bits<4>>,
    t_any2: Signal<Local, Bit>,
    t_max2: Signal<Local, Bits<4>>,
    t_pa: Signal<Local, Bits<3>>,
    t_pe: Signal<Local, Bits<3>>,
    t_pl: Signal<Local, Bits<3>>,
    pl_hi: Signal<Local, Bits<3>>,
    pl_lo: Signal<Local, Bits<3>>,
    found_a: Signal<Local, Bit>,
    found: Signal<Local, Bit>,
    pick_hi: Signal<Local, Bits<8>>,
    pick_lo: Signal<Local, Bits<8>>,
    g_hi: Signal<Local, Bits<4>>,
    g_lo: Signal<Local, Bits<4>>,
    g_sel: Signal<Local, Bits<4>>,
    sel: Signal<Local, Bits<8>>,
    gp: Signal<Local, Bits<3>>,
    rds: Signal<Local, Bits<2>>,
    rd_lo: Signal<Local, Bits<4>>,
    rd_hi: Signal<Local, Bits<4>>,
    rdp: Signal<Local, Bits<4>>,

    _n: usize,
    _groups: usize,
    _quads: usize,
    _sixtyfours: usize,
    _groups_per_64: usize,
}

fn dffs<T: Synth>(n: usize) -> Vec<DFF<T>> {
    (0..n).map(|_| DFF::default()).collect()
}

impl EvSprayArbiter {
    /// Elaborate the arbiter for a validated config.
    pub fn new(cfg: &NicConfig) -> Self {
        let n = cfg.ev_table_entries() as usize;
        let iw = cfg.ev_index_bits() as u64;
        let total = cfg.total_evs() as usize;
        let groups = n / 16;
        let quads = n / 4;
        let sixtyfours = groups.div_ceil(4);
        let valid_in = |lo: usize, len: usize| total.clamp(lo, lo + len) as u64 - lo as u64;
        let mut ram = std::collections::BTreeMap::new();
        let profile = cfg.default_ev_profile();
        for i in 0..256usize {
            let v = profile.get(i).copied().unwrap_or(0);
            ram.insert(Bits::<8>::from(i as u64), Bits::<32>::from(u64::from(v)));
        }
        let c8 = |v: u64| Constant::new(Bits::<8>::from(v));
        Self {
            clock: Default::default(),
            rst: Default::default(),
            req: Default::default(),
            plane_ready: Default::default(),
            fb_valid: Default::default(),
            fb_idx: Default::default(),
            fb_kind: Default::default(),
            ctl_op: Default::default(),
            ctl_idx: Default::default(),
            ctl_ev: Default::default(),
            policy: Default::default(),
            min_active: Default::default(),
            seed: Default::default(),
            rd_idx: Default::default(),
            grant_valid: Default::default(),
            grant_none: Default::default(),
            grant_idx: Default::default(),
            grant_plane: Default::default(),
            grant_ev: Default::default(),
            active_count: Default::default(),
            fb_drop: Default::default(),
            ctl_drop: Default::default(),
            retire_held: Default::default(),
            rd_state: Default::default(),
            rd_pen: Default::default(),
            n_mask: c8(n as u64 - 1),
            rev_shift: c8(8 - iw),
            total: Constant::new((total as u64).into()),
            lfsr_taps: Constant::new(0xB400u64.into()),
            ent_index: (0..n as u64).map(c8).collect(),
            ent_valid: (0..n).map(|i| Constant::new(i < total)).collect(),
            ent_plane: (0..n as u32)
                .map(|i| Constant::new(u64::from(cfg.plane_of(i).unwrap_or(0)).into()))
                .collect(),
            nibble: (0..16u64).map(|j| Constant::new(j.into())).collect(),
            group_base: (0..groups as u64).map(|g| c8(g * 16)).collect(),
            group_last: Constant::new((groups as u64 - 1).into()),
            rst_c4: (0..quads)
                .map(|q| Constant::new(valid_in(4 * q, 4).into()))
                .collect(),
            rst_c16: (0..groups)
                .map(|g| Constant::new(valid_in(16 * g, 16).into()))
                .collect(),
            rst_c64: (0..sixtyfours)
                .map(|h| Constant::new(valid_in(64 * h, 64).into()))
                .collect(),
            st: dffs(n),
            pen: dffs(n),
            ev_ram: LutRam::new(ram),
            ctr: Default::default(),
            lfsr: Default::default(),
            e_land: dffs(n),
            e_fb: dffs(n),
            e_ctl: dffs(n),
            e_fbv: Default::default(),
            e_ctlv: Default::default(),
            e_op: Default::default(),
            e_idx: Default::default(),
            e_ev: Default::default(),
            e_kretire: Default::default(),
            e_deny: Default::default(),
            gq_kskip: dffs(groups),
            gq_kretire: dffs(groups),
            gq_kpnone: dffs(groups),
            gq_kpskip: dffs(groups),
            gq_padd: dffs(groups),
            gq_lskip: dffs(groups),
            gq_lpen: dffs(groups),
            gq_deny: dffs(groups),
            c4: dffs(quads),
            c16: dffs(groups),
            c64: dffs(sixtyfours),
            active: Default::default(),
            ok: Default::default(),
            retire_hist: Default::default(),
            pend: Default::default(),
            am: Default::default(),
            thr_q: Default::default(),
            thr1_q: Default::default(),
            deny_hist: Default::default(),
            s1v: Default::default(),
            s1a: dffs(n),
            s1e: dffs(n),
            s2v: Default::default(),
            s2anya: dffs(groups),
            s2maxa: dffs(groups),
            s2anye: dffs(groups),
            s2maxe: dffs(groups),
            s2pa: dffs(groups),
            s2pe: dffs(groups),
            rr: Default::default(),
            g_v: Default::default(),
            g_n: Default::default(),
            g_i: Default::default(),
            g_p: Default::default(),
            h_v: Default::default(),
            h_n: Default::default(),
            h_i: Default::default(),
            h_p: Default::default(),
            o_ev: Default::default(),
            o_gv: Default::default(),
            o_gn: Default::default(),
            o_gi: Default::default(),
            o_gp: Default::default(),
            o_fbd: Default::default(),
            o_ctd: Default::default(),
            o_rh: Default::default(),
            rd_q: Default::default(),
            rd_q2: Default::default(),
            rd_hot: dffs(16),
            rdg_st: dffs(groups),
            rdg_pen: dffs(groups),
            o_rds: Default::default(),
            o_rdp: Default::default(),
            rev: Default::default(),
            s: Default::default(),
            s_lo: Default::default(),
            fb_in: Default::default(),
            ctl_in: Default::default(),
            fb_grp: Default::default(),
            k_skip: Default::default(),
            k_retire: Default::default(),
            k_pnone: Default::default(),
            k_pskip: Default::default(),
            k_padd: Default::default(),
            land_grp: Default::default(),
            retire_now: Default::default(),
            deny_now: Default::default(),
            pend1: Default::default(),
            pend2: Default::default(),
            elig: Default::default(),
            nst: Default::default(),
            npen: Default::default(),
            t3: Default::default(),
            t5: Default::default(),
            t7: Default::default(),
            t9: Default::default(),
            t_any: Default::default(),
            t_max: Default::default(),
            t_any2: Default::default(),
            t_max2: Default::default(),
            t_pa: Default::default(),
            t_pe: Default::default(),
            t_pl: Default::default(),
            pl_hi: Default::default(),
            pl_lo: Default::default(),
            found_a: Default::default(),
            found: Default::default(),
            pick_hi: Default::default(),
            pick_lo: Default::default(),
            g_hi: Default::default(),
            g_lo: Default::default(),
            g_sel: Default::default(),
            sel: Default::default(),
            gp: Default::default(),
            rds: Default::default(),
            rd_lo: Default::default(),
            rd_hi: Default::default(),
            rdp: Default::default(),
            _n: n,
            _groups: groups,
            _quads: quads,
            _sixtyfours: sixtyfours,
            _groups_per_64: groups.min(4),
        }
    }
}

impl Logic for EvSprayArbiter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            ctr,
            lfsr,
            e_fbv,
            e_kretire,
            e_deny,
            e_ctlv,
            e_op,
            e_idx,
            e_ev,
            active,
            ok,
            retire_hist,
            pend,
            am,
            thr_q,
            thr1_q,
            deny_hist,
            s1v,
            s2v,
            rr,
            g_v,
            g_n,
            g_i,
            g_p,
            h_v,
            h_n,
            h_i,
            h_p,
            o_ev,
            o_gv,
            o_gn,
            o_gi,
            o_gp,
            o_fbd,
            o_ctd,
            o_rh,
            rd_q,
            rd_q2,
            o_rds,
            o_rdp
        );
        self.ev_ram.read_clock.next = self.clock.val();
        self.ev_ram.write_clock.next = self.clock.val();

        // ---- rotation pointer ------------------------------------------------------------
        self.rev.next = bits::<8>(0);
        for b in 0..8 {
            self.rev.next = self
                .rev
                .val()
                .replace_bit(b, self.ctr.q.val().get_bit(7 - b));
        }
        self.s.next = ((self.rev.val() >> self.rev_shift.val())
            ^ bit_cast::<8, 16>(self.lfsr.q.val()))
            & self.n_mask.val();
        self.s_lo.next = bit_cast::<4, 8>(self.s.val());
        if self.req.val() {
            self.ctr.d.next = self.ctr.q.val() + 1;
            if (self.ctr.q.val() & self.n_mask.val()) == self.n_mask.val() {
                if self.lfsr.q.val().get_bit(0) {
                    self.lfsr.d.next = (self.lfsr.q.val() >> 1) ^ self.lfsr_taps.val();
                } else {
                    self.lfsr.d.next = self.lfsr.q.val() >> 1;
                }
            }
        }

        // ---- E1: accept this cycle's events ------------------------------------------------
        // 9-bit compares: with a full 256-entry profile an 8-bit `idx <= 255` would be constant.
        self.fb_in.next =
            self.fb_valid.val() & (bit_cast::<9, 8>(self.fb_idx.val()) < self.total.val());
        self.ctl_in.next =
            (self.ctl_op.val() != 0) & (bit_cast::<9, 8>(self.ctl_idx.val()) < self.total.val());
        self.e_fbv.d.next = self.fb_in.val();
        self.e_ctlv.d.next = self.ctl_in.val();
        self.e_op.d.next = self.ctl_op.val();
        self.e_idx.d.next = self.ctl_idx.val();
        self.e_ev.d.next = self.ctl_ev.val();
        self.k_skip.next =
            !self.policy.val() & ((self.fb_kind.val() == 1) | (self.fb_kind.val() == 3));
        self.k_retire.next =
            !self.policy.val() & ((self.fb_kind.val() == 2) | (self.fb_kind.val() == 5));
        self.k_pnone.next = !self.policy.val() & (self.fb_kind.val() == 6);
        self.k_pskip.next = !self.policy.val() & (self.fb_kind.val() == 7);
        self.k_padd.next = bits::<2>(0);
        if self.policy.val() {
            if self.fb_kind.val() == 1 {
                self.k_padd.next = bits::<2>(1);
            }
            if self.fb_kind.val() == 3 {
                self.k_padd.next = bits::<2>(2);
            }
            if (self.fb_kind.val() == 2) | (self.fb_kind.val() == 5) {
                self.k_padd.next = bits::<2>(3);
            }
        }
        self.e_kretire.d.next = self.k_retire.val();
        self.e_deny.d.next = self.ctl_in.val() & (self.ctl_op.val() == 1);
        // Per-group copies (see the field docs): the index's group bits against the group's
        // base. Padding entries and out-of-profile indices are gated by the per-entry one-hots.
        for g in 0..self._groups {
            self.gq_kskip[g].clock.next = self.clock.val();
            self.gq_kretire[g].clock.next = self.clock.val();
            self.gq_kpnone[g].clock.next = self.clock.val();
            self.gq_kpskip[g].clock.next = self.clock.val();
            self.gq_padd[g].clock.next = self.clock.val();
            self.gq_lskip[g].clock.next = self.clock.val();
            self.gq_lpen[g].clock.next = self.clock.val();
            self.gq_deny[g].clock.next = self.clock.val();
            self.fb_grp.next = (self.fb_idx.val() & bits::<8>(0xF0)) == self.group_base[g].val();
            self.land_grp.next = (self.s.val() & bits::<8>(0xF0)) == self.group_base[g].val();
            self.gq_kskip[g].d.next = self.fb_grp.val() & self.k_skip.val();
            self.gq_kretire[g].d.next = self.fb_grp.val() & self.k_retire.val();
            self.gq_kpnone[g].d.next = self.fb_grp.val() & self.k_pnone.val();
            self.gq_kpskip[g].d.next = self.fb_grp.val() & self.k_pskip.val();
            self.gq_padd[g].d.next = bits::<2>(0);
            if self.fb_grp.val() {
                self.gq_padd[g].d.next = self.k_padd.val();
            }
            self.gq_lskip[g].d.next = self.land_grp.val() & self.req.val() & !self.policy.val();
            self.gq_lpen[g].d.next = self.land_grp.val() & self.req.val() & self.policy.val();
            self.gq_deny[g].d.next = ((self.ctl_idx.val() & bits::<8>(0xF0))
                == self.group_base[g].val())
                & (self.ctl_op.val() == 1);
        }
        self.o_fbd.d.next = self.fb_valid.val() & !self.fb_in.val();
        self.o_ctd.d.next = (self.ctl_op.val() != 0) & !self.ctl_in.val();

        // ---- E2 decode of the events accepted last cycle -----------------------------------
        self.retire_now.next = self.e_fbv.q.val() & self.e_kretire.q.val() & self.ok.q.val();
        self.deny_now.next = self.e_deny.q.val();
        self.o_rh.d.next = self.e_fbv.q.val() & self.e_kretire.q.val() & !self.ok.q.val();
        self.ev_ram.write_address.next = self.e_idx.q.val();
        self.ev_ram.write_data.next = self.e_ev.q.val();
        self.ev_ram.write_enable.next =
            self.e_ctlv.q.val() & (self.e_op.q.val() == 3) & !self.rst.val();

        // ---- per entry: stage R eligibility, E1 decode, E2 state update --------------------
        for i in 0..self._n {
            self.st[i].clock.next = self.clock.val();
            self.pen[i].clock.next = self.clock.val();
            self.s1a[i].clock.next = self.clock.val();
            self.s1e[i].clock.next = self.clock.val();
            self.e_land[i].clock.next = self.clock.val();
            self.e_fb[i].clock.next = self.clock.val();
            self.e_ctl[i].clock.next = self.clock.val();

            self.elig.next = self.ent_valid[i].val()
                & self
                    .plane_ready
                    .val()
                    .get_bit(self.ent_plane[i].val().index())
                & (self.st[i].q.val() == 0)
                & (!self.policy.val() | (self.pen[i].q.val() == 0));
            self.s1e[i].d.next = self.elig.val();
            self.s1a[i].d.next = self.elig.val() & (self.nibble[i % 16].val() <= self.s_lo.val());

            self.e_land[i].d.next = self.req.val() & (self.s.val() == self.ent_index[i].val());
            // An index equal to a real entry's is in range, so the one-hot decodes skip the
            // range compare (fb_in / ctl_in, a carry chain) and padding entries decode to 0.
            self.e_fb[i].d.next = self.fb_valid.val()
                & self.ent_valid[i].val()
                & (self.fb_idx.val() == self.ent_index[i].val());
            self.e_ctl[i].d.next = (self.ctl_op.val() != 0)
                & self.ent_valid[i].val()
                & (self.ctl_idx.val() == self.ent_index[i].val());

            self.nst.next = self.st[i].q.val();
            self.npen.next = self.pen[i].q.val();
            // 1. the rotation landed on this entry
            if self.e_land[i].q.val() {
                if self.gq_lpen[i / 16].q.val() & (self.npen.val() != 0) {
                    self.npen.next = self.npen.val() - 1;
                }
                if self.gq_lskip[i / 16].q.val() & (self.nst.val() == 1) {
                    self.nst.next = bits::<2>(0);
                }
            }
            // 2. path feedback (flags decoded at E1, policy included)
            if self.e_fb[i].q.val() {
                if self.gq_padd[i / 16].q.val() == 1 {
                    if self.npen.val() != 15 {
                        self.npen.next = self.npen.val() + 1;
                    }
                }
                if self.gq_padd[i / 16].q.val() == 2 {
                    if self.npen.val() >= 11 {
                        self.npen.next = bits::<4>(15);
                    } else {
                        self.npen.next = self.npen.val() + 4;
                    }
                }
                if self.gq_padd[i / 16].q.val() == 3 {
                    self.npen.next = bits::<4>(15);
                }
                if self.gq_kskip[i / 16].q.val() & (self.nst.val() == 0) {
                    self.nst.next = bits::<2>(1);
                }
                if self.gq_kretire[i / 16].q.val() & (self.nst.val() <= 1) {
                    if self.ok.q.val() {
                        self.nst.next = bits::<2>(2);
                    } else {
                        self.nst.next = bits::<2>(1);
                    }
                }
                if self.gq_kpnone[i / 16].q.val() & (self.nst.val() == 2) {
                    self.nst.next = bits::<2>(0);
                }
                if self.gq_kpskip[i / 16].q.val() & (self.nst.val() == 2) {
                    self.nst.next = bits::<2>(1);
                }
            }
            // 3. controller
            if self.e_ctl[i].q.val() {
                if self.gq_deny[i / 16].q.val() {
                    self.nst.next = bits::<2>(3);
                } else {
                    self.nst.next = bits::<2>(0);
                    self.npen.next = bits::<4>(0);
                }
            }
            if self.rst.val() {
                self.npen.next = bits::<4>(0);
                if self.ent_valid[i].val() {
                    self.nst.next = bits::<2>(0);
                } else {
                    self.nst.next = bits::<2>(3);
                }
                self.e_land[i].d.next = false;
                self.e_fb[i].d.next = false;
                self.e_ctl[i].d.next = false;
            }
            self.st[i].d.next = self.nst.val();
            self.pen[i].d.next = self.npen.val();
        }
        self.s1v.d.next = self.req.val();

        // ---- active count: popcount in four register stages -------------------------------
        for q in 0..self._quads {
            self.c4[q].clock.next = self.clock.val();
            self.t3.next = bits::<3>(0);
            for j in 0..4 {
                if !self.st[q * 4 + j].q.val().get_bit(1) {
                    self.t3.next = self.t3.val() + 1;
                }
            }
            self.c4[q].d.next = self.t3.val();
            if self.rst.val() {
                self.c4[q].d.next = self.rst_c4[q].val();
            }
        }
        for g in 0..self._groups {
            self.c16[g].clock.next = self.clock.val();
            self.t5.next = bits::<5>(0);
            for j in 0..4 {
                self.t3.next = self.c4[g * 4 + j].q.val();
                self.t5.next = self.t5.val() + bit_cast::<5, 3>(self.t3.val());
            }
            self.c16[g].d.next = self.t5.val();
            if self.rst.val() {
                self.c16[g].d.next = self.rst_c16[g].val();
            }
        }
        for h in 0..self._sixtyfours {
            self.c64[h].clock.next = self.clock.val();
            self.t7.next = bits::<7>(0);
            for j in 0..self._groups_per_64 {
                self.t5.next = self.c16[h * 4 + j].q.val();
                self.t7.next = self.t7.val() + bit_cast::<7, 5>(self.t5.val());
            }
            self.c64[h].d.next = self.t7.val();
            if self.rst.val() {
                self.c64[h].d.next = self.rst_c64[h].val();
            }
        }
        self.t9.next = bits::<9>(0);
        for h in 0..self._sixtyfours {
            self.t7.next = self.c64[h].q.val();
            self.t9.next = self.t9.val() + bit_cast::<9, 7>(self.t7.val());
        }
        self.active.d.next = self.t9.val();

        // Retirements / denials the lagging count has not seen yet: this cycle's and the four
        // before it. ok: may the next cycle retire? Both outcomes of this cycle's retirement are
        // compared from registers, and `retire_now` (itself a function of `ok`) only selects,
        // which keeps the ok -> retire -> ok loop two gates long.
        // `am` = active + 512 - min_active, registered off the loop, so `ok` is a single compare
        // against 512 | pending (no carry: pending < 512). `pend` counts the set bits of both
        // histories, kept incrementally (new in, oldest out). Both outcomes of this cycle's
        // retirement are compared and `retire_now` (itself a function of `ok`) only selects.
        self.am.d.next =
            bit_cast::<10, 9>(self.t9.val()) + 512 - bit_cast::<10, 9>(self.min_active.val());
        self.pend.d.next = self.pend.q.val()
            + bit_cast::<4, 1>(self.retire_now.val().into())
            + bit_cast::<4, 1>(self.deny_now.val().into())
            - bit_cast::<4, 1>(self.retire_hist.q.val().get_bit(3).into())
            - bit_cast::<4, 1>(self.deny_hist.q.val().get_bit(3).into());
        // What `ok` compares against next cycle: the pending count plus the denial already
        // accepted at E1 (it applies next cycle), and the same plus one, both registered.
        // The denial is accepted at the end of the control input's range check, so both sums
        // are formed off `pend` and it only selects (4-bit, wrapping as pend + deny + 1 does).
        self.pend1.next = self.pend.d.val() + 1;
        self.pend2.next = self.pend.d.val() + 2;
        if self.e_deny.d.val() {
            self.thr_q.d.next = bit_cast::<10, 4>(self.pend1.val()) | bits::<10>(512);
            self.thr1_q.d.next = bit_cast::<10, 4>(self.pend2.val()) | bits::<10>(512);
        } else {
            self.thr_q.d.next = bit_cast::<10, 4>(self.pend.d.val()) | bits::<10>(512);
            self.thr1_q.d.next = bit_cast::<10, 4>(self.pend1.val()) | bits::<10>(512);
        }
        if self.retire_now.val() {
            self.ok.d.next = self.am.q.val() > self.thr1_q.q.val();
        } else {
            self.ok.d.next = self.am.q.val() > self.thr_q.q.val();
        }
        self.retire_hist.d.next =
            (self.retire_hist.q.val() << 1) | bit_cast::<4, 1>(self.retire_now.val().into());
        self.deny_hist.d.next =
            (self.deny_hist.q.val() << 1) | bit_cast::<4, 1>(self.deny_now.val().into());

        // ---- stage G: per 16-entry group, any hit and the highest hit ----------------------
        for g in 0..self._groups {
            self.s2anya[g].clock.next = self.clock.val();
            self.s2maxa[g].clock.next = self.clock.val();
            self.s2anye[g].clock.next = self.clock.val();
            self.s2maxe[g].clock.next = self.clock.val();
            self.s2pa[g].clock.next = self.clock.val();
            self.s2pe[g].clock.next = self.clock.val();
            self.t_any.next = false;
            self.t_max.next = bits::<4>(0);
            self.t_pa.next = bits::<3>(0);
            self.t_any2.next = false;
            self.t_max2.next = bits::<4>(0);
            self.t_pe.next = bits::<3>(0);
            for j in 0..16 {
                if self.s1a[g * 16 + j].q.val() {
                    self.t_any.next = true;
                    self.t_max.next = self.nibble[j].val();
                    self.t_pa.next = self.ent_plane[g * 16 + j].val();
                }
                if self.s1e[g * 16 + j].q.val() {
                    self.t_any2.next = true;
                    self.t_max2.next = self.nibble[j].val();
                    self.t_pe.next = self.ent_plane[g * 16 + j].val();
                }
            }
            self.s2anya[g].d.next = self.t_any.val();
            self.s2maxa[g].d.next = self.t_max.val();
            self.s2anye[g].d.next = self.t_any2.val();
            self.s2maxe[g].d.next = self.t_max2.val();
            self.s2pa[g].d.next = self.t_pa.val();
            self.s2pe[g].d.next = self.t_pe.val();
        }
        self.s2v.d.next = self.s1v.q.val();

        // ---- stage S: round-robin over groups with an eligible entry (descending from `rr`),
        // then the group's at-or-below-pointer hit, else its highest eligible entry ----------
        self.sel.next = bits::<8>(0);
        self.pick_hi.next = bits::<8>(0);
        self.pick_lo.next = bits::<8>(0);
        self.g_hi.next = bits::<4>(0);
        self.g_lo.next = bits::<4>(0);
        self.g_sel.next = bits::<4>(0);
        self.pl_hi.next = bits::<3>(0);
        self.pl_lo.next = bits::<3>(0);
        self.t_pl.next = bits::<3>(0);
        self.found_a.next = false;
        self.found.next = false;
        for g in 0..self._groups {
            if self.s2anye[g].q.val() {
                self.found.next = true;
                if self.s2anya[g].q.val() {
                    self.t_max.next = self.s2maxa[g].q.val();
                    self.t_pl.next = self.s2pa[g].q.val();
                } else {
                    self.t_max.next = self.s2maxe[g].q.val();
                    self.t_pl.next = self.s2pe[g].q.val();
                }
                // bit_cast's width is evaluated at elaboration, so it cannot name a loop index.
                self.pick_hi.next = self.group_base[g].val() | bit_cast::<8, 4>(self.t_max.val());
                self.g_hi.next = self.nibble[g].val();
                self.pl_hi.next = self.t_pl.val();
                if self.nibble[g].val() <= self.rr.q.val() {
                    self.found_a.next = true;
                    self.pick_lo.next = self.pick_hi.val();
                    self.g_lo.next = self.nibble[g].val();
                    self.pl_lo.next = self.t_pl.val();
                }
            }
        }
        if self.found_a.val() {
            self.sel.next = self.pick_lo.val();
            self.g_sel.next = self.g_lo.val();
            self.gp.next = self.pl_lo.val();
        } else {
            self.sel.next = self.pick_hi.val();
            self.g_sel.next = self.g_hi.val();
            self.gp.next = self.pl_hi.val();
        }
        if !self.s2v.q.val() {
            self.found.next = false;
            self.sel.next = bits::<8>(0);
            self.gp.next = bits::<3>(0);
        }
        if self.found.val() {
            if self.g_sel.val() == 0 {
                self.rr.d.next = self.group_last.val();
            } else {
                self.rr.d.next = self.g_sel.val() - 1;
            }
        }
        // Stage S is registered before the EV RAM read (the select tree would otherwise sit in
        // front of the RAM's read mux); the grant outputs wait for the RAM so they stay aligned.
        self.g_v.d.next = self.found.val();
        self.g_n.d.next = self.s2v.q.val() & !self.found.val();
        self.g_i.d.next = self.sel.val();
        self.g_p.d.next = self.gp.val();
        self.ev_ram.read_address.next = self.g_i.q.val();
        // The RAM's data is registered once more, next to the outputs (the LUT RAM's read flop
        // sits with its cells); the other grant fields wait one more cycle with it. The table
        // is a LUT RAM, not a DP16KD: see `lut_ram` for why.
        self.h_v.d.next = self.g_v.q.val();
        self.h_n.d.next = self.g_n.q.val();
        self.h_i.d.next = self.g_i.q.val();
        self.h_p.d.next = self.g_p.q.val();
        self.o_gv.d.next = self.h_v.q.val();
        self.o_gn.d.next = self.h_n.q.val();
        self.o_gi.d.next = self.h_i.q.val();
        self.o_gp.d.next = self.h_p.q.val();
        self.o_ev.d.next = self.ev_ram.read_data.val();

        // ---- readback (CSR path, not line rate): address registered, then a 16:1 read per
        // group (registered), then the group select --------------------------------------
        self.rd_q.d.next = self.rd_idx.val();
        self.rd_q2.d.next = self.rd_q.q.val();
        // The address's low nibble is registered one-hot, so each group's 16:1 read is an
        // AND-OR from flops (the nibble fans out to every group).
        self.rd_lo.next = bit_cast::<4, 8>(self.rd_idx.val());
        for j in 0..16 {
            self.rd_hot[j].clock.next = self.clock.val();
            self.rd_hot[j].d.next = self.rd_lo.val() == self.nibble[j].val();
            if self.rst.val() {
                // rd_q resets to 0; its one-hot copy follows
                self.rd_hot[j].d.next = self.nibble[j].val() == 0;
            }
        }
        for g in 0..self._groups {
            self.rdg_st[g].clock.next = self.clock.val();
            self.rdg_pen[g].clock.next = self.clock.val();
            self.rds.next = bits::<2>(0);
            self.rdp.next = bits::<4>(0);
            for j in 0..16 {
                if self.rd_hot[j].q.val() {
                    self.rds.next = self.rds.val() | self.st[g * 16 + j].q.val();
                    self.rdp.next = self.rdp.val() | self.pen[g * 16 + j].q.val();
                }
            }
            self.rdg_st[g].d.next = self.rds.val();
            self.rdg_pen[g].d.next = self.rdp.val();
        }
        self.rd_hi.next = bit_cast::<4, 8>(self.rd_q2.q.val() >> 4);
        self.o_rds.d.next = bits::<2>(0);
        self.o_rdp.d.next = bits::<4>(0);
        for g in 0..self._groups {
            if self.rd_hi.val() == self.nibble[g].val() {
                self.o_rds.d.next = self.rdg_st[g].q.val();
                self.o_rdp.d.next = self.rdg_pen[g].q.val();
            }
        }

        // ---- synchronous reset -----------------------------------------------------------
        if self.rst.val() {
            self.ctr.d.next = bits::<8>(0);
            self.rr.d.next = bits::<4>(0);
            if self.seed.val() == 0 {
                self.lfsr.d.next = bits::<16>(0xACE1);
            } else {
                self.lfsr.d.next = self.seed.val();
            }
            self.e_fbv.d.next = false;
            self.e_ctlv.d.next = false;
            self.e_deny.d.next = false;
            self.active.d.next = self.total.val();
            self.ok.d.next =
                bit_cast::<10, 9>(self.total.val()) > bit_cast::<10, 9>(self.min_active.val());
            self.retire_hist.d.next = bits::<4>(0);
            self.pend.d.next = bits::<4>(0);
            self.thr_q.d.next = bits::<10>(512);
            self.thr1_q.d.next = bits::<10>(513);
            self.am.d.next = bit_cast::<10, 9>(self.total.val()) + 512
                - bit_cast::<10, 9>(self.min_active.val());
            self.deny_hist.d.next = bits::<4>(0);
            self.s1v.d.next = false;
            self.s2v.d.next = false;
            self.g_v.d.next = false;
            self.g_n.d.next = false;
            self.g_i.d.next = bits::<8>(0);
            self.g_p.d.next = bits::<3>(0);
            self.h_v.d.next = false;
            self.h_n.d.next = false;
            self.h_i.d.next = bits::<8>(0);
            self.h_p.d.next = bits::<3>(0);
            self.o_gv.d.next = false;
            self.o_gn.d.next = false;
            self.o_gi.d.next = bits::<8>(0);
            self.o_gp.d.next = bits::<3>(0);
            self.o_fbd.d.next = false;
            self.o_ctd.d.next = false;
            self.o_rh.d.next = false;
            self.rd_q.d.next = bits::<8>(0);
            self.rd_q2.d.next = bits::<8>(0);
            self.o_rds.d.next = bits::<2>(0);
            self.o_rdp.d.next = bits::<4>(0);
        }

        self.grant_valid.next = self.o_gv.q.val();
        self.grant_none.next = self.o_gn.q.val();
        self.grant_idx.next = self.o_gi.q.val();
        self.grant_plane.next = self.o_gp.q.val();
        self.grant_ev.next = self.o_ev.q.val();
        self.active_count.next = self.active.q.val();
        self.fb_drop.next = self.o_fbd.q.val();
        self.ctl_drop.next = self.o_ctd.q.val();
        self.retire_held.next = self.o_rh.q.val();
        self.rd_state.next = self.o_rds.q.val();
        self.rd_pen.next = self.o_rdp.q.val();
    }
}
