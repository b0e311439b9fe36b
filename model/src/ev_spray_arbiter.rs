//! Golden model of `ev_spray_arbiter`: cycle- and bit-exact with the RTL, written to be read
//! against `shared/spec/mrc-notes.md` section 2.
//!
//! Selection (see the RTL's module doc for the why): the 16-entry group by round-robin among
//! groups with an eligible EV, then inside it the highest eligible entry at or below the
//! rotation pointer's low nibble, else its highest eligible entry.
//!
//! Contract (the RTL's, restated): `step(inputs)` is one rising clock edge; the returned outputs
//! are the registers after that edge. A request at step t is answered in the outputs of step
//! t+2 and is decided on the table as it stood at step t. Within one step the table updates
//! apply in a fixed order: (1) the rotation landing on an entry, (2) feedback, (3) controller,
//! (4) reset. Outside reset, the active count is *derived* here from the table (the RTL keeps an
//! incremental counter), so the cosim also checks the RTL's bookkeeping.

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
    // pipeline: stage 1 (eligibility snapshot), stage 2 (per-group summaries)
    s1_valid: bool,
    s1_at_or_below: Vec<bool>,
    s1_elig: Vec<bool>,
    s2_valid: bool,
    s2_below: Vec<Option<u8>>,
    s2_any: Vec<Option<u8>>,
    out: ArbiterOutputs,
}

impl EvSprayArbiter {
    /// Power-on state equals the RTL's initial blocks: every register 0, EV RAM = profile.
    pub fn new(cfg: &NicConfig) -> Self {
        let n = cfg.ev_table_entries() as usize;
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
            s1_valid: false,
            s1_at_or_below: vec![false; n],
            s1_elig: vec![false; n],
            s2_valid: false,
            s2_below: vec![None; n / 16],
            s2_any: vec![None; n / 16],
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

    /// The rotation pointer for the next request: bit-reversed counter (consecutive requests
    /// hop planes) XOR a per-rotation LFSR mask, within the table.
    pub fn rotation_pointer(&self) -> usize {
        let rev = self.ctr.reverse_bits() >> (8 - self.index_bits);
        ((rev ^ self.lfsr as u8) as usize) & (self.n - 1)
    }

    fn active_count(&self) -> usize {
        self.st.iter().filter(|s| s.is_active()).count()
    }

    fn in_profile(&self, idx: u8) -> bool {
        (idx as usize) < self.total
    }

    /// One clock edge.
    pub fn step(&mut self, x: &ArbiterInputs) -> ArbiterOutputs {
        let n = self.n;
        let s = self.rotation_pointer();
        let active = self.active_count();
        let retire_ok = active > x.min_active as usize;
        let fb_in = x.fb_valid && self.in_profile(x.fb_idx);
        let ctl_in = x.ctl_op != CTL_NONE && self.in_profile(x.ctl_idx);
        let kind = FeedbackKind::from_bits(x.fb_kind);
        let retire_kind = matches!(kind, FeedbackKind::AlwaysSkip | FeedbackKind::Timeout);

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
        let groups = n / 16;
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

        // Table updates, in order: landing, feedback, controller, reset.
        let old_fb_state = self
            .st
            .get(x.fb_idx as usize)
            .copied()
            .unwrap_or(EvState::Good);
        let retire_held =
            fb_in && !x.policy && retire_kind && old_fb_state.is_active() && !retire_ok;
        let mut st = self.st.clone();
        let mut pen = self.pen.clone();
        if x.req {
            if x.policy {
                pen[s] = pen[s].saturating_sub(1);
            } else if st[s] == EvState::Skip {
                st[s] = EvState::Good;
            }
        }
        if fb_in {
            let i = x.fb_idx as usize;
            if x.policy {
                pen[i] = match kind {
                    FeedbackKind::SkipOnce => (pen[i] + 1).min(PEN_MAX),
                    FeedbackKind::NackTrimmed => (pen[i] + 4).min(PEN_MAX),
                    FeedbackKind::AlwaysSkip | FeedbackKind::Timeout => PEN_MAX,
                    _ => pen[i],
                };
            } else {
                st[i] = mrc_transition(st[i], kind, retire_ok);
            }
        }
        if ctl_in {
            let i = x.ctl_idx as usize;
            if x.ctl_op == CTL_DENY {
                st[i] = EvState::Denied;
            } else {
                st[i] = EvState::Good;
                pen[i] = 0;
            }
        }
        let ram_read = self.ev_ram[sel_idx];
        if ctl_in && x.ctl_op == CTL_LOAD && !x.rst {
            self.ev_ram[x.ctl_idx as usize] = x.ctl_ev;
        }

        let rd = x.rd_idx as usize;
        let (rd_state, rd_pen) = if rd < n {
            (self.st[rd] as u8, self.pen[rd])
        } else {
            (0, 0)
        };

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
        self.s2_valid = self.s1_valid;
        self.s2_below = next_s2_below;
        self.s2_any = next_s2_any;
        self.s1_valid = x.req;
        self.s1_at_or_below = at_or_below;
        self.s1_elig = elig;
        self.out = ArbiterOutputs {
            grant_valid: sel.is_some(),
            grant_none,
            grant_idx: sel_idx as u8,
            grant_plane: if sel.is_some() {
                self.plane_of[sel_idx]
            } else {
                0
            },
            grant_ev: ram_read,
            active_count: 0, // filled below, after reset is applied
            fb_drop: x.fb_valid && !fb_in,
            ctl_drop: x.ctl_op != CTL_NONE && !ctl_in,
            retire_held,
            rd_state,
            rd_pen,
        };
        if x.rst {
            self.reset(x.seed);
        }
        self.out.active_count = self.active_count() as u16;
        self.out
    }

    fn reset(&mut self, seed: u16) {
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
        self.lfsr = if seed == 0 { LFSR_ZERO_SEED } else { seed };
        self.s1_valid = false;
        self.s2_valid = false;
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
    fn grants_follow_requests_by_two_cycles() {
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
        let c = m.step(&idle);
        assert!(!a.grant_valid && !b.grant_valid && c.grant_valid);
        assert_eq!(c.grant_plane as u32, c.grant_idx as u32 / cfg.evs_per_plane);
        assert_eq!(c.grant_ev, cfg.default_ev_profile()[c.grant_idx as usize]);
    }
}
