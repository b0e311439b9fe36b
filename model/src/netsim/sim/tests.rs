//! Engine tests with two tiny test-only transports (the real ones live in
//! `crate::transport`):
//! - [`Reliable`]: 4 KB packets sprayed on EV = PSN (re-salted per retry), a fixed window,
//!   a per-packet ACK (a NACK for a trimmed packet), retransmission on NACK or timeout, and
//!   giving up after `max_tries` sends of one packet.
//! - [`Blast`]: sends every packet once at line rate on EV = PSN; the receiver only counts.

use std::collections::VecDeque;

use super::*;
use crate::netsim::config::{Fault, QueueConfig};
use crate::netsim::endpoint::FlowSpec;
use crate::netsim::packet::{Body, Class, Packet, RoceAck, RoceData, Trim, HEADER_BYTES};
use crate::netsim::topology::{LinkTier, NodeKind, Routing, Shape, Topology};
use crate::netsim::{MS, NS};

const MTU: u64 = MTU_PAYLOAD as u64;

fn n_pkts(bytes: u64) -> u32 {
    bytes.div_ceil(MTU) as u32
}

fn pkt_len(bytes: u64, psn: u32) -> u32 {
    (bytes - psn as u64 * MTU).min(MTU) as u32
}

fn data_pkt(flow: &FlowSpec, now: Ps, plane: u8, psn: u32, ev: u32, rtx: bool) -> Packet {
    let len = pkt_len(flow.bytes, psn);
    Packet {
        src: flow.src,
        dst: flow.dst,
        qp: flow.id,
        plane,
        ev,
        class: Class::Data,
        wire_bytes: len + DATA_HEADER_BYTES,
        ecn: false,
        trim: Trim::None,
        hops: 0,
        sent_at: now,
        body: Body::RoceData(RoceData {
            psn,
            len,
            va: psn as u64 * MTU,
            last: psn + 1 == n_pkts(flow.bytes),
            rtx,
            ackreq: false,
        }),
    }
}

pub struct Reliable {
    pub window: u32,
    pub rto: Ps,
    pub max_tries: u16,
}

