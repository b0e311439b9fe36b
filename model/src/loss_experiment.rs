//! SACK vs go-back-N under random loss: one QP, one path, the same loss pattern for both.
//!
//! ```text
//!   sender --(one packet per `cycles_per_pkt`)--> forward link: delay, drop by `loss`
//!     ^                                                             |
//!     +---------------- reverse link: delay, lossless <---- receiver
//! ```
//!
//! Time is the core clock (cycles). Both schemes see the same link and the same loss
//! *pattern*: the k-th data packet put on the wire is dropped iff the k-th draw of one seeded
//! generator falls below `loss`, whatever the scheme chose to send. ACKs are not lost, so the
//! comparison isolates how each scheme repairs data loss.
//!
//! The SACK pair is the bit-exact cycle models of the RTL blocks (`sack_tx_scoreboard`
//! drives what is sent, `sack_rx_tracker` answers), stepped every cycle: what this measures
//! is what the hardware would do. The go-back-N pair is [`crate::go_back_n`].

use crate::go_back_n::{GbnReceiver, GbnSender};
use crate::rng::SplitMix64;
use mrc_config::NicConfig;
use std::collections::VecDeque;

/// The experiment's fixed setting; `loss` and `seed` vary per run.
#[derive(Debug, Clone)]
pub struct LossSetup {
    /// Packets in the transfer.
    pub packets: u64,
    /// Bytes per packet (the PMTU).
    pub pkt_bytes: u32,
    /// Cycles one packet occupies the line: 4 KB at 800 Gb/s is ~41 ns, ~10 cycles at 250 MHz.
    pub cycles_per_pkt: u64,
    /// One-way delay in cycles (500 = 2 us, so a 4 us RTT, ~100 packets in flight at line rate).
    pub one_way_cycles: u64,
    /// Cycles per scoreboard timer tick (1.024 us at 250 MHz).
    pub tick_cycles: u64,
    /// Probability a data packet is dropped.
    pub loss: f64,
    pub seed: u64,
    /// Window, coalescing and timer settings (W, rto_exp, ooo threshold, ...).
    pub cfg: NicConfig,
}

impl LossSetup {
    pub fn new(loss: f64, seed: u64) -> Self {
        LossSetup {
            packets: 20_000,
            pkt_bytes: 4096,
            cycles_per_pkt: 10,
            one_way_cycles: 500,
            tick_cycles: 256,
            loss,
            seed,
            cfg: NicConfig::default(),
        }
    }

    /// The retransmit timeout in cycles, the same for both schemes.
    pub fn rto_cycles(&self) -> u64 {
        self.tick_cycles << self.cfg.rto_exp
    }

    /// Give up after this many cycles (a run that needs more is reported as incomplete).
    pub fn cycle_limit(&self) -> u64 {
        self.packets * self.cycles_per_pkt * 200 + 100 * self.rto_cycles()
    }
}

/// Which scheme a result is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Sack,
    GoBackN,
}

impl Scheme {
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Sack => "SACK (MRC)",
            Scheme::GoBackN => "go-back-N (RoCEv2)",
        }
    }
}

/// What one run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct LossResult {
    pub scheme: Scheme,
    pub loss: f64,
    pub packets: u64,
    /// Data packets put on the wire (first sends and retransmissions).
    pub data_sent: u64,
    pub retransmits: u64,
    /// Data packets the loss pattern dropped.
    pub dropped: u64,
    pub timeouts: u64,
    /// Cycles until the sender saw every packet acknowledged.
    pub cycles: u64,
    /// Unique payload delivered per cycle, as a fraction of line rate.
    pub goodput: f64,
    /// Every packet delivered exactly once to the receiver's memory, in the end.
    pub complete: bool,
}

/// The forward link: serialised by the caller, delayed, dropped by the shared loss pattern.
pub(crate) struct Link<T> {
    delay: u64,
    in_flight: VecDeque<(u64, T)>,
    loss_draws: SplitMix64,
    loss_threshold: u64,
    pub dropped: u64,
}

