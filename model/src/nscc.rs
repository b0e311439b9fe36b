//! NSCC, the UET 1.0 sender congestion control MRC runs ("uet-1.0-nscc"), at three levels:
//!
//! - [`Reference`]: f64, the readable specification of the algorithm in `mrc-notes.md`
//!   section 4 (structure as in the UEC reference simulator's `UecSrc`).
//! - [`Fixed`]: the same algorithm in the integer formats the RTL uses. Bit-exact with
//!   `nscc_window` per event.
//! - [`NsccWindow`]: `Fixed` behind the RTL's ports, cycle by cycle (one event per
//!   [`EVENT_CYCLES`] clocks; outputs change when an event completes).
//!
//! ```text
//!  ACK (bytes, rtt, ecn, penalty) | trim NACK (bytes) | RTO | TICK, each with `now` (ns)
//!        |
//!   base-RTT min filter -> maxwnd = 1.5 BDP(base)      delay = rtt - base, EWMA avg
//!        |
//!   quick adapt (once per epoch = base + target): cwnd = max(achieved, MTU) ----> done
//!        |
//!   quadrant:   no ECN, delay >= target  fair increase      inc += fi * acked
//!               no ECN, delay <  target  fast increase      cwnd += acked * fi_scale
//!                                        or proportional    inc += alpha * acked * (target - delay)
//!               ECN,    delay >= target  multiplicative decrease (once per base RTT, avg delay)
//!               ECN,    delay <  target  nothing (the spray arbiter skips the EV)
//!   receiver penalty cwnd -= acked * pen >> 7;  clamp [MTU, maxwnd]
//!        |
//!   fulfill (every 8 MTU received or base RTT): cwnd += inc / cwnd (+ eta once per period)
//! ```
//!
//! Choices the notes leave open, the same at every level:
//! - `rtt_ns == 0` means the ACK carried no RTT sample: base RTT and the average are left
//!   alone and the delay counts as 0.
//! - The fast-increase byte count restarts on any delay >= 1 us and on ECN above target, so
//!   "below 1 us for a whole window" means a run of ACKs whose bytes exceed cwnd.
//! - eta is added by the fulfill that finds a base RTT elapsed since the last eta (one test,
//!   `now - last_adjust > base_rtt`, triggers the timed fulfill and the eta). A TICK runs the
//!   timed fulfill only if bytes were acked since the last fulfill: no ACKs (a dead path), no
//!   growth.
//! - RTO: cwnd -= one MTU and it arms quick adapt (a loss), which acts at the next ACK/NACK.
//! - Times are `u32` ns that wrap; elapsed times are wrapping differences, so events of a QP
//!   must come less than 2^31 ns apart (TICKs guarantee it).
//! - Not modelled: htsim's "bytes to ignore" after quick adapt (needs in-flight bytes).
//!
//! Fixed-point formats (`Fixed`, the RTL): cwnd / maxwnd / achieved / received / fi_count
//! bytes in `u32` (saturating); delays and times ns in `u32` (RTT samples 24 bits); the
//! average delay ns in Q24.8; the increase accumulator bytes^2 in 48 bits (saturating);
//! gains in Q16 / Q8 ([`NsccFixed`]). The two divisions (`inc / cwnd` and `target / avg`)
//! are a multiply by a reciprocal from a 1024-entry table indexed by the 10 bits under the
//! leading one ([`recip_table`]); each is within 0.1 % of the real quotient.

use mrc_config::nscc::{
    maxwnd_for, recip_table, NsccFixed, NsccParams, FAST_DELAY_NS, MD_FLOOR, QA_GATE, RECIP_FRAC,
    RECIP_INDEX_BITS,
};
pub use mrc_config::nscc::{EVENT_CYCLES, FULFILL_CYCLES, MD_CYCLES};
use mrc_config::NicConfig;

/// One congestion-control event. `now` is the ns clock when it happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NsccEvent {
    /// A (S)ACK: newly acked bytes (24-bit), the RTT sample (24-bit ns, 0 = none), the ECN
    /// echo and the receiver's 7-bit window penalty.
    Ack {
        now: u32,
        bytes: u32,
        rtt_ns: u32,
        ecn: bool,
        penalty: u8,
    },
    /// A trim NACK for `bytes` (24-bit).
    Nack { now: u32, bytes: u32 },
    /// A retransmission timeout.
    Rto { now: u32 },
    /// The timer: runs a fulfill when a base RTT passed without one.
    Tick { now: u32 },
}

/// Event kinds as the RTL's `ev_kind` port encodes them.
pub const KIND_ACK: u8 = 0;
pub const KIND_NACK: u8 = 1;
pub const KIND_RTO: u8 = 2;
pub const KIND_TICK: u8 = 3;
/// Largest acked/NACKed byte count and RTT sample an event carries (24-bit fields).
pub const FIELD_MAX: u32 = (1 << 24) - 1;
/// The increase accumulator saturates here (48 bits).
pub const INC_MAX: u64 = (1 << 48) - 1;