impl Default for Reliable {
    fn default() -> Self {
        Reliable {
            window: 32,
            rto: 60 * US,
            max_tries: 12,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum St {
    /// Not sent yet, or waiting in the retransmit queue.
    Pending,
    Outstanding,
    Acked,
}

struct RelTx {
    flow: FlowSpec,
    n: u32,
    window: u32,
    rto: Ps,
    max_tries: u16,
    state: Vec<St>,
    sent_at: Vec<Ps>,
    tries: Vec<u16>,
    next_new: u32,
    rtx: VecDeque<u32>,
    inflight: u32,
    acked: u32,
    /// Sends in order; an entry is stale once its packet is acked or resent.
    order: VecDeque<(u32, Ps)>,
    st: EndpointStats,
}

impl RelTx {
    fn clean(&mut self) {
        while let Some(&(p, t)) = self.order.front() {
            if self.state[p as usize] == St::Outstanding && self.sent_at[p as usize] == t {
                break;
            }
            self.order.pop_front();
        }
    }

    fn over(&self) -> bool {
        self.st.failed || self.st.completed_at.is_some()
    }
}

impl Endpoint for RelTx {
    fn handle_packet(&mut self, now: Ps, pkt: Packet) {
        if self.over() {
            return;
        }
        match pkt.body {
            Body::RoceAck(RoceAck::Ack { psn }) => {
                let s = &mut self.state[psn as usize];
                if *s != St::Acked {
                    if *s == St::Outstanding {
                        self.inflight -= 1;
                    }
                    *s = St::Acked;
                    self.acked += 1;
                    self.st.bytes_acked += pkt_len(self.flow.bytes, psn) as u64;
                    if self.acked == self.n {
                        self.st.completed_at = Some(now);
                    }
                }
            }
            Body::RoceAck(RoceAck::Nak { epsn }) => {
                self.st.nacks_trimmed += 1;
                if self.state[epsn as usize] == St::Outstanding {
                    self.state[epsn as usize] = St::Pending;
                    self.inflight -= 1;
                    self.rtx.push_back(epsn);
                }
            }
            _ => {}
        }
        self.clean();
    }

    fn poll_transmit(&mut self, now: Ps, plane: u8) -> Option<Packet> {
        if self.over() || self.inflight >= self.window {
            return None;
        }
        let psn = loop {
            if let Some(p) = self.rtx.pop_front() {
                if self.state[p as usize] == St::Pending {
                    break p;
                }
            } else if self.next_new < self.n {
                self.next_new += 1;
                break self.next_new - 1;
            } else {
                return None;
            }
        };
        let i = psn as usize;
        self.tries[i] += 1;
        let rtx = self.tries[i] > 1;
        self.st.data_sent += 1;
        self.st.retransmits += rtx as u64;
        self.state[i] = St::Outstanding;
        self.inflight += 1;
        self.sent_at[i] = now;
        self.order.push_back((psn, now));
        let ev = psn.wrapping_add((self.tries[i] as u32 - 1).wrapping_mul(0x9E37));
        Some(data_pkt(&self.flow, now, plane, psn, ev, rtx))
    }

    fn wants_transmit(&self, _now: Ps) -> bool {
        !self.over()
            && self.inflight < self.window
            && (!self.rtx.is_empty() || self.next_new < self.n)
    }

    fn poll_timeout(&self) -> Option<Ps> {
        if self.over() {
            return None;
        }
        self.order.front().map(|&(_, t)| t + self.rto)
    }

    fn handle_timeout(&mut self, now: Ps) {
        let mut fired = false;
        while let Some(&(p, t)) = self.order.front() {
            if t + self.rto > now {
                break;
            }
            self.order.pop_front();
            let i = p as usize;
            if self.state[i] == St::Outstanding && self.sent_at[i] == t {
                fired = true;
                self.state[i] = St::Pending;
                self.inflight -= 1;
                self.rtx.push_back(p);
                if self.tries[i] >= self.max_tries {
                    self.st.failed = true;
                    self.st.bytes_lost = self.flow.bytes - self.st.bytes_acked;
                }
            }
        }
        self.st.timeouts += fired as u64;
        self.clean();
    }

    fn stats(&self) -> EndpointStats {
        EndpointStats {
            cwnd: self.window as u64 * MTU,
            ..self.st
        }
    }
}

struct RelRx {
    flow: FlowSpec,
    got: Vec<bool>,
    out: VecDeque<RoceAck>,
    st: EndpointStats,
}

impl Endpoint for RelRx {
    fn handle_packet(&mut self, _now: Ps, pkt: Packet) {
        let Body::RoceData(d) = pkt.body else {
            return;
        };
        if pkt.trim != Trim::None {
            self.st.trims_received += 1;
            self.st.nacks_sent += 1;
            self.out.push_back(RoceAck::Nak { epsn: d.psn });
            return;
        }
        self.st.ecn_received += pkt.ecn as u64;
        let seen = &mut self.got[d.psn as usize];
        if *seen {
            self.st.dup_bytes += d.len as u64;
        } else {
            *seen = true;
            self.st.bytes_delivered += d.len as u64;
        }
        self.st.acks_sent += 1;
        self.out.push_back(RoceAck::Ack { psn: d.psn });
    }

    fn poll_transmit(&mut self, now: Ps, plane: u8) -> Option<Packet> {
        let a = self.out.pop_front()?;
        let ev = match a {
            RoceAck::Ack { psn } | RoceAck::Nak { epsn: psn } => psn,
        };
        Some(Packet {
            src: self.flow.dst,
            dst: self.flow.src,
            qp: self.flow.id,
            plane,
            ev,
            class: Class::Control,
            wire_bytes: HEADER_BYTES,
            ecn: false,
            trim: Trim::None,
            hops: 0,
            sent_at: now,
            body: Body::RoceAck(a),
        })
    }

    fn wants_transmit(&self, _now: Ps) -> bool {
        !self.out.is_empty()
    }

    fn poll_timeout(&self) -> Option<Ps> {
        None
    }

    fn handle_timeout(&mut self, _now: Ps) {}

    fn stats(&self) -> EndpointStats {
        self.st
    }
}

impl Transport for Reliable {
    fn name(&self) -> String {
        "test-reliable".into()
    }

    fn connect(&self, flow: &FlowSpec, _path: &PathInfo) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let n = n_pkts(flow.bytes);
        let st = EndpointStats {
            completed_at: (n == 0).then_some(flow.start),
            ..EndpointStats::default()
        };
        let tx = RelTx {
            flow: flow.clone(),
            n,
            window: self.window,
            rto: self.rto,
            max_tries: self.max_tries,
            state: vec![St::Pending; n as usize],
            sent_at: vec![0; n as usize],
            tries: vec![0; n as usize],
            next_new: 0,
            rtx: VecDeque::new(),
            inflight: 0,
            acked: 0,
            order: VecDeque::new(),
            st,
        };
        let rx = RelRx {
            flow: flow.clone(),
            got: vec![false; n as usize],
            out: VecDeque::new(),
            st: EndpointStats::default(),
        };
        (Box::new(tx), Box::new(rx))
    }
}

/// Sends each packet once on EV = PSN, as fast as the port allows or one every `gap`
/// (paced: readiness changes with time alone, announced through `poll_timeout`);
/// "completes" `linger` after the last send so the network can drain.
pub struct Blast {
    pub linger: Ps,
    pub gap: Ps,
}

struct BlastTx {
    flow: FlowSpec,
    n: u32,
    next: u32,
    linger: Ps,
    gap: Ps,
    next_at: Ps,
    /// The pacing gate is closed until `next_at` (a deadline only while it is).
    gated: bool,
    deadline: Option<Ps>,
    st: EndpointStats,
}

impl Endpoint for BlastTx {
    fn handle_packet(&mut self, _now: Ps, _pkt: Packet) {}

    fn poll_transmit(&mut self, now: Ps, plane: u8) -> Option<Packet> {
        if self.next == self.n || now < self.next_at {
            return None;
        }
        let psn = self.next;
        self.next += 1;
        self.next_at = now + self.gap;
        self.gated = self.gap > 0;
        self.st.data_sent += 1;
        if self.next == self.n {
            self.deadline = Some(now + self.linger);
        }
        Some(data_pkt(&self.flow, now, plane, psn, psn, false))
    }

    fn wants_transmit(&self, now: Ps) -> bool {
        self.next < self.n && now >= self.next_at
    }

    fn poll_timeout(&self) -> Option<Ps> {
        if self.gated && self.next < self.n {
            return Some(self.next_at);
        }
        self.deadline
    }

    fn handle_timeout(&mut self, now: Ps) {
        if self.next_at <= now {
            self.gated = false;
        }
        if self.deadline.is_some_and(|d| d <= now) {
            self.deadline = None;
            self.st.completed_at = Some(now);
        }
    }

    fn stats(&self) -> EndpointStats {
        self.st
    }
}

impl Transport for Blast {
    fn name(&self) -> String {
        "test-blast".into()
    }

    fn connect(&self, flow: &FlowSpec, _path: &PathInfo) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let tx = BlastTx {
            flow: flow.clone(),
            n: n_pkts(flow.bytes),
            next: 0,
            linger: self.linger,
            gap: self.gap,
            next_at: flow.start,
            gated: false,
            deadline: None,
            st: EndpointStats::default(),
        };
        let rx = RelRx {
            flow: flow.clone(),
            got: vec![false; n_pkts(flow.bytes) as usize],
            out: VecDeque::new(),
            st: EndpointStats::default(),
        };
        // The receiver's ACKs are never sent: wrap it so it only counts.
        struct Sink(RelRx);
        impl Endpoint for Sink {
            fn handle_packet(&mut self, now: Ps, pkt: Packet) {
                self.0.handle_packet(now, pkt);
                self.0.out.clear();
            }
            fn poll_transmit(&mut self, _: Ps, _: u8) -> Option<Packet> {
                None
            }
            fn wants_transmit(&self, _: Ps) -> bool {
                false
            }
            fn poll_timeout(&self) -> Option<Ps> {
                None
            }
            fn handle_timeout(&mut self, _: Ps) {}
            fn stats(&self) -> EndpointStats {
                self.0.st
            }
        }
        (Box::new(tx), Box::new(Sink(rx)))
    }
}

// ---- scenarios ---------------------------------------------------------------------------

const GBPS: f64 = 100.0;
const DELAY: Ps = 500 * NS;

fn queues(topo: &Topology, trimming: bool) -> QueueConfig {
    let rtt = topo.base_rtt(0, topo.hosts - 1, MTU_PAYLOAD + DATA_HEADER_BYTES);
    let bdp = (GBPS * rtt as f64 / 8000.0) as u64;
    QueueConfig {
        buffer_bytes: if trimming { bdp } else { 5 * bdp },
        kmin_bytes: bdp / 5,
        kmax_bytes: bdp * 4 / 5,
        trimming,
        ecn_last_hop: false,
        control_buffer_bytes: bdp,
    }
}

fn config(shape: Shape, flows: Vec<FlowSpec>, seed: u64) -> SimConfig {
    let topology = Topology::build(shape, GBPS, DELAY).unwrap();
    SimConfig {
        queues: queues(&topology, true),
        topology,
        routing: Routing::Ecmp,
        faults: Vec::new(),
        flows,
        seed,
        stop_at: 10 * MS,
        sample_interval: 10 * US,
        traced_flows: vec![0],
        reroute_after: None,
    }
}

fn flow(id: u32, src: u32, dst: u32, bytes: u64, start: Ps) -> FlowSpec {
    FlowSpec {
        id,
        src,
        dst,
        bytes,
        start,
        seed: id as u64,
        after: None,
    }
}

/// Host i sends to perm[i], a random derangement.
fn permutation(hosts: u32, bytes: u64, seed: u64) -> Vec<FlowSpec> {
    let mut rng = SplitMix64::new(seed);
    loop {
        let mut p: Vec<u32> = (0..hosts).collect();
        for i in (1..hosts as usize).rev() {
            p.swap(i, rng.below(i as u64 + 1) as usize);
        }
        if p.iter().enumerate().all(|(i, &d)| i as u32 != d) {
            return p
                .iter()
                .enumerate()
                .map(|(i, &d)| flow(i as u32, i as u32, d, bytes, 0))
                .collect();
        }
    }
}

/// What the network guarantees, whatever the transport.
fn check_network(r: &RunResult) {
    assert!(
        r.ledger.balances(&r.drops),
        "ledger: {:?} drops {:?}",
        r.ledger,
        r.drops
    );
    assert_eq!(r.delivered_over_down_link, 0);
    assert!(r.packet_hops >= r.ledger.delivered);
}

/// The invariants every run of the reliable transport must keep, whatever the scenario.
fn check_invariants(r: &RunResult) {
    check_network(r);
    for f in &r.flows {
        assert!(f.bytes_delivered <= f.bytes, "flow {}: {f:?}", f.id);
        if f.fct_us.is_some() && !f.failed {
            assert_eq!(f.bytes_delivered, f.bytes, "flow {}: {f:?}", f.id);
            assert_eq!(f.bytes_lost, 0);
        }
        if f.failed {
            assert!(f.bytes_delivered + f.bytes_lost >= f.bytes, "{f:?}");
        }
    }
}

fn k4() -> Shape {
    Shape::FatTree { k: 4 }
}

#[test]
fn a_permutation_completes_and_every_packet_is_accounted_for() {
    let cfg = config(k4(), permutation(16, 256 * 1024, 1), 1);
    let mut calls = 0;
    let r = Sim::new(cfg, &Reliable::default()).run(&mut |now, stop, _| {
        assert!(now <= stop);
        calls += 1;
    });
    check_invariants(&r);
    assert!(calls >= 2);
    assert_eq!((r.finished, r.failed), (16, 0));
    for f in &r.flows {
        assert_eq!(f.bytes_delivered, f.bytes);
        assert!(f.fct_us.unwrap() >= f.ideal_fct_us, "{f:?}");
    }
    // Nothing left behind once every flow is acknowledged, except late ACKs / dups.
    assert_eq!(
        r.ledger.sent,
        r.ledger.delivered + r.drops.total() + r.ledger.in_flight
    );
    assert!(r.fct_slowdown.min >= 1.0);
    assert!(r.goodput_gbps > 0.0 && r.goodput_gbps <= 16.0 * GBPS);
    // Hops: every delivered data packet crossed 2, 4 or 6 links.
    assert!(r.packet_hops >= 2 * r.ledger.delivered);
    // Series: one bucket per 10 µs (the last partial), goodput integrates to the bytes.
    let s = &r.series;
    assert_eq!(s.goodput_gbps.len(), (r.end_us / 10.0).ceil() as usize);
    let bits: f64 = s.goodput_gbps[..s.goodput_gbps.len() - 1]
        .iter()
        .map(|g| g * 10.0 * 1e3)
        .sum::<f64>();
    assert!(bits <= 16.0 * 256.0 * 1024.0 * 8.0 + 1.0);
    assert!(s.plane_util[0].iter().any(|&u| u > 0.05));
    assert!(s.plane_util[0].iter().all(|&u| (0.0..=1.01).contains(&u)));
    assert_eq!(s.cwnd[0].0, 0);
    assert!(s.cwnd[0].1.iter().all(|&c| c == 32 * MTU));
}

#[test]
fn lossy_links_lose_packets_but_flows_recover_and_the_ledger_balances() {
    let mut cfg = config(k4(), permutation(16, 128 * 1024, 2), 2);
    cfg.queues = queues(&cfg.topology, false);
    for l in cfg.topology.links_in_tier(LinkTier::AggCore, None) {
        if l % 4 == 0 {
            cfg.faults.push(Fault {
                at: 0,
                link: l,
                kind: FaultKind::Loss(0.02),
            });
        }
    }
    let r = Sim::run_to_end(cfg, &Reliable::default());
    check_invariants(&r);
    assert_eq!(r.finished, 16);
    assert!(r.drops.random_loss > 0);
    assert!(r.retransmits > 0 && r.timeouts > 0);
    assert_eq!(r.timeline.len(), 8);
    assert!(r.timeline[0].1.contains("agg-core") && r.timeline[0].1.contains("random loss 2 %"));
}

#[test]
fn equal_configs_give_equal_results_and_a_new_seed_changes_a_lossy_run() {
    let mk = |seed| {
        let mut cfg = config(k4(), permutation(16, 128 * 1024, 3), seed);
        for l in cfg.topology.links_in_tier(LinkTier::TorAgg, None) {
            cfg.faults.push(Fault {
                at: 5 * US,
                link: l,
                kind: FaultKind::Loss(0.01),
            });
        }
        cfg
    };
    let a = Sim::run_to_end(mk(7), &Reliable::default());
    let b = Sim::run_to_end(mk(7), &Reliable::default());
    assert_eq!(a, b);
    assert_eq!(a.hash, b.hash);
    let c = Sim::run_to_end(mk(8), &Reliable::default());
    assert_ne!(a.hash, c.hash);
    check_invariants(&c);
}

#[test]
fn links_that_go_down_and_up_never_deliver_while_down() {
    let mut cfg = config(k4(), permutation(16, 512 * 1024, 4), 4);
    let topo = &cfg.topology;
    // A host NIC port, a ToR downlink to a host, and fabric links, flapping mid-run.
    let host_up = topo.host_uplink(3, 0);
    let tor_down = topo.links[topo.host_uplink(9, 0) as usize].reverse;
    let agg = topo.links_in_tier(LinkTier::TorAgg, None)[5];
    let core = topo.links_in_tier(LinkTier::AggCore, None)[10];
    for (i, l) in [host_up, tor_down, agg, core].into_iter().enumerate() {
        let at = (10 + 7 * i as u64) * US;
        cfg.faults.push(Fault {
            at,
            link: l,
            kind: FaultKind::Down,
        });
        cfg.faults.push(Fault {
            at: at + 40 * US,
            link: l,
            kind: FaultKind::Up,
        });
    }
    let r = Sim::run_to_end(cfg, &Reliable::default());
    check_invariants(&r);
    assert_eq!(r.finished, 16);
    assert!(r.drops.link_down > 0);
    assert_eq!(r.timeline.len(), 8);
    assert!(r.timeline[0].1.ends_with("down") && r.timeline[0].1.contains("(host, plane 0"));
}

/// Which links a packet with this EV takes from src to dst (static routing).
fn path_of(t: &Topology, src: u32, dst: u32, ev: u32, routing: Routing) -> Vec<LinkId> {
    let p = data_pkt(&flow(0, src, dst, MTU, 0), 0, 0, 0, ev, false);
    let mut l = t.host_uplink(src, 0);
    let mut path = vec![l];
    while t.nodes[t.links[l as usize].to as usize].kind != NodeKind::Host {
        l = t.route(t.links[l as usize].to, &p, routing, &|_| true);
        path.push(l);
    }
    path
}

#[test]
fn static_routing_loses_what_hashes_onto_a_dead_link_and_rerouting_stops_it() {
    let n: u32 = 400;
    let mk = |reroute_after| {
        let mut cfg = config(k4(), vec![flow(0, 0, 15, n as u64 * MTU, 0)], 5);
        cfg.reroute_after = reroute_after;
        // An uplink of the source's ToR: both directions go down, only the upward one
        // carries this flow.
        let dead = cfg.topology.links_in_tier(LinkTier::TorAgg, None)[0];
        cfg.faults.push(Fault {
            at: 0,
            link: dead,
            kind: FaultKind::Down,
        });
        (cfg, dead)
    };
    let (cfg, dead) = mk(None);
    let doomed = (0..n)
        .filter(|&ev| path_of(&cfg.topology, 0, 15, ev, Routing::Ecmp).contains(&dead))
        .count() as u64;
    assert!(
        doomed > n as u64 / 4 && doomed < 3 * n as u64 / 4,
        "{doomed}"
    );
    let blast = Blast {
        linger: 20 * US,
        gap: 0,
    };
    let r = Sim::run_to_end(cfg, &blast);
    check_network(&r);
    assert_eq!(r.drops.link_down, doomed);
    assert_eq!(r.flows[0].bytes_delivered, (n as u64 - doomed) * MTU);

    // Detected immediately: the ToR re-hashes over its live uplink, nothing is lost.
    let r = Sim::run_to_end(mk(Some(0)).0, &blast);
    assert_eq!(r.drops.link_down, 0);
    assert_eq!(r.flows[0].bytes_delivered, n as u64 * MTU);

    // Detected after 10 µs: only packets that reached the ToR before then are lost (the
    // NIC sends one 4160-byte packet every 332.8 ns, about 30 in 10 µs).
    let r = Sim::run_to_end(mk(Some(10 * US)).0, &blast);
    check_network(&r);
    assert!(
        r.drops.link_down > 0 && r.drops.link_down < 30,
        "{:?}",
        r.drops
    );
    assert_eq!(
        r.flows[0].bytes_delivered,
        (n as u64 - r.drops.link_down) * MTU
    );
}

/// `senders` into host 0, 512 KB each.
fn incast(shape: Shape, senders: &[u32], trimming: bool, ecn_last_hop: bool) -> RunResult {
    let flows = senders
        .iter()
        .enumerate()
        .map(|(i, &s)| flow(i as u32, s, 0, 512 * 1024, 0))
        .collect();
    let mut cfg = config(shape, flows, 9);
    cfg.queues = queues(&cfg.topology, trimming);
    cfg.queues.ecn_last_hop = ecn_last_hop;
    let r = Sim::run_to_end(cfg, &Reliable::default());
    check_invariants(&r);
    assert_eq!(r.finished, senders.len());
    r
}

#[test]
fn an_incast_marks_and_trims_with_trimming_and_drops_without() {
    // Senders in three other pods: the flows meet at pod 0's aggregation switches and at
    // host 0's ToR port.
    let pods = [4, 7, 10, 13];
    let r = incast(k4(), &pods, true, true);
    assert!(r.ledger.ecn_marked > 0);
    assert!(r.ledger.trimmed > 0 && r.trims > 0 && r.nacks > 0);
    assert_eq!(r.drops.queue_full, 0);
    // Every trimmed header reached its receiver and was NACKed.
    assert_eq!(r.trims, r.ledger.trimmed);
    assert_eq!(r.nacks, r.ledger.trimmed);
    // Fewer marks when the last hop does not mark.
    assert!(incast(k4(), &pods, true, false).ledger.ecn_marked < r.ledger.ecn_marked);

    // Without trimming the buffer is 5 BDP: it takes more senders to overflow it.
    let many: Vec<u32> = (4..16).collect();
    let r = incast(k4(), &many, false, true);
    assert_eq!((r.ledger.trimmed, r.trims), (0, 0));
    assert!(r.drops.queue_full > 0 && r.timeouts > 0);
    assert!(r.ledger.ecn_marked > 0);
}

#[test]
fn a_last_hop_incast_marks_only_with_ecn_last_hop_and_trims_last_hop() {
    // Three hosts under host 0's T0: the only congested port faces host 0.
    let shape = Shape::MultiPlane {
        planes: 1,
        hosts: 8,
        t0_down: 4,
        t0_up: 2,
        ports_per_plane: 1,
    };
    let r = incast(shape, &[1, 2, 3], true, false);
    assert_eq!(r.ledger.ecn_marked, 0);
    assert!(r.ledger.trimmed > 0);
    let r = incast(shape, &[1, 2, 3], true, true);
    assert!(r.ledger.ecn_marked > 0);
}

#[test]
fn a_paced_sender_is_woken_by_its_deadline_alone() {
    let cfg = config(k4(), vec![flow(0, 0, 15, 20 * MTU, 3 * US)], 10);
    let t = Blast {
        linger: 10 * US,
        gap: 2 * US,
    };
    let r = Sim::run_to_end(cfg, &t);
    check_network(&r);
    assert_eq!(r.flows[0].bytes_delivered, 20 * MTU);
    // Sent at 3, 5, ..., 41 µs; done 10 µs after the last send.
    assert_eq!(r.end_us, 51.0);
    // One packet in the network at a time, never queued: per packet one arrival per hop
    // (6) and one NIC port-free; plus the flow start, 19 pacing timers, the linger timer
    // and 5 samples.
    assert_eq!(r.events, 1 + 20 * 7 + 19 + 1 + 5);
}

#[test]
fn all_to_all_with_many_connections_per_host_completes() {
    let mut flows = Vec::new();
    for s in 0..16 {
        for d in 0..16 {
            if s != d {
                flows.push(flow(
                    flows.len() as u32,
                    s,
                    d,
                    24 * 1024,
                    (s + d) as u64 * NS,
                ));
            }
        }
    }
    let cfg = config(k4(), flows, 12);
    let r = Sim::run_to_end(cfg, &Reliable::default());
    check_invariants(&r);
    assert_eq!(r.finished, 240);
}

#[test]
fn multi_plane_hosts_use_every_plane() {
    let shape = Shape::MultiPlane {
        planes: 4,
        hosts: 16,
        t0_down: 4,
        t0_up: 4,
        ports_per_plane: 1,
    };
    let cfg = config(shape, permutation(16, 256 * 1024, 6), 6);
    let r = Sim::run_to_end(cfg, &Reliable::default());
    check_invariants(&r);
    assert_eq!(r.finished, 16);
    assert_eq!(r.series.plane_util.len(), 4);
    for p in &r.series.plane_util {
        assert!(p.iter().any(|&u| u > 0.01));
    }
    // The ideal FCT counts all four ports.
    let f = &r.flows[0];
    assert!(f.ideal_fct_us < 256.0 * 1024.0 * 8.0 / (4.0 * GBPS) / 1e3 + 10.0);
}

#[test]
fn stop_at_ends_a_run_with_unfinished_flows() {
    let mut cfg = config(k4(), permutation(16, 4 * 1024 * 1024, 7), 7);
    cfg.stop_at = 50 * US;
    let r = Sim::run_to_end(cfg, &Reliable::default());
    check_invariants(&r);
    assert_eq!(r.finished, 0);
    assert_eq!(r.end_us, 50.0);
    assert!(r.ledger.in_flight > 0);
    assert!(r.flows.iter().all(|f| f.fct_us.is_none()));
}

/// Host 1's NIC port is down from the start; a sender that gives up after 3 timeouts of
/// 10 us, so its flows fail quickly.
fn run_with_host_1_cut_off(flows: Vec<FlowSpec>) -> RunResult {
    let mut cfg = config(k4(), flows, 8);
    let l = cfg.topology.host_uplink(1, 0);
    cfg.faults.push(Fault {
        at: 0,
        link: l,
        kind: FaultKind::Down,
    });
    let t = Reliable {
        rto: 10 * US,
        max_tries: 3,
        ..Reliable::default()
    };
    Sim::run_to_end(cfg, &t)
}

#[test]
fn a_dead_host_port_makes_its_flow_fail_and_the_run_still_ends() {
    let r = run_with_host_1_cut_off(vec![flow(0, 1, 2, 64 * 1024, 0)]);
    check_invariants(&r);
    assert_eq!((r.finished, r.failed), (0, 1));
    assert_eq!(r.flows[0].bytes_lost, 64 * 1024);
    assert_eq!(r.flows[0].bytes_delivered, 0);
    assert!(r.drops.link_down >= 16);
}

#[test]
fn a_dependent_flow_starts_when_its_predecessor_completes() {
    // 0 -> 1, then 1 -> 2 once it has arrived, then 2 -> 3: a three-step ring chain.
    let mut flows = vec![flow(0, 0, 5, 256 * 1024, 0), flow(1, 5, 10, 256 * 1024, 0)];
    flows.push(flow(2, 10, 15, 256 * 1024, 0));
    flows[1].after = Some(0);
    flows[2].after = Some(1);
    let r = Sim::run_to_end(config(k4(), flows, 3), &Reliable::default());
    check_invariants(&r);
    assert_eq!(r.finished, 3);
    let end = |f: &crate::netsim::results::FlowResult| f.start_ns / 1e3 + f.fct_us.unwrap();
    assert!(r.flows[1].start_ns / 1e3 >= end(&r.flows[0]) - 1e-6);
    assert!(r.flows[2].start_ns / 1e3 >= end(&r.flows[1]) - 1e-6);
    // Each step takes about as long alone: the chain is sequential, not overlapped.
    assert!(end(&r.flows[2]) > 2.5 * r.flows[0].fct_us.unwrap());
}

#[test]
fn flows_waiting_on_a_failed_flow_never_start_and_the_run_ends() {
    let mut flows = vec![flow(0, 1, 2, 64 * 1024, 0), flow(1, 2, 3, 64 * 1024, 0)];
    flows[1].after = Some(0);
    let r = run_with_host_1_cut_off(flows);
    assert_eq!((r.finished, r.failed), (0, 1));
    assert_eq!((r.flows[1].data_sent, r.flows[1].fct_us), (0, None));
    assert!(r.end_us < 1000.0);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn shape() -> impl Strategy<Value = Shape> {
        prop_oneof![
            Just(Shape::FatTree { k: 2 }),
            Just(Shape::FatTree { k: 4 }),
            (
                1u8..=3,
                prop_oneof![Just(2u32), Just(4)],
                1u32..=3,
                1u32..=2
            )
                .prop_map(|(planes, d, up, ports)| Shape::MultiPlane {
                    planes,
                    hosts: 2 * d,
                    t0_down: d,
                    t0_up: up,
                    ports_per_plane: ports,
                }),
        ]
    }

    fn kind() -> impl Strategy<Value = FaultKind> {
        prop_oneof![
            3 => Just(FaultKind::Down),
            3 => Just(FaultKind::Up),
            1 => (1u32..=10).prop_map(|x| FaultKind::Degrade(x as f64 / 10.0)),
            1 => (0u32..=20).prop_map(|x| FaultKind::Loss(x as f64 / 100.0)),
        ]
    }

    #[derive(Debug, Clone)]
    struct Case {
        shape: Shape,
        flows: Vec<(u32, u32, u64, Ps)>,
        faults: Vec<(Ps, u32, FaultKind)>,
        seed: u64,
        trimming: bool,
        reroute: Option<Ps>,
        routing: Routing,
    }

    fn case() -> impl Strategy<Value = Case> {
        (
            shape(),
            prop::collection::vec(
                (any::<u32>(), any::<u32>(), 0u64..256 * 1024, 0u64..30),
                1..8,
            ),
            prop::collection::vec((0u64..150, any::<u32>(), kind()), 0..6),
            any::<u64>(),
            any::<bool>(),
            prop::option::of(0u64..20),
            prop_oneof![Just(Routing::Ecmp), Just(Routing::SourceRoute)],
        )
            .prop_map(
                |(shape, flows, faults, seed, trimming, reroute, routing)| Case {
                    shape,
                    flows: flows
                        .into_iter()
                        .map(|(s, d, b, t)| (s, d, b, t * US))
                        .collect(),
                    faults: faults.into_iter().map(|(t, l, k)| (t * US, l, k)).collect(),
                    seed,
                    trimming,
                    reroute: reroute.map(|r| r * US),
                    routing,
                },
            )
    }

    fn build(c: &Case) -> SimConfig {
        let topology = Topology::build(c.shape, GBPS, DELAY).unwrap();
        let (hosts, links) = (topology.hosts, topology.links.len() as u32);
        let flows = c
            .flows
            .iter()
            .enumerate()
            .map(|(i, &(s, d, b, t))| {
                // Few destinations, so incasts (queues, marks, trims, drops) are common.
                let src = s % hosts;
                let dst = if d % 3 % hosts == src {
                    (src + 1) % hosts
                } else {
                    d % 3 % hosts
                };
                flow(i as u32, src, dst, b, t)
            })
            .collect();
        let mut cfg = config(c.shape, flows, c.seed);
        cfg.queues = queues(&cfg.topology, c.trimming);
        cfg.routing = c.routing;
        cfg.reroute_after = c.reroute;
        cfg.stop_at = 3 * MS;
        cfg.faults = c
            .faults
            .iter()
            .map(|&(at, l, kind)| Fault {
                at,
                link: l % links,
                kind,
            })
            .collect();
        cfg
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        #[test]
        fn random_fabrics_faults_and_flows_keep_the_invariants(c in case()) {
            let t = Reliable { rto: 20 * US, max_tries: 8, ..Reliable::default() };
            let a = Sim::run_to_end(build(&c), &t);
            check_invariants(&a);
            prop_assert!(a.end_us <= 3_000.0);
            // A run ends early only when every flow has finished or failed.
            if a.end_us < 3_000.0 {
                prop_assert!(a.flows.iter().all(|f| f.fct_us.is_some() || f.failed));
            }
            // Without faults every flow finishes.
            if c.faults.is_empty() {
                prop_assert_eq!(a.finished, a.flows.len());
            }
            let b = Sim::run_to_end(build(&c), &t);
            prop_assert_eq!(a.hash, b.hash);
            prop_assert_eq!(a, b);
        }
    }
}

/// The 1024-host (k = 16) permutation of 2 MB flows with the reliable test transport:
/// `cargo test -p mrc-model --release -- --ignored --nocapture speed_1024_host_permutation`
#[test]
#[ignore]
fn speed_1024_host_permutation() {
    let cfg = config(Shape::FatTree { k: 16 }, permutation(1024, 2 << 20, 11), 11);
    let wall = std::time::Instant::now();
    let r = Sim::run_to_end(cfg, &Reliable::default());
    let secs = wall.elapsed().as_secs_f64();
    check_invariants(&r);
    println!(
        "1024-host permutation, 2 MB flows: {} finished, simulated {:.1} µs, wall {:.2} s\n\
         {} events ({:.2} M events/s), {} packet-hops ({:.2} M packet-hops/s), \
         slowdown p50 {:.2} p99 {:.2}, drops {:?}, trims {}",
        r.finished,
        r.end_us,
        secs,
        r.events,
        r.events as f64 / secs / 1e6,
        r.packet_hops,
        r.packet_hops as f64 / secs / 1e6,
        r.fct_slowdown.p50,
        r.fct_slowdown.p99,
        r.drops,
        r.ledger.trimmed,
    );
    assert_eq!(r.finished, 1024);
}
