//! The transport core in the loop: a requester endpoint whose transmit decisions come from an
//! `mrc_core` clock by clock (the golden model, the Verilated RTL, or both in lockstep: any
//! [`CoreSim`]), inside the packet-level network simulator.
//!
//! ```text
//!  netsim ---- handle_packet(now, SACK/NACK) ---> rx_* header, injected at now's clock
//!    ^                                                  |
//!    |                       core clocks (4 ns at 250 MHz) run up to `now` on every call
//!    |                                                  v
//!    +---- poll_transmit(now, port) <-- per-port queue <-- tx_* header -> MrcData packet
//! ```
//!
//! Setup runs at construction on the core's own clock (reset, QP 0 reset with the flow's
//! start PSN, enable, the EV profile loaded over MMIO), before simulated time 0. The flow's
//! bytes are posted (`sq_*`) at the clock of `flow.start`. `plane_ready` tells the core which
//! NIC ports have room (at most `PORT_QUEUE` packets waiting). The responder is the model's
//! MRC responder; its SACKs and NACKs become `rx_*` headers (EV echoes mapped back to table
//! indices through the profile, `rcvd_bytes` in the 256-byte units the blocks use).
//! The endpoint asks for a timeout every `ADVANCE_CYCLES` clocks while the flow is open, so
//! the core runs even when nothing arrives (its RTO, NSCC ticks).

use super::mrc::{MrcConfig, MrcTransport};
use super::spray::SprayMode;
use crate::mrc_core::{CoreInputs, CoreOutputs, CoreSim, RX_NACK, RX_SACK};
use crate::netsim::endpoint::{Endpoint, EndpointStats, FlowSpec, PathInfo, Transport};
use crate::netsim::packet::{Body, Class, MrcData, Packet, Trim, DATA_HEADER_BYTES};
use crate::netsim::Ps;
use crate::sack_tx_scoreboard::PSN_MASK;
use mrc_config::NicConfig;
use mrc_regmap::RegMap;
use std::collections::VecDeque;

/// Packets a NIC port queue holds before the core sees that plane as not ready.
pub const PORT_QUEUE: usize = 2;
/// Clocks between the endpoint's self-scheduled wake-ups while its flow is open.
pub const ADVANCE_CYCLES: u64 = 256;
/// Scoreboard timer tick: 1.024 us.
const TICK_NS: u64 = 1024;

/// Builds the core under test for a NicConfig.
pub type CoreFactory = Box<dyn Fn(&NicConfig) -> Box<dyn CoreSim>>;

/// Every flow is the model's MRC, except `core_flow`, whose requester is QP 0 of a core
/// built for `core_cfg` (the config its RTL was generated for: NSCC constants, window, EV
/// profile; its MTU must be the responder's).
pub struct CoreTransport {
    pub inner: MrcTransport,
    pub core_flow: u32,
    pub core_cfg: NicConfig,
    pub factory: CoreFactory,
}

impl Transport for CoreTransport {
    fn name(&self) -> String {
        "mrc-core".into()
    }

    fn connect(&self, flow: &FlowSpec, path: &PathInfo) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let (req, rsp) = self.inner.endpoints(flow, path);
        if flow.id != self.core_flow {
            return (Box::new(req), Box::new(rsp));
        }
        let c = MrcConfig::for_flow(&self.inner.cfg, SprayMode::Mrc, flow, path);
        assert_eq!(
            self.core_cfg.mtu, c.nic.mtu,
            "the core and the responder must use one MTU"
        );
        let core = (self.factory)(&self.core_cfg);
        (
            Box::new(CoreRequester::new(core, &self.core_cfg, &c, flow)),
            Box::new(rsp),
        )
    }
}

/// One transmitted header, as the core decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxRecord {
    pub cycle: u64,
    pub psn: u32,
    pub ev_idx: u8,
    pub plane: u8,
    pub rtx: bool,
}

fn path_ports(c: &MrcConfig) -> u8 {
    c.planes.max(1)
}

pub struct CoreRequester {
    core: Box<dyn CoreSim>,
    map: RegMap,
    flow: FlowSpec,
    mtu: u32,
    start_psn: u32,
    base_va: u64,
    rkey: u32,
    ports: u8,
    n_pkts: u32,
    profile: Vec<u32>,
    /// Sorted (value, index) for the EV echo lookup.
    by_value: Vec<(u32, u8)>,
    ps_per_cycle: u64,
    /// Clock count since simulated time 0 (setup clocks are not counted).
    cycle: u64,
    posted: bool,
    pending_rx: VecDeque<CoreInputs>,
    txq: Vec<VecDeque<Packet>>,
    una: u32,
    stats: EndpointStats,
    /// Every header the core emitted, in order.
    pub log: Vec<TxRecord>,
}