impl NsccEvent {
    pub fn now(&self) -> u32 {
        match *self {
            NsccEvent::Ack { now, .. }
            | NsccEvent::Nack { now, .. }
            | NsccEvent::Rto { now }
            | NsccEvent::Tick { now } => now,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reference (f64)
// ---------------------------------------------------------------------------------------------

/// NSCC in real numbers: the specification `Fixed` and the RTL approximate.
#[derive(Debug, Clone)]
pub struct Reference {
    pub p: NsccParams,
    pub cwnd: f64,
    pub maxwnd: f64,
    pub base_rtt: f64,
    pub avg_delay: f64,
    inc: f64,
    received: f64,
    achieved: f64,
    fi_count: f64,
    increasing: bool,
    trigger_qa: bool,
    /// Times are the events' wrapping u32 ns, compared by wrapping differences as in `Fixed`.
    qa_end: Option<u32>,
    last_dec: u32,
    last_adjust: u32,
    pub md_count: u64,
    pub qa_count: u64,
}

impl Reference {
    pub fn new(cfg: &NicConfig) -> Self {
        let p = NsccParams::new(cfg);
        let maxwnd = (p.maxwnd_per_ns * p.base_rtt_ns).max(p.mtu);
        Reference {
            p,
            cwnd: maxwnd,
            maxwnd,
            base_rtt: p.base_rtt_ns,
            avg_delay: 0.0,
            inc: 0.0,
            received: 0.0,
            achieved: 0.0,
            fi_count: 0.0,
            increasing: false,
            trigger_qa: false,
            qa_end: None,
            last_dec: 0,
            last_adjust: 0,
            md_count: 0,
            qa_count: 0,
        }
    }

    /// Apply one event. Fields are taken at their wire widths (24-bit bytes and RTT, 7-bit
    /// penalty), as the RTL's ports take them.
    pub fn apply(&mut self, ev: &NsccEvent) {
        match *ev {
            NsccEvent::Ack {
                now,
                bytes,
                rtt_ns,
                ecn,
                penalty,
            } => self.on_ack(
                now,
                f64::from(bytes & FIELD_MAX),
                rtt_ns & FIELD_MAX,
                ecn,
                f64::from(penalty & 0x7F),
            ),
            NsccEvent::Nack { now, bytes } => {
                self.trigger_qa = true;
                if !self.quick_adapt(now, true, 0.0) {
                    self.cwnd -= f64::from(bytes & FIELD_MAX);
                    self.clamp();
                }
            }
            NsccEvent::Rto { .. } => {
                self.trigger_qa = true;
                self.cwnd -= self.p.mtu;
                self.clamp();
            }
            NsccEvent::Tick { now } => {
                // The timed fulfill only when something was acked since the last one: on a
                // dead path (no ACKs) the window must not grow by eta.
                if self.elapsed(now, self.last_adjust) > self.base_rtt && self.received > 0.0 {
                    self.fulfill(now);
                }
            }
        }
    }

    fn elapsed(&self, now: u32, then: u32) -> f64 {
        f64::from(now.wrapping_sub(then))
    }

    fn on_ack(&mut self, now: u32, bytes: f64, rtt_ns: u32, ecn: bool, penalty: f64) {
        let p = self.p;
        let rtt = f64::from(rtt_ns);
        if rtt_ns != 0 && rtt < self.base_rtt {
            // Base RTT is a min filter; BDP and maxwnd follow it.
            self.base_rtt = rtt;
            self.maxwnd = (p.maxwnd_per_ns * rtt).max(p.mtu);
        }
        let delay = if rtt_ns != 0 {
            rtt - self.base_rtt
        } else {
            0.0
        };
        if rtt_ns != 0 {
            self.avg_delay += mrc_config::nscc::DELAY_EWMA * (delay - self.avg_delay);
        }
        self.achieved += bytes;
        self.received += bytes;
        if self.quick_adapt(now, false, delay) {
            return;
        }
        let target = p.target_ns;
        if !ecn && delay >= target {
            self.inc += p.fi * bytes;
            self.fi_count = 0.0;
            self.increasing = false;
        } else if !ecn {
            let mut fast = false;
            if delay < f64::from(FAST_DELAY_NS) {
                self.fi_count += bytes;
                if self.fi_count > self.cwnd || self.increasing {
                    self.cwnd += bytes * p.fi_scale;
                    self.increasing = true;
                    fast = true;
                } else {
                    self.increasing = false;
                }
            } else {
                self.fi_count = 0.0;
                self.increasing = false;
            }
            if !fast {
                self.inc += p.alpha * bytes * (target - delay);
            }
        } else if delay >= target {
            self.fi_count = 0.0;
            self.increasing = false;
            let avg = self.avg_delay;
            if avg > target && self.elapsed(now, self.last_dec) > self.base_rtt {
                let f = (1.0 - mrc_config::nscc::GAMMA * (avg - target) / avg).max(MD_FLOOR);
                self.cwnd *= f;
                self.last_dec = now;
                self.md_count += 1;
            }
        }
        // ECN below target: no window change (the EV is skipped instead).
        self.cwnd -= (bytes * penalty / 128.0).min(self.cwnd);
        self.clamp();
        if self.received > p.adjust_bytes || self.elapsed(now, self.last_adjust) > self.base_rtt {
            self.fulfill(now);
        }
    }

    fn quick_adapt(&mut self, now: u32, is_loss: bool, delay: f64) -> bool {
        let mut done = false;
        let over = self
            .qa_end
            .is_none_or(|end| (now.wrapping_sub(end) as i32) > 0);
        if over {
            if self.qa_end.is_some()
                && (self.trigger_qa || is_loss || delay > self.p.qa_threshold_ns)
                && self.achieved < self.maxwnd / f64::from(1u32 << QA_GATE)
            {
                self.cwnd = self.achieved.max(self.p.mtu);
                self.trigger_qa = false;
                self.qa_count += 1;
                done = true;
            }
            self.achieved = 0.0;
            // The epoch's end on the wrapping ns clock (base RTT and target are whole ns in
            // every config the fixed point accepts).
            let len = (self.base_rtt + self.p.target_ns).round() as u32;
            self.qa_end = Some(now.wrapping_add(len));
        }
        if done {
            self.inc = 0.0;
            self.received = 0.0;
        }
        done
    }

    fn fulfill(&mut self, now: u32) {
        self.cwnd += self.inc / self.cwnd;
        if self.elapsed(now, self.last_adjust) > self.base_rtt {
            self.cwnd += self.p.eta;
            self.last_adjust = now;
        }
        self.inc = 0.0;
        self.received = 0.0;
        self.clamp();
    }

    fn clamp(&mut self) {
        self.cwnd = self.cwnd.max(self.p.mtu).min(self.maxwnd);
    }
}

// ---------------------------------------------------------------------------------------------
// Fixed (the RTL's arithmetic)
// ---------------------------------------------------------------------------------------------

/// NSCC in the RTL's integer formats. Every operation here has a twin in `nscc_window`.
/// Plain values only (the reciprocal table is shared), so the cycle model's per-event
/// snapshot is a copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fixed {
    pub k: NsccFixed,
    pub cwnd: u32,
    pub maxwnd: u32,
    pub base_rtt: u32,
    /// Average queuing delay, ns Q24.8.
    pub avg_q8: u32,
    pub inc: u64,
    pub received: u32,
    pub achieved: u32,
    pub fi_count: u32,
    pub increasing: bool,
    pub trigger_qa: bool,
    pub epoch_valid: bool,
    pub qa_end: u32,
    pub last_dec: u32,
    pub last_adjust: u32,
    pub md_count: u32,
    pub qa_count: u32,
    pub events: u32,
    /// Fulfills run (not an RTL output; tells `NsccWindow` the event's length).
    pub fulfills: u32,
}

/// The optional steps an event ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Steps {
    pub md: bool,
    pub fulfill: bool,
}

impl Steps {
    /// Clocks `nscc_window` spends on the event.
    pub fn cycles(&self) -> u32 {
        EVENT_CYCLES
            + if self.md { MD_CYCLES } else { 0 }
            + if self.fulfill { FULFILL_CYCLES } else { 0 }
    }
}

/// Leading-one position and the 10 bits under it (the reciprocal table index); `x > 0`.
pub fn recip_index(x: u32) -> (u32, usize) {
    let p = 31 - x.leading_zeros();
    let m = if p >= RECIP_INDEX_BITS {
        x >> (p - RECIP_INDEX_BITS)
    } else {
        x << (RECIP_INDEX_BITS - p)
    };
    (p, (m & ((1 << RECIP_INDEX_BITS) - 1)) as usize)
}

impl Fixed {
    pub fn new(cfg: &NicConfig) -> Self {
        let k = NsccFixed::new(cfg);
        Fixed {
            k,
            cwnd: k.init_cwnd,
            maxwnd: k.init_cwnd,
            base_rtt: k.base_rtt_ns,
            avg_q8: 0,
            inc: 0,
            received: 0,
            achieved: 0,
            fi_count: 0,
            increasing: false,
            trigger_qa: false,
            epoch_valid: false,
            qa_end: 0,
            last_dec: 0,
            last_adjust: 0,
            md_count: 0,
            qa_count: 0,
            events: 0,
            fulfills: 0,
        }
    }

