//! Topologies the simulator runs: the k-ary 3-tier fat tree and MRC's 2-tier multi-plane
//! fabric, with arithmetic routing (no per-destination tables, so the 131,072-endpoint shape
//! fits in memory).
//!
//! ```text
//!  k-ary fat tree (k pods)                     multi-plane 2-tier (one of P planes)
//!         core (k/2)^2                              T1 x t0_up      (one link to every T0)
//!      /   |   |   \                                /  |  \
//!   agg  agg  agg  agg   k/2 per pod             T0  T0  T0 ...    hosts/t0_down per plane
//!    | \/ |    | \/ |                            /|\ /|\ /|\
//!   tor  tor  tor  tor   k/2 per pod            hosts: every host has one port per plane
//!   /|\  /|\                                    (host h -> T0 h / t0_down of each plane)
//!  hosts: k/2 per ToR, k^3/4 in all
//! ```
//!
//! Nodes `0..hosts` are the hosts; switches follow. Links are unidirectional; every link has
//! a `reverse`. A switch forwards up by ECMP (a hash of the EV, the addresses and the
//! switch) or by source route (the EV's low bits pick the uplink at each tier), and down by
//! the destination's address. Routing is static: a switch does not steer around a failed
//! link (MRC's switches run no routing protocol); the simulator may optionally exclude
//! links that are down after a detection delay (`route` takes the predicate).

use super::packet::{HostId, Packet};
use super::{tx_time, Ps};

pub type NodeId = u32;
pub type LinkId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    Host,
    /// Tier 0 = ToR / T0, 1 = aggregation / T1, 2 = core.
    Switch {
        tier: u8,
    },
}

/// Which layer of the fabric a link belongs to (fault scenarios select links by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkTier {
    /// Host NIC port <-> ToR / T0.
    Host,
    /// Fat tree: ToR <-> aggregation.
    TorAgg,
    /// Fat tree: aggregation <-> core.
    AggCore,
    /// Multi-plane: T0 <-> T1.
    T0T1,
}

impl LinkTier {
    pub fn name(self) -> &'static str {
        match self {
            LinkTier::Host => "host",
            LinkTier::TorAgg => "tor-agg",
            LinkTier::AggCore => "agg-core",
            LinkTier::T0T1 => "t0-t1",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        [
            LinkTier::Host,
            LinkTier::TorAgg,
            LinkTier::AggCore,
            LinkTier::T0T1,
        ]
        .into_iter()
        .find(|t| t.name() == s)
    }
}

#[derive(Debug, Clone)]
pub struct Node {
    pub kind: NodeKind,
    pub plane: u8,
    /// Fat tree: the pod of a host, ToR or aggregation switch (0 for core and multi-plane).
    pub pod: u32,
    /// Index within its tier (and plane).
    pub index: u32,
    /// Uplinks, in uplink-index order (what ECMP / the source route chooses among). A host's
    /// uplinks are its NIC ports, one per plane, indexed by plane.
    pub up: Vec<LinkId>,
    /// Downlinks, in the order the routing arithmetic indexes them.
    pub down: Vec<LinkId>,
}

