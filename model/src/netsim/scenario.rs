//! Scenarios: one TOML file says the network, queues, traffic, faults and which transports to
//! compare; [`Scenario::sim_config`] turns it into a [`SimConfig`]. A few are built in
//! (`model/scenarios/*.toml`, listed by [`builtins`]).
//!
//! ```toml
//! name = "permutation"
//! transports = ["mrc", "roce"]        # each runs on the same network, flows and faults
//! stop_us = 3000
//! [topology]                          # fat_tree (k) | multi_plane (planes, hosts, t0_down, t0_up,
//!                                     #   ports_per_plane = 1)
//! kind = "fat_tree"
//! k = 8
//! link_gbps = 100
//! [traffic]                           # permutation | incast | all_to_all | ring_allreduce
//! pattern = "permutation"
//! flow_bytes = 2097152
//! [[faults]]                          # link_down | link_up | flap | degrade | loss | switch_reboot
//! kind = "link_down"
//! at_us = 200
//! tier = "agg-core"                   # host | tor-agg | agg-core | t0-t1
//! links = [0]                         # or random = N, or all = true
//! ```
//!
//! Every refusal names the field and the reason.

use super::config::{Fault, FaultKind, QueueConfig, SimConfig};
use super::packet::DATA_HEADER_BYTES;
use super::topology::{LinkId, LinkTier, Routing, Shape, Topology};
use super::traffic::{self, Pattern};
use super::{Ps, NS, US};
use crate::rng::SplitMix64;
use mrc_config::NicConfig;
use serde::Deserialize;
use std::fmt;

/// Built-in scenarios: (name, TOML text).
pub const BUILTINS: &[(&str, &str)] = &[
    (
        "permutation",
        include_str!("../../scenarios/permutation.toml"),
    ),
    (
        "core_link_failure",
        include_str!("../../scenarios/core_link_failure.toml"),
    ),
    (
        "core_link_failure_reroute",
        include_str!("../../scenarios/core_link_failure_reroute.toml"),
    ),
    (
        "random_loss_0.1",
        include_str!("../../scenarios/random_loss_0.1.toml"),
    ),
    (
        "random_loss_1",
        include_str!("../../scenarios/random_loss_1.toml"),
    ),
    (
        "incast_victim",
        include_str!("../../scenarios/incast_victim.toml"),
    ),
    (
        "plane_flaps",
        include_str!("../../scenarios/plane_flaps.toml"),
    ),
    (
        "permutation_1024",
        include_str!("../../scenarios/permutation_1024.toml"),
    ),
    (
        "ring_allreduce",
        include_str!("../../scenarios/ring_allreduce.toml"),
    ),
    ("t1_reboot", include_str!("../../scenarios/t1_reboot.toml")),
    ("smoke", include_str!("../../scenarios/smoke.toml")),
];

/// The built-in scenarios, parsed.
pub fn builtins() -> Vec<Scenario> {
    BUILTINS
        .iter()
        .map(|(n, t)| Scenario::from_toml(t).unwrap_or_else(|e| panic!("built-in {n}: {e}")))
        .collect()
}

/// A refused scenario: the field (dotted path) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub field: String,
    pub reason: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

impl std::error::Error for ScenarioError {}

fn err<T>(field: impl Into<String>, reason: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError {
        field: field.into(),
        reason: reason.into(),
    })
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "one")]
    pub seed: u64,
    /// "mrc", "mrc-oblivious", "mrc-bitmap", "mrc-reps", "mrc-mixed", "roce" (DCQCN),
    /// "roce-nocc" (no rate control).
    #[serde(default = "default_transports")]
    pub transports: Vec<String>,
    /// Hard stop of simulated time, µs.
    pub stop_us: f64,
    /// Time-series bucket, µs.
    #[serde(default = "ten")]
    pub sample_us: f64,
    /// How many flows (the first ones) have their cwnd / rate traced.
    #[serde(default = "four")]
    pub trace_flows: u32,
    /// "ecmp" (switches hash the EV) or "source" (the EV's low bits are the route).
    #[serde(default = "ecmp")]
    pub routing: String,
    /// ECMP switches drop a failed link from their groups this long after it fails; absent:
    /// static routes (MRC's fabric runs no routing protocol).
    #[serde(default)]
    pub reroute_after_us: Option<f64>,
    pub topology: TopologySpec,
    #[serde(default)]
    pub queues: QueueSpec,
    pub traffic: TrafficSpec,
    #[serde(default)]
    pub faults: Vec<FaultSpec>,
    /// NicConfig fields for the endpoints (e.g. `mtu`, `evs_per_plane`, `rto_exp`); `planes`,
    /// `link_gbps` and `base_rtt_ns` come from the topology.
    #[serde(default)]
    pub nic: toml::Table,
}

