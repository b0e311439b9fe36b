//! DCQCN rate control (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
//! SIGCOMM 2015), sans-IO: time is an argument, rates are integer Mb/s.
//!
//! ```text
//!   switch (CP)            responder (NP)                  requester (RP)
//!   ECN-mark at dequeue -> CE data packet -> CNP, at most --> on_cnp: Rt = Rc
//!                          once per N = 50 us per flow         Rc = Rc (1 - a/2)
//!                                                              a  = (1 - g) a + g
//!   no CNP for K = 55 us:                          a = (1 - g) a
//!   rate-increase event (timer T expires, or B bytes sent):
//!     both counters <= F   fast recovery      Rc = (Rt + Rc) / 2
//!     one counter   >  F   additive increase  Rt += R_AI;            Rc = (Rt + Rc) / 2
//!     both counters >  F   hyper increase     Rt += i R_HAI (i = min(T, BC) - F);  Rc = ...
//!   Rc back at line rate: the rate limiter is released (no timers until the next CNP).
//! ```
//!
//! This is the full reaction-point / notification-point algorithm of the paper, not a
//! simplified AIMD. Model choices (documented because a reader comparing to hardware will ask):
//! - Timers are evaluated lazily: every call that carries `now` first catches up on every
//!   alpha-decay and rate-increase period that elapsed (alpha decay in O(1) with `powi`, rate
//!   increases one event at a time, so the stage sequence is exact). The rate only matters
//!   when the next packet is paced, and that always goes through a call with `now`, so no
//!   simulator event is spent on DCQCN timers. [`DcqcnRp::next_timer`] reports the next
//!   rate-increase time for callers that want it anyway.
//! - Rc is averaged towards Rt rounding up (`(Rc + Rt + 1) / 2`), as an integer rate register
//!   would, so Rc reaches Rt in finitely many fast-recovery steps and the limiter is released.
//! - The alpha timer keeps running after release (lazily), so the next congestion episode
//!   starts from a decayed alpha as in the paper; before the first CNP alpha = 1.
//!
//! The simulator runs [`DcqcnParams::reference_simulator`] (htsim's values, scaled to the line
//! rate). Defaults ([`DcqcnParams::default`]) and their sources:
//! - g = 1/256, K = 55 us (alpha timer), N = 50 us (CNP interval at the NP), F = 5 fast
//!   recovery stages, B = 10 MB byte counter, R_AI = 40 Mb/s: the paper's parameter section,
//!   as commonly cited (values chosen there for its 40 Gb/s testbed).
//! - R_HAI = 400 Mb/s (10 x R_AI): an assumption, not checked against the paper text.
//! - T = 300 us rate-increase timer: the `RP_TIMER` of the public ns-3 DCQCN/HPCC simulator
//!   configurations (the paper used a shorter timer; 300 us is the value in common use).
//! - Minimum rate 100 Mb/s: the ns-3 `RdmaHw` `MinRate` default.
//!
//! The increase steps are absolute (Mb/s), not relative to the line rate, so on an 800 Gb/s
//! port a deep cut recovers slowly (additive increase of 40 Mb/s per 300 us while the byte
//! counter barely ticks at a low rate). That is DCQCN as specified, and part of why the notes
//! report 25-75 % victim-flow losses; tune [`DcqcnParams`] to study tuned deployments.

use crate::netsim::{Ps, US};

/// DCQCN constants (see the module doc for each default's source).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DcqcnParams {
    /// Alpha EWMA gain g.
    pub g: f64,
    /// Alpha at the first CNP.
    pub initial_alpha: f64,
    /// Alpha decay period K: alpha = (1 - g) alpha every K without a CNP.
    pub alpha_timer: Ps,
    /// Rate-increase timer T.
    pub rate_timer: Ps,
    /// Rate-increase byte counter B (bytes sent per event).
    pub byte_counter: u64,
    /// Fast-recovery stages F.
    pub fast_recovery_stages: u32,
    /// Additive increase step R_AI, Mb/s.
    pub rate_ai_mbps: u64,
    /// Hyper increase step R_HAI, Mb/s.
    pub rate_hai_mbps: u64,
    /// Rate floor, Mb/s.
    pub min_rate_mbps: u64,
    /// Notification point: at most one CNP per flow per this interval N.
    pub cnp_interval: Ps,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        DcqcnParams {
            g: 1.0 / 256.0,
            initial_alpha: 1.0,
            alpha_timer: 55 * US,
            rate_timer: 300 * US,
            byte_counter: 10 * 1024 * 1024,
            fast_recovery_stages: 5,
            rate_ai_mbps: 40,
            rate_hai_mbps: 400,
            min_rate_mbps: 100,
            cnp_interval: 50 * US,
        }
    }
}