#[derive(Debug, Clone)]
pub struct Link {
    pub from: NodeId,
    pub to: NodeId,
    pub gbps: f64,
    /// Propagation delay.
    pub delay: Ps,
    pub reverse: LinkId,
    pub tier: LinkTier,
    pub plane: u8,
    /// Points towards the core (host -> ToR, ToR -> agg, ...).
    pub upward: bool,
    /// The egress faces a host (the last hop of a path).
    pub to_host: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// k-ary 3-tier fat tree, k even: k^3/4 hosts.
    FatTree { k: u32 },
    /// MRC 2-tier multi-plane: every host has `ports_per_plane` NIC ports on each plane, all
    /// to the same T0 of that plane; per plane, T0 switches with `t0_down` host-facing ports
    /// and `t0_up` uplinks, and `t0_up` T1 switches each linked once to every T0 of the plane.
    MultiPlane {
        planes: u8,
        hosts: u32,
        t0_down: u32,
        t0_up: u32,
        ports_per_plane: u32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routing {
    /// Hash of (EV, src, dst, switch) picks the uplink.
    Ecmp,
    /// The EV's low bits pick the uplink at each tier (tier 0 first).
    SourceRoute,
}

#[derive(Debug, Clone)]
pub struct Topology {
    pub shape: Shape,
    pub hosts: u32,
    pub planes: u8,
    /// NIC ports per host: planes x ports per plane. Port k is on plane k / ports_per_plane;
    /// `Packet::plane` and `Endpoint::poll_transmit`'s `plane` name a port.
    pub ports: u8,
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
}

/// A topology the parameters cannot build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError(pub String);

impl std::fmt::Display for ShapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ShapeError {}

/// Switch and link counts of a shape, computed without building it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeCounts {
    pub hosts: u64,
    pub switches: u64,
    /// Bidirectional links between switches (the optics of the fabric).
    pub fabric_links: u64,
    /// Bidirectional host <-> first-switch links.
    pub host_links: u64,
}

impl Shape {
    pub fn validate(&self) -> Result<(), ShapeError> {
        match *self {
            Shape::FatTree { k } => {
                if k < 2 || k % 2 != 0 || k > 128 {
                    return Err(ShapeError(format!(
                        "fat tree k = {k}: k must be even, 2..=128"
                    )));
                }
            }
            Shape::MultiPlane {
                planes,
                hosts,
                t0_down,
                t0_up,
                ports_per_plane,
            } => {
                if !(1..=8).contains(&planes) {
                    return Err(ShapeError(format!("planes = {planes}: must be 1..=8")));
                }
                if t0_down == 0 || t0_up == 0 {
                    return Err(ShapeError("t0_down and t0_up must be > 0".into()));
                }
                if ports_per_plane == 0 || t0_down % ports_per_plane != 0 {
                    return Err(ShapeError(format!(
                        "ports_per_plane = {ports_per_plane}: must be > 0 and divide t0_down = {t0_down}"
                    )));
                }
                if planes as u32 * ports_per_plane > 16 {
                    return Err(ShapeError(format!(
                        "planes x ports_per_plane = {}: a NIC has at most 16 ports",
                        planes as u32 * ports_per_plane
                    )));
                }
                let per_t0 = t0_down / ports_per_plane;
                if hosts == 0 || hosts % per_t0 != 0 {
                    return Err(ShapeError(format!(
                        "hosts = {hosts}: must be a positive multiple of the hosts per T0 (t0_down / ports_per_plane = {per_t0})"
                    )));
                }
                if hosts > 1 << 20 {
                    return Err(ShapeError(format!("hosts = {hosts}: at most 2^20")));
                }
            }
        }
        Ok(())
    }

    pub fn counts(&self) -> ShapeCounts {
        match *self {
            Shape::FatTree { k } => {
                let k = k as u64;
                ShapeCounts {
                    hosts: k * k * k / 4,
                    switches: k * k + k * k / 4,
                    fabric_links: k * k * k / 2,
                    host_links: k * k * k / 4,
                }
            }
            Shape::MultiPlane {
                planes,
                hosts,
                t0_down,
                t0_up,
                ports_per_plane,
            } => {
                let (p, h, n) = (planes as u64, hosts as u64, ports_per_plane as u64);
                let t0s = h * n / t0_down as u64;
                ShapeCounts {
                    hosts: h,
                    switches: p * (t0s + t0_up as u64),
                    fabric_links: p * t0s * t0_up as u64,
                    host_links: p * h * n,
                }
            }
        }
    }

    /// Distinct switch paths between two hosts under different top switches (per plane).
    pub fn paths_per_plane(&self) -> u32 {
        match *self {
            Shape::FatTree { k } => (k / 2) * (k / 2),
            Shape::MultiPlane { t0_up, .. } => t0_up,
        }
    }
}

/// SplitMix64 finaliser: the switch hash (good avalanche, deterministic everywhere).
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The ECMP hash a switch computes for a packet: EV (UDP source port + flow label), both
/// addresses and a per-switch salt, so switches of one tier do not polarise.
pub fn ecmp_hash(ev: u32, src: HostId, dst: HostId, node: NodeId) -> u64 {
    mix64(((ev as u64) << 32 | src as u64) ^ mix64((dst as u64) << 32 | node as u64))
}

struct Builder {
    nodes: Vec<Node>,
    links: Vec<Link>,
    gbps: f64,
    delay: Ps,
}

impl Builder {
    fn node(&mut self, kind: NodeKind, plane: u8, pod: u32, index: u32) -> NodeId {
        self.nodes.push(Node {
            kind,
            plane,
            pod,
            index,
            up: Vec::new(),
            down: Vec::new(),
        });
        (self.nodes.len() - 1) as NodeId
    }