    /// Apply one event; says which of the optional steps ran (they cost the RTL clocks).
    pub fn apply(&mut self, ev: &NsccEvent) -> Steps {
        self.events = self.events.wrapping_add(1);
        let (md0, ful0) = (self.md_count, self.fulfills);
        match *ev {
            NsccEvent::Ack {
                now,
                bytes,
                rtt_ns,
                ecn,
                penalty,
            } => self.on_ack(
                now,
                bytes & FIELD_MAX,
                rtt_ns & FIELD_MAX,
                ecn,
                penalty & 0x7F,
            ),
            NsccEvent::Nack { now, bytes } => {
                self.trigger_qa = true;
                if !self.quick_adapt(now, true, 0) {
                    self.cwnd = self.cwnd.saturating_sub(bytes & FIELD_MAX);
                    self.clamp();
                }
            }
            NsccEvent::Rto { .. } => {
                self.trigger_qa = true;
                self.cwnd = self.cwnd.saturating_sub(self.k.mtu);
                self.clamp();
            }
            NsccEvent::Tick { now } => {
                if now.wrapping_sub(self.last_adjust) > self.base_rtt && self.received > 0 {
                    self.fulfill(now);
                }
            }
        }
        Steps {
            md: self.md_count != md0,
            fulfill: self.fulfills != ful0,
        }
    }

