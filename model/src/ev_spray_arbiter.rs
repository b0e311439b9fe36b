//! Golden model of `ev_spray_arbiter`: cycle- and bit-exact with the RTL, written to be read
//! against `shared/spec/mrc-notes.md` section 2.
//!
//! Selection (see the RTL's module doc for the why): the 16-entry group by round-robin among
//! groups with an eligible EV, then inside it the highest eligible entry at or below the
//! rotation pointer's low nibble, else its highest eligible entry.
//!
//! Contract (the RTL's, restated): `step(inputs)` is one rising clock edge; the returned outputs
//! are the registers after that edge. A request at step t is answered in the outputs of step
//! t+4 and is decided on the table as it stood at step t. Feedback, controller ops and the
//! rotation landing of step t change the table at the edge of step t+1, in a fixed order:
//! (1) landing, (2) feedback, (3) controller, then (4) reset overrides. The min-active rule
//! uses a four-stage popcount of the table minus every retirement/denial decided since.

use mrc_config::NicConfig;

/// EV path state. The discriminants are the RTL encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EvState {
    Good = 0,
    /// Passed over until the rotation lands on it, then GOOD again.
    Skip = 1,
    /// Retired by feedback; only a probe answer brings it back.
    AssumedBad = 2,
    /// Retired by the controller; never recovers by itself.
    Denied = 3,
}

impl EvState {
    fn is_active(self) -> bool {
        matches!(self, EvState::Good | EvState::Skip)
    }
    pub fn from_bits(v: u8) -> Self {
        match v & 3 {
            0 => EvState::Good,
            1 => EvState::Skip,
            2 => EvState::AssumedBad,
            _ => EvState::Denied,
        }
    }
}

/// Path feedback kinds (the `fb_kind` port encoding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedbackKind {
    AckGood = 0,
    /// SACK M=SKIP_ONCE, i.e. an ECN mark mid-fabric.
    SkipOnce = 1,
    AlwaysSkip = 2,
    NackTrimmed = 3,
    /// Trimmed at the last hop: the receiver's port, not the path, was congested.
    NackTrimmedLastHop = 4,
    Timeout = 5,
    ProbeNone = 6,
    ProbeSkip = 7,
}

impl FeedbackKind {
    pub const ALL: [FeedbackKind; 8] = [
        FeedbackKind::AckGood,
        FeedbackKind::SkipOnce,
        FeedbackKind::AlwaysSkip,
        FeedbackKind::NackTrimmed,
        FeedbackKind::NackTrimmedLastHop,
        FeedbackKind::Timeout,
        FeedbackKind::ProbeNone,
        FeedbackKind::ProbeSkip,
    ];
    pub fn from_bits(v: u8) -> Self {
        Self::ALL[(v & 7) as usize]
    }
}

/// Controller ops (the `ctl_op` port encoding).
pub const CTL_NONE: u8 = 0;
pub const CTL_DENY: u8 = 1;
pub const CTL_ALLOW: u8 = 2;
pub const CTL_LOAD: u8 = 3;

/// One cycle of inputs; field names are the RTL port names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArbiterInputs {
    pub rst: bool,
    pub req: bool,
    pub plane_ready: u8,
    pub fb_valid: bool,
    pub fb_idx: u8,
    pub fb_kind: u8,
    pub ctl_op: u8,
    pub ctl_idx: u8,
    pub ctl_ev: u32,
    /// false: MRC state machine; true: BITMAP penalties.
    pub policy: bool,
    pub min_active: u16,
    pub seed: u16,
    pub rd_idx: u8,
}

impl ArbiterInputs {
    /// No request, no event, every plane ready; policy, `min_active` and the QP-0 seed from the
    /// config: the base every stimulus starts from.
    pub fn idle(cfg: &NicConfig) -> Self {
        ArbiterInputs {
            plane_ready: 0xFF,
            policy: cfg.spray_policy.port_value() == 1,
            min_active: cfg.ev_min_active as u16,
            seed: cfg.qp_spray_seed(0),
            ..Default::default()
        }
    }
}