impl CoreRequester {
    pub fn new(core: Box<dyn CoreSim>, nic: &NicConfig, c: &MrcConfig, flow: &FlowSpec) -> Self {
        let profile = nic.default_ev_profile();
        let mut by_value: Vec<(u32, u8)> = profile
            .iter()
            .enumerate()
            .map(|(i, &v)| (v, i as u8))
            .collect();
        by_value.sort_unstable();
        let mut r = CoreRequester {
            core,
            map: mrc_regmap::build(nic),
            flow: flow.clone(),
            mtu: nic.mtu,
            start_psn: c.start_psn,
            base_va: c.base_va,
            rkey: c.rkey,
            ports: path_ports(c),
            n_pkts: flow.bytes.div_ceil(u64::from(nic.mtu)) as u32,
            profile,
            by_value,
            ps_per_cycle: 1_000_000 / u64::from(nic.clock_mhz),
            cycle: 0,
            posted: false,
            pending_rx: VecDeque::new(),
            txq: vec![VecDeque::new(); usize::from(path_ports(c))],
            una: c.start_psn,
            stats: EndpointStats::default(),
            log: Vec::new(),
        };
        r.setup();
        r
    }

    /// Reset, QP 0 at the flow's start PSN, enable, the EV profile: over MMIO, off the clock.
    fn setup(&mut self) {
        let _ = self.core.reset();
        self.mmio("QP", "QP_SEL", 0);
        self.mmio("QP", "QP_INIT_PSN", self.start_psn);
        self.mmio("QP", "QP_CTRL", 3);
        self.mmio("QP", "QP_CTRL", 1);
        for i in 0..self.profile.len() {
            self.mmio("EVT", "EV_INDEX", i as u32);
            self.mmio("EVT", "EV_VALUE", self.profile[i]);
            self.mmio("EVT", "EV_OP", 3);
        }
        for _ in 0..4 {
            self.core.step(&CoreInputs::idle());
        }
    }

    fn mmio(&mut self, block: &str, reg: &str, v: u32) {
        let addr = self.map.find(block, reg).expect("register in the map").addr;
        let mut o = self.core.step(&CoreInputs {
            wr_valid: true,
            wr_addr: addr,
            wr_data: v,
            wr_strb: 0xF,
            ..CoreInputs::idle()
        });
        let mut n = 0;
        while !o.b_valid {
            o = self.core.step(&CoreInputs::idle());
            n += 1;
            assert!(n < 16, "no MMIO response from the core");
        }
        assert_eq!(o.b_resp, 0, "MMIO write {block}.{reg} refused");
        self.core.step(&CoreInputs::idle());
    }

    fn done(&self) -> bool {
        self.stats.completed_at.is_some()
    }

    /// Run the core's clock up to `now`.
    fn advance(&mut self, now: Ps) {
        while (self.cycle + 1) * self.ps_per_cycle <= now {
            self.cycle += 1;
            let t_ps = self.cycle * self.ps_per_cycle;
            let ns = t_ps / 1000;
            let prev_ns = (self.cycle - 1) * self.ps_per_cycle / 1000;
            let mut x = self.pending_rx.pop_front().unwrap_or_else(CoreInputs::idle);
            x.now_ns = ns as u32;
            x.tick = ns / TICK_NS != prev_ns / TICK_NS;
            x.plane_ready = (0..8u8)
                .map(|p| {
                    let q = usize::from(p % self.ports);
                    u8::from(self.txq[q].len() < PORT_QUEUE) << p
                })
                .fold(0, |a, b| a | b);
            if !self.posted && t_ps >= self.flow.start {
                x.sq_valid = true;
                x.sq_qp = 0;
                x.sq_bytes = self.flow.bytes as u32;
                self.posted = true;
            }
            let o = self.core.step(&x);
            self.take(&o, t_ps);
        }
    }

    fn take(&mut self, o: &CoreOutputs, t_ps: Ps) {
        if o.tx_valid {
            let idx = o.tx_psn.wrapping_sub(self.start_psn) & PSN_MASK;
            let off = u64::from(idx) * u64::from(self.mtu);
            let len = (self.flow.bytes - off).min(u64::from(self.mtu)) as u32;
            let port = o.tx_plane % self.ports;
            self.log.push(TxRecord {
                cycle: self.cycle,
                psn: o.tx_psn,
                ev_idx: o.tx_ev_idx,
                plane: port,
                rtx: o.tx_rtx,
            });
            self.stats.data_sent += 1;
            if o.tx_rtx {
                self.stats.retransmits += 1;
            }
            let last = idx + 1 == self.n_pkts;
            self.txq[usize::from(port)].push_back(Packet {
                src: self.flow.src,
                dst: self.flow.dst,
                qp: self.flow.id,
                plane: port,
                ev: o.tx_ev,
                class: Class::Data,
                wire_bytes: len + DATA_HEADER_BYTES,
                ecn: false,
                trim: Trim::None,
                hops: 0,
                sent_at: t_ps,
                body: Body::MrcData(MrcData {
                    psn: o.tx_psn,
                    msn: 0,
                    va: self.base_va + off,
                    rkey: self.rkey,
                    len,
                    last,
                    rtx: o.tx_rtx,
                    // The core asks for an ACK at the end of the posted bytes.
                    ackreq: last || o.tx_last,
                }),
            });
        }
        let una = o.una.first().copied().unwrap_or(0);
        if una != self.una {
            self.una = una;
            let acked = una.wrapping_sub(self.start_psn) & PSN_MASK;
            self.stats.bytes_acked = (u64::from(acked) * u64::from(self.mtu)).min(self.flow.bytes);
            if acked == self.n_pkts && self.stats.completed_at.is_none() {
                self.stats.completed_at = Some(t_ps);
            }
        }
    }