fn one() -> u64 {
    1
}
fn ten() -> f64 {
    10.0
}
fn four() -> u32 {
    4
}
fn ecmp() -> String {
    "ecmp".into()
}
fn default_transports() -> Vec<String> {
    vec!["mrc".into(), "roce".into()]
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TopologySpec {
    /// "fat_tree" or "multi_plane".
    pub kind: String,
    pub k: Option<u32>,
    pub planes: Option<u8>,
    pub hosts: Option<u32>,
    pub t0_down: Option<u32>,
    pub t0_up: Option<u32>,
    /// multi_plane: NIC ports per host on each plane (default 1), all to the same T0.
    pub ports_per_plane: Option<u32>,
    pub link_gbps: f64,
    #[serde(default = "default_delay")]
    pub link_delay_ns: f64,
}

fn default_delay() -> f64 {
    500.0
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct QueueSpec {
    /// Data buffer per port in BDPs (BDP = port rate x the longest base RTT); the notes: 1 with
    /// trimming, 5 without (the default follows `trimming`).
    pub buffer_bdp: Option<f64>,
    pub kmin_bdp: f64,
    pub kmax_bdp: f64,
    pub trimming: bool,
    pub ecn_last_hop: bool,
}

impl Default for QueueSpec {
    fn default() -> Self {
        QueueSpec {
            buffer_bdp: None,
            kmin_bdp: 0.2,
            kmax_bdp: 0.8,
            trimming: true,
            ecn_last_hop: false,
        }
    }
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TrafficSpec {
    /// "permutation", "incast", "all_to_all", "ring_allreduce".
    pub pattern: String,
    /// Bytes per flow (ring_allreduce: the buffer each host reduces).
    pub flow_bytes: u64,
    /// incast: senders into the receiver.
    pub senders: Option<u32>,
    /// incast: bytes of the victim flow (0 or absent: none).
    pub victim_bytes: Option<u64>,
    /// Start times spread uniformly over [0, start_jitter_us).
    #[serde(default)]
    pub start_jitter_us: f64,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// "link_down", "link_up", "flap", "degrade", "loss", "switch_reboot".
    pub kind: String,
    pub at_us: f64,
    /// Link tier for link faults: "host", "tor-agg", "agg-core", "t0-t1".
    pub tier: Option<String>,
    /// Only links / switches of this plane.
    pub plane: Option<u8>,
    /// Links by index in the tier's list (upward direction, build order).
    pub links: Option<Vec<u32>>,
    /// This many distinct links of the tier, picked with the scenario seed.
    pub random: Option<u32>,
    /// Every link of the tier.
    #[serde(default)]
    pub all: bool,
    /// flap / switch_reboot: how long each outage lasts, µs.
    pub down_us: Option<f64>,
    /// flap: start of one outage to the start of the next, µs.
    pub period_us: Option<f64>,
    /// flap: number of outages.
    pub count: Option<u32>,
    /// degrade: fraction of capacity left (0 < f <= 1).
    pub fraction: Option<f64>,
    /// loss: probability a packet crossing the link is lost.
    pub rate: Option<f64>,
    /// switch_reboot: tier of the switch (0 = ToR/T0, 1 = agg/T1, 2 = core) and its index.
    pub switch_tier: Option<u8>,
    pub switch_index: Option<u32>,
}

/// Which transport a name selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportChoice {
    /// MRC with a spray policy: "mrc", "oblivious", "bitmap", "reps", "mixed".
    Mrc(&'static str),
    Roce {
        dcqcn: bool,
    },
}

pub const TRANSPORT_NAMES: &[&str] = &[
    "mrc",
    "mrc-oblivious",
    "mrc-bitmap",
    "mrc-reps",
    "mrc-mixed",
    "roce",
    "roce-nocc",
];

impl TransportChoice {
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "mrc" => TransportChoice::Mrc("mrc"),
            "mrc-oblivious" => TransportChoice::Mrc("oblivious"),
            "mrc-bitmap" => TransportChoice::Mrc("bitmap"),
            "mrc-reps" => TransportChoice::Mrc("reps"),
            "mrc-mixed" => TransportChoice::Mrc("mixed"),
            "roce" => TransportChoice::Roce { dcqcn: true },
            "roce-nocc" => TransportChoice::Roce { dcqcn: false },
            _ => return None,
        })
    }
}