/// One cycle of outputs; field names are the RTL port names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArbiterOutputs {
    pub grant_valid: bool,
    pub grant_none: bool,
    pub grant_idx: u8,
    pub grant_plane: u8,
    pub grant_ev: u32,
    pub active_count: u16,
    pub fb_drop: bool,
    pub ctl_drop: bool,
    pub retire_held: bool,
    pub rd_state: u8,
    pub rd_pen: u8,
}

/// Galois LFSR x^16 + x^14 + x^13 + x^11 + 1 (maximal length).
const LFSR_TAPS: u16 = 0xB400;
const LFSR_ZERO_SEED: u16 = 0xACE1;
/// BITMAP penalties (UEC reference simulator): ECN +1, NACK +4, timeout +15, saturating at 15.
const PEN_MAX: u8 = 15;

#[derive(Debug, Clone)]
pub struct EvSprayArbiter {
    n: usize,
    total: usize,
    index_bits: u32,
    plane_of: Vec<u8>,
    // table
    st: Vec<EvState>,
    pen: Vec<u8>,
    ev_ram: Vec<u32>,
    // rotation
    ctr: u8,
    lfsr: u16,
    /// Round-robin group pointer: the next grant goes to the highest group <= rr with an
    /// eligible entry (else the highest such group), then rr moves just below it.
    rr: usize,
    // events accepted last cycle (E1), applied this cycle (E2)
    e_land: Option<usize>,
    e_fb: Option<usize>,
    e_kind: u8,
    e_ctl: Option<usize>,
    e_op: u8,
    e_idx: u8,
    e_ev: u32,
    e_pol: bool,
    // min-active bookkeeping: popcount pipeline, "may retire" flag, recent retires/denies
    c4: Vec<u32>,
    c16: Vec<u32>,
    c64: Vec<u32>,
    active: u32,
    /// active + 512 - min_active, registered (min_active takes effect a cycle later).
    am: u32,
    ok: bool,
    retire_hist: u8,
    deny_hist: u8,
    // grant pipeline: stage 1 (eligibility snapshot), stage 2 (per-group summaries)
    s1_valid: bool,
    s1_at_or_below: Vec<bool>,
    s1_elig: Vec<bool>,
    s2_valid: bool,
    s2_below: Vec<Option<u8>>,
    s2_any: Vec<Option<u8>>,
    // readback pipeline: address, address again, per-group (state, penalty) of rd_q's nibble
    /// Stage S result, registered before the EV RAM read: (valid, none, index, plane).
    g: (bool, bool, u8, u8),
    /// The same one stage later, beside the EV RAM's read data.
    h: (bool, bool, u8, u8),
    ram_data: u32,
    rd_q: u8,
    rd_q2: u8,
    rd_group: Vec<(u8, u8)>,
    out: ArbiterOutputs,
}

/// Valid (in-profile) entries in `lo .. lo + len`.
fn valid_in(total: usize, lo: usize, len: usize) -> u32 {
    (total.clamp(lo, lo + len) - lo) as u32
}

