//! The cosim backend: a device built around anything that steps like `mrc_core`
//! ([`mrc_model::mrc_core::CoreSim`]: the golden model now, the Verilated RTL later), so the
//! driver's [`crate::device::Device`] runs unchanged against either.
//!
//! ```text
//!   driver (Device)                      CosimDevice<C: CoreSim>
//!   ---------------    MMIO   +------------------------------------------------------+
//!   read32/write32 -----------> BAR model: idle cycles (PCIe latency), AXI4-Lite-shaped |
//!                             |  access on the core's wr_*/rd_* port, step until b/r   |
//!                             |  (bounded), SLVERR -> BusError; offsets DB_BASE.. ->   |
//!                             |  doorbell page (queue::db)                             |
//!   HostMemory  <--- DMA ------ queue engine: SQ_PI doorbell -> fetch WQE, validate,   |
//!   SQ ring (WQEs)            |  sq_valid/sq_qp/sq_bytes; tx_* -> PSN range per WR;    |
//!   CQ ring (CQEs) <----------  una[qp] past last PSN -> CQE (phase bit)               |
//!                             |                       core.step(inputs) per clock      |
//!   inject_rx(RxHeader) ------> rx_* (one per clock) ------------------+               |
//!   drain_tx() / drain_acks() <- tx_* / ack_* collected per clock <----+               |
//!                             +------------------------------------------------------+
//! ```
//!
//! Every clock goes through one place ([`CosimDevice::step`] or an MMIO access): the engine's
//! fetch decides this clock's post, the oldest injected header drives `rx_*`, `now_ns` and
//! `tick` advance, the core steps, and the engine and the wire queues take its outputs. The
//! caller owns time between accesses: MMIO accesses step the device, and
//! [`CosimDevice::step`] / [`CosimDevice::run`] step it idle (with queued posts and headers).
//!
//! The BAR model's timing (per access): `mmio_latency / 2` idle clocks for the request to
//! reach the device, the access offered for one clock, idle clocks until the response (at
//! most `max_wait`, else a [`Fault::Timeout`]), then the rest of the latency back (at least
//! one clock after a write: a write's effect lands one clock after its response). Bus errors
//! are [`crate::BusError`]s through the `Bar` trait; the backend's
//! [`crate::device::Backend::classify`] tells a timeout from a refusal.

pub mod engine;
pub mod loopback;
pub mod memory;
pub mod wire;

use crate::device::Backend;
use crate::queue::DB_PAGE_SIZE;
use crate::{regs, Bar, BusError, DriverError};
use engine::{EngineStats, QueueEngine};
use memory::{HostMemory, MemError};
use mrc_model::mrc_core::{CoreInputs, CoreOutputs, CoreSim};
use mrc_model::mrc_csr::RESP_OKAY;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use wire::{AckHeader, RxHeader, TxHeader};

/// The cosim device's knobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CosimOptions {
    /// PCIe round trip of an MMIO access, in idle device clocks (half before the access
    /// reaches the core, half after its response).
    pub mmio_latency: u32,
    /// Clocks an access may wait for its response before [`Fault::Timeout`].
    pub max_wait: u32,
    /// ns per device clock (`now_ns` advances by it).
    pub ns_per_cycle: u32,
    /// Clocks between scoreboard timer ticks (1.024 us at `ns_per_cycle`).
    pub tick_cycles: u32,
    /// Planes whose egress can take a packet.
    pub plane_ready: u8,
    /// Bytes of host memory.
    pub mem_bytes: usize,
}

impl Default for CosimOptions {
    /// 4 ns clocks (250 MHz, the default `clock_mhz`), a tick every 256 clocks, an 8-clock
    /// MMIO round trip, 64 clocks of patience, 1 MiB of host memory.
    fn default() -> Self {
        CosimOptions {
            mmio_latency: 8,
            max_wait: 64,
            ns_per_cycle: 4,
            tick_cycles: 256,
            plane_ready: 0xFF,
            mem_bytes: 1 << 20,
        }
    }
}

/// Why an MMIO access failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The device answered SLVERR (or the doorbell page has no such register).
    Refused,
    /// No response within `max_wait` clocks.
    Timeout { cycles: u32 },
    /// The offset is past the cosim BAR (CSR window + doorbell page).
    OutsideBar,
}

struct Inner<C> {
    core: C,
    opts: CosimOptions,
    cycle: u64,
    now_ns: u32,
    mem: HostMemory,
    eng: QueueEngine,
    rx_q: VecDeque<RxHeader>,
    tx: VecDeque<TxHeader>,
    acks: VecDeque<AckHeader>,
    last: CoreOutputs,
}