    fn on_ack(&mut self, now: u32, bytes: u32, rtt: u32, ecn: bool, penalty: u8) {
        let k = self.k;
        if rtt != 0 && rtt < self.base_rtt {
            self.base_rtt = rtt;
            self.maxwnd = maxwnd_for(rtt, k.maxwnd_per_ns_q8, k.mtu);
        }
        let delay = if rtt != 0 { rtt - self.base_rtt } else { 0 };
        if rtt != 0 {
            self.avg_q8 = ewma_q8(self.avg_q8, delay, k.ewma_q16);
        }
        self.achieved = self.achieved.saturating_add(bytes);
        self.received = self.received.saturating_add(bytes);
        if self.quick_adapt(now, false, delay) {
            return;
        }
        let b = u64::from(bytes);
        if !ecn && delay >= k.target_ns {
            self.add_inc((b * u64::from(k.fi_m)) << k.fi_e);
            self.fi_count = 0;
            self.increasing = false;
        } else if !ecn {
            let mut fast = false;
            if delay < FAST_DELAY_NS {
                self.fi_count = self.fi_count.saturating_add(bytes);
                if self.fi_count > self.cwnd || self.increasing {
                    let add = (b * u64::from(k.fi_scale_q8)) >> 8;
                    self.cwnd = sat32(u64::from(self.cwnd) + add);
                    self.increasing = true;
                    fast = true;
                } else {
                    self.increasing = false;
                }
            } else {
                self.fi_count = 0;
                self.increasing = false;
            }
            if !fast {
                // alpha * acked * (target - delay) in bytes^2: p1 >> 7 keeps the product
                // within 34 x 17 bits (the 7 dropped bits are worth under a byte of cwnd).
                let p1 = b * u64::from(k.target_ns - delay);
                let inc = ((p1 >> 7) * u64::from(k.alpha_m)) >> (9 - k.alpha_e);
                self.add_inc(inc.min(INC_MAX));
            }
        } else if delay >= k.target_ns {
            self.fi_count = 0;
            self.increasing = false;
            if u64::from(self.avg_q8) > u64::from(k.target_ns) << 8
                && now.wrapping_sub(self.last_dec) > self.base_rtt
            {
                let f = self.md_factor_q16();
                self.cwnd = ((u64::from(self.cwnd) * u64::from(f)) >> 16) as u32;
                self.last_dec = now;
                self.md_count = self.md_count.wrapping_add(1);
            }
        }
        let pen = (b * u64::from(penalty)) >> 7;
        self.cwnd = sat32(u64::from(self.cwnd).saturating_sub(pen));
        self.clamp();
        if self.received > k.adjust_bytes || now.wrapping_sub(self.last_adjust) > self.base_rtt {
            self.fulfill(now);
        }
    }

    /// max(1 - gamma (avg - target) / avg, 0.5) in Q16, as (1 - gamma) + gamma target / avg
    /// with 1 / avg from the table. Only called with avg > target.
    ///
    /// gamma target / avg = (gamma target 2^8) x entry >> (p + 11), computed as
    /// ((gamma target 2^8) >> (p - 16)) x entry >> 27 so the product stays narrow (an MD needs
    /// avg > target >= 1.5 us, so p >= 18).
    pub fn md_factor_q16(&self) -> u32 {
        let (p, i) = recip_index(self.avg_q8.max(1));
        // 33 bits: exact whenever an MD can happen (avg > target).
        let gts = if p >= 16 {
            self.k.gamma_target_q24 >> (p - 16)
        } else {
            self.k.gamma_target_q24
        } & ((1 << 33) - 1);
        let gt = (gts * u64::from(recip_table()[i])) >> (RECIP_FRAC + 16 - RECIP_INDEX_BITS);
        let f = (65536 - u64::from(self.k.gamma_q16)) + gt.min(65536);
        f.clamp(32768, 65536) as u32
    }

    /// inc / cwnd = inc x entry >> (p + 11), computed as (inc >> (p - 2)) x entry >> 13 with
    /// the shifted inc saturated to 34 bits (cwnd >= MTU >= 1024, so p >= 10; the dropped bits
    /// are worth under a byte, and a saturated quotient is above any maxwnd anyway).
    pub fn inc_over_cwnd(&self) -> u64 {
        let (p, i) = recip_index(self.cwnd);
        let incs = (self.inc >> (p - 2)).min((1 << 34) - 1);
        (incs * u64::from(recip_table()[i])) >> (RECIP_FRAC + 2 - RECIP_INDEX_BITS)
    }

    fn quick_adapt(&mut self, now: u32, is_loss: bool, delay: u32) -> bool {
        let mut done = false;
        let over = !self.epoch_valid || (now.wrapping_sub(self.qa_end) as i32) > 0;
        if over {
            if self.epoch_valid
                && (self.trigger_qa || is_loss || delay > self.k.qa_threshold_ns)
                && self.achieved < (self.maxwnd >> QA_GATE)
            {
                self.cwnd = self.achieved.max(self.k.mtu);
                self.trigger_qa = false;
                self.qa_count = self.qa_count.wrapping_add(1);
                done = true;
            }
            self.achieved = 0;
            self.qa_end = now
                .wrapping_add(self.base_rtt)
                .wrapping_add(self.k.target_ns);
            self.epoch_valid = true;
        }
        if done {
            self.inc = 0;
            self.received = 0;
        }
        done
    }

    fn fulfill(&mut self, now: u32) {
        self.fulfills = self.fulfills.wrapping_add(1);
        let mut w = u64::from(self.cwnd) + self.inc_over_cwnd();
        if now.wrapping_sub(self.last_adjust) > self.base_rtt {
            w += u64::from(self.k.eta);
            self.last_adjust = now;
        }
        self.cwnd = sat32(w);
        self.inc = 0;
        self.received = 0;
        self.clamp();
    }

    fn add_inc(&mut self, x: u64) {
        self.inc = (self.inc + x).min(INC_MAX);
    }

    fn clamp(&mut self) {
        self.cwnd = self.cwnd.max(self.k.mtu).min(self.maxwnd);
    }