impl EvSprayArbiter {
    /// Power-on state equals the RTL's initial blocks: every register 0, EV RAM = profile.
    pub fn new(cfg: &NicConfig) -> Self {
        let n = cfg.ev_table_entries() as usize;
        let groups = n / 16;
        let mut ev_ram = vec![0u32; 256];
        ev_ram[..cfg.total_evs() as usize].copy_from_slice(&cfg.default_ev_profile());
        EvSprayArbiter {
            n,
            total: cfg.total_evs() as usize,
            index_bits: cfg.ev_index_bits(),
            plane_of: (0..n as u32)
                .map(|i| cfg.plane_of(i).unwrap_or(0) as u8)
                .collect(),
            st: vec![EvState::Good; n],
            pen: vec![0; n],
            ev_ram,
            ctr: 0,
            lfsr: 0,
            rr: 0,
            e_land: None,
            e_fb: None,
            e_kind: 0,
            e_ctl: None,
            e_op: 0,
            e_idx: 0,
            e_ev: 0,
            e_pol: false,
            c4: vec![0; n / 4],
            c16: vec![0; groups],
            c64: vec![0; groups.div_ceil(4)],
            active: 0,
            am: 0,
            ok: false,
            retire_hist: 0,
            deny_hist: 0,
            s1_valid: false,
            s1_at_or_below: vec![false; n],
            s1_elig: vec![false; n],
            s2_valid: false,
            s2_below: vec![None; groups],
            s2_any: vec![None; groups],
            g: (false, false, 0, 0),
            h: (false, false, 0, 0),
            ram_data: 0,
            rd_q: 0,
            rd_q2: 0,
            rd_group: vec![(0, 0); groups],
            out: ArbiterOutputs::default(),
        }
    }

    /// Entries in the generated table (profile padded to a power of two).
    pub fn entries(&self) -> usize {
        self.n
    }

    /// The state of entry `i` (for tests and the driver model).
    pub fn state(&self, i: usize) -> EvState {
        self.st[i]
    }

    /// The rotation pointer for the next request: bit-reversed counter XOR a per-rotation
    /// LFSR mask, within the table.
    pub fn rotation_pointer(&self) -> usize {
        let rev = self.ctr.reverse_bits() >> (8 - self.index_bits);
        ((rev ^ self.lfsr as u8) as usize) & (self.n - 1)
    }

    fn in_profile(&self, idx: u8) -> bool {
        (idx as usize) < self.total
    }

    /// One clock edge.
    /// The registered outputs as they stand (power-on: the reset state).
    pub fn outputs(&self) -> &ArbiterOutputs {
        &self.out
    }