impl DcqcnParams {
    /// The UEC reference simulator's DCQCN (htsim `dcqcn.cpp`), which the notes' published
    /// comparisons come from: g = 1/256, one 55 us period for the alpha decay and the
    /// rate-increase timer, B = 10,000,000 bytes, F = 5, R_AI = line / 20, R_HAI = line / 10,
    /// CNPs at most every 50 us, minimum rate 100 Mb/s. `mrcgen netsim` runs RoCE with these.
    pub fn reference_simulator(line_mbps: u64) -> Self {
        DcqcnParams {
            g: 1.0 / 256.0,
            initial_alpha: 1.0,
            alpha_timer: 55 * US,
            rate_timer: 55 * US,
            byte_counter: 10_000_000,
            fast_recovery_stages: 5,
            rate_ai_mbps: (line_mbps / 20).max(1),
            rate_hai_mbps: (line_mbps / 10).max(1),
            min_rate_mbps: 100.min(line_mbps),
            cnp_interval: 50 * US,
        }
    }
}

/// Where the reaction point is in its increase schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// At line rate, no limiter (before the first CNP or after full recovery).
    Released,
    /// Limited, both counters within F: Rc moves halfway to Rt per event.
    FastRecovery,
    /// One counter past F: Rt grows by R_AI per event.
    AdditiveIncrease,
    /// Both counters past F: Rt grows by i R_HAI per event.
    HyperIncrease,
}

/// DCQCN reaction point: the per-QP rate limiter at the sender.
#[derive(Debug, Clone)]
pub struct DcqcnRp {
    p: DcqcnParams,
    line: u64,
    /// Current rate Rc (what pacing uses), Mb/s.
    rc: u64,
    /// Target rate Rt, Mb/s.
    rt: u64,
    alpha: f64,
    /// A CNP has arrived at least once (the alpha timer runs from then on).
    alpha_running: bool,
    alpha_next: Ps,
    /// The rate limiter is engaged (the increase timer and byte counter run).
    limited: bool,
    rate_next: Ps,
    /// Timer events / byte-counter events since the last cut.
    t_count: u32,
    bc_count: u32,
    bytes_acc: u64,
    /// CNPs received.
    pub cnps: u64,
}

impl DcqcnRp {
    /// A reaction point for a port of `line_mbps`, starting at line rate.
    pub fn new(line_mbps: u64, p: DcqcnParams) -> Self {
        assert!(line_mbps >= 1, "line rate must be positive");
        DcqcnRp {
            p,
            line: line_mbps,
            rc: line_mbps,
            rt: line_mbps,
            alpha: p.initial_alpha,
            alpha_running: false,
            alpha_next: 0,
            limited: false,
            rate_next: 0,
            t_count: 0,
            bc_count: 0,
            bytes_acc: 0,
            cnps: 0,
        }
    }

    /// Current rate Rc in Mb/s.
    pub fn rate_mbps(&self) -> u64 {
        self.rc
    }

    /// Target rate Rt in Mb/s.
    pub fn target_mbps(&self) -> u64 {
        self.rt
    }

