//! EV selection for one MRC queue pair: which entropy value (path) the next packet of a plane
//! takes, and how path feedback changes that choice.
//!
//! A QP owns `planes * evs_per_plane` EVs, laid out plane-major as in `NicConfig::plane_of`
//! (index `i` belongs to plane `i / evs_per_plane`). Each is a pseudo-random 32-bit value,
//! distinct within the QP, drawn from the flow seed (switches hash it, or read its low bits
//! as a source route).
//!
//! ```text
//!   pick(now, plane) ----> policy ----> EV index (global) -> ev(index) = 32-bit value
//!                            ^
//!   feedback(now, idx, kind) |   AckGood / SkipOnce (ECN) / AlwaysSkip / NackTrimmed /
//!   on_acked(idx)  ----------+   NackTrimmedLastHop / Timeout / ProbeNone / ProbeSkip
//! ```
//!
//! Policies ([`SprayMode`]):
//! - **Mrc**: the EV state machine of `ev_spray_arbiter` ([`mrc_transition`], the same
//!   function the RTL model uses), retirement held to SKIP when it would leave
//!   `ev_min_active` or fewer active EVs in the QP. The choice walks a per-plane permuted
//!   rotation (re-shuffled every rotation, so it is a pseudo-random choice among GOOD EVs):
//!   landing on a SKIP entry returns it to GOOD without using it (SKIP lasts one rotation,
//!   as in the arbiter), ASSUMED_BAD / DENIED entries are passed over. ASSUMED_BAD EVs are
//!   probed every `probe_interval` ([`EvSprayer::probe_due`]); the answer returns them.
//!   (The arbiter's exact grant order — 16-entry groups, bit-reversed counter XOR LFSR — is
//!   a hardware artefact of a 4-clock pipeline, not protocol: the endpoint keeps its
//!   semantics, not its order.)
//! - **Oblivious**: the same permuted rotation over every EV of the plane; feedback ignored.
//! - **Bitmap**: per-EV penalty as the arbiter's BITMAP policy: ECN (SKIP_ONCE) +1, trim
//!   NACK +4, timeout / ALWAYS_SKIP to 15; capped at 15. The rotation skips an EV while its
//!   penalty is > 0 and decrements it on each skip.
//! - **Reps** (my reading of the notes and the REPS paper): per plane an 8-entry ring of EVs
//!   recycled from good ACKs (every newly acked packet whose SACK did not report ECN on it).
//!   Normal mode: take the oldest valid entry (consuming it), else explore a uniformly random
//!   EV of the plane. A timeout enters *freezing* for 10 ms (not extended by further
//!   timeouts): no exploration; the ring's entries are reused round-robin without being
//!   consumed (known-good paths are scarce during a failure; a random EV only when the ring
//!   never held one). When the freeze ends, the next 16 picks of each plane explore random
//!   EVs (to rediscover paths) before recycling resumes.
//! - **Mixed**: the recycled EV when the ring has a valid entry whose BITMAP penalty is 0,
//!   else BITMAP. Penalties and the ring are fed as in the two policies; no freezing.
//!
//! Work per pick is O(1) amortised (one Fisher-Yates shuffle of a plane's EVs per rotation);
//! per feedback O(1), plus an O(EVs) rescan of the probe schedule when an EV enters or leaves
//! ASSUMED_BAD (rare).

use crate::ev_spray_arbiter::{mrc_transition, EvState, FeedbackKind};
use crate::netsim::{Ps, MS};
use crate::rng::SplitMix64;
use mrc_config::NicConfig;

/// EV selection policy of a QP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SprayMode {
    Mrc,
    Oblivious,
    Bitmap,
    Reps,
    Mixed,
}

impl SprayMode {
    pub const ALL: [SprayMode; 5] = [
        SprayMode::Mrc,
        SprayMode::Oblivious,
        SprayMode::Bitmap,
        SprayMode::Reps,
        SprayMode::Mixed,
    ];