    fn ev_index(&self, ev: u32) -> u8 {
        self.by_value
            .binary_search_by_key(&ev, |e| e.0)
            .map(|k| self.by_value[k].1)
            .unwrap_or(0)
    }
}

impl Endpoint for CoreRequester {
    fn handle_packet(&mut self, now: Ps, pkt: Packet) {
        self.advance(now);
        let mut x = CoreInputs {
            rx_valid: true,
            rx_qp: 0,
            ..CoreInputs::idle()
        };
        match pkt.body {
            Body::MrcSack(s) => {
                if s.probe_id.is_some() {
                    return;
                }
                x.rx_kind = RX_SACK;
                x.rx_psn = s.cack_psn & PSN_MASK;
                x.rx_offset = s.sack_offset as u16;
                x.rx_bitmap = s.bitmap;
                x.rx_m = s.m;
                x.rx_rcvd_bytes = (s.rcvd_bytes >> 8) as u32 & PSN_MASK;
                x.rx_ecn = s.ecn_echo;
                x.rx_ev_idx = self.ev_index(s.ev_echo);
            }
            Body::MrcNack(n) => {
                x.rx_kind = RX_NACK;
                x.rx_psn = n.nack_psn & PSN_MASK;
                x.rx_reason = n.reason;
                x.rx_ev_idx = self.ev_index(n.ev);
                self.stats.nacks_trimmed += u64::from(n.reason == 1 || n.reason == 2);
            }
            _ => return,
        }
        self.pending_rx.push_back(x);
    }

    fn poll_transmit(&mut self, now: Ps, plane: u8) -> Option<Packet> {
        self.advance(now);
        let p = self.txq.get_mut(usize::from(plane))?.pop_front()?;
        Some(Packet { sent_at: now, ..p })
    }

    fn wants_transmit(&self, _now: Ps) -> bool {
        self.txq.iter().any(|q| !q.is_empty())
    }

    fn poll_timeout(&self) -> Option<Ps> {
        if self.done() && self.pending_rx.is_empty() {
            return None;
        }
        Some((self.cycle + ADVANCE_CYCLES) * self.ps_per_cycle)
    }

    fn handle_timeout(&mut self, now: Ps) {
        self.advance(now);
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrc_core::MrcCore;
    use crate::netsim::scenario::{Scenario, TransportChoice};
    use crate::netsim::sim::Sim;

    /// The model core as the requester of flow 0 in the smoke scenario (16 hosts, an agg-core
    /// link down mid-run): every flow completes, nothing is lost.
    #[test]
    fn the_model_core_completes_its_flow_in_the_smoke_scenario() {
        let sc = Scenario::load("smoke").unwrap();
        let choice = TransportChoice::Mrc("mrc");
        let nic = sc.nic_config_for(choice).unwrap();
        let sim_cfg = sc.sim_config_for(choice).unwrap();
        // The RTL suite's config (3 planes x 5 EVs, 3 QPs, W = 64): QP 0 is the flow's.
        let core_cfg = NicConfig {
            planes: 3,
            evs_per_plane: 5,
            ev_min_active: 2,
            qps: 3,
            sack_window_bits: 64,
            ..NicConfig::default()
        };
        let t = CoreTransport {
            inner: MrcTransport::new(nic, SprayMode::Mrc),
            core_flow: 0,
            core_cfg,
            factory: Box::new(|c| Box::new(MrcCore::new(c))),
        };
        let r = Sim::new(sim_cfg, &t).run(&mut |_, _, _| {});
        let f0 = &r.flows[0];
        assert!(f0.fct_us.is_some(), "core flow did not complete: {f0:?}");
        assert_eq!(r.flows.iter().filter(|f| f.fct_us.is_none()).count(), 0);
        assert_eq!(f0.bytes_lost, 0);
        assert_eq!(f0.bytes_delivered, f0.bytes);
        assert!(f0.data_sent >= 64, "{f0:?}");
    }
}