    pub fn line_mbps(&self) -> u64 {
        self.line
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The limiter is engaged (Rc may be below line rate).
    pub fn limited(&self) -> bool {
        self.limited
    }

    pub fn stage(&self) -> Stage {
        let f = self.p.fast_recovery_stages;
        if !self.limited {
            Stage::Released
        } else if self.t_count > f && self.bc_count > f {
            Stage::HyperIncrease
        } else if self.t_count > f || self.bc_count > f {
            Stage::AdditiveIncrease
        } else {
            Stage::FastRecovery
        }
    }

    /// Next rate-increase timer expiry, while the limiter is engaged.
    pub fn next_timer(&self) -> Option<Ps> {
        self.limited.then_some(self.rate_next)
    }

    /// Catch up on every timer period that elapsed up to `now`.
    pub fn advance(&mut self, now: Ps) {
        if self.alpha_running && now >= self.alpha_next {
            let n = (now - self.alpha_next) / self.p.alpha_timer + 1;
            // powi takes i32; after 2^31 periods alpha is 0 to f64 precision anyway.
            let n32 = n.min(i32::MAX as u64) as i32;
            self.alpha *= (1.0 - self.p.g).powi(n32);
            self.alpha_next += n * self.p.alpha_timer;
        }
        while self.limited && now >= self.rate_next {
            self.rate_next += self.p.rate_timer;
            self.t_count = self.t_count.saturating_add(1);
            self.increase();
        }
    }

    /// A CNP arrived: cut the rate by (1 - alpha/2), then raise alpha.
    pub fn on_cnp(&mut self, now: Ps) {
        self.advance(now);
        self.cnps += 1;
        self.rt = self.rc;
        let cut = (self.rc as f64 * (1.0 - self.alpha / 2.0)).floor() as u64;
        self.rc = cut.max(self.p.min_rate_mbps).min(self.line);
        self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g;
        self.alpha_running = true;
        self.alpha_next = now + self.p.alpha_timer;
        self.limited = true;
        self.rate_next = now + self.p.rate_timer;
        self.t_count = 0;
        self.bc_count = 0;
        self.bytes_acc = 0;
    }

    /// `bytes` (wire bytes) left at `now`: feeds the byte counter.
    pub fn on_send(&mut self, now: Ps, bytes: u32) {
        self.advance(now);
        if !self.limited {
            return;
        }
        self.bytes_acc += u64::from(bytes);
        while self.limited && self.bytes_acc >= self.p.byte_counter {
            self.bytes_acc -= self.p.byte_counter;
            self.bc_count = self.bc_count.saturating_add(1);
            self.increase();
        }
    }

    /// One rate-increase event (the counter that fired was already bumped).
    fn increase(&mut self) {
        match self.stage() {
            Stage::HyperIncrease => {
                let i = u64::from(self.t_count.min(self.bc_count) - self.p.fast_recovery_stages);
                self.rt = self.rt.saturating_add(i * self.p.rate_hai_mbps);
            }
            Stage::AdditiveIncrease => self.rt = self.rt.saturating_add(self.p.rate_ai_mbps),
            Stage::FastRecovery | Stage::Released => {}
        }
        self.rt = self.rt.min(self.line);
        // Round up so Rc reaches Rt exactly (see the module doc).
        self.rc = (self.rc + self.rt).div_ceil(2);
        if self.rc >= self.line {
            self.rc = self.line;
            self.rt = self.line;
            self.limited = false;
            self.t_count = 0;
            self.bc_count = 0;
            self.bytes_acc = 0;
        }
    }
}

/// DCQCN notification point: the per-flow CNP generator at the receiver.
#[derive(Debug, Clone)]
pub struct DcqcnNp {
    interval: Ps,
    last_cnp: Option<Ps>,
    /// CE-marked packets seen.
    pub ce_seen: u64,
    /// CNPs generated.
    pub cnps: u64,
}

impl DcqcnNp {
    pub fn new(interval: Ps) -> Self {
        DcqcnNp {
            interval,
            last_cnp: None,
            ce_seen: 0,
            cnps: 0,
        }
    }