    /// Lower-case policy name ("mrc", "oblivious", ...).
    pub fn name(self) -> &'static str {
        match self {
            SprayMode::Mrc => "mrc",
            SprayMode::Oblivious => "oblivious",
            SprayMode::Bitmap => "bitmap",
            SprayMode::Reps => "reps",
            SprayMode::Mixed => "mixed",
        }
    }

    /// Does this policy retire EVs (ASSUMED_BAD) and so need reliability probes?
    pub fn probes(self) -> bool {
        self == SprayMode::Mrc
    }
}

/// BITMAP penalty cap (the arbiter's `PEN_MAX`).
pub const PEN_MAX: u8 = 15;
/// REPS: recycled-EV ring entries per plane.
pub const REPS_RING: usize = 8;
/// REPS: freezing time after a timeout.
pub const REPS_FREEZE: Ps = 10 * MS;
/// REPS: random EVs explored per plane when a freeze ends.
pub const REPS_EXPLORE: u8 = 16;

/// A permuted rotation over a plane's EVs (plane-local indices).
#[derive(Debug, Clone)]
struct Rotation {
    order: Vec<u16>,
    pos: usize,
}

impl Rotation {
    fn new(n: usize, rng: &mut SplitMix64) -> Self {
        let mut r = Rotation {
            order: (0..n as u16).collect(),
            pos: 0,
        };
        r.shuffle(rng);
        r
    }
    fn shuffle(&mut self, rng: &mut SplitMix64) {
        for i in (1..self.order.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            self.order.swap(i, j);
        }
    }
    fn next(&mut self, rng: &mut SplitMix64) -> usize {
        if self.pos == self.order.len() {
            self.shuffle(rng);
            self.pos = 0;
        }
        self.pos += 1;
        self.order[self.pos - 1] as usize
    }
}

/// REPS ring of recycled EV indices (global) for one plane.
#[derive(Debug, Clone, Copy, Default)]
struct RepsRing {
    buf: [u16; REPS_RING],
    /// Entries ever written (frozen mode cycles over these).
    filled: u8,
    valid: u8,
    head: u8,
    /// Frozen-mode read pointer.
    rd: u8,
    explore_left: u8,
}

impl RepsRing {
    fn push(&mut self, idx: usize) {
        let h = self.head as usize;
        self.buf[h] = idx as u16;
        self.valid |= 1 << h;
        self.head = ((h + 1) % REPS_RING) as u8;
        self.filled = (self.filled + 1).min(REPS_RING as u8);
    }
    /// Oldest valid entry, without consuming it.
    fn peek_oldest(&self) -> Option<(usize, usize)> {
        (0..REPS_RING)
            .map(|k| (self.head as usize + k) % REPS_RING)
            .find(|&s| self.valid >> s & 1 == 1)
            .map(|s| (s, self.buf[s] as usize))
    }
    fn take_oldest(&mut self) -> Option<usize> {
        let (s, idx) = self.peek_oldest()?;
        self.valid &= !(1 << s);
        Some(idx)
    }
    fn reuse(&mut self) -> Option<usize> {
        if self.filled == 0 {
            return None;
        }
        let s = self.rd as usize % self.filled as usize;
        self.rd = ((s + 1) % self.filled as usize) as u8;
        Some(self.buf[s] as usize)
    }
}

/// The EV table and selection policy of one QP.
#[derive(Debug, Clone)]
pub struct EvSprayer {
    mode: SprayMode,
    per_plane: usize,
    evs: Vec<u32>,
    /// (value, index) sorted by value: EV echo -> index.
    by_value: Vec<(u32, u16)>,
    state: Vec<EvState>,
    pen: Vec<u8>,
    min_active: u32,
    /// EVs in GOOD or SKIP, QP-wide (the min-active rule counts these).
    active: u32,
    /// GOOD or SKIP per plane: 0 means the plane has nothing to offer (Mrc).
    usable: Vec<u32>,
    rot: Vec<Rotation>,
    rng: SplitMix64,
    reps: Vec<RepsRing>,
    freeze_until: Option<Ps>,
    probe_interval: Ps,
    /// Next probe time per EV (`Ps::MAX`: not ASSUMED_BAD).
    next_probe: Vec<Ps>,
    next_probe_min: Ps,
    /// Transitions into ASSUMED_BAD, for statistics.
    pub retirements: u64,
}

