//! Two devices back to back, for tests and tools: A's data headers go to B and B's SACK /
//! NACK headers to A through fixed-delay wires, with loss and trims on the data wire. Generic
//! over the core behind each device (the golden model, the Verilated RTL, or both in
//! lockstep), so the model suites (`tests/cosim_driver.rs`) and the RTL system suites
//! (`testbench/tests/system_driver.rs`) run the same scenarios.

use crate::cosim::wire::{RxHeader, TxHeader, Wire};
use crate::cosim::{CosimDevice, CosimOptions};
use crate::device::{Completion, Counters, Device, EvEvent, RingOptions};
use crate::queue::CqeStatus;
use crate::regs;
use crate::DriverError;
use mrc_config::NicConfig;
use mrc_model::mrc_core::CoreSim;
use mrc_model::rng::SplitMix64;
use std::collections::HashMap;

/// A device over the cosim backend.
pub type Dev<C> = Device<CosimDevice<C>>;

/// A and B with every QP created at PSN 0 and the default EV profile loaded.
pub fn pair<C: CoreSim>(c: &NicConfig, make: impl Fn(&NicConfig) -> C) -> (Dev<C>, Dev<C>) {
    let open = || {
        Device::open(
            CosimDevice::new(make(c), CosimOptions::default()),
            RingOptions::default(),
        )
        .expect("open")
    };
    let a = open();
    let b = open();
    for d in [&a, &b] {
        assert_eq!(d.blocks().len(), regs::BLOCKS.len());
        for qp in 0..c.qps {
            d.create_qp(qp, 0).unwrap();
        }
        d.load_ev_profile(&c.default_ev_profile()).unwrap();
    }
    (a, b)
}

/// The wire between A and B, in link clocks (one per `pump`).
pub struct Link {
    pub t: u64,
    pub data: Wire<RxHeader>,
    pub acks: Wire<RxHeader>,
    pub rng: SplitMix64,
    /// Per mille of data headers dropped / trimmed.
    pub loss: u32,
    pub trim: u32,
    pub profile: Vec<u32>,
    /// Payload length of each (qp, psn) first sent, for its retransmissions.
    pub lens: HashMap<(u8, u32), u16>,
    pub sent: u32,
    pub rtx: u32,
    pub trimmed: u32,
    pub acks_seen: u32,
}

impl Link {
    pub fn new(c: &NicConfig, delay: u64, loss: u32, trim: u32, seed: u64) -> Self {
        Link {
            t: 0,
            data: Wire::new(delay),
            acks: Wire::new(delay),
            rng: SplitMix64::new(seed),
            loss,
            trim,
            profile: c.default_ev_profile(),
            lens: HashMap::new(),
            sent: 0,
            rtx: 0,
            trimmed: 0,
            acks_seen: 0,
        }
    }

    pub fn carry<C: CoreSim>(&mut self, a: &Dev<C>, b: &Dev<C>) {
        for h in a.backend().drain_tx() {
            self.data_header(&h);
        }
        for h in b.backend().drain_acks() {
            self.acks_seen += 1;
            let idx = self.profile.iter().position(|&e| e == h.ev).unwrap_or(0) as u8;
            self.acks.push(self.t, RxHeader::ack(&h, idx));
        }
        assert!(b.backend().drain_tx().is_empty(), "B only receives");
        assert!(a.backend().drain_acks().is_empty(), "A receives no data");
    }

    pub fn data_header(&mut self, h: &TxHeader) {
        self.sent += 1;
        let len = if h.rtx {
            self.rtx += 1;
            self.lens[&(h.qp, h.psn)]
        } else {
            self.lens.insert((h.qp, h.psn), h.len);
            h.len
        };
        let r = self.rng.below(1000) as u32;
        if r < self.loss {
            return;
        }
        let trimmed = r < self.loss + self.trim;
        self.trimmed += u32::from(trimmed);
        self.data.push(self.t, RxHeader::data(h, len, trimmed));
    }

    /// Move due headers, then one clock of both devices.
    pub fn pump<C: CoreSim>(&mut self, a: &Dev<C>, b: &Dev<C>) {
        self.carry(a, b);
        while let Some(h) = self.data.pop(self.t) {
            b.backend().inject_rx(h);
        }
        while let Some(h) = self.acks.pop(self.t) {
            a.backend().inject_rx(h);
        }
        a.backend().step();
        b.backend().step();
        self.t += 1;
    }

    pub fn idle<C: CoreSim>(&self, a: &Dev<C>, b: &Dev<C>) -> bool {
        self.data.is_empty()
            && self.acks.is_empty()
            && a.backend().rx_pending() == 0
            && b.backend().rx_pending() == 0
    }
}

/// Pump until `n` completions arrived on A (polling the CQ every 64 clocks; draining the EV
/// event queue into `evs` when given).
pub fn run_until<C: CoreSim>(
    link: &mut Link,
    a: &mut Dev<C>,
    b: &Dev<C>,
    n: usize,
    mut evs: Option<&mut Vec<EvEvent>>,
) -> Vec<Completion> {
    let mut done = Vec::new();
    let start = link.t;
    while done.len() < n {
        for _ in 0..64 {
            link.pump(a, b);
        }
        done.extend(a.poll_cq().unwrap());
        if let Some(e) = evs.as_deref_mut() {
            e.extend(a.drain_ev_events().unwrap());
        }
        assert!(
            link.t - start < 2_000_000,
            "{} of {n} completions after {} clocks; engine {:?}",
            done.len(),
            link.t - start,
            a.backend().engine_stats()
        );
    }
    done
}