    /// Average queuing delay in whole ns.
    pub fn avg_delay_ns(&self) -> u32 {
        self.avg_q8 >> 8
    }
}

/// One EWMA step of the Q24.8 average towards `delay` ns with weight `w_q16`, rounded
/// towards the old average in both directions.
pub fn ewma_q8(avg_q8: u32, delay: u32, w_q16: u32) -> u32 {
    let d = u64::from(delay) << 8;
    let a = u64::from(avg_q8);
    let w = u64::from(w_q16);
    if d >= a {
        (a + (((d - a) * w) >> 16)) as u32
    } else {
        (a - (((a - d) * w) >> 16)) as u32
    }
}

fn sat32(x: u64) -> u32 {
    x.min(u64::from(u32::MAX)) as u32
}

// ---------------------------------------------------------------------------------------------
// NsccWindow (the RTL's ports, cycle by cycle)
// ---------------------------------------------------------------------------------------------

/// One clock of `nscc_window`'s inputs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowInputs {
    /// Synchronous reset: state back to the config's initial values, any event in flight lost.
    pub rst: bool,
    /// An event is offered; it is taken on a clock where `ev_ready` is high.
    pub ev_valid: bool,
    /// KIND_ACK / KIND_NACK / KIND_RTO / KIND_TICK.
    pub ev_kind: u8,
    pub ev_bytes: u32,
    pub ev_rtt_ns: u32,
    pub ev_ecn: bool,
    pub ev_penalty: u8,
    /// Free-running ns clock (wraps).
    pub now_ns: u32,
    /// For `can_send`: bytes in flight and the next packet's length.
    pub inflight: u32,
    pub next_len: u32,
    /// Switch to context `sw_ctx` (a QP's saved state). Acted on only when idle, not taking
    /// an event, `sw_ctx` is another context below the window's count, and the owner is not
    /// being cleared; it then costs two clocks (read the next context; then write the old
    /// owner's back and load the next) before the next event can be taken.
    pub sw_valid: bool,
    pub sw_ctx: u8,
    /// Contexts back to their initial values (bit per context). Clearing the owner is the
    /// owner's reset: an event in flight (or a context load) is lost.
    pub ctx_clr: u16,
}

impl WindowInputs {
    /// The inputs that offer `ev` (ev_valid set; rst, inflight, next_len 0): the inverse of
    /// [`WindowInputs::event`].
    pub fn offering(ev: &NsccEvent) -> Self {
        let x = WindowInputs {
            ev_valid: true,
            now_ns: ev.now(),
            ..WindowInputs::default()
        };
        match *ev {
            NsccEvent::Ack {
                bytes,
                rtt_ns,
                ecn,
                penalty,
                ..
            } => WindowInputs {
                ev_kind: KIND_ACK,
                ev_bytes: bytes,
                ev_rtt_ns: rtt_ns,
                ev_ecn: ecn,
                ev_penalty: penalty,
                ..x
            },
            NsccEvent::Nack { bytes, .. } => WindowInputs {
                ev_kind: KIND_NACK,
                ev_bytes: bytes,
                ..x
            },
            NsccEvent::Rto { .. } => WindowInputs {
                ev_kind: KIND_RTO,
                ..x
            },
            NsccEvent::Tick { .. } => WindowInputs {
                ev_kind: KIND_TICK,
                ..x
            },
        }
    }

    pub fn event(&self) -> NsccEvent {
        let now = self.now_ns;
        match self.ev_kind & 3 {
            KIND_ACK => NsccEvent::Ack {
                now,
                bytes: self.ev_bytes,
                rtt_ns: self.ev_rtt_ns,
                ecn: self.ev_ecn,
                penalty: self.ev_penalty,
            },
            KIND_NACK => NsccEvent::Nack {
                now,
                bytes: self.ev_bytes,
            },
            KIND_RTO => NsccEvent::Rto { now },
            _ => NsccEvent::Tick { now },
        }
    }
}

/// One clock of `nscc_window`'s outputs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowOutputs {
    pub ev_ready: bool,
    pub cwnd: u32,
    pub maxwnd: u32,
    pub base_rtt_ns: u32,
    /// Average queuing delay, ns Q24.8.
    pub avg_delay_q8: u32,
    /// `next_len > 0 && inflight + next_len <= cwnd` (this clock's inputs, the shown cwnd).
    pub can_send: bool,
    pub cnt_events: u32,
    pub cnt_md: u32,
    pub cnt_qa: u32,
    /// The context the datapath holds (its events are the ones taken).
    pub ctx_owner: u8,
    /// High in an event's last phase: `nx_*` are the owner's window after it (the values the
    /// shown outputs take at this edge), so a per-context copy can load them; 0 otherwise.
    pub nx_load: bool,
    pub nx_cwnd: u32,
    pub nx_maxwnd: u32,
    pub nx_base_rtt_ns: u32,
}

/// `nscc_window` cycle by cycle. An event is taken on a clock with `ev_valid && ev_ready`;
/// it then occupies the block for L = [`Steps::cycles`] clocks (9, +7 with a multiplicative
/// decrease, +8 with a fulfill). Outputs are those after each edge (the cycle contract):
///
/// ```text
///  step      t              t+1 .. t+L-2   t+L-1              t+L
///  ev_valid  1: taken       -              -                  (a next event is taken here)
///  ev_ready  0              0              1 (last phase)     ..
///  cwnd ..   old            old            old                the event's result
/// ```
///
/// Contexts (`NicConfig::qps` of them): one datapath serves several QPs. Each QP's
/// algorithm state is a context; the datapath works on the owner's, the others wait in a
/// context RAM. A switch (`sw_valid`, only from idle) takes two clocks:
///
/// ```text
///  step      s: idle, sw_valid    s+1: load              s+2
///  owner     old -> sw_ctx        new                    new: its event can be taken
///  ev_ready  1                    0                      1
/// ```
///
/// The shown outputs (`cwnd`, ..) are the last completed event's, whichever context it
/// was; `nx_*` with `nx_load` let a per-context copy follow each context (as `mrc_core`
/// keeps one per QP). With one context nothing switches and this is the one-QP window.
#[derive(Debug, Clone)]
pub struct NsccWindow {
    cfg: NicConfig,
    /// Every context's state; the owner's is the one events apply to.
    ctx: Vec<Fixed>,
    /// Per context: its state as of its last completed event (what a per-context copy of
    /// the shown outputs holds).
    shown_ctx: Vec<Fixed>,
    /// The shown outputs: the last completed event's state.
    shown: Fixed,
    owner: usize,
    /// The clock after a switch: the owner's context is being loaded.
    loading: bool,
    /// Clock of the event in flight (1..=len), 0 when idle.
    phase: u32,
    len: u32,
}