impl EvSprayer {
    /// The EV table of one QP: `cfg.planes * cfg.evs_per_plane` EVs from `seed`, all GOOD.
    pub fn new(cfg: &NicConfig, mode: SprayMode, seed: u64, probe_interval: Ps) -> Self {
        let planes = cfg.planes as usize;
        let per_plane = cfg.evs_per_plane as usize;
        let n = planes * per_plane;
        let mut rng = SplitMix64::new(seed ^ 0x5EED_E7E7_0000_0001);
        let mut by_value: Vec<(u32, u16)> = Vec::with_capacity(n);
        let mut evs = Vec::with_capacity(n);
        while evs.len() < n {
            let v = rng.next_u64() as u32;
            if let Err(at) = by_value.binary_search_by_key(&v, |e| e.0) {
                by_value.insert(at, (v, evs.len() as u16));
                evs.push(v);
            }
        }
        let rot = (0..planes)
            .map(|_| Rotation::new(per_plane, &mut rng))
            .collect();
        EvSprayer {
            mode,
            per_plane,
            evs,
            by_value,
            state: vec![EvState::Good; n],
            pen: vec![0; n],
            min_active: cfg.ev_min_active,
            active: n as u32,
            usable: vec![per_plane as u32; planes],
            rot,
            rng,
            reps: vec![RepsRing::default(); planes],
            freeze_until: None,
            probe_interval,
            next_probe: vec![Ps::MAX; n],
            next_probe_min: Ps::MAX,
            retirements: 0,
        }
    }

    pub fn mode(&self) -> SprayMode {
        self.mode
    }
    pub fn len(&self) -> usize {
        self.evs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.evs.is_empty()
    }
    pub fn planes(&self) -> usize {
        self.usable.len()
    }
    /// The 32-bit value of EV `idx`.
    pub fn ev(&self, idx: usize) -> u32 {
        self.evs[idx]
    }
    pub fn plane_of(&self, idx: usize) -> usize {
        idx / self.per_plane
    }
    /// Index of a (reflected) EV value, if it is one of this QP's.
    pub fn index_of(&self, ev: u32) -> Option<usize> {
        self.by_value
            .binary_search_by_key(&ev, |e| e.0)
            .ok()
            .map(|k| self.by_value[k].1 as usize)
    }
    pub fn state(&self, idx: usize) -> EvState {
        self.state[idx]
    }
    pub fn penalty(&self, idx: usize) -> u8 {
        self.pen[idx]
    }
    /// EVs currently ASSUMED_BAD.
    pub fn assumed_bad(&self) -> usize {
        self.state
            .iter()
            .filter(|&&s| s == EvState::AssumedBad)
            .count()
    }
    /// REPS is frozen at `now`.
    pub fn frozen(&self, now: Ps) -> bool {
        self.freeze_until.is_some_and(|t| now < t)
    }

    fn random_in(&mut self, plane: usize) -> usize {
        plane * self.per_plane + self.rng.below(self.per_plane as u64) as usize
    }

    fn bitmap_pick(&mut self, plane: usize) -> usize {
        let base = plane * self.per_plane;
        // Every skip decrements a penalty <= 15, so this ends within 16 rotations.
        loop {
            let i = base + self.rot[plane].next(&mut self.rng);
            if self.pen[i] == 0 {
                return i;
            }
            self.pen[i] -= 1;
        }
    }