    /// A data packet arrived at `now` with CE = `ce`: should a CNP go back now?
    pub fn on_data(&mut self, now: Ps, ce: bool) -> bool {
        if !ce {
            return false;
        }
        self.ce_seen += 1;
        if self.last_cnp.is_some_and(|t| now < t + self.interval) {
            return false;
        }
        self.last_cnp = Some(now);
        self.cnps += 1;
        true
    }
}

/// Gap between packet starts that holds `wire_bytes` per packet to `rate_mbps` (rounded up).
pub fn pacing_gap(wire_bytes: u32, rate_mbps: u64) -> Ps {
    // bits / (Mb/s) = us; x 1e6 for ps.
    (u64::from(wire_bytes) * 8 * 1_000_000).div_ceil(rate_mbps.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: u64 = 800_000;

    #[test]
    fn cnp_cuts_rate_by_one_minus_half_alpha() {
        let mut rp = DcqcnRp::new(LINE, DcqcnParams::default());
        assert_eq!(rp.stage(), Stage::Released);
        rp.on_cnp(0);
        assert_eq!(rp.rate_mbps(), LINE / 2, "alpha starts at 1: halve");
        assert_eq!(rp.target_mbps(), LINE);
        let a = rp.alpha();
        assert!((a - 1.0).abs() < 1e-12, "(1-g)*1 + g = 1");
        // Let alpha decay for 10 K, then cut again: factor 1 - alpha/2 with the decayed alpha.
        let t = 10 * 55 * US;
        rp.advance(t);
        let a = rp.alpha();
        let expect_a = (1.0 - 1.0 / 256.0f64).powi(10);
        assert!((a - expect_a).abs() < 1e-12);
        let before = rp.rate_mbps();
        rp.on_cnp(t);
        assert_eq!(
            rp.rate_mbps(),
            (before as f64 * (1.0 - a / 2.0)).floor() as u64
        );
        assert_eq!(rp.target_mbps(), before, "Rt = Rc before the cut");
        assert!((rp.alpha() - ((1.0 - 1.0 / 256.0) * a + 1.0 / 256.0)).abs() < 1e-12);
        assert_eq!(rp.cnps, 2);
    }

    #[test]
    fn rate_floor_holds() {
        let mut rp = DcqcnRp::new(LINE, DcqcnParams::default());
        for i in 0..200 {
            rp.on_cnp(i * US);
        }
        assert_eq!(rp.rate_mbps(), 100);
    }

    #[test]
    fn without_cnps_rate_recovers_through_the_stages() {
        let p = DcqcnParams::default();
        let mut rp = DcqcnRp::new(LINE, p);
        // Three CNPs close together: Rt ends far below line, so recovery needs every stage.
        for i in 0..3 {
            rp.on_cnp(i * US);
        }
        let mut now = 2 * US;
        let mut seen = vec![rp.stage()];
        let mut last_rc = rp.rate_mbps();
        // Send at the current rate in 1 us steps (feeds the byte counter as a real sender).
        while rp.limited() {
            now += US;
            let bytes = rp.rate_mbps() / 8; // bytes per us at Rc Mb/s
            rp.on_send(now, bytes as u32);
            assert!(rp.rate_mbps() >= last_rc, "no CNP: the rate never falls");
            last_rc = rp.rate_mbps();
            if *seen.last().unwrap() != rp.stage() {
                seen.push(rp.stage());
            }
            assert!(now < 10_000 * 1000 * US, "recovers within 10 s");
        }
        assert_eq!(rp.rate_mbps(), LINE);
        assert_eq!(
            seen,
            [
                Stage::FastRecovery,
                Stage::AdditiveIncrease,
                Stage::HyperIncrease,
                Stage::Released
            ]
        );
        assert_eq!(rp.next_timer(), None);
    }

    #[test]
    fn fast_recovery_halves_the_gap_f_times() {
        let p = DcqcnParams::default();
        let mut rp = DcqcnRp::new(LINE, p);
        rp.on_cnp(0); // Rc = 400G, Rt = 800G
        for k in 1..=5u64 {
            rp.advance(k * p.rate_timer);
            assert_eq!(rp.stage(), Stage::FastRecovery);
            let gap = LINE - rp.rate_mbps();
            assert_eq!(gap, (LINE / 2) >> k, "stage {k}");
        }
        rp.advance(6 * p.rate_timer);
        assert_eq!(rp.stage(), Stage::AdditiveIncrease);
    }

    #[test]
    fn np_sends_at_most_one_cnp_per_interval() {
        let mut np = DcqcnNp::new(50 * US);
        assert!(!np.on_data(0, false), "no mark, no CNP");
        assert!(np.on_data(US, true));
        assert!(!np.on_data(2 * US, true));
        assert!(
            !np.on_data(50 * US, true),
            "still inside 50 us of the last CNP"
        );
        assert!(np.on_data(51 * US, true));
        let sent = (0..1000u64)
            .filter(|i| np.on_data(100 * US + i * US, true))
            .count();
        assert_eq!(sent, 20, "1000 us of marks: one CNP per 50 us");
        assert_eq!(np.ce_seen, 1004);
        assert_eq!(np.cnps, 22);
    }

    #[test]
    fn pacing_gap_is_exact() {
        assert_eq!(pacing_gap(4160, 800_000), 41_600);
        assert_eq!(pacing_gap(4160, 100), 332_800_000);
    }
}