impl NsccWindow {
    /// A window with one context per QP of `cfg`.
    pub fn new(cfg: &NicConfig) -> Self {
        let f = Fixed::new(cfg);
        let n = cfg.qps.max(1) as usize;
        NsccWindow {
            cfg: cfg.clone(),
            ctx: vec![f; n],
            shown_ctx: vec![f; n],
            shown: f,
            owner: 0,
            loading: false,
            phase: 0,
            len: 0,
        }
    }

    pub fn contexts(&self) -> usize {
        self.ctx.len()
    }

    /// The owner's event-level state (including an event still in flight).
    pub fn state(&self) -> &Fixed {
        &self.ctx[self.owner]
    }

    /// Context `i`'s event-level state.
    pub fn context(&self, i: usize) -> &Fixed {
        &self.ctx[i]
    }

    pub fn owner(&self) -> usize {
        self.owner
    }

    pub fn ready(&self) -> bool {
        self.phase == self.len && !self.loading
    }

    /// The state the outputs show (`cwnd`, `maxwnd`, `base_rtt_ns`, ..).
    pub fn shown(&self) -> &Fixed {
        &self.shown
    }

    /// Context `i` as of its last completed event.
    pub fn shown_ctx(&self, i: usize) -> &Fixed {
        &self.shown_ctx[i]
    }

