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

use crate::go_back_n::{psn_diff, GbnReceiver, GbnSender, PSN_MASK};
use crate::rng::SplitMix64;
use crate::sack_rx_tracker::{SackRxTracker, TrackerInputs, TrackerOutputs};
use crate::sack_tx_scoreboard::{
    SackTxScoreboard, TxInputs, TxOutputs, OP_NACK, OP_SACK, OP_SEND, OP_TICK,
};
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

/// What travels back from the SACK receiver.
#[derive(Debug, Clone, Copy)]
enum SackCtl {
    Sack(TrackerOutputs),
    Nack(TrackerOutputs),
}

/// The bit-exact SACK pair over the setup's link, stepped every cycle.
///
/// The sender side is a minimal transport core around `sack_tx_scoreboard`: one scoreboard op
/// per clock, chosen in this order: the timer tick when due, an arrived SACK/NACK, then a send
/// when the line is free (the scoreboard's `rtx_psn` first, else the next new PSN while
/// `can_send`). The receiver is `sack_rx_tracker`; its responses go back unchanged.
pub fn run_sack(s: &LossSetup) -> LossResult {
    let cfg = &s.cfg;
    let start_psn = 0xFF_F000; // the transfer crosses the 2^24 PSN wrap
    let end_psn = (start_psn + s.packets as u32) & PSN_MASK;
    let mut tx = SackTxScoreboard::new(cfg);
    let mut rx = SackRxTracker::new(cfg);
    let tx_idle = TxInputs::idle(cfg);
    let rx_idle = TrackerInputs::idle(cfg);
    // Two reset cycles load the start PSN on both sides.
    let mut txo = TxOutputs::default();
    let mut rxo = TrackerOutputs::default();
    for _ in 0..2 {
        txo = tx.step(&TxInputs {
            rst: true,
            init_psn: start_psn,
            ..tx_idle
        });
        rxo = rx.step(&TrackerInputs {
            rst: true,
            init_psn: start_psn,
            ..rx_idle
        });
    }
    let mut fwd: Link<(u32, bool, u8)> = Link::new(s.one_way_cycles, s.loss, s.seed);
    let mut rev: Link<SackCtl> = Link::lossless(s.one_way_cycles);
    let mut ctl = VecDeque::new();
    let (mut next_slot, mut sent, mut new_sent, mut ev) = (0u64, 0u64, 0u64, 0u8);
    let mut now = 0u64;
    while (psn_diff(txo.una, end_psn) < 0 || rxo.cnt_accepted as u64 != s.packets)
        && !txo.qp_error
        && now < s.cycle_limit()
    {
        while let Some(c) = rev.recv(now) {
            ctl.push_back(c);
        }
        let mut x = tx_idle;
        if now.is_multiple_of(s.tick_cycles) {
            x.op = OP_TICK;
        } else if let Some(c) = ctl.pop_front() {
            match c {
                SackCtl::Sack(r) => {
                    x.op = OP_SACK;
                    x.cack = r.cack_out;
                    x.offset = r.sack_offset;
                    x.bitmap = r.sack_bitmap;
                    x.m = r.sack_m;
                    x.ev_idx = r.rsp_ev as u8;
                    x.rcvd_bytes = r.rcvd_bytes;
                }
                SackCtl::Nack(r) => {
                    x.op = OP_NACK;
                    x.psn = r.nack_psn;
                    x.reason = r.nack_reason;
                }
            }
        } else if now >= next_slot {
            let pick = if txo.rtx_valid {
                Some(txo.rtx_psn)
            } else if txo.can_send && new_sent < s.packets {
                new_sent += 1;
                Some(txo.nxt)
            } else {
                None
            };
            if let Some(psn) = pick {
                x.op = OP_SEND;
                x.psn = psn;
                x.ev_idx = ev;
                ev = ev.wrapping_add(1) & 0x7F;
                let last = (psn + 1) & PSN_MASK == end_psn;
                let window_full = psn_diff(psn, txo.una) + 1 >= cfg.sack_window_bits as i32;
                fwd.send(now, (psn, last || window_full, x.ev_idx));
                sent += 1;
                next_slot = now + s.cycles_per_pkt;
            }
        }
        txo = tx.step(&x);
        let mut y = rx_idle;
        if let Some((psn, ackreq, pkt_ev)) = fwd.recv(now) {
            y.pkt_valid = true;
            y.pkt_psn = psn;
            y.pkt_len = s.pkt_bytes as u16;
            y.pkt_ackreq = ackreq;
            y.pkt_ev = u32::from(pkt_ev);
        }
        rxo = rx.step(&y);
        if rxo.sack_valid {
            rev.send(now, SackCtl::Sack(rxo));
        } else if rxo.nack_valid {
            rev.send(now, SackCtl::Nack(rxo));
        }
        now += 1;
    }
    let complete = psn_diff(txo.una, end_psn) == 0
        && rxo.cnt_accepted as u64 == s.packets
        && txo.cnt_bad_send == 0;
    result(
        s,
        Scheme::Sack,
        sent,
        u64::from(txo.cnt_retransmits),
        fwd.dropped,
        u64::from(txo.cnt_timeouts),
        now,
        complete,
    )
}

/// Run one scheme.
pub fn run(scheme: Scheme, s: &LossSetup) -> LossResult {
    match scheme {
        Scheme::Sack => run_sack(s),
        Scheme::GoBackN => run_gbn(s),
    }
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

    /// (SACK dropped, SACK retransmits, GBN dropped, GBN retransmits) at 0.1 %, 1 %, 5 % loss,
    /// 4,000 packets, seed 7.
    const PINNED: [(u64, u64, u64, u64); 3] =
        [(2, 2, 2, 202), (39, 40, 69, 3535), (212, 219, 1375, 23436)];

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
    fn sack_without_loss_retransmits_nothing_and_runs_at_line_rate() {
        let mut s = LossSetup::new(0.0, 1);
        s.packets = 3_000;
        let r = run_sack(&s);
        assert!(r.complete, "{r:?}");
        assert_eq!((r.retransmits, r.timeouts, r.data_sent), (0, 0, 3_000));
        assert!(r.goodput > 0.9, "{r:?}");
    }

    /// The same loss pattern for both: SACK repairs each loss about once, go-back-N resends a
    /// window; both deliver everything. The small sweep is pinned so a behaviour change in
    /// either scheme (or in the bit-exact SACK models) shows up as a diff here.
    #[test]
    fn sack_beats_go_back_n_on_the_same_loss_pattern_pinned() {
        let mut rows = Vec::new();
        for loss in [0.001, 0.01, 0.05] {
            let mut s = LossSetup::new(loss, 7);
            s.packets = 4_000;
            let (a, b) = (run_sack(&s), run_gbn(&s));
            assert!(a.complete && b.complete, "{a:?} {b:?}");
            assert!(a.retransmits <= a.dropped + a.dropped / 5 + 2, "{a:?}");
            assert!(a.goodput > b.goodput, "{a:?} {b:?}");
            rows.push((a.dropped, a.retransmits, b.dropped, b.retransmits));
        }
        assert_eq!(rows, PINNED, "sweep changed: {rows:?}");
        assert!(rows[1].3 > 10 * rows[1].1 && rows[2].3 > 10 * rows[2].1);
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