    /// A bidirectional link `lower` <-> `upper`, appended to `lower.up` and `upper.down`.
    fn connect(&mut self, lower: NodeId, upper: NodeId, tier: LinkTier, plane: u8) {
        let up = self.links.len() as LinkId;
        let to_host = self.nodes[lower as usize].kind == NodeKind::Host;
        let mk = |from, to, reverse, upward, to_host| Link {
            from,
            to,
            gbps: self.gbps,
            delay: self.delay,
            reverse,
            tier,
            plane,
            upward,
            to_host,
        };
        let a = mk(lower, upper, up + 1, true, false);
        let b = mk(upper, lower, up, false, to_host);
        self.links.push(a);
        self.links.push(b);
        self.nodes[lower as usize].up.push(up);
        self.nodes[upper as usize].down.push(up + 1);
    }
}

impl Topology {
    /// Build `shape` with every link at `gbps` and `delay` of propagation.
    pub fn build(shape: Shape, gbps: f64, delay: Ps) -> Result<Self, ShapeError> {
        shape.validate()?;
        if !(gbps > 0.0 && gbps <= 10_000.0) {
            return Err(ShapeError(format!(
                "link rate {gbps} Gb/s: must be in (0, 10000]"
            )));
        }
        let counts = shape.counts();
        let mut b = Builder {
            nodes: Vec::with_capacity((counts.hosts + counts.switches) as usize),
            links: Vec::with_capacity(2 * (counts.fabric_links + counts.host_links) as usize),
            gbps,
            delay,
        };
        let (hosts, planes, ports) = (
            counts.hosts as u32,
            match shape {
                Shape::FatTree { .. } => 1,
                Shape::MultiPlane { planes, .. } => planes,
            },
            match shape {
                Shape::FatTree { .. } => 1,
                Shape::MultiPlane {
                    planes,
                    ports_per_plane,
                    ..
                } => planes * ports_per_plane as u8,
            },
        );
        match shape {
            Shape::FatTree { k } => {
                let h = k / 2;
                for i in 0..hosts {
                    b.node(NodeKind::Host, 0, i / (h * h), i);
                }
                let tor0 = b.nodes.len() as NodeId;
                for t in 0..k * h {
                    b.node(NodeKind::Switch { tier: 0 }, 0, t / h, t);
                }
                let agg0 = b.nodes.len() as NodeId;
                for a in 0..k * h {
                    b.node(NodeKind::Switch { tier: 1 }, 0, a / h, a);
                }
                let core0 = b.nodes.len() as NodeId;
                for c in 0..h * h {
                    b.node(NodeKind::Switch { tier: 2 }, 0, 0, c);
                }
                for i in 0..hosts {
                    b.connect(i, tor0 + i / h, LinkTier::Host, 0);
                }
                for p in 0..k {
                    for t in 0..h {
                        for a in 0..h {
                            b.connect(tor0 + p * h + t, agg0 + p * h + a, LinkTier::TorAgg, 0);
                        }
                    }
                }
                // Aggregation switch j of every pod reaches cores j*h .. j*h + h - 1, so a
                // core's downlinks are indexed by pod.
                for p in 0..k {
                    for j in 0..h {
                        for m in 0..h {
                            b.connect(agg0 + p * h + j, core0 + j * h + m, LinkTier::AggCore, 0);
                        }
                    }
                }
            }
            Shape::MultiPlane {
                planes,
                hosts,
                t0_down,
                t0_up,
                ports_per_plane: n,
            } => {
                let per_t0 = t0_down / n;
                let t0s = hosts / per_t0;
                for i in 0..hosts {
                    b.node(NodeKind::Host, 0, 0, i);
                }
                let mut t0_base = Vec::new();
                let mut t1_base = Vec::new();
                for p in 0..planes {
                    t0_base.push(b.nodes.len() as NodeId);
                    for t in 0..t0s {
                        b.node(NodeKind::Switch { tier: 0 }, p, 0, t);
                    }
                    t1_base.push(b.nodes.len() as NodeId);
                    for s in 0..t0_up {
                        b.node(NodeKind::Switch { tier: 1 }, p, 0, s);
                    }
                }
                // NIC port k of a host is on plane k / n; a T0's downlinks are host-major, so
                // port j of its local host i is down[i * n + j].
                for i in 0..hosts {
                    for p in 0..planes {
                        for _ in 0..n {
                            b.connect(i, t0_base[p as usize] + i / per_t0, LinkTier::Host, p);
                        }
                    }
                }
                for p in 0..planes as usize {
                    for t in 0..t0s {
                        for s in 0..t0_up {
                            b.connect(t0_base[p] + t, t1_base[p] + s, LinkTier::T0T1, p as u8);
                        }
                    }
                }
            }
        }
        Ok(Topology {
            shape,
            hosts,
            planes,
            ports,
            nodes: b.nodes,
            links: b.links,
        })
    }