fn us(x: f64) -> Ps {
    (x * US as f64).round() as Ps
}

impl Scenario {
    pub fn from_toml(text: &str) -> Result<Self, ScenarioError> {
        let s: Scenario = toml::from_str(text).map_err(|e| ScenarioError {
            field: "scenario".into(),
            reason: format!("not a valid scenario: {e}"),
        })?;
        s.check()?;
        Ok(s)
    }

    /// A built-in name or a path to a TOML file.
    pub fn load(name_or_path: &str) -> Result<Self, ScenarioError> {
        if let Some((_, t)) = BUILTINS.iter().find(|(n, _)| *n == name_or_path) {
            return Self::from_toml(t);
        }
        let p = std::path::Path::new(name_or_path);
        if !p.exists() {
            let names: Vec<&str> = BUILTINS.iter().map(|(n, _)| *n).collect();
            return err(
                "scenario",
                format!(
                    "{name_or_path:?} is neither a built-in scenario ({}) nor a file",
                    names.join(", ")
                ),
            );
        }
        let text = std::fs::read_to_string(p).map_err(|e| ScenarioError {
            field: "scenario".into(),
            reason: format!("cannot read {}: {e}", p.display()),
        })?;
        Self::from_toml(&text)
    }

    fn check(&self) -> Result<(), ScenarioError> {
        if self.transports.is_empty() {
            return err("transports", "name at least one transport");
        }
        for t in &self.transports {
            if TransportChoice::parse(t).is_none() {
                return err(
                    "transports",
                    format!(
                        "unknown transport {t:?}; known: {}",
                        TRANSPORT_NAMES.join(", ")
                    ),
                );
            }
        }
        if !(self.stop_us > 0.0 && self.stop_us <= 10_000_000.0) {
            return err("stop_us", format!("{}: must be in (0, 1e7]", self.stop_us));
        }
        if !(self.sample_us >= 0.1 && self.sample_us <= self.stop_us) {
            return err(
                "sample_us",
                format!("{}: must be in [0.1, stop_us]", self.sample_us),
            );
        }
        self.routing()?;
        if let Some(r) = self.reroute_after_us {
            if r.is_nan() || r < 0.0 {
                return err("reroute_after_us", format!("{r}: must be >= 0"));
            }
        }
        self.shape()?;
        let t = &self.topology;
        if !(t.link_gbps > 0.0 && t.link_gbps <= 1600.0) {
            return err(
                "topology.link_gbps",
                format!("{}: must be in (0, 1600]", t.link_gbps),
            );
        }
        if !(t.link_delay_ns >= 0.0 && t.link_delay_ns <= 1e6) {
            return err(
                "topology.link_delay_ns",
                format!("{}: must be in [0, 1e6]", t.link_delay_ns),
            );
        }
        let q = &self.queues;
        if let Some(b) = q.buffer_bdp {
            if !(b > 0.0 && b <= 100.0) {
                return err("queues.buffer_bdp", format!("{b}: must be in (0, 100]"));
            }
        }
        if !(0.0 <= q.kmin_bdp && q.kmin_bdp <= q.kmax_bdp && q.kmax_bdp <= 100.0) {
            return err(
                "queues.kmin_bdp",
                format!(
                    "{} / kmax {}: need 0 <= kmin <= kmax",
                    q.kmin_bdp, q.kmax_bdp
                ),
            );
        }
        self.pattern()?;
        if self.traffic.flow_bytes == 0 || self.traffic.flow_bytes > 1 << 40 {
            return err("traffic.flow_bytes", "must be in 1..=2^40");
        }
        for t in &self.transports {
            self.nic_config_for(TransportChoice::parse(t).expect("checked above"))?;
        }
        for (i, f) in self.faults.iter().enumerate() {
            if f.at_us.is_nan() || f.at_us < 0.0 {
                return err(
                    format!("faults[{i}].at_us"),
                    format!("{}: must be >= 0", f.at_us),
                );
            }
        }
        Ok(())
    }