    /// The EV (global index) for the next packet on `plane`; `None` when the policy has no
    /// usable EV there (Mrc: every EV of the plane ASSUMED_BAD or DENIED).
    pub fn pick(&mut self, now: Ps, plane: u8) -> Option<usize> {
        let plane = plane as usize;
        if plane >= self.usable.len() {
            return None;
        }
        let base = plane * self.per_plane;
        match self.mode {
            SprayMode::Oblivious => Some(base + self.rot[plane].next(&mut self.rng)),
            SprayMode::Mrc => {
                if self.usable[plane] == 0 {
                    return None;
                }
                // A usable EV is GOOD or turns GOOD when landed on: found within two rotations.
                loop {
                    let i = base + self.rot[plane].next(&mut self.rng);
                    match self.state[i] {
                        EvState::Good => return Some(i),
                        EvState::Skip => self.state[i] = EvState::Good,
                        _ => {}
                    }
                }
            }
            SprayMode::Bitmap => Some(self.bitmap_pick(plane)),
            SprayMode::Reps => {
                if self.frozen(now) {
                    if let Some(i) = self.reps[plane].reuse() {
                        return Some(i);
                    }
                    return Some(self.random_in(plane));
                }
                if self.freeze_until.take().is_some() {
                    for r in &mut self.reps {
                        r.explore_left = REPS_EXPLORE;
                    }
                }
                let ring = &mut self.reps[plane];
                if ring.explore_left > 0 {
                    ring.explore_left -= 1;
                    return Some(self.random_in(plane));
                }
                match ring.take_oldest() {
                    Some(i) => Some(i),
                    None => Some(self.random_in(plane)),
                }
            }
            SprayMode::Mixed => {
                while let Some(i) = self.reps[plane].take_oldest() {
                    if self.pen[i] == 0 {
                        return Some(i);
                    }
                }
                Some(self.bitmap_pick(plane))
            }
        }
    }

    /// A packet sent on EV `idx` was acknowledged and its SACK reported no ECN on it: REPS /
    /// MIXED recycle the EV. (No-op for the other policies.)
    pub fn on_acked(&mut self, idx: usize) {
        if matches!(self.mode, SprayMode::Reps | SprayMode::Mixed) {
            let plane = self.plane_of(idx);
            self.reps[plane].push(idx);
        }
    }

    /// Path feedback on EV `idx`.
    pub fn feedback(&mut self, now: Ps, idx: usize, kind: FeedbackKind) {
        if idx >= self.evs.len() {
            return;
        }
        match self.mode {
            SprayMode::Oblivious => {}
            SprayMode::Mrc => self.mrc_feedback(now, idx, kind),
            SprayMode::Bitmap | SprayMode::Mixed => {
                let p = &mut self.pen[idx];
                *p = match kind {
                    FeedbackKind::SkipOnce => (*p + 1).min(PEN_MAX),
                    FeedbackKind::NackTrimmed => (*p + 4).min(PEN_MAX),
                    FeedbackKind::AlwaysSkip | FeedbackKind::Timeout => PEN_MAX,
                    _ => *p,
                };
            }
            SprayMode::Reps => {
                if kind == FeedbackKind::Timeout && self.freeze_until.is_none() {
                    self.freeze_until = Some(now + REPS_FREEZE);
                }
            }
        }
    }

    fn mrc_feedback(&mut self, now: Ps, idx: usize, kind: FeedbackKind) {
        let old = self.state[idx];
        let new = mrc_transition(old, kind, self.active > self.min_active);
        if new == old {
            return;
        }
        self.state[idx] = new;
        let is_active = |s: EvState| matches!(s, EvState::Good | EvState::Skip);
        let plane = self.plane_of(idx);
        match (is_active(old), is_active(new)) {
            (true, false) => {
                self.active -= 1;
                self.usable[plane] -= 1;
            }
            (false, true) => {
                self.active += 1;
                self.usable[plane] += 1;
            }
            _ => {}
        }
        if new == EvState::AssumedBad {
            self.retirements += 1;
            self.next_probe[idx] = now + self.probe_interval;
            self.next_probe_min = self.next_probe_min.min(self.next_probe[idx]);
        } else if old == EvState::AssumedBad {
            self.next_probe[idx] = Ps::MAX;
            self.rescan_probes();
        }
    }

    fn rescan_probes(&mut self) {
        self.next_probe_min = self.next_probe.iter().copied().min().unwrap_or(Ps::MAX);
    }