    pub fn step(&mut self, x: &ArbiterInputs) -> ArbiterOutputs {
        let n = self.n;
        let groups = n / 16;
        let s = self.rotation_pointer();

        // E1: accept this cycle's events (applied next cycle).
        let fb_in = x.fb_valid && self.in_profile(x.fb_idx);
        let ctl_in = x.ctl_op != CTL_NONE && self.in_profile(x.ctl_idx);

        // E2: last cycle's events, under the policy that was in force when they arrived.
        let kind = FeedbackKind::from_bits(self.e_kind);
        let retire_kind = matches!(kind, FeedbackKind::AlwaysSkip | FeedbackKind::Timeout);
        let retire_now = self.e_fb.is_some() && !self.e_pol && retire_kind && self.ok;
        let retire_held = self.e_fb.is_some() && !self.e_pol && retire_kind && !self.ok;
        let deny_now = self.e_ctl.is_some() && self.e_op == CTL_DENY;

        // Stage R: eligibility on the table as it stands now.
        let elig: Vec<bool> = (0..n)
            .map(|i| {
                i < self.total
                    && x.plane_ready >> self.plane_of[i] & 1 == 1
                    && self.st[i] == EvState::Good
                    && (!x.policy || self.pen[i] == 0)
            })
            .collect();
        let at_or_below: Vec<bool> = (0..n).map(|i| elig[i] && i % 16 <= s % 16).collect();

        // Stage G: per 16-entry group, the highest hit.
        let highest =
            |v: &[bool], g: usize| (0..16).rev().find(|&j| v[g * 16 + j]).map(|j| j as u8);
        let next_s2_below: Vec<Option<u8>> = (0..groups)
            .map(|g| highest(&self.s1_at_or_below, g))
            .collect();
        let next_s2_any: Vec<Option<u8>> = (0..groups).map(|g| highest(&self.s1_elig, g)).collect();

        // Stage S: round-robin over groups holding an eligible entry; inside the chosen group
        // the at-or-below-pointer hit, else its highest eligible entry.
        let group = if self.s2_valid {
            let with_hit = (0..groups).filter(|&g| self.s2_any[g].is_some());
            with_hit
                .clone()
                .filter(|&g| g <= self.rr)
                .max()
                .or_else(|| with_hit.max())
        } else {
            None
        };
        let sel = group.map(|g| g * 16 + self.s2_below[g].or(self.s2_any[g]).unwrap() as usize);
        let sel_idx = sel.unwrap_or(0);

        // Table update (E2), in order: landing, feedback, controller; reset below.
        let mut st = self.st.clone();
        let mut pen = self.pen.clone();
        if let Some(i) = self.e_land {
            if self.e_pol {
                pen[i] = pen[i].saturating_sub(1);
            } else if st[i] == EvState::Skip {
                st[i] = EvState::Good;
            }
        }
        if let Some(i) = self.e_fb {
            if self.e_pol {
                pen[i] = match kind {
                    FeedbackKind::SkipOnce => (pen[i] + 1).min(PEN_MAX),
                    FeedbackKind::NackTrimmed => (pen[i] + 4).min(PEN_MAX),
                    FeedbackKind::AlwaysSkip | FeedbackKind::Timeout => PEN_MAX,
                    _ => pen[i],
                };
            } else {
                st[i] = mrc_transition(st[i], kind, self.ok);
            }
        }
        if let Some(i) = self.e_ctl {
            if self.e_op == CTL_DENY {
                st[i] = EvState::Denied;
            } else {
                st[i] = EvState::Good;
                pen[i] = 0;
            }
        }
        let ram_read = self.ev_ram[self.g.2 as usize];
        if self.e_ctl.is_some() && self.e_op == CTL_LOAD && !x.rst {
            self.ev_ram[self.e_idx as usize] = self.e_ev;
        }

        // Active count: popcount pipeline (quads -> 16s -> 64s -> total), and whether the next
        // cycle may retire: the lagging count minus every retire/deny it has not seen yet.
        let next_c4: Vec<u32> = (0..n / 4)
            .map(|q| (0..4).filter(|j| self.st[q * 4 + j].is_active()).count() as u32)
            .collect();
        let next_c16: Vec<u32> = (0..groups)
            .map(|g| self.c4[g * 4..g * 4 + 4].iter().sum())
            .collect();
        let per64 = groups.min(4);
        let next_c64: Vec<u32> = (0..self.c64.len())
            .map(|h| self.c16[h * 4..h * 4 + per64].iter().sum())
            .collect();
        let next_active: u32 = self.c64.iter().sum();
        let pending = (self.retire_hist & 0xF).count_ones()
            + (self.deny_hist & 0xF).count_ones()
            + retire_now as u32
            + deny_now as u32;
        let next_am = next_active + 512 - u32::from(x.min_active);
        let next_ok = self.am > 512 + pending;

        let lo = (self.rd_q & 15) as usize;
        let next_rd_group: Vec<(u8, u8)> = (0..groups)
            .map(|g| (self.st[g * 16 + lo] as u8, self.pen[g * 16 + lo]))
            .collect();
        let (rd_state, rd_pen) = self
            .rd_group
            .get((self.rd_q2 >> 4) as usize)
            .copied()
            .unwrap_or((0, 0));
        let grant_none = self.s2_valid && sel.is_none();

        // Commit the edge.
        if x.req {
            if self.ctr as usize & (n - 1) == n - 1 {
                self.lfsr = (self.lfsr >> 1) ^ if self.lfsr & 1 == 1 { LFSR_TAPS } else { 0 };
            }
            self.ctr = self.ctr.wrapping_add(1);
        }
        if let Some(g) = group {
            self.rr = (g + groups - 1) % groups;
        }
        self.st = st;
        self.pen = pen;
        self.e_land = x.req.then_some(s);
        self.e_fb = fb_in.then_some(x.fb_idx as usize);
        self.e_kind = x.fb_kind;
        self.e_ctl = ctl_in.then_some(x.ctl_idx as usize);
        self.e_op = x.ctl_op;
        self.e_idx = x.ctl_idx;
        self.e_ev = x.ctl_ev;
        self.e_pol = x.policy;
        self.c4 = next_c4;
        self.c16 = next_c16;
        self.c64 = next_c64;
        self.active = next_active;
        self.am = next_am;
        self.ok = next_ok;
        self.retire_hist = (self.retire_hist << 1 | retire_now as u8) & 0xF;
        self.deny_hist = (self.deny_hist << 1 | deny_now as u8) & 0xF;
        self.s2_valid = self.s1_valid;
        self.s2_below = next_s2_below;
        self.s2_any = next_s2_any;
        self.s1_valid = x.req;
        self.s1_at_or_below = at_or_below;
        self.s1_elig = elig;
        self.rd_q2 = self.rd_q;
        self.rd_q = x.rd_idx;
        self.rd_group = next_rd_group;
        let (grant_valid, grant_none_q, grant_idx, grant_plane) = self.h;
        let grant_ev = self.ram_data;
        self.h = self.g;
        self.ram_data = ram_read;
        self.g = (
            sel.is_some(),
            grant_none,
            sel_idx as u8,
            if sel.is_some() {
                self.plane_of[sel_idx]
            } else {
                0
            },
        );
        self.out = ArbiterOutputs {
            grant_valid,
            grant_none: grant_none_q,
            grant_idx,
            grant_plane,
            grant_ev,
            active_count: 0, // the register, filled below after reset
            fb_drop: x.fb_valid && !fb_in,
            ctl_drop: x.ctl_op != CTL_NONE && !ctl_in,
            retire_held,
            rd_state,
            rd_pen,
        };
        if x.rst {
            self.reset(x);
        }
        self.out.active_count = self.active as u16;
        self.out
    }