/// What one clock offers on the MMIO port.
#[derive(Debug, Clone, Copy, Default)]
struct Mmio {
    rst: bool,
    write: Option<(u32, u32)>,
    read: Option<u32>,
}

impl<C: CoreSim> Inner<C> {
    fn clock(&mut self, m: Mmio) -> CoreOutputs {
        let mut x = CoreInputs::idle();
        x.plane_ready = self.opts.plane_ready;
        self.now_ns = self.now_ns.wrapping_add(self.opts.ns_per_cycle);
        x.now_ns = self.now_ns;
        x.tick = self
            .cycle
            .is_multiple_of(u64::from(self.opts.tick_cycles.max(1)));
        x.rst = m.rst;
        if let Some((a, d)) = m.write {
            (x.wr_valid, x.wr_addr, x.wr_data, x.wr_strb) = (true, a, d, 0xF);
        }
        if let Some(a) = m.read {
            (x.rd_valid, x.rd_addr) = (true, a);
        }
        if !m.rst {
            if let Some((qp, bytes)) = self.eng.fetch(&self.mem) {
                (x.sq_valid, x.sq_qp, x.sq_bytes) = (true, qp, bytes);
            }
            if let Some(h) = self.rx_q.pop_front() {
                h.apply(&mut x);
            }
        }
        let o = self.core.step(&x);
        if m.rst {
            self.eng.reset();
        } else {
            let tx = (o.tx_valid && !o.tx_rtx).then_some((o.tx_qp, o.tx_psn, o.tx_len));
            self.eng.after_edge(tx, &o.una, &mut self.mem);
        }
        if let Some(h) = TxHeader::from_outputs(&o, self.cycle) {
            self.tx.push_back(h);
        }
        if let Some(h) = AckHeader::from_outputs(&o, self.cycle) {
            self.acks.push_back(h);
        }
        self.cycle += 1;
        self.last = o.clone();
        o
    }

    fn idle(&mut self, n: u32) {
        for _ in 0..n {
            self.clock(Mmio::default());
        }
    }

    fn access(&mut self, offset: u32, write: Option<u32>) -> Result<u32, Fault> {
        let lat = self.opts.mmio_latency;
        let (before, after) = (lat / 2, lat - lat / 2);
        let after_w = after.max(1);
        if QueueEngine::claims(offset) {
            self.idle(before);
            let r = match write {
                Some(v) => self.eng.db_write(offset, v).then_some(0),
                None => self.eng.db_read(offset),
            };
            self.idle(if write.is_some() { after_w } else { after });
            return r.ok_or(Fault::Refused);
        }
        if offset >= crate::queue::DB_BASE + DB_PAGE_SIZE {
            return Err(Fault::OutsideBar);
        }
        self.idle(before);
        let m = match write {
            Some(v) => Mmio {
                write: Some((offset, v)),
                ..Default::default()
            },
            None => Mmio {
                read: Some(offset),
                ..Default::default()
            },
        };
        let mut o = self.clock(m);
        let mut waited = 0;
        loop {
            let (valid, resp) = match write {
                Some(_) => (o.b_valid, o.b_resp),
                None => (o.r_valid, o.r_resp),
            };
            if valid {
                if write.is_some() && resp == RESP_OKAY {
                    self.eng.snoop_csr_write(offset, write.unwrap_or(0));
                }
                let data = o.r_data;
                self.idle(if write.is_some() { after_w } else { after });
                return if resp == RESP_OKAY {
                    Ok(data)
                } else {
                    Err(Fault::Refused)
                };
            }
            if waited >= self.opts.max_wait {
                return Err(Fault::Timeout { cycles: waited });
            }
            o = self.clock(Mmio::default());
            waited += 1;
        }
    }
}

/// A device around a core `C`: BAR model, host memory, DMA / queue engine, wire queues.
/// Every method takes `&self` (interior mutability), as the `Bar` trait does.
pub struct CosimDevice<C: CoreSim> {
    inner: RefCell<Inner<C>>,
    last_fault: Cell<Option<Fault>>,
}

impl<C: CoreSim> CosimDevice<C> {
    pub fn new(core: C, opts: CosimOptions) -> Self {
        let qps = core.qps();
        CosimDevice {
            inner: RefCell::new(Inner {
                core,
                opts,
                cycle: 0,
                now_ns: 0,
                mem: HostMemory::new(opts.mem_bytes),
                eng: QueueEngine::new(qps),
                rx_q: VecDeque::new(),
                tx: VecDeque::new(),
                acks: VecDeque::new(),
                last: CoreOutputs::default(),
            }),
            last_fault: Cell::new(None),
        }
    }