    pub fn routing(&self) -> Result<Routing, ScenarioError> {
        match self.routing.as_str() {
            "ecmp" => Ok(Routing::Ecmp),
            "source" => Ok(Routing::SourceRoute),
            r => err("routing", format!("{r:?}: one of \"ecmp\", \"source\"")),
        }
    }

    pub fn shape(&self) -> Result<Shape, ScenarioError> {
        let t = &self.topology;
        let need = |v: Option<u32>, f: &str| {
            v.ok_or_else(|| ScenarioError {
                field: format!("topology.{f}"),
                reason: format!("required for kind = {:?}", t.kind),
            })
        };
        let s = match t.kind.as_str() {
            "fat_tree" => Shape::FatTree { k: need(t.k, "k")? },
            "multi_plane" => Shape::MultiPlane {
                planes: need(t.planes.map(u32::from), "planes")? as u8,
                hosts: need(t.hosts, "hosts")?,
                t0_down: need(t.t0_down, "t0_down")?,
                t0_up: need(t.t0_up, "t0_up")?,
                ports_per_plane: t.ports_per_plane.unwrap_or(1),
            },
            k => {
                return err(
                    "topology.kind",
                    format!("{k:?}: one of \"fat_tree\", \"multi_plane\""),
                )
            }
        };
        s.validate().map_err(|e| ScenarioError {
            field: "topology".into(),
            reason: e.0,
        })?;
        let hosts = s.counts().hosts;
        if hosts > 20_000 {
            return err(
                "topology",
                format!("{hosts} hosts: simulations are limited to 20,000 hosts (build larger shapes with Topology::build)"),
            );
        }
        Ok(s)
    }

    pub fn pattern(&self) -> Result<Pattern, ScenarioError> {
        let t = &self.traffic;
        Ok(match t.pattern.as_str() {
            "permutation" => Pattern::Permutation {
                flow_bytes: t.flow_bytes,
            },
            "incast" => Pattern::Incast {
                senders: t.senders.ok_or_else(|| ScenarioError {
                    field: "traffic.senders".into(),
                    reason: "required for pattern = \"incast\"".into(),
                })?,
                flow_bytes: t.flow_bytes,
                victim_bytes: t.victim_bytes.unwrap_or(0),
            },
            "all_to_all" => Pattern::AllToAll {
                flow_bytes: t.flow_bytes,
            },
            "ring_allreduce" => Pattern::RingAllReduce {
                buffer_bytes: t.flow_bytes,
            },
            p => {
                return err(
                    "traffic.pattern",
                    format!("{p:?}: one of permutation, incast, all_to_all, ring_allreduce"),
                )
            }
        })
    }

    /// NIC ports per host (planes x ports per plane): what the endpoints spread EVs over.
    fn planes(&self) -> u8 {
        match self.shape() {
            Ok(Shape::MultiPlane {
                planes,
                ports_per_plane,
                ..
            }) => planes * ports_per_plane as u8,
            _ => 1,
        }
    }

    /// The NIC's line rate: every port, Gb/s.
    pub fn nic_gbps(&self) -> f64 {
        self.topology.link_gbps * f64::from(self.planes())
    }

    /// Longest unloaded RTT of the fabric (6 links on a fat tree, 4 on two tiers), ps.
    pub fn max_base_rtt(&self, mtu: u32) -> Ps {
        let links: Ps = match self.shape() {
            Ok(Shape::MultiPlane { .. }) => 4,
            _ => 6,
        };
        let t = &self.topology;
        let one = super::tx_time(mtu + DATA_HEADER_BYTES, t.link_gbps)
            + super::tx_time(super::packet::HEADER_BYTES, t.link_gbps)
            + 2 * (t.link_delay_ns * NS as f64) as Ps;
        links * one
    }

    /// The MRC endpoints' NicConfig (see [`Scenario::nic_config_for`]).
    pub fn nic_config(&self) -> Result<NicConfig, ScenarioError> {
        self.nic_config_for(TransportChoice::Mrc("mrc"))
    }