    fn reset(&mut self, x: &ArbiterInputs) {
        for i in 0..self.n {
            self.st[i] = if i < self.total {
                EvState::Good
            } else {
                EvState::Denied
            };
            self.pen[i] = 0;
        }
        self.ctr = 0;
        self.rr = 0;
        self.lfsr = if x.seed == 0 { LFSR_ZERO_SEED } else { x.seed };
        self.e_land = None;
        self.e_fb = None;
        self.e_ctl = None;
        for (q, c) in self.c4.iter_mut().enumerate() {
            *c = valid_in(self.total, 4 * q, 4);
        }
        for (g, c) in self.c16.iter_mut().enumerate() {
            *c = valid_in(self.total, 16 * g, 16);
        }
        for (h, c) in self.c64.iter_mut().enumerate() {
            *c = valid_in(self.total, 64 * h, 64);
        }
        self.active = self.total as u32;
        self.am = self.total as u32 + 512 - u32::from(x.min_active);
        self.ok = self.total as u32 > u32::from(x.min_active);
        self.retire_hist = 0;
        self.deny_hist = 0;
        self.s1_valid = false;
        self.s2_valid = false;
        self.g = (false, false, 0, 0);
        self.h = (false, false, 0, 0);
        self.rd_q = 0;
        self.rd_q2 = 0;
        self.out = ArbiterOutputs {
            grant_ev: self.out.grant_ev,
            ..ArbiterOutputs::default()
        };
    }
}