    /// NIC port `port` of `host` (the port index is the plane on one-port-per-plane shapes).
    pub fn host_uplink(&self, host: HostId, port: u8) -> LinkId {
        self.nodes[host as usize].up[port as usize]
    }

    /// Links of one tier (both directions), optionally of one plane.
    pub fn links_in_tier(&self, tier: LinkTier, plane: Option<u8>) -> Vec<LinkId> {
        (0..self.links.len() as LinkId)
            .filter(|&l| {
                let k = &self.links[l as usize];
                k.tier == tier && plane.is_none_or(|p| k.plane == p)
            })
            .collect()
    }

    /// Switches of one tier, optionally of one plane.
    pub fn switches_in_tier(&self, tier: u8, plane: Option<u8>) -> Vec<NodeId> {
        (0..self.nodes.len() as NodeId)
            .filter(|&n| {
                let x = &self.nodes[n as usize];
                x.kind == NodeKind::Switch { tier } && plane.is_none_or(|p| x.plane == p)
            })
            .collect()
    }

    /// Every link touching `node`, both directions.
    pub fn links_of(&self, node: NodeId) -> Vec<LinkId> {
        let n = &self.nodes[node as usize];
        let mut v = Vec::with_capacity(2 * (n.up.len() + n.down.len()));
        for &l in n.up.iter().chain(n.down.iter()) {
            v.push(l);
            v.push(self.links[l as usize].reverse);
        }
        v
    }

    /// Links on the path from `src` to `dst` (the same on every plane).
    pub fn path_links(&self, src: HostId, dst: HostId) -> u32 {
        match self.shape {
            Shape::FatTree { k } => {
                let h = k / 2;
                if src / h == dst / h {
                    2
                } else if src / (h * h) == dst / (h * h) {
                    4
                } else {
                    6
                }
            }
            Shape::MultiPlane {
                t0_down,
                ports_per_plane,
                ..
            } => {
                let per_t0 = t0_down / ports_per_plane;
                if src / per_t0 == dst / per_t0 {
                    2
                } else {
                    4
                }
            }
        }
    }

    /// Unloaded RTT: a `data_bytes` packet from `src` to `dst` (store and forward at every
    /// hop) and a header-sized control packet back.
    pub fn base_rtt(&self, src: HostId, dst: HostId, data_bytes: u32) -> Ps {
        let l0 = &self.links[0];
        let n = self.path_links(src, dst) as Ps;
        n * (2 * l0.delay
            + tx_time(data_bytes, l0.gbps)
            + tx_time(super::packet::HEADER_BYTES, l0.gbps))
    }