    /// Does this transport's fabric trim? RoCEv2 cannot use trimmed packets (it has no trim
    /// NACK), so a RoCE run gets what a RoCE fabric has: no trimming and the deeper
    /// no-trimming buffer (the notes: 5 BDP), unless `queues.buffer_bdp` says otherwise.
    pub fn trims(&self, choice: TransportChoice) -> bool {
        self.queues.trimming && matches!(choice, TransportChoice::Mrc(_))
    }

    /// The endpoints' NicConfig: the defaults, then `[nic]`, then the fabric's facts (planes,
    /// NIC rate = planes x port rate, base RTT, whether it trims). EVs default to 128 per QP
    /// over the planes; the retransmit timeout, unless `[nic]` sets `rto_exp`, follows the
    /// notes' reference (15 us + 6 x the drain time of one port buffer at line rate), rounded
    /// up to a power-of-two multiple of 1.024 us.
    pub fn nic_config_for(&self, choice: TransportChoice) -> Result<NicConfig, ScenarioError> {
        let planes = self.planes() as u32;
        let mut table = toml::Table::try_from(NicConfig::default()).expect("NicConfig serialises");
        table.insert(
            "evs_per_plane".into(),
            toml::Value::Integer((128 / planes) as i64),
        );
        for (k, v) in &self.nic {
            if ["planes", "link_gbps", "base_rtt_ns"].contains(&k.as_str()) {
                return err(
                    format!("nic.{k}"),
                    "set by the topology (planes, planes x link_gbps, its base RTT)",
                );
            }
            table.insert(k.clone(), v.clone());
        }
        let mut cfg: NicConfig = table
            .try_into()
            .map_err(|e: toml::de::Error| ScenarioError {
                field: "nic".into(),
                reason: e.to_string(),
            })?;
        cfg.planes = planes;
        cfg.link_gbps = (self.topology.link_gbps * planes as f64).round().max(25.0) as u32;
        cfg.base_rtt_ns = ((self.max_base_rtt(cfg.mtu) / NS) as u32).clamp(2_000, 100_000);
        cfg.trimming = self.trims(choice);
        if !self.nic.contains_key("rto_exp") {
            let drain_us =
                self.buffer_bytes(cfg.mtu, choice) as f64 * 8.0 / (self.topology.link_gbps * 1e3);
            let rto_us = 15.0 + 6.0 * drain_us;
            cfg.rto_exp = (rto_us / 1.024).log2().ceil().clamp(0.0, 24.0) as u32;
        }
        cfg.validate().map_err(|e| ScenarioError {
            field: format!("nic.{}", e.field),
            reason: format!("{} ({})", e.reason, e.value),
        })?;
        Ok(cfg)
    }

    /// One BDP of a fabric port: port rate x the longest base RTT, bytes.
    fn bdp_bytes(&self, mtu: u32) -> f64 {
        self.topology.link_gbps * (self.max_base_rtt(mtu) as f64 / 1000.0) / 8.0
    }

    /// Data buffer per port for this transport's fabric, bytes.
    fn buffer_bytes(&self, mtu: u32, choice: TransportChoice) -> u64 {
        let trims = self.trims(choice);
        let bdps = self
            .queues
            .buffer_bdp
            .unwrap_or(if trims { 1.0 } else { 5.0 });
        (self.bdp_bytes(mtu) * bdps).max(2.0 * (mtu + DATA_HEADER_BYTES) as f64) as u64
    }

    /// Queue parameters in bytes from the BDP-relative spec, for the MRC fabric.
    pub fn queue_config(&self) -> Result<QueueConfig, ScenarioError> {
        self.queue_config_for(TransportChoice::Mrc("mrc"))
    }

    /// Queue parameters for this transport's fabric ([`Scenario::trims`]).
    pub fn queue_config_for(&self, choice: TransportChoice) -> Result<QueueConfig, ScenarioError> {
        let q = &self.queues;
        let mtu = self.nic_config_for(choice)?.mtu;
        let bdp = self.bdp_bytes(mtu);
        let buffer = self.buffer_bytes(mtu, choice);
        Ok(QueueConfig {
            buffer_bytes: buffer,
            kmin_bytes: (bdp * q.kmin_bdp) as u64,
            kmax_bytes: (bdp * q.kmax_bdp).max(bdp * q.kmin_bdp + 1.0) as u64,
            trimming: self.trims(choice),
            ecn_last_hop: q.ecn_last_hop,
            control_buffer_bytes: buffer.max(64 * 64),
        })
    }