impl<T> Link<T> {
    pub fn new(delay: u64, loss: f64, seed: u64) -> Self {
        Link {
            delay,
            in_flight: VecDeque::new(),
            loss_draws: SplitMix64::new(seed),
            loss_threshold: (loss.clamp(0.0, 1.0) * u64::MAX as f64) as u64,
            dropped: 0,
        }
    }

    /// A lossless link (the ACK direction).
    pub fn lossless(delay: u64) -> Self {
        Self::new(delay, 0.0, 0)
    }

    pub fn send(&mut self, now: u64, item: T) {
        if self.loss_threshold > 0 && self.loss_draws.next_u64() < self.loss_threshold {
            self.dropped += 1;
        } else {
            self.in_flight.push_back((now + self.delay, item));
        }
    }

    /// The item arriving at `now`, if any (FIFO, constant delay).
    pub fn recv(&mut self, now: u64) -> Option<T> {
        match self.in_flight.front() {
            Some((t, _)) if *t <= now => self.in_flight.pop_front().map(|(_, x)| x),
            _ => None,
        }
    }
}

/// Go-back-N over the setup's link.
pub fn run_gbn(s: &LossSetup) -> LossResult {
    let start_psn = 0xFF_F000; // the transfer crosses the 2^24 PSN wrap
    let window = u64::from(s.cfg.sack_window_bits);
    let mut tx = GbnSender::new(start_psn, s.packets, window, s.rto_cycles());
    let mut rx = GbnReceiver::new(start_psn, u64::from(s.cfg.sack_coalesce_bytes));
    let mut fwd = Link::new(s.one_way_cycles, s.loss, s.seed);
    let mut rev = Link::lossless(s.one_way_cycles);
    let mut next_slot = 0u64;
    let mut delivered = 0u64;
    let mut now = 0u64;
    while !tx.done() && now < s.cycle_limit() {
        while let Some(a) = rev.recv(now) {
            tx.handle_ack(now, a);
        }
        if tx.poll_timeout().is_some_and(|d| now >= d) {
            tx.handle_timeout(now);
        }
        if now >= next_slot {
            if let Some(d) = tx.poll_transmit(now) {
                fwd.send(now, d);
                next_slot = now + s.cycles_per_pkt;
            }
        }
        while let Some(d) = fwd.recv(now) {
            if let Some(a) = rx.handle_data(d.psn, s.pkt_bytes, d.ackreq) {
                rev.send(now, a);
            }
        }
        delivered += rx.delivered.drain(..).count() as u64;
        now += 1;
    }
    result(
        s,
        Scheme::GoBackN,
        tx.stats.sent,
        tx.stats.retransmits,
        fwd.dropped,
        tx.stats.timeouts,
        now,
        tx.done() && delivered == s.packets,
    )
}

#[allow(clippy::too_many_arguments)]
fn result(
    s: &LossSetup,
    scheme: Scheme,
    data_sent: u64,
    retransmits: u64,
    dropped: u64,
    timeouts: u64,
    cycles: u64,
    complete: bool,
) -> LossResult {
    LossResult {
        scheme,
        loss: s.loss,
        packets: s.packets,
        data_sent,
        retransmits,
        dropped,
        timeouts,
        cycles,
        goodput: (s.packets * s.cycles_per_pkt) as f64 / cycles.max(1) as f64,
        complete,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gbn_without_loss_runs_at_line_rate_and_retransmits_nothing() {
        let mut s = LossSetup::new(0.0, 1);
        s.packets = 2_000;
        let r = run_gbn(&s);
        assert!(r.complete, "{r:?}");
        assert_eq!(r.retransmits, 0);
        assert!(r.goodput > 0.85, "{r:?}");
    }

    #[test]
    fn gbn_completes_under_loss_and_pays_a_window_per_loss() {
        let mut s = LossSetup::new(0.01, 7);
        s.packets = 5_000;
        let r = run_gbn(&s);
        assert!(r.complete, "{r:?}");
        assert!(r.dropped > 0);
        assert!(r.retransmits > 20 * r.dropped, "{r:?}");
    }
}