    /// Earliest time an ASSUMED_BAD EV wants a probe (None: nothing to probe).
    pub fn next_probe_at(&self) -> Option<Ps> {
        (self.next_probe_min != Ps::MAX).then_some(self.next_probe_min)
    }

    /// An ASSUMED_BAD EV of `plane` whose probe is due at `now`, rescheduled one
    /// `probe_interval` later (a lost probe is simply repeated).
    pub fn probe_due(&mut self, now: Ps, plane: u8) -> Option<usize> {
        if now < self.next_probe_min || plane as usize >= self.usable.len() {
            return None;
        }
        let base = plane as usize * self.per_plane;
        let i = (base..base + self.per_plane).find(|&i| self.next_probe[i] <= now)?;
        self.next_probe[i] = now + self.probe_interval;
        self.rescan_probes();
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netsim::US;
    use FeedbackKind::*;

    fn cfg(planes: u32, per: u32, min_active: u32) -> NicConfig {
        NicConfig {
            planes,
            evs_per_plane: per,
            ev_min_active: min_active,
            ..NicConfig::default()
        }
    }

    #[test]
    fn evs_are_distinct_seeded_and_looked_up() {
        let c = cfg(8, 32, 8);
        let a = EvSprayer::new(&c, SprayMode::Mrc, 1, US);
        let b = EvSprayer::new(&c, SprayMode::Mrc, 1, US);
        let d = EvSprayer::new(&c, SprayMode::Mrc, 2, US);
        assert_eq!(a.len(), 256);
        assert_eq!(a.evs, b.evs);
        assert_ne!(a.evs, d.evs);
        let mut v = a.evs.clone();
        v.sort();
        v.dedup();
        assert_eq!(v.len(), 256);
        for i in 0..a.len() {
            assert_eq!(a.index_of(a.ev(i)), Some(i));
        }
        assert_eq!(a.plane_of(33), 1);
    }

    #[test]
    fn every_mode_picks_only_in_the_asked_plane_and_oblivious_covers_a_rotation() {
        let c = cfg(4, 16, 4);
        for mode in SprayMode::ALL {
            let mut s = EvSprayer::new(&c, mode, 9, US);
            for k in 0..400 {
                let plane = (k % 4) as u8;
                let i = s.pick(0, plane).unwrap();
                assert_eq!(s.plane_of(i), plane as usize, "{mode:?}");
                s.on_acked(i);
            }
        }
        let mut s = EvSprayer::new(&c, SprayMode::Oblivious, 9, US);
        let mut seen: Vec<usize> = (0..16).map(|_| s.pick(0, 2).unwrap()).collect();
        seen.sort();
        assert_eq!(seen, (32..48).collect::<Vec<_>>());
    }

    #[test]
    fn mrc_skip_lasts_one_rotation_and_retire_is_held_by_min_active() {
        let c = cfg(1, 16, 14);
        let mut s = EvSprayer::new(&c, SprayMode::Mrc, 3, US);
        s.feedback(0, 5, SkipOnce);
        assert_eq!(s.state(5), EvState::Skip);
        let picks: Vec<usize> = (0..15).map(|_| s.pick(0, 0).unwrap()).collect();
        assert!(!picks.contains(&5), "skipped for the rest of the rotation");
        // within the next rotation it is landed on (-> GOOD) and then usable again
        let later: Vec<usize> = (0..40).map(|_| s.pick(0, 0).unwrap()).collect();
        assert!(later.contains(&5));
        assert_eq!(s.state(5), EvState::Good);
        // 16 active, min 14: two retirements allowed, the third held to SKIP
        s.feedback(10, 1, Timeout);
        s.feedback(10, 2, AlwaysSkip);
        s.feedback(10, 3, Timeout);
        assert_eq!(s.state(1), EvState::AssumedBad);
        assert_eq!(s.state(2), EvState::AssumedBad);
        assert_eq!(s.state(3), EvState::Skip);
        for _ in 0..100 {
            let i = s.pick(20, 0).unwrap();
            assert!(i != 1 && i != 2);
        }
        // probes: due one interval after retirement, answered NONE -> GOOD
        assert_eq!(s.next_probe_at(), Some(10 + US));
        assert_eq!(s.probe_due(10, 0), None);
        let p = s.probe_due(10 + US, 0).unwrap();
        assert!(p == 1 || p == 2);
        s.feedback(10 + US, p, ProbeNone);
        assert_eq!(s.state(p), EvState::Good);
        let q = s.probe_due(10 + US, 0).unwrap();
        s.feedback(10 + US, q, ProbeSkip);
        assert_eq!(s.state(q), EvState::Skip);
        assert_eq!(s.next_probe_at(), None);
        // LASTHOP trims never penalise
        s.feedback(0, 7, NackTrimmedLastHop);
        assert_eq!(s.state(7), EvState::Good);
    }

    #[test]
    fn mrc_plane_with_every_ev_bad_offers_none() {
        let c = cfg(2, 4, 1);
        let mut s = EvSprayer::new(&c, SprayMode::Mrc, 3, US);
        for i in 0..4 {
            s.feedback(0, i, Timeout);
        }
        assert_eq!(s.pick(0, 0), None);
        assert!(s.pick(0, 1).is_some());
        assert_eq!(s.pick(0, 2), None, "no such plane");
        assert_eq!(s.probe_due(Ps::MAX - 1, 2), None);
        assert!(s.probe_due(US, 0).is_some());
    }

    #[test]
    fn bitmap_penalties_skip_and_decay() {
        let c = cfg(1, 4, 1);
        let mut s = EvSprayer::new(&c, SprayMode::Bitmap, 5, US);
        s.feedback(0, 0, Timeout);
        s.feedback(0, 1, NackTrimmed);
        s.feedback(0, 2, SkipOnce);
        s.feedback(0, 2, SkipOnce);
        assert_eq!((s.penalty(0), s.penalty(1), s.penalty(2)), (15, 4, 2));
        let picks: Vec<usize> = (0..8).map(|_| s.pick(0, 0).unwrap()).collect();
        // EV 3 carries the first picks; 2 comes back after two skips, 0 last
        assert_eq!(picks[0], 3);
        assert!(!picks.contains(&0));
        assert!(s.penalty(0) < 15);
    }

    #[test]
    fn reps_recycles_then_freezes_then_explores() {
        let c = cfg(1, 64, 1);
        let mut s = EvSprayer::new(&c, SprayMode::Reps, 5, US);
        s.on_acked(7);
        s.on_acked(9);
        assert_eq!(s.pick(0, 0), Some(7));
        assert_eq!(s.pick(0, 0), Some(9));
        s.on_acked(11);
        s.feedback(100, 3, Timeout);
        assert!(s.frozen(100));
        // frozen: reuse the ring (7, 9, 11) round-robin without consuming
        let f: Vec<usize> = (0..6).map(|_| s.pick(200, 0).unwrap()).collect();
        assert!(f.iter().all(|i| [7, 9, 11].contains(i)), "{f:?}");
        // after the freeze: 16 explorations, then the ring again
        let t = 100 + REPS_FREEZE;
        s.on_acked(42);
        for _ in 0..REPS_EXPLORE {
            s.pick(t, 0).unwrap();
        }
        assert!(!s.frozen(t));
        let next = s.pick(t, 0).unwrap();
        assert!([11, 42].contains(&next), "{next}");
    }

    #[test]
    fn mixed_prefers_recycled_evs_without_penalty() {
        let c = cfg(1, 16, 1);
        let mut s = EvSprayer::new(&c, SprayMode::Mixed, 5, US);
        s.on_acked(4);
        s.on_acked(6);
        s.feedback(0, 4, NackTrimmed);
        assert_eq!(s.pick(0, 0), Some(6));
        let i = s.pick(0, 0).unwrap();
        assert_ne!(i, 4, "penalised, and the ring is empty: BITMAP");
    }
}