    fn fault_links(
        &self,
        i: usize,
        f: &FaultSpec,
        topo: &Topology,
        rng: &mut SplitMix64,
    ) -> Result<Vec<LinkId>, ScenarioError> {
        let field = |x: &str| format!("faults[{i}].{x}");
        let tier_name = f.tier.as_deref().ok_or_else(|| ScenarioError {
            field: field("tier"),
            reason: format!(
                "required for kind = {:?}: host, tor-agg, agg-core or t0-t1",
                f.kind
            ),
        })?;
        let tier = LinkTier::parse(tier_name).ok_or_else(|| ScenarioError {
            field: field("tier"),
            reason: format!("{tier_name:?}: one of host, tor-agg, agg-core, t0-t1"),
        })?;
        let all: Vec<LinkId> = topo
            .links_in_tier(tier, f.plane)
            .into_iter()
            .filter(|&l| topo.links[l as usize].upward)
            .collect();
        if all.is_empty() {
            return err(
                field("tier"),
                format!("this topology has no {tier_name} links"),
            );
        }
        let picks = [f.links.is_some(), f.random.is_some(), f.all];
        if picks.iter().filter(|&&b| b).count() != 1 {
            return err(
                field("links"),
                "give exactly one of links = [..], random = N, all = true",
            );
        }
        if let Some(ix) = &f.links {
            let mut v = Vec::new();
            for &x in ix {
                match all.get(x as usize) {
                    Some(&l) => v.push(l),
                    None => {
                        return err(
                            field("links"),
                            format!(
                                "index {x}: the tier has {} links (0..{})",
                                all.len(),
                                all.len()
                            ),
                        )
                    }
                }
            }
            return Ok(v);
        }
        if let Some(n) = f.random {
            if n as usize > all.len() {
                return err(
                    field("random"),
                    format!("{n}: the tier has {} links", all.len()),
                );
            }
            let mut pool = all;
            for j in 0..n as usize {
                let k = j + (rng.next_u64() % (pool.len() - j) as u64) as usize;
                pool.swap(j, k);
            }
            pool.truncate(n as usize);
            return Ok(pool);
        }
        Ok(all)
    }

    fn faults(&self, topo: &Topology) -> Result<Vec<Fault>, ScenarioError> {
        let mut rng = SplitMix64::new(self.seed ^ 0xFA17);
        let mut out = Vec::new();
        for (i, f) in self.faults.iter().enumerate() {
            let field = |x: &str| format!("faults[{i}].{x}");
            let at = us(f.at_us);
            let need = |v: Option<f64>, x: &str| {
                v.ok_or_else(|| ScenarioError {
                    field: field(x),
                    reason: format!("required for kind = {:?}", f.kind),
                })
            };
            match f.kind.as_str() {
                "link_down" | "link_up" => {
                    let kind = if f.kind == "link_down" {
                        FaultKind::Down
                    } else {
                        FaultKind::Up
                    };
                    for l in self.fault_links(i, f, topo, &mut rng)? {
                        out.push(Fault { at, link: l, kind });
                    }
                }
                "flap" => {
                    let down = us(need(f.down_us, "down_us")?);
                    let period = us(need(f.period_us, "period_us")?);
                    let count = f.count.ok_or_else(|| ScenarioError {
                        field: field("count"),
                        reason: "required for kind = \"flap\"".into(),
                    })?;
                    if down == 0 || down >= period {
                        return err(field("down_us"), "must be > 0 and below period_us");
                    }
                    for l in self.fault_links(i, f, topo, &mut rng)? {
                        for c in 0..count as Ps {
                            out.push(Fault {
                                at: at + c * period,
                                link: l,
                                kind: FaultKind::Down,
                            });
                            out.push(Fault {
                                at: at + c * period + down,
                                link: l,
                                kind: FaultKind::Up,
                            });
                        }
                    }
                }
                "degrade" => {
                    let fr = need(f.fraction, "fraction")?;
                    if !(fr > 0.0 && fr <= 1.0) {
                        return err(field("fraction"), format!("{fr}: must be in (0, 1]"));
                    }
                    for l in self.fault_links(i, f, topo, &mut rng)? {
                        out.push(Fault {
                            at,
                            link: l,
                            kind: FaultKind::Degrade(fr),
                        });
                    }
                }
                "loss" => {
                    let r = need(f.rate, "rate")?;
                    if !(0.0..1.0).contains(&r) {
                        return err(field("rate"), format!("{r}: must be in [0, 1)"));
                    }
                    for l in self.fault_links(i, f, topo, &mut rng)? {
                        out.push(Fault {
                            at,
                            link: l,
                            kind: FaultKind::Loss(r),
                        });
                    }
                }
                "switch_reboot" => {
                    let down = us(need(f.down_us, "down_us")?);
                    let tier = f.switch_tier.ok_or_else(|| ScenarioError {
                        field: field("switch_tier"),
                        reason:
                            "required for kind = \"switch_reboot\" (0 ToR/T0, 1 agg/T1, 2 core)"
                                .into(),
                    })?;
                    let sw = topo.switches_in_tier(tier, f.plane);
                    let ix = f.switch_index.unwrap_or(0);
                    let Some(&node) = sw.get(ix as usize) else {
                        return err(
                            field("switch_index"),
                            format!("{ix}: tier {tier} has {} switches", sw.len()),
                        );
                    };
                    let n = &topo.nodes[node as usize];
                    for &l in n.up.iter().chain(n.down.iter()) {
                        out.push(Fault {
                            at,
                            link: l,
                            kind: FaultKind::Down,
                        });
                        out.push(Fault {
                            at: at + down,
                            link: l,
                            kind: FaultKind::Up,
                        });
                    }
                }
                k => {
                    return err(
                        field("kind"),
                        format!(
                            "{k:?}: one of link_down, link_up, flap, degrade, loss, switch_reboot"
                        ),
                    )
                }
            }
        }
        out.sort_by_key(|f| f.at);
        Ok(out)
    }