    /// One idle clock (with this clock's engine post and the oldest injected header).
    pub fn step(&self) -> CoreOutputs {
        self.inner.borrow_mut().clock(Mmio::default())
    }

    /// `n` idle clocks.
    pub fn run(&self, n: u32) {
        self.inner.borrow_mut().idle(n);
    }

    /// Queue a received header; one enters the core per clock, in order.
    pub fn inject_rx(&self, h: RxHeader) {
        self.inner.borrow_mut().rx_q.push_back(h);
    }

    /// Injected headers not yet taken by the core.
    pub fn rx_pending(&self) -> usize {
        self.inner.borrow().rx_q.len()
    }

    /// Data headers the core sent since the last drain, in order.
    pub fn drain_tx(&self) -> Vec<TxHeader> {
        self.inner.borrow_mut().tx.drain(..).collect()
    }

    /// SACK / NACK headers the core generated since the last drain, in order.
    pub fn drain_acks(&self) -> Vec<AckHeader> {
        self.inner.borrow_mut().acks.drain(..).collect()
    }

    /// Clocks stepped since construction.
    pub fn cycle(&self) -> u64 {
        self.inner.borrow().cycle
    }

    /// The core's outputs after the last clock.
    pub fn outputs(&self) -> CoreOutputs {
        self.inner.borrow().last.clone()
    }

    pub fn engine_stats(&self) -> EngineStats {
        self.inner.borrow().eng.stats()
    }

    /// WRs accepted by the engine and not yet written to the CQ.
    pub fn outstanding(&self) -> usize {
        self.inner.borrow().eng.outstanding()
    }

    /// Look at the engine (PSN ranges of outstanding WRs, ...).
    pub fn with_engine<R>(&self, f: impl FnOnce(&QueueEngine) -> R) -> R {
        f(&self.inner.borrow().eng)
    }

    /// Look at the core (the model's counters, blocks, ...).
    pub fn with_core<R>(&self, f: impl FnOnce(&C) -> R) -> R {
        f(&self.inner.borrow().core)
    }

    /// How the last failed MMIO access failed.
    pub fn last_fault(&self) -> Option<Fault> {
        self.last_fault.get()
    }

    fn mmio(&self, offset: u32, write: Option<u32>) -> Result<u32, BusError> {
        let r = self.inner.borrow_mut().access(offset, write);
        r.map_err(|f| {
            self.last_fault.set(Some(f));
            BusError {
                offset,
                write: write.is_some(),
            }
        })
    }
}

impl<C: CoreSim> Bar for CosimDevice<C> {
    fn read32(&self, offset: u32) -> Result<u32, BusError> {
        self.mmio(offset, None)
    }
    fn write32(&self, offset: u32, value: u32) -> Result<(), BusError> {
        self.mmio(offset, Some(value)).map(|_| ())
    }
}

impl<C: CoreSim> Backend for CosimDevice<C> {
    /// One clock with `rst` (the core and the engine to their reset state; injected headers
    /// and the wire queues are dropped), then the MMIO latency (at least one clock: the
    /// core's reset is registered and acts in the clock after `rst`).
    fn reset_pulse(&self) -> Result<(), DriverError> {
        let mut i = self.inner.borrow_mut();
        i.rx_q.clear();
        i.clock(Mmio {
            rst: true,
            ..Default::default()
        });
        i.tx.clear();
        i.acks.clear();
        let lat = i.opts.mmio_latency.max(1);
        i.idle(lat);
        Ok(())
    }
    fn dma_read(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemError> {
        self.inner.borrow().mem.read(addr, buf)
    }
    fn dma_write(&self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        self.inner.borrow_mut().mem.write(addr, data)
    }
    fn dma_size(&self) -> u64 {
        self.inner.borrow().mem.size()
    }
    fn classify(&self, e: BusError) -> DriverError {
        match self.last_fault.get() {
            Some(Fault::Timeout { cycles }) => DriverError::Timeout {
                offset: e.offset,
                write: e.write,
                cycles,
            },
            _ => DriverError::Bus(e),
        }
    }
}

/// The register offsets the BAR model forwards to the core: the CSR block's window.
pub const CSR_WINDOW: u32 = 1 << mrc_model::mrc_csr::ADDR_BITS;

const _: () = assert!(regs::BAR_SIZE <= CSR_WINDOW && crate::queue::DB_BASE >= CSR_WINDOW);