    /// One clock edge; the outputs after it (`can_send` from this clock's inputs).
    pub fn step(&mut self, x: &WindowInputs) -> WindowOutputs {
        let n = self.ctx.len();
        let clr = |i: usize| i < 16 && x.ctx_clr >> i & 1 != 0;
        let owner0 = self.owner;
        if x.rst {
            *self = NsccWindow::new(&self.cfg);
        } else if clr(self.owner) {
            let f = Fixed::new(&self.cfg);
            self.ctx[self.owner] = f;
            self.shown_ctx[self.owner] = f;
            self.shown = f;
            self.loading = false;
            self.phase = 0;
            self.len = 0;
        } else {
            let ready = self.ready();
            let idle = self.phase == 0 && !self.loading;
            if self.phase > 0 && self.phase == self.len {
                self.shown = self.ctx[self.owner];
                self.shown_ctx[self.owner] = self.shown;
            }
            let to = usize::from(x.sw_ctx);
            if self.loading {
                self.loading = false;
            } else if ready && x.ev_valid {
                self.len = self.ctx[self.owner].apply(&x.event()).cycles();
                self.phase = 1;
            } else if idle && x.sw_valid && to < n && to != self.owner {
                self.owner = to;
                self.loading = true;
            } else if ready {
                self.phase = 0;
                self.len = 0;
            } else {
                self.phase += 1;
            }
        }
        if !x.rst {
            // Contexts other than this clock's owner (its clear was handled above; a context
            // being switched to and cleared at once loads its initial values).
            let f = Fixed::new(&self.cfg);
            for i in (0..n).filter(|&i| clr(i) && i != owner0) {
                self.ctx[i] = f;
                self.shown_ctx[i] = f;
            }
        }
        let s = &self.shown;
        let last = self.phase > 0 && self.phase == self.len;
        let st = &self.ctx[self.owner];
        WindowOutputs {
            ev_ready: self.ready(),
            cwnd: s.cwnd,
            maxwnd: s.maxwnd,
            base_rtt_ns: s.base_rtt,
            avg_delay_q8: s.avg_q8,
            can_send: x.next_len > 0
                && u64::from(x.inflight) + u64::from(x.next_len) <= u64::from(s.cwnd),
            cnt_events: s.events,
            cnt_md: s.md_count,
            cnt_qa: s.qa_count,
            ctx_owner: self.owner as u8,
            nx_load: last,
            nx_cwnd: if last { st.cwnd } else { 0 },
            nx_maxwnd: if last { st.maxwnd } else { 0 },
            nx_base_rtt_ns: if last { st.base_rtt } else { 0 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> NicConfig {
        NicConfig::default()
    }

    fn ack(now: u32, bytes: u32, rtt_ns: u32, ecn: bool) -> NsccEvent {
        NsccEvent::Ack {
            now,
            bytes,
            rtt_ns,
            ecn,
            penalty: 0,
        }
    }

    /// Run the same events through both levels; return (reference, fixed).
    fn both(events: &[NsccEvent]) -> (Reference, Fixed) {
        let mut r = Reference::new(&cfg());
        let mut f = Fixed::new(&cfg());
        for e in events {
            r.apply(e);
            f.apply(e);
        }
        (r, f)
    }

    /// Bring cwnd down from maxwnd with one quick adapt (to MTU), then a TICK whose timed
    /// fulfill adds eta, so increases have room and no timed fulfill follows for a base RTT.
    fn from_low_window(start: u32) -> Vec<NsccEvent> {
        vec![
            ack(start, 4096, 12_000, false),
            NsccEvent::Nack {
                now: start + 30_000,
                bytes: 4096,
            },
            ack(start + 38_000, 1, 12_000, false),
        ]
    }

    /// cwnd after `from_low_window(1_000)`: MTU + eta + a few bytes.
    fn low_window_cwnd() -> f64 {
        both(&from_low_window(1_000)).0.cwnd
    }

    #[test]
    fn starts_at_one_and_a_half_bdp() {
        let (r, f) = both(&[]);
        assert_eq!(f.cwnd, 1_800_000);
        assert_eq!(r.cwnd, 1_800_000.0);
        assert_eq!(f.maxwnd, f.cwnd);
    }

    #[test]
    fn quick_adapt_sets_cwnd_to_achieved_bytes_after_a_trim() {
        let (r, f) = both(&from_low_window(1_000)[..2]);
        // The first ACK opened the epoch (achieved reset to 0); the NACK closes it with 0
        // achieved bytes: cwnd = max(0, MTU).
        assert_eq!(f.qa_count, 1);
        assert_eq!(f.cwnd, 4096);
        assert_eq!(r.cwnd, 4096.0);
    }

    #[test]
    fn no_quick_adapt_when_achieved_is_above_the_gate() {
        let mut ev = vec![ack(1_000, 4096, 12_000, false)];
        // 300 KB acked in the epoch > maxwnd/8 = 225 KB.
        for i in 0..75 {
            ev.push(ack(2_000 + i * 100, 4096, 12_000, false));
        }
        ev.push(NsccEvent::Nack {
            now: 40_000,
            bytes: 4096,
        });
        let (r, f) = both(&ev);
        assert_eq!(f.qa_count, 0);
        assert_eq!(r.qa_count, 0);
        assert!(f.cwnd > 1_700_000);
    }

    #[test]
    fn fair_increase_above_target_without_ecn() {
        let mut ev = from_low_window(1_000);
        // delay = 20 us >= target 9 us, no ECN: inc += fi * acked, fulfilled every 8 MTU.
        for i in 0..9 {
            ev.push(ack(40_000 + i * 50, 4096, 32_000, false));
        }
        let (r, f) = both(&ev);
        let w0 = low_window_cwnd();
        assert!(w0 > 4096.0 + r.p.eta && w0 < 4096.0 + r.p.eta + 100.0);
        // 9 ACKs x 4096 B > 8 MTU: one fulfill of inc = fi * 36 KB over cwnd w0.
        let expect = w0 + r.p.fi * 9.0 * 4096.0 / w0;
        assert!((r.cwnd - expect).abs() < 1e-6, "{} vs {expect}", r.cwnd);
        assert!((f64::from(f.cwnd) / r.cwnd - 1.0).abs() < 0.002);
    }

    #[test]
    fn proportional_increase_below_target_scales_with_the_gap() {
        let run = |rtt: u32| {
            let mut ev = from_low_window(1_000);
            for i in 0..9 {
                ev.push(ack(40_000 + i * 50, 4096, rtt, false));
            }
            both(&ev)
        };
        let (r_near, f_near) = run(12_000 + 8_000); // delay 8 us: small gap
        let (r_far, f_far) = run(12_000 + 2_000); // delay 2 us: big gap
        assert!(r_far.cwnd > r_near.cwnd && f_far.cwnd > f_near.cwnd);
        let gain = |r: &Reference| r.cwnd - low_window_cwnd();
        assert!((gain(&r_far) / gain(&r_near) - 7.0).abs() < 0.01);
    }

    #[test]
    fn fast_increase_after_a_window_below_one_microsecond() {
        let mut ev = from_low_window(1_000);
        // delay 0.5 us: proportional until the bytes seen exceed cwnd, then fast increase.
        for i in 0..4 {
            ev.push(ack(40_000 + i * 10, 4096, 12_500, false));
        }
        let (r, f) = both(&ev);
        // ACK 1: fi_count 4096 = cwnd, not above: proportional. ACK 2: 8192 > cwnd: fast
        // from here, cwnd += acked * fi_scale (0.25 a = 2).
        assert!(r.cwnd >= low_window_cwnd() + 3.0 * 4096.0 * r.p.fi_scale);
        assert!((f64::from(f.cwnd) / r.cwnd - 1.0).abs() < 0.002);
    }

    #[test]
    fn multiplicative_decrease_once_per_base_rtt_with_floor() {
        let mut ev = Vec::new();
        // A long congested stretch: avg delay climbs; ECN above target cuts cwnd at most once
        // per base RTT, never below half.
        for i in 0..2_000u32 {
            ev.push(ack(1_000 + i * 100, 4096, 12_000 + 60_000, true));
        }
        let mut r = Reference::new(&cfg());
        let mut f = Fixed::new(&cfg());
        let mut prev = r.cwnd;
        for e in &ev {
            r.apply(e);
            f.apply(e);
            assert!(r.cwnd >= prev * 0.5 - 1e-9);
            prev = r.cwnd;
        }
        // 200 us of events, base RTT 12 us: at most 200/12 cuts; quick adapt is armed by the
        // delay (> 4 target) and takes over once achieved bytes fall under the gate.
        assert!(r.md_count >= 1 && r.md_count <= 17, "{}", r.md_count);
        assert_eq!(f.md_count as u64, r.md_count);
        assert!((f64::from(f.cwnd) / r.cwnd - 1.0).abs() < 0.01);
    }

    #[test]
    fn ecn_below_target_leaves_the_window_alone() {
        let mut ev = from_low_window(1_000);
        ev.push(ack(40_000, 4096, 13_000, true));
        let (r, f) = both(&ev);
        assert_eq!(r.cwnd, low_window_cwnd());
        assert_eq!(f.cwnd, both(&from_low_window(1_000)).1.cwnd);
    }

    #[test]
    fn base_rtt_min_filter_moves_maxwnd_and_clamps() {
        let (r, f) = both(&[ack(1_000, 4096, 6_000, false)]);
        assert_eq!(f.base_rtt, 6_000);
        assert_eq!(f.maxwnd, 900_000);
        assert_eq!(f.cwnd, 900_000);
        assert_eq!(r.cwnd, 900_000.0);
        // A larger sample never raises it; a zero sample is no sample.
        let (_, f) = both(&[
            ack(1_000, 4096, 6_000, false),
            ack(2_000, 4096, 9_000, false),
            ack(3_000, 4096, 0, false),
        ]);
        assert_eq!(f.base_rtt, 6_000);
    }

    #[test]
    fn penalty_rto_and_trim_reduce_the_window() {
        let (r, f) = both(&[NsccEvent::Ack {
            now: 1_000,
            bytes: 65_536,
            rtt_ns: 12_000,
            ecn: false,
            penalty: 64,
        }]);
        // 50 % of 64 KB off; then the byte-triggered fulfill adds inc / cwnd (proportional
        // increase at delay 0; no eta: less than a base RTT since time 0).
        let w = 1_800_000.0 - 32_768.0;
        let expect = w + r.p.alpha * 65_536.0 * r.p.target_ns / w;
        assert!((r.cwnd - expect).abs() < 1e-6, "{} vs {expect}", r.cwnd);
        assert!((f64::from(f.cwnd) / r.cwnd - 1.0).abs() < 0.001);
        let (r, f) = both(&[NsccEvent::Rto { now: 5 }]);
        assert_eq!(f.cwnd, 1_800_000 - 4096);
        assert_eq!(r.cwnd, 1_800_000.0 - 4096.0);
        // The first NACK opens the quick-adapt epoch and subtracts its bytes.
        let (_, f) = both(&[NsccEvent::Nack {
            now: 5,
            bytes: 100_000,
        }]);
        assert_eq!(f.cwnd, 1_700_000);
    }

    #[test]
    fn window_model_takes_an_event_when_ready_and_shows_it_after() {
        let c = cfg();
        let mut m = NsccWindow::new(&c);
        let x = WindowInputs {
            ev_valid: true,
            ev_kind: KIND_RTO,
            now_ns: 7,
            ..Default::default()
        };
        // RTOs neither cut multiplicatively nor fulfill: EVENT_CYCLES each, back to back.
        let mut readies = Vec::new();
        let mut shown_at = None;
        for t in 0..=20u32 {
            let y = m.step(&x);
            if y.ev_ready {
                readies.push(t);
            }
            if shown_at.is_none() && y.cwnd != 1_800_000 {
                shown_at = Some(t);
            }
        }
        assert_eq!(shown_at, Some(EVENT_CYCLES));
        assert_eq!(readies, vec![8, 17]);
        // A TICK a base RTT after the last adjust, with bytes acked since, runs a fulfill.
        let mut m = NsccWindow::new(&c);
        let first = WindowInputs {
            ev_valid: true,
            ev_kind: KIND_ACK,
            ev_bytes: 4096,
            ev_rtt_ns: 12_000,
            now_ns: 1_000,
            ..Default::default()
        };
        m.step(&first);
        let tick = WindowInputs {
            ev_valid: true,
            ev_kind: KIND_TICK,
            now_ns: 50_000,
            ..Default::default()
        };
        let idle = WindowInputs::default();
        while !m.step(&idle).ev_ready {}
        m.step(&tick);
        let busy = (1..).find(|_| m.step(&idle).ev_ready).unwrap();
        assert_eq!(busy, EVENT_CYCLES + FULFILL_CYCLES - 1);
    }

    /// Contexts are independent: events interleaved over two contexts by switching leave each
    /// context as a one-context window given only its own events leaves it; a clear of the
    /// waiting context resets it alone; a switch costs two clocks (idle, load).
    #[test]
    fn contexts_are_independent_windows() {
        let c = NicConfig { qps: 2, ..cfg() };
        let mut m = NsccWindow::new(&c);
        let mut own: [NsccWindow; 2] = [NsccWindow::new(&cfg()), NsccWindow::new(&cfg())];
        let idle = WindowInputs::default();
        let evs = [
            ack(1_000, 4096, 12_000, false),
            ack(2_000, 65_536, 30_000, true),
            NsccEvent::Nack {
                now: 3_000,
                bytes: 4096,
            },
            ack(60_000, 8_192, 9_000, false),
            NsccEvent::Rto { now: 70_000 },
            ack(140_000, 100_000, 20_000, true),
        ];
        for (n, e) in evs.iter().enumerate() {
            let q = n % 2;
            if m.owner() != q {
                // Only from idle (not an event's last phase): wait, then the switch clock and
                // the load clock.
                while !m.ready() {
                    m.step(&idle);
                }
                m.step(&idle);
                let y = m.step(&WindowInputs {
                    sw_valid: true,
                    sw_ctx: q as u8,
                    ..idle
                });
                assert_eq!((usize::from(y.ctx_owner), y.ev_ready), (q, false));
                assert!(m.step(&idle).ev_ready);
            }
            while !m.ready() {
                m.step(&idle);
            }
            let x = WindowInputs::offering(e);
            m.step(&x);
            own[q].step(&x);
            while !own[q].ready() {
                own[q].step(&idle);
            }
        }
        for (q, w) in own.iter().enumerate() {
            assert_eq!(m.context(q), w.state(), "context {q}");
        }
        assert_ne!(m.context(0), m.context(1));
        // Clear the waiting context: it alone goes back to the initial state.
        let waiting = 1 - m.owner();
        m.step(&WindowInputs {
            ctx_clr: 1 << waiting,
            ..idle
        });
        assert_eq!(*m.context(waiting), Fixed::new(&c));
        assert_eq!(m.context(1 - waiting), own[1 - waiting].state());
    }
}