    /// Build the topology, flows and faults of this scenario (the MRC fabric's queues).
    pub fn sim_config(&self) -> Result<SimConfig, ScenarioError> {
        self.sim_config_for(TransportChoice::Mrc("mrc"))
    }

    /// Build the topology, flows and faults, with the queues of this transport's fabric.
    pub fn sim_config_for(&self, choice: TransportChoice) -> Result<SimConfig, ScenarioError> {
        let shape = self.shape()?;
        let topo = Topology::build(
            shape,
            self.topology.link_gbps,
            (self.topology.link_delay_ns * NS as f64) as Ps,
        )
        .map_err(|e| ScenarioError {
            field: "topology".into(),
            reason: e.0,
        })?;
        let group = match shape {
            Shape::FatTree { k } => k / 2,
            Shape::MultiPlane {
                t0_down,
                ports_per_plane,
                ..
            } => t0_down / ports_per_plane,
        };
        let flows = traffic::flows(
            &self.pattern()?,
            topo.hosts,
            group,
            us(self.traffic.start_jitter_us),
            self.seed,
        )
        .map_err(|e| ScenarioError {
            field: "traffic".into(),
            reason: e,
        })?;
        let faults = self.faults(&topo)?;
        let traced = (0..self.trace_flows.min(flows.len() as u32)).collect();
        Ok(SimConfig {
            routing: self.routing()?,
            queues: self.queue_config_for(choice)?,
            faults,
            flows,
            seed: self.seed,
            stop_at: us(self.stop_us),
            sample_interval: us(self.sample_us),
            traced_flows: traced,
            reroute_after: self.reroute_after_us.map(us),
            topology: topo,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_and_builds() {
        for s in builtins() {
            let c = s.sim_config().unwrap_or_else(|e| panic!("{}: {e}", s.name));
            assert!(!c.flows.is_empty(), "{}", s.name);
            assert!(c.queues.kmin_bytes < c.queues.kmax_bytes, "{}", s.name);
        }
    }

    fn base() -> String {
        "name = \"t\"\nstop_us = 100\n[topology]\nkind = \"fat_tree\"\nk = 4\nlink_gbps = 100\n[traffic]\npattern = \"permutation\"\nflow_bytes = 100000\n".into()
    }

    fn refused(extra: &str) -> ScenarioError {
        Scenario::from_toml(&(base() + extra))
            .and_then(|s| s.sim_config().map(|_| s))
            .unwrap_err()
    }

    #[test]
    fn bad_scenarios_are_refused_naming_the_field() {
        assert!(Scenario::from_toml(&base()).is_ok());
        let e = Scenario::from_toml(&base().replace("k = 4", "k = 5")).unwrap_err();
        assert_eq!(e.field, "topology");
        let e = Scenario::from_toml(
            &base().replace("stop_us = 100", "stop_us = 100\ntransports = [\"tcp\"]"),
        )
        .unwrap_err();
        assert_eq!(e.field, "transports");
        assert!(e.reason.contains("roce"));
        let e = Scenario::from_toml(&(base() + "bogus = 1\n")).unwrap_err();
        assert!(e.reason.contains("bogus"), "{e}");
        let e = refused(
            "[[faults]]\nkind = \"link_down\"\nat_us = 5\ntier = \"agg-core\"\nlinks = [99]\n",
        );
        assert_eq!(e.field, "faults[0].links");
        let e =
            refused("[[faults]]\nkind = \"link_down\"\nat_us = 5\ntier = \"t0-t1\"\nall = true\n");
        assert_eq!(e.field, "faults[0].tier");
        let e = refused("[[faults]]\nkind = \"flap\"\nat_us = 5\ntier = \"agg-core\"\nall = true\ndown_us = 10\nperiod_us = 5\ncount = 2\n");
        assert_eq!(e.field, "faults[0].down_us");
        let e = Scenario::from_toml(&(base() + "[nic]\nmtu = 100\n")).unwrap_err();
        assert_eq!(e.field, "nic.mtu");
        let e = Scenario::from_toml(&(base() + "[nic]\nplanes = 2\n")).unwrap_err();
        assert_eq!(e.field, "nic.planes");
        let e = Scenario::load("no_such_scenario").unwrap_err();
        assert!(e.reason.contains("permutation"), "{e}");
    }

    #[test]
    fn faults_expand_flaps_and_reboots_in_time_order() {
        let s = Scenario::from_toml(&(base()
            + "[[faults]]\nkind = \"flap\"\nat_us = 10\ntier = \"agg-core\"\nlinks = [1]\ndown_us = 2\nperiod_us = 5\ncount = 3\n[[faults]]\nkind = \"switch_reboot\"\nat_us = 11\nswitch_tier = 2\nswitch_index = 0\ndown_us = 4\n"))
        .unwrap();
        let c = s.sim_config().unwrap();
        // 3 flaps x (down, up) + a core switch of k = 4 has 4 links x (down, up).
        assert_eq!(c.faults.len(), 6 + 8);
        assert!(c.faults.windows(2).all(|w| w[0].at <= w[1].at));
        assert_eq!(c.faults[0].at, 10 * US);
        assert_eq!(c.faults[0].kind, FaultKind::Down);
    }

    #[test]
    fn roce_runs_on_a_fabric_without_trimming_and_the_rto_follows_the_buffer() {
        let s = Scenario::load("permutation").unwrap();
        let roce = TransportChoice::Roce { dcqcn: true };
        let mrc = TransportChoice::Mrc("mrc");
        let (qm, qr) = (
            s.queue_config_for(mrc).unwrap(),
            s.queue_config_for(roce).unwrap(),
        );
        assert!(qm.trimming && !qr.trimming);
        assert_eq!(qr.buffer_bytes, 5 * qm.buffer_bytes);
        let (nm, nr) = (
            s.nic_config_for(mrc).unwrap(),
            s.nic_config_for(roce).unwrap(),
        );
        assert!(nm.trimming && !nr.trimming);
        // 100G, 500 ns links, 6 hops: BDP ~ 100 KB, drain 8 us: RTO 15 + 48 us -> 2^6 x 1.024.
        assert_eq!(nm.rto_exp, 6);
        assert!(nr.rto_exp > nm.rto_exp);
        let fixed = Scenario::from_toml(&(base() + "[nic]\nrto_exp = 3\n")).unwrap();
        assert_eq!(fixed.nic_config_for(roce).unwrap().rto_exp, 3);
    }

    #[test]
    fn nic_config_follows_the_fabric() {
        let s = Scenario::load("plane_flaps").unwrap();
        let n = s.nic_config().unwrap();
        assert_eq!(n.planes as u8, s.topology.planes.unwrap());
        assert_eq!(n.planes * n.evs_per_plane, 128);
        assert_eq!(n.link_gbps as f64, s.topology.link_gbps * n.planes as f64);
    }
}