/// The MRC EV state machine (notes section 2) for one feedback event.
/// `retire_ok` is false when retiring would leave fewer than `ev_min_active` active EVs; the
/// retirement is then held to SKIP so the path is still avoided once.
pub fn mrc_transition(st: EvState, kind: FeedbackKind, retire_ok: bool) -> EvState {
    use EvState::*;
    use FeedbackKind::*;
    match (st, kind) {
        (Good, SkipOnce | NackTrimmed) => Skip,
        (Good | Skip, AlwaysSkip | Timeout) => {
            if retire_ok {
                AssumedBad
            } else {
                Skip
            }
        }
        (AssumedBad, ProbeNone) => Good,
        (AssumedBad, ProbeSkip) => Skip,
        (s, _) => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use EvState::*;
    use FeedbackKind::*;

    #[test]
    fn transition_table_matches_the_notes() {
        // (state, event, retire_ok) -> next, straight from mrc-notes section 2.
        let cases = [
            (Good, SkipOnce, true, Skip),
            (Good, NackTrimmed, true, Skip),
            (Good, NackTrimmedLastHop, true, Good),
            (Good, AlwaysSkip, true, AssumedBad),
            (Good, Timeout, true, AssumedBad),
            (Good, Timeout, false, Skip),
            (Skip, Timeout, true, AssumedBad),
            (Skip, AckGood, true, Skip),
            (AssumedBad, ProbeNone, true, Good),
            (AssumedBad, ProbeSkip, true, Skip),
            (AssumedBad, AckGood, true, AssumedBad),
            (Good, ProbeNone, true, Good),
        ];
        for (s, k, ok, want) in cases {
            assert_eq!(
                mrc_transition(s, k, ok),
                want,
                "{s:?} + {k:?} (retire_ok {ok})"
            );
        }
        for k in FeedbackKind::ALL {
            assert_eq!(
                mrc_transition(Denied, k, true),
                Denied,
                "DENIED never leaves by feedback ({k:?})"
            );
        }
    }

    #[test]
    fn the_rotation_pointer_visits_every_entry_once_per_rotation() {
        for cfg in [
            NicConfig::default(),
            NicConfig {
                planes: 8,
                evs_per_plane: 32,
                ..NicConfig::default()
            },
            NicConfig {
                planes: 3,
                evs_per_plane: 5,
                ev_min_active: 2,
                ..NicConfig::default()
            },
        ] {
            let mut m = EvSprayArbiter::new(&cfg);
            m.step(&ArbiterInputs {
                rst: true,
                seed: 0x1234,
                ..Default::default()
            });
            let n = m.entries();
            let mut orders = Vec::new();
            for _ in 0..4 {
                let mut seen = vec![false; n];
                let mut order = Vec::new();
                for _ in 0..n {
                    let s = m.rotation_pointer();
                    assert!(!seen[s], "entry {s} visited twice in one rotation");
                    seen[s] = true;
                    order.push(s);
                    m.step(&ArbiterInputs {
                        req: true,
                        seed: 0x1234,
                        ..Default::default()
                    });
                }
                orders.push(order);
            }
            assert!(
                orders.windows(2).any(|w| w[0] != w[1]),
                "the LFSR scrambles successive rotations"
            );
        }
    }

    #[test]
    fn the_lfsr_is_maximal_length() {
        let mut x: u16 = 1;
        let mut period = 0u32;
        loop {
            x = (x >> 1) ^ if x & 1 == 1 { LFSR_TAPS } else { 0 };
            period += 1;
            if x == 1 {
                break;
            }
        }
        assert_eq!(period, 65535);
    }

    #[test]
    fn grants_follow_requests_by_four_cycles() {
        let cfg = NicConfig::default();
        let mut m = EvSprayArbiter::new(&cfg);
        let idle = ArbiterInputs {
            plane_ready: 0xFF,
            min_active: 8,
            seed: 1,
            ..Default::default()
        };
        m.step(&ArbiterInputs { rst: true, ..idle });
        let a = m.step(&ArbiterInputs { req: true, ..idle });
        let b = m.step(&idle);
        let b2 = m.step(&idle);
        let b3 = m.step(&idle);
        let c = m.step(&idle);
        assert!(![a, b, b2, b3].iter().any(|o| o.grant_valid) && c.grant_valid);
        assert_eq!(c.grant_plane as u32, c.grant_idx as u32 / cfg.evs_per_plane);
        assert_eq!(c.grant_ev, cfg.default_ev_profile()[c.grant_idx as usize]);
    }
}