/// Post `wrs` (qp, len) with wr_id = index, ring the doorbell once.
pub fn post_all<C: CoreSim>(a: &mut Dev<C>, wrs: &[(u32, u32)]) {
    for (i, &(qp, len)) in wrs.iter().enumerate() {
        a.post_write(qp, len, 0x10_0000 + i as u64 * 0x1_0000, 0x77, i as u64)
            .unwrap();
    }
    a.ring_doorbell().unwrap();
}

/// Every WR completed once, OK, with its length, in post order per QP.
pub fn check_completions(done: &[Completion], wrs: &[(u32, u32)]) {
    assert_eq!(done.len(), wrs.len());
    let qps = wrs.iter().map(|w| w.0).max().unwrap_or(0) as u16 + 1;
    for qp in 0..qps {
        let got: Vec<(u64, u32)> = done
            .iter()
            .filter(|c| c.qp == qp)
            .map(|c| (c.wr_id, c.bytes))
            .collect();
        let want: Vec<(u64, u32)> = wrs
            .iter()
            .enumerate()
            .filter(|(_, w)| w.0 == u32::from(qp))
            .map(|(i, w)| (i as u64, w.1))
            .collect();
        assert_eq!(got, want, "QP {qp}");
    }
    assert!(done.iter().all(|c| c.status == CqeStatus::Ok), "{done:?}");
}

#[derive(Debug, Clone)]
pub enum Op {
    Post {
        qp: u32,
        len: u32,
    },
    Doorbell,
    Deny(u32),
    Allow(u32),
    Read,
    Run(u32),
    /// Wait until nothing is outstanding, then reset the QP on both ends to a fresh PSN.
    QuiesceReset(u32),
}

/// Counters never decrease (they are free running and nothing wraps in a test run).
pub fn monotonic(prev: &mut Option<Counters>, now: Counters) -> Result<(), String> {
    if let Some(p) = prev {
        for ((n, a), (_, b)) in p.all().iter().zip(now.all().iter()) {
            if b < a {
                return Err(format!("{n} went from {a} to {b}"));
            }
        }
    }
    *prev = Some(now);
    Ok(())
}

fn check_eq<T: PartialEq + std::fmt::Debug>(a: T, b: T) -> Result<(), String> {
    if a == b {
        Ok(())
    } else {
        Err(format!("{a:?} != {b:?}"))
    }
}

fn check(c: bool, what: &str) -> Result<(), String> {
    if c {
        Ok(())
    } else {
        Err(what.to_string())
    }
}

impl From<DriverError> for String {
    fn from(e: DriverError) -> String {
        e.to_string()
    }
}

/// Run a sequence of driver operations on A (B answers), then let everything complete, and
/// check: every accepted WR completed exactly once, OK, with its length, in post order per QP;
/// no counter went down; nothing refused or dropped.
pub fn run_driver_ops<C: CoreSim>(
    a: &mut Dev<C>,
    b: &Dev<C>,
    link: &mut Link,
    ops: &[Op],
) -> Result<(), String> {
    let mut accepted: Vec<(u32, u64, u32)> = Vec::new();
    let mut done: Vec<Completion> = Vec::new();
    let mut prev = None;
    let mut next_id = 0u64;
    let mut psn = 0u32;
    let evs = link.profile.len() as u32;
    for o in ops {
        match *o {
            Op::Post { qp, len } => {
                match a.post_write(qp, len, 0, 1, next_id) {
                    Ok(()) => accepted.push((qp, next_id, len)),
                    Err(DriverError::RingFull { .. }) => {}
                    Err(e) => return Err(format!("post_write: {e}")),
                }
                next_id += 1;
            }
            Op::Doorbell => a.ring_doorbell()?,
            Op::Deny(i) => a.deny_ev(i)?,
            Op::Allow(i) => a.allow_ev(i)?,
            Op::Read => monotonic(&mut prev, a.read_counters()?)?,
            Op::Run(n) => {
                for _ in 0..n {
                    link.pump(a, b);
                }
            }
            Op::QuiesceReset(qp) => {
                for i in 0..evs {
                    a.allow_ev(i)?;
                }
                a.ring_doorbell()?;
                let want = accepted.len() - done.len();
                done.extend(run_until(link, a, b, want, None));
                while !link.idle(a, b) {
                    link.pump(a, b);
                }
                for _ in 0..2000 {
                    link.pump(a, b);
                }
                link.carry(a, b);
                psn = (psn + 0x10_0000) & 0xFF_FFFF;
                a.reset_qp(qp, psn)?;
                b.reset_qp(qp, psn)?;
            }
        }
        done.extend(a.poll_cq()?);
        for _ in 0..20 {
            link.pump(a, b);
        }
    }
    for i in 0..evs {
        a.allow_ev(i)?;
    }
    a.ring_doorbell()?;
    let want = accepted.len() - done.len();
    done.extend(run_until(link, a, b, want, None));
    monotonic(&mut prev, a.read_counters()?)?;
    // Every accepted WR exactly once, OK, with its length, in post order per QP.
    check_eq(done.len(), accepted.len())?;
    for qp in 0..a.qps() {
        let got: Vec<(u64, u32)> = done
            .iter()
            .filter(|x| u32::from(x.qp) == qp)
            .map(|x| (x.wr_id, x.bytes))
            .collect();
        let want: Vec<(u64, u32)> = accepted
            .iter()
            .filter(|x| x.0 == qp)
            .map(|x| (x.1, x.2))
            .collect();
        check_eq(got, want)?;
    }
    check(
        done.iter().all(|x| x.status == CqeStatus::Ok),
        "a completion is not OK",
    )?;
    let k = a.read_counters()?;
    check_eq((k.wqe_errors, k.refused_ops, k.rx_dropped), (0, 0, 0))?;
    check_eq(b.read_counters()?.rx_dropped, 0)?;
    Ok(())
}