    /// The link switch `node` forwards `pkt` on. `usable(l)` is false for uplinks the switch
    /// has taken out of its ECMP group (a failed link after detection); when every uplink is
    /// excluded, or under source routing, the static choice stands (the packet may be lost).
    pub fn route(
        &self,
        node: NodeId,
        pkt: &Packet,
        routing: Routing,
        usable: &dyn Fn(LinkId) -> bool,
    ) -> LinkId {
        let n = &self.nodes[node as usize];
        let tier = match n.kind {
            NodeKind::Switch { tier } => tier,
            NodeKind::Host => return n.up[pkt.plane as usize],
        };
        let dst = pkt.dst;
        let down = match self.shape {
            Shape::FatTree { k } => {
                let h = k / 2;
                let (dtor, dpod) = (dst / h, dst / (h * h));
                match tier {
                    0 if dtor == n.index => Some(n.down[(dst % h) as usize]),
                    1 if dpod == n.pod => Some(n.down[(dtor % h) as usize]),
                    2 => Some(n.down[dpod as usize]),
                    _ => None,
                }
            }
            Shape::MultiPlane {
                t0_down,
                ports_per_plane: ports,
                ..
            } => {
                // Into the destination on the port with the sender's port index (same plane).
                let per_t0 = t0_down / ports;
                match tier {
                    0 if dst / per_t0 == n.index => Some(
                        n.down[((dst % per_t0) * ports + u32::from(pkt.plane) % ports) as usize],
                    ),
                    1 => Some(n.down[(dst / per_t0) as usize]),
                    _ => None,
                }
            }
        };
        if let Some(l) = down {
            return l;
        }
        let ups = n.up.len() as u64;
        let pick = match routing {
            Routing::SourceRoute => {
                let digit = match self.shape {
                    Shape::FatTree { k } => (k / 2) as u64,
                    Shape::MultiPlane { t0_up, .. } => t0_up as u64,
                };
                let shift = digit.pow(tier as u32);
                return n.up[((pkt.ev as u64 / shift) % ups) as usize];
            }
            Routing::Ecmp => ecmp_hash(pkt.ev, pkt.src, dst, node),
        };
        let first = n.up[(pick % ups) as usize];
        if usable(first) {
            return first;
        }
        // Re-hash over the usable members, as a switch does after shrinking its ECMP group.
        let live: u64 = n.up.iter().filter(|&&l| usable(l)).count() as u64;
        if live == 0 {
            return first;
        }
        let mut want = (pick >> 32) % live;
        for &l in &n.up {
            if usable(l) {
                if want == 0 {
                    return l;
                }
                want -= 1;
            }
        }
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netsim::packet::{Body, Class, RoceAck, Trim};
    use crate::netsim::NS;

    fn pkt(src: u32, dst: u32, ev: u32, plane: u8) -> Packet {
        Packet {
            src,
            dst,
            qp: 0,
            plane,
            ev,
            class: Class::Data,
            wire_bytes: 100,
            ecn: false,
            trim: Trim::None,
            hops: 0,
            sent_at: 0,
            body: Body::RoceAck(RoceAck::Ack { psn: 0 }),
        }
    }

    /// Follow `route` from the source host to wherever it ends; returns the links taken.
    fn walk(t: &Topology, p: &Packet, r: Routing) -> Vec<LinkId> {
        let mut path = Vec::new();
        let mut l = t.host_uplink(p.src, p.plane);
        let at = loop {
            path.push(l);
            let at = t.links[l as usize].to;
            if t.nodes[at as usize].kind == NodeKind::Host {
                break at;
            }
            assert!(path.len() < 10, "routing loop");
            l = t.route(at, p, r, &|_| true);
        };
        assert_eq!(at, p.dst);
        path
    }

    #[test]
    fn fat_tree_counts_and_every_pair_routes_in_the_expected_hops() {
        let t = Topology::build(Shape::FatTree { k: 4 }, 100.0, 500 * NS).unwrap();
        assert_eq!(t.hosts, 16);
        assert_eq!(t.nodes.len(), 16 + 20);
        assert_eq!(t.links.len() as u64, 2 * (16 + 32));
        for r in [Routing::Ecmp, Routing::SourceRoute] {
            for s in 0..16 {
                for d in 0..16 {
                    if s == d {
                        continue;
                    }
                    for ev in [0, 1, 2, 3, 0xdead_beef] {
                        let path = walk(&t, &pkt(s, d, ev, 0), r);
                        assert_eq!(path.len() as u32, t.path_links(s, d));
                    }
                }
            }
        }
    }

    #[test]
    fn source_route_reaches_every_core_and_ecmp_spreads() {
        let t = Topology::build(Shape::FatTree { k: 8 }, 100.0, 500 * NS).unwrap();
        let cores = |r: Routing, evs: &mut dyn Iterator<Item = u32>| {
            let mut seen = std::collections::BTreeSet::new();
            for ev in evs {
                let path = walk(&t, &pkt(0, 127, ev, 0), r);
                seen.insert(t.links[path[2] as usize].to);
            }
            seen.len()
        };
        assert_eq!(cores(Routing::SourceRoute, &mut (0..16)), 16);
        assert!(cores(Routing::Ecmp, &mut (0..256)) >= 15);
    }

    #[test]
    fn multi_plane_routes_on_its_plane_and_matches_the_notes_shape() {
        let s = Shape::MultiPlane {
            planes: 4,
            hosts: 64,
            t0_down: 8,
            t0_up: 8,
            ports_per_plane: 1,
        };
        let t = Topology::build(s, 100.0, 500 * NS).unwrap();
        for p in 0..4 {
            for ev in 0..8 {
                let path = walk(&t, &pkt(3, 60, ev, p), Routing::SourceRoute);
                assert_eq!(path.len(), 4);
                assert!(path.iter().all(|&l| t.links[l as usize].plane == p));
            }
            assert_eq!(walk(&t, &pkt(3, 5, 9, p), Routing::Ecmp).len(), 2);
        }
        // The notes: 131,072 GPUs, 8 planes, 512-port switches in two tiers use about 60 % of
        // the switches and 67 % of the optics of a three-tier network.
        let two = Shape::MultiPlane {
            planes: 8,
            hosts: 131_072,
            t0_down: 256,
            t0_up: 256,
            ports_per_plane: 1,
        }
        .counts();
        // Three tiers of 512-port switches per plane: 512 ToR, 512 agg, 256 core.
        let three_switches = 8 * (512 + 512 + 256);
        let three_links = 8 * 3 * 131_072;
        let sw = two.switches as f64 / three_switches as f64;
        let op = (two.fabric_links + two.host_links) as f64 / three_links as f64;
        assert!((sw - 0.60).abs() < 0.005, "{sw}");
        assert!((op - 0.667).abs() < 0.005, "{op}");
    }

    #[test]
    fn two_ports_per_plane_reach_the_same_t0_and_arrive_on_the_same_port_index() {
        let s = Shape::MultiPlane {
            planes: 2,
            hosts: 16,
            t0_down: 8,
            t0_up: 4,
            ports_per_plane: 2,
        };
        let t = Topology::build(s, 100.0, 500 * NS).unwrap();
        assert_eq!((t.planes, t.ports), (2, 4));
        assert_eq!(t.nodes[3].up.len(), 4);
        // 4 hosts per T0, 4 T0s per plane.
        assert_eq!(s.counts().switches, 2 * (4 + 4));
        for port in 0..4u8 {
            let up = t.host_uplink(3, port);
            assert_eq!(t.links[up as usize].plane, port / 2);
            for (dst, hops) in [(1, 2), (14, 4)] {
                let path = walk(&t, &pkt(3, dst, 5, port), Routing::Ecmp);
                assert_eq!(path.len(), hops);
                let last = *path.last().unwrap();
                assert_eq!(t.links[last as usize].reverse, t.host_uplink(dst, port));
            }
        }
        let odd = Shape::MultiPlane {
            planes: 2,
            hosts: 16,
            t0_down: 8,
            t0_up: 4,
            ports_per_plane: 3,
        };
        assert!(odd.validate().unwrap_err().0.contains("divide t0_down"));
    }

    #[test]
    fn the_131072_endpoint_shape_builds() {
        let s = Shape::MultiPlane {
            planes: 8,
            hosts: 131_072,
            t0_down: 256,
            t0_up: 256,
            ports_per_plane: 1,
        };
        let t = Topology::build(s, 100.0, 500 * NS).unwrap();
        assert_eq!(t.hosts, 131_072);
        assert_eq!(t.nodes.len(), 131_072 + 8 * (512 + 256));
        assert_eq!(t.links.len(), 2 * 8 * (131_072 + 512 * 256));
        let p = pkt(0, 131_071, 77, 5);
        assert_eq!(walk(&t, &p, Routing::Ecmp).len(), 4);
    }

    #[test]
    fn ecmp_rehashes_around_excluded_uplinks_and_keeps_static_choice_otherwise() {
        let t = Topology::build(Shape::FatTree { k: 4 }, 100.0, 500 * NS).unwrap();
        let tor = t.links[t.host_uplink(0, 0) as usize].to;
        let p = pkt(0, 15, 1234, 0);
        let first = t.route(tor, &p, Routing::Ecmp, &|_| true);
        let other = t.route(tor, &p, Routing::Ecmp, &|l| l != first);
        assert_ne!(first, other);
        assert_eq!(t.route(tor, &p, Routing::Ecmp, &|_| false), first);
        assert_eq!(
            t.route(tor, &p, Routing::SourceRoute, &|_| false),
            t.nodes[tor as usize].up[(1234 % 2) as usize]
        );
    }

    #[test]
    fn bad_shapes_are_refused_with_the_reason() {
        assert!(Shape::FatTree { k: 5 }
            .validate()
            .unwrap_err()
            .0
            .contains("even"));
        let e = Shape::MultiPlane {
            planes: 2,
            hosts: 10,
            t0_down: 4,
            t0_up: 2,
            ports_per_plane: 1,
        }
        .validate()
        .unwrap_err();
        assert!(e.0.contains("multiple of the hosts per T0"), "{e}");
    }
}
