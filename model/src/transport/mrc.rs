//! The MRC queue pair as sans-IO endpoints: [`MrcRequester`] (sender) and [`MrcResponder`]
//! (receiver), built per flow by [`MrcTransport`].
//!
//! ```text
//!   requester (flow.src)                                     responder (flow.dst)
//!   EvSprayer: EV per packet  -- data (Class::Data, ev) --->  bitmap (sack_rx_tracker
//!   scoreboard ring (W)                                       semantics) -> MemoryRegion
//!   NSCC Fixed cwnd          <-- SACK / NACK (Class::Control,  (R_Key, bounds, once)
//!   head RTO, probes              same ev, same plane) ----
//!                             -- probe (Control, no PSN) -->  SACK with probe_id
//! ```
//!
//! Transaction level, not clock level: the receiver and scoreboard keep the semantics of the
//! RTL blocks (`sack_rx_tracker`, `sack_tx_scoreboard`), checked by tests that drive the same
//! packet sequences through the cycle models; the EV state machine is the arbiter's own
//! [`mrc_transition`](crate::ev_spray_arbiter::mrc_transition) and NSCC is [`Fixed`], the
//! integer algorithm of `nscc_window`. Each submodule's doc lists where it departs from its
//! block and why.
//!
//! Per-flow setup ([`MrcConfig::for_flow`]): EVs = `planes * evs_per_plane` of the config,
//! re-spread over the path's planes when the topology has a different plane count; NSCC's
//! BDP from the path (base RTT, and line rate = planes x port rate, each clamped to the
//! config's legal range), so its initial window matches the network it runs on; the start
//! PSN, the region's VA and R_Key from the flow seed (both endpoints derive the same ones).
//!
//! [`Fixed`]: crate::nscc::Fixed

mod requester;
mod responder;
#[cfg(test)]
mod tests;

pub use requester::{MrcRequester, RequesterCounters};
pub use responder::MrcResponder;

use crate::netsim::endpoint::{Endpoint, FlowSpec, PathInfo, Transport};
use crate::netsim::{Ps, NS};
use crate::rng::SplitMix64;
use crate::transport::memory::MemoryRegion;
use crate::transport::spray::SprayMode;
use mrc_config::NicConfig;

pub(crate) const PSN_MASK: u32 = 0xFF_FFFF;

/// Everything both endpoints of one flow agree on.
#[derive(Debug, Clone)]
pub struct MrcConfig {
    /// The NIC config as this flow uses it (planes, base RTT and line rate from the path).
    pub nic: NicConfig,
    pub mode: SprayMode,
    pub planes: u8,
    /// PSN of the first packet (24-bit, from the seed).
    pub start_psn: u32,
    /// VA of the responder's region (the message's first byte) and its R_Key.
    pub base_va: u64,
    pub rkey: u32,
    pub base_rtt: Ps,
    /// ASSUMED_BAD EVs are probed this often: 2 base RTTs (a probe answer needs one RTT;
    /// the second keeps probe traffic on a dead path to one header per EV per 2 RTTs).
    pub probe_interval: Ps,
    /// NSCC TICK period: half a base RTT, so the timed fulfill runs at least once per RTT.
    pub tick_interval: Ps,
}

impl MrcConfig {
    pub fn for_flow(cfg: &NicConfig, mode: SprayMode, flow: &FlowSpec, path: &PathInfo) -> Self {
        let mut nic = cfg.clone();
        let planes = if path.planes == 0 {
            cfg.planes
        } else {
            u32::from(path.planes)
        };
        if planes != cfg.planes {
            nic.planes = planes;
            nic.evs_per_plane = (cfg.total_evs() / planes).max(1);
            nic.ev_min_active = nic.ev_min_active.min(nic.total_evs());
        }
        if path.base_rtt > 0 {
            nic.base_rtt_ns = (path.base_rtt / NS).clamp(2_000, 100_000) as u32;
        }
        if path.port_gbps > 0.0 {
            let gbps = (path.port_gbps * f64::from(planes)).round();
            nic.link_gbps = gbps.clamp(25.0, 1600.0) as u32;
        }
        let base_rtt = u64::from(nic.base_rtt_ns) * NS;
        let mut rng = SplitMix64::new(flow.seed ^ 0x0A11_CE00_0000_0001);
        let start_psn = rng.next_u64() as u32 & PSN_MASK;
        let base_va = (rng.next_u64() & 0x0000_7FFF_FFFF_F000) | 0x1000;
        let rkey = rng.next_u64() as u32 | 1;
        MrcConfig {
            nic,
            mode,
            planes: planes as u8,
            start_psn,
            base_va,
            rkey,
            base_rtt,
            probe_interval: 2 * base_rtt,
            tick_interval: base_rtt / 2,
        }
    }

    /// The responder's registered region for a flow of `bytes`.
    pub fn region(&self, bytes: u64) -> MemoryRegion {
        MemoryRegion::new(self.base_va, bytes, self.rkey, self.nic.mtu)
    }
}

/// Builds MRC endpoint pairs with one spray policy.
#[derive(Debug, Clone)]
pub struct MrcTransport {
    pub cfg: NicConfig,
    pub mode: SprayMode,
}

impl MrcTransport {
    pub fn new(cfg: NicConfig, mode: SprayMode) -> Self {
        MrcTransport { cfg, mode }
    }

    /// The two endpoints with their concrete types (tests and tools that look inside).
    pub fn endpoints(&self, flow: &FlowSpec, path: &PathInfo) -> (MrcRequester, MrcResponder) {
        let c = MrcConfig::for_flow(&self.cfg, self.mode, flow, path);
        (
            MrcRequester::new(&c, flow),
            MrcResponder::new(&c, flow, c.region(flow.bytes)),
        )
    }
}

impl Transport for MrcTransport {
    fn name(&self) -> String {
        match self.mode {
            SprayMode::Mrc => "mrc".into(),
            m => format!("mrc-{}", m.name()),
        }
    }

    fn connect(&self, flow: &FlowSpec, path: &PathInfo) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let (req, rsp) = self.endpoints(flow, path);
        (Box::new(req), Box::new(rsp))
    }
}
