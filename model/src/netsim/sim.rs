//! The discrete-event engine: one heap of timed events drives packets across the topology
//! and calls the transport endpoints.
//!
//! ```text
//!  FlowStart --> Transport::connect --> endpoints on src / dst hosts
//!
//!  host NIC port idle --poll_transmit--> start_tx(link) ---------------------+
//!     ^                                   | tx = tx_time(bytes, rate)         |
//!     | PortFree (busy_until)             v                                   |
//!     +------------------------------ Arrive (tx + propagation) ------------+ |
//!                                        |  lost? (down-epoch changed,     | |
//!                                        |   random loss)                  | |
//!             switch: route -> PortQueue (trim / drop) -> start_tx --------+ |
//!             host:   Endpoint::handle_packet -> re-poll the host's ports ---+
//!  Timer (lazy: fires only if still the endpoint's deadline) -> handle_timeout
//!  Fault (down / up / degrade / loss, both directions), Sample (series)
//! ```
//!
//! Events are ordered by (time, sequence number), so ties resolve in scheduling order and a
//! run is a pure function of its config and seed. A packet-hop costs one `Arrive` event,
//! plus a `PortFree` when the port has more queued behind it (or is a host NIC port, whose
//! endpoints must be polled when it frees up): an uncongested hop is one heap operation.
//!
//! Link failure: every link carries a down-epoch, bumped when it goes down. A packet
//! records the epoch when its transmission starts (or `DOOMED` if the link is already down,
//! as on a dead host NIC port that keeps sending); it arrives only if the epoch is
//! unchanged, so a packet that was on the wire at any moment the link was down is lost. An
//! independent check (the link's last down time against the packet's transmission start)
//! counts `delivered_over_down_link`, which must stay 0.

use std::collections::VecDeque;

use super::config::{FaultKind, SimConfig};
use super::endpoint::{Endpoint, EndpointStats, PathInfo, Transport};
use super::events::EventQueue;
use super::packet::{Class, DATA_HEADER_BYTES};
use super::queue::{unit, Arena, Enqueued, PortQueue, DOOMED};
use super::results::{Drops, FlowResult, Ledger, RunResult, Series, Summary};
use super::topology::LinkId;
use super::{tx_time, Ps, US};
use crate::rng::SplitMix64;

/// Payload bytes per data packet the ideal FCT and the base RTT assume.
pub const MTU_PAYLOAD: u32 = 4096;
/// Call `progress` every this many events (a power of two minus one: a mask).
const PROGRESS_MASK: u64 = (1 << 14) - 1;
/// "Never" / "none" for times.
const NEVER: Ps = Ps::MAX;
/// Per-flow goodput series are kept up to this many flows (flows x buckets of f32).
pub const FLOW_SERIES_MAX: usize = 4096;

// Event kinds: the low 3 bits of `Event::what`, the object id above.
const ARRIVE: u64 = 0;
const PORT_FREE: u64 = 1;
const TIMER: u64 = 2;
const FLOW_START: u64 = 3;
const FAULT: u64 = 4;
const SAMPLE: u64 = 5;

/// Per-link dynamic state (the static part is `Topology::links`).
#[derive(Debug, Clone)]
struct LinkState {
    q: PortQueue,
    /// The port is serialising until then.
    busy_until: Ps,
    /// Current rate (degraded or not).
    gbps: f64,
    /// Random loss probability.
    loss: f64,
    /// When it went down (`NEVER`: it is up).
    down_since: Ps,
    /// Last time it went down (`NEVER`: never), for the independent delivery check.
    last_down: Ps,
    epoch: u32,
    /// A `PortFree` event is pending.
    wake: bool,
    /// Serialisation time started in the current sample bucket.
    busy_acc: Ps,
}

/// One simulation run. Build with [`Sim::new`], then [`Sim::run`] once.
pub struct Sim<'t> {
    cfg: SimConfig,
    transport: &'t dyn Transport,
    now: Ps,
    queue: EventQueue,
    arena: Arena,
    links: Vec<LinkState>,
    rng: SplitMix64,
    /// Endpoint `2 * flow` is the flow's requester, `2 * flow + 1` its responder.
    eps: Vec<Option<Box<dyn Endpoint>>>,
    /// Time of the earliest pending timer event per endpoint (`NEVER`: none).
    timer_at: Vec<Ps>,
    /// Per host, the endpoints that may want to transmit, in round-robin order. An
    /// endpoint's readiness changes only inside a call into it (or through its deadline,
    /// which leads to `handle_timeout`), so one check after each call keeps this exact
    /// and a poll never walks idle QPs (hosts with thousands of connections stay cheap).
    ready: Vec<VecDeque<u32>>,
    in_ready: Vec<bool>,
    flow_done: Vec<bool>,
    done: usize,
    started: Vec<u32>,
    drops: Drops,
    ledger: Ledger,
    delivered_over_down: u64,
    events: u64,
    hops: u64,
    timeline: Vec<(f64, String)>,
    series: Series,
    /// Fabric (switch-to-switch) links per plane, for utilisation samples.
    fabric: Vec<Vec<LinkId>>,
    last_sample: Ps,
    last_delivered: u64,
    /// When the last data packet was lost to a down link (probes and ACKs aside).
    last_data_link_down: Option<Ps>,
    /// Data packets lost to down links since the last sample.
    bucket_data_link_down: u64,
    /// Per flow: packets (either direction) lost to a down link.
    flow_link_down: Vec<u64>,
    /// Per flow: bytes delivered at the last sample (per-flow series, small runs only).
    flow_last_delivered: Vec<u64>,
    ran: bool,
    /// Flows waiting on each flow (`FlowSpec::after`).
    dependents: Vec<Vec<u32>>,
}

impl<'t> Sim<'t> {
    /// Prepare a run. Panics if a fault names a link the topology does not have.
    pub fn new(mut cfg: SimConfig, transport: &'t dyn Transport) -> Sim<'t> {
        let topo = &cfg.topology;
        for f in &cfg.faults {
            assert!(
                (f.link as usize) < topo.links.len(),
                "fault at {} ps names link {}, the topology has {}",
                f.at,
                f.link,
                topo.links.len()
            );
        }
        // Stable: equal times keep the order given.
        cfg.faults.sort_by_key(|f| f.at);
        let links = topo
            .links
            .iter()
            .map(|l| LinkState {
                q: PortQueue::default(),
                busy_until: 0,
                gbps: l.gbps,
                loss: 0.0,
                down_since: NEVER,
                last_down: NEVER,
                epoch: 0,
                wake: false,
                busy_acc: 0,
            })
            .collect();
        let mut fabric = vec![Vec::new(); topo.planes as usize];
        for (i, l) in topo.links.iter().enumerate() {
            if l.from >= topo.hosts && l.to >= topo.hosts {
                fabric[l.plane as usize].push(i as LinkId);
            }
        }
        let (hosts, nflows) = (topo.hosts as usize, cfg.flows.len());
        let series = Series {
            bucket_us: cfg.sample_interval as f64 / US as f64,
            plane_util: vec![Vec::new(); topo.planes as usize],
            cwnd: cfg.traced_flows.iter().map(|&f| (f, Vec::new())).collect(),
            rate_mbps: cfg.traced_flows.iter().map(|&f| (f, Vec::new())).collect(),
            flow_goodput_gbps: if nflows <= FLOW_SERIES_MAX {
                vec![Vec::new(); nflows]
            } else {
                Vec::new()
            },
            ..Series::default()
        };
        Sim {
            rng: SplitMix64::new(cfg.seed),
            transport,
            now: 0,
            queue: EventQueue::new(),
            arena: Arena::new(),
            links,
            eps: (0..2 * nflows).map(|_| None).collect(),
            timer_at: vec![NEVER; 2 * nflows],
            ready: vec![VecDeque::new(); hosts],
            in_ready: vec![false; 2 * nflows],
            flow_done: vec![false; nflows],
            done: 0,
            started: Vec::new(),
            drops: Drops::default(),
            ledger: Ledger::default(),
            delivered_over_down: 0,
            events: 0,
            hops: 0,
            timeline: Vec::new(),
            series,
            fabric,
            last_sample: 0,
            last_delivered: 0,
            flow_link_down: vec![0; nflows],
            last_data_link_down: None,
            bucket_data_link_down: 0,
            flow_last_delivered: if nflows <= FLOW_SERIES_MAX {
                vec![0; nflows]
            } else {
                Vec::new()
            },
            ran: false,
            dependents: {
                let mut d = vec![Vec::new(); nflows];
                for (i, fl) in cfg.flows.iter().enumerate() {
                    if let Some(p) = fl.after {
                        assert!(
                            (p as usize) < nflows,
                            "flow {i} waits on flow {p}, which does not exist"
                        );
                        d[p as usize].push(i as u32);
                    }
                }
                d
            },
            cfg,
        }
    }

    /// Build, run to the end, report.
    pub fn run_to_end(cfg: SimConfig, transport: &dyn Transport) -> RunResult {
        Sim::new(cfg, transport).run(&mut |_, _, _| {})
    }

    /// Run until every flow's requester has completed or failed, nothing is left to happen,
    /// or `stop_at`. `progress(now, stop_at, flows_done)` is called every few thousand events
    /// and once at the end.
    pub fn run(&mut self, progress: &mut dyn FnMut(Ps, Ps, usize)) -> RunResult {
        assert!(!self.ran, "a Sim runs once");
        self.ran = true;
        for f in 0..self.cfg.flows.len() {
            if self.cfg.flows[f].after.is_none() {
                let at = self.cfg.flows[f].start;
                self.push(at, FLOW_START, f as u64);
            }
        }
        for i in 0..self.cfg.faults.len() {
            let at = self.cfg.faults[i].at;
            self.push(at, FAULT, i as u64);
        }
        if self.cfg.sample_interval > 0 {
            self.push(self.cfg.sample_interval, SAMPLE, 0);
        }
        let (stop_at, nflows) = (self.cfg.stop_at, self.cfg.flows.len());
        progress(0, stop_at, 0);
        while self.done < nflows {
            let Some(ev) = self.queue.pop() else {
                break;
            };
            if ev.at > stop_at {
                self.now = stop_at.max(self.now);
                break;
            }
            self.now = ev.at;
            self.events += 1;
            let id = ev.what >> 3;
            match ev.what & 7 {
                ARRIVE => self.arrive(id as u32),
                PORT_FREE => self.port_free(id as LinkId),
                TIMER => self.timer(id as usize, ev.at),
                FLOW_START => self.flow_start(id as usize),
                FAULT => self.fault(id as usize),
                SAMPLE => self.sample_tick(),
                _ => unreachable!(),
            }
            if self.events & PROGRESS_MASK == 0 {
                progress(self.now, stop_at, self.done);
            }
        }
        if self.cfg.sample_interval > 0 && self.now > self.last_sample {
            self.sample(self.now - self.last_sample);
        }
        progress(self.now, stop_at, self.done);
        self.result()
    }

    fn push(&mut self, at: Ps, kind: u64, id: u64) {
        self.queue.push(at, kind | id << 3);
    }

    // ---- links and switches ------------------------------------------------------------

    /// Put packet `slot` on `link` now (the port is idle).
    fn start_tx(&mut self, link: LinkId, slot: u32) {
        let now = self.now;
        let info = &self.cfg.topology.links[link as usize];
        let ls = &mut self.links[link as usize];
        let tx = tx_time(self.arena.get(slot).wire_bytes, ls.gbps);
        ls.busy_until = now + tx;
        ls.busy_acc += tx;
        let epoch = if ls.down_since != NEVER {
            DOOMED
        } else {
            ls.epoch
        };
        self.arena.set_wire(slot, link, epoch, now);
        self.hops += 1;
        // A host port must wake its endpoints when it frees; a switch port only if it has
        // more to send.
        let wake = !ls.wake && (info.from < self.cfg.topology.hosts || !ls.q.is_empty());
        let (arrive_at, free_at) = (now + tx + info.delay, ls.busy_until);
        if wake {
            ls.wake = true;
        }
        self.push(arrive_at, ARRIVE, slot as u64);
        if wake {
            self.push(free_at, PORT_FREE, link as u64);
        }
    }

    /// A switch port: start the next queued packet if the port is idle, else make sure it
    /// wakes when it frees.
    fn kick(&mut self, link: LinkId) {
        let ls = &mut self.links[link as usize];
        if ls.busy_until > self.now {
            if !ls.wake && !ls.q.is_empty() {
                ls.wake = true;
                let at = ls.busy_until;
                self.push(at, PORT_FREE, link as u64);
            }
            return;
        }
        let to_host = self.cfg.topology.links[link as usize].to_host;
        if let Some((slot, marked)) =
            ls.q.dequeue(&mut self.arena, &self.cfg.queues, to_host, &mut self.rng)
        {
            self.ledger.ecn_marked += marked as u64;
            self.start_tx(link, slot);
        }
    }

    fn port_free(&mut self, link: LinkId) {
        self.links[link as usize].wake = false;
        let from = self.cfg.topology.links[link as usize].from;
        if from < self.cfg.topology.hosts {
            self.poll_host(from);
        } else {
            self.kick(link);
        }
    }

    fn arrive(&mut self, slot: u32) {
        let (link, epoch, tx_start) = self.arena.wire(slot);
        let ls = &self.links[link as usize];
        if epoch != ls.epoch {
            self.lose_to_link_down(slot);
            return;
        }
        if ls.loss > 0.0 && unit(&mut self.rng) < ls.loss {
            self.arena.remove(slot);
            self.drops.random_loss += 1;
            return;
        }
        let to = self.cfg.topology.links[link as usize].to;
        if to < self.cfg.topology.hosts {
            if ls.down_since != NEVER || (ls.last_down != NEVER && ls.last_down >= tx_start) {
                self.delivered_over_down += 1;
            }
            self.deliver(slot, to);
        } else {
            self.forward(slot, to);
        }
    }

    fn lose_to_link_down(&mut self, slot: u32) {
        let pkt = self.arena.remove(slot);
        let qp = pkt.qp as usize;
        self.drops.link_down += 1;
        if pkt.class == Class::Data {
            self.last_data_link_down = Some(self.now);
            self.bucket_data_link_down += 1;
        }
        if let Some(c) = self.flow_link_down.get_mut(qp) {
            *c += 1;
        }
    }

    /// A switch received packet `slot`: route, queue, send.
    fn forward(&mut self, slot: u32, node: u32) {
        let out = {
            let pkt = self.arena.get(slot);
            let topo = &self.cfg.topology;
            match self.cfg.reroute_after {
                None => topo.route(node, pkt, self.cfg.routing, &|_| true),
                Some(after) => {
                    let (links, now) = (&self.links, self.now);
                    topo.route(node, pkt, self.cfg.routing, &|l| {
                        let d = links[l as usize].down_since;
                        d == NEVER || now < d.saturating_add(after)
                    })
                }
            }
        };
        let pkt = self.arena.get_mut(slot);
        pkt.hops = pkt.hops.saturating_add(1);
        let ls = &mut self.links[out as usize];
        if ls.down_since != NEVER {
            self.lose_to_link_down(slot);
            return;
        }
        let to_host = self.cfg.topology.links[out as usize].to_host;
        match ls
            .q
            .enqueue(&mut self.arena, slot, &self.cfg.queues, to_host)
        {
            Enqueued::Queued => {}
            Enqueued::Trimmed => self.ledger.trimmed += 1,
            Enqueued::Dropped => {
                self.arena.remove(slot);
                self.drops.queue_full += 1;
                return;
            }
        }
        self.kick(out);
    }

    // ---- hosts and endpoints -----------------------------------------------------------

    fn deliver(&mut self, slot: u32, host: u32) {
        self.ledger.delivered += 1;
        let pkt = self.arena.remove(slot);
        let f = pkt.qp as usize;
        let Some(flow) = self.cfg.flows.get(f) else {
            return;
        };
        let responder = host == flow.dst && pkt.src == flow.src;
        let e = 2 * f + responder as usize;
        let Some(ep) = self.eps[e].as_mut() else {
            return;
        };
        ep.handle_packet(self.now, pkt);
        self.update_timer(e, false);
        self.mark_ready(e, host);
        if !responder {
            self.check_done(f);
        }
        self.poll_host(host);
    }

    /// After a call into endpoint `e` (on `host`): queue it for the NIC if it wants to send.
    fn mark_ready(&mut self, e: usize, host: u32) {
        if !self.in_ready[e]
            && self.eps[e]
                .as_ref()
                .is_some_and(|ep| ep.wants_transmit(self.now))
        {
            self.in_ready[e] = true;
            self.ready[host as usize].push_back(e as u32);
        }
    }

    /// Offer every idle NIC port of `host` to its ready endpoints, round robin: the one that
    /// sends goes to the back; one that no longer wants to send leaves the ring.
    fn poll_host(&mut self, host: u32) {
        let h = host as usize;
        // NIC port k is the endpoints' "plane" k (a plane with several ports offers each).
        for plane in 0..self.cfg.topology.ports {
            if self.ready[h].is_empty() {
                return;
            }
            let link = self.cfg.topology.nodes[h].up[plane as usize];
            if self.links[link as usize].busy_until > self.now {
                continue;
            }
            for _ in 0..self.ready[h].len() {
                let e = self.ready[h].pop_front().expect("non-empty") as usize;
                let ep = self.eps[e].as_mut().expect("ready endpoints exist");
                if !ep.wants_transmit(self.now) {
                    self.in_ready[e] = false;
                    continue;
                }
                let out = ep.poll_transmit(self.now, plane);
                self.update_timer(e, false);
                self.ready[h].push_back(e as u32);
                if let Some(pkt) = out {
                    debug_assert_eq!(pkt.src, host, "endpoint sent with a foreign src");
                    self.ledger.sent += 1;
                    let slot = self.arena.insert(pkt);
                    self.start_tx(link, slot);
                    break;
                }
            }
        }
    }

    /// Re-read endpoint `e`'s deadline; schedule a timer event if it is earlier than the one
    /// pending (a later deadline is picked up when the pending event fires). `after_fire`:
    /// the endpoint just handled a timeout, so a deadline at or before now means "again"
    /// and is pushed 1 ps on, which keeps a stuck endpoint from spinning at one instant.
    fn update_timer(&mut self, e: usize, after_fire: bool) {
        let Some(d) = self.eps[e].as_ref().and_then(|ep| ep.poll_timeout()) else {
            return;
        };
        let at = d.max(self.now + after_fire as Ps);
        if at < self.timer_at[e] {
            self.timer_at[e] = at;
            self.push(at, TIMER, e as u64);
        }
    }

    fn timer(&mut self, e: usize, at: Ps) {
        if self.timer_at[e] != at {
            return; // superseded by an earlier one
        }
        self.timer_at[e] = NEVER;
        let now = self.now;
        let Some(ep) = self.eps[e].as_mut() else {
            return;
        };
        match ep.poll_timeout() {
            None => return,
            Some(d) if d > now => {
                self.update_timer(e, false);
                return;
            }
            Some(_) => ep.handle_timeout(now),
        }
        let f = e / 2;
        let host = if e & 1 == 0 {
            self.check_done(f);
            self.cfg.flows[f].src
        } else {
            self.cfg.flows[f].dst
        };
        self.mark_ready(e, host);
        self.poll_host(host);
        // After the poll: a pacing gate that opened and was used has moved its deadline on.
        self.update_timer(e, true);
    }

    fn check_done(&mut self, f: usize) {
        if self.flow_done[f] {
            return;
        }
        let st = self.eps[2 * f].as_ref().expect("started").stats();
        if st.completed_at.is_some() || st.failed {
            self.flow_done[f] = true;
            self.done += 1;
            self.release_dependents(f, st.failed);
        }
    }

    /// Flow `f` has ended: post the flows that wait on it (a data dependency, such as the next
    /// ring all-reduce step) at their start time or now. When `f` failed its data never
    /// arrived, so they never start: they end unstarted (unfinished, not failed), and so do
    /// the flows waiting on them.
    fn release_dependents(&mut self, f: usize, failed: bool) {
        let deps = std::mem::take(&mut self.dependents[f]);
        for d in deps {
            let d = d as usize;
            if failed {
                self.flow_done[d] = true;
                self.done += 1;
                self.release_dependents(d, true);
            } else {
                let at = self.cfg.flows[d].start.max(self.now);
                // The endpoints see the time the WRITE is actually posted.
                self.cfg.flows[d].start = at;
                self.push(at, FLOW_START, d as u64);
            }
        }
    }

    fn path_info(&self, f: usize) -> PathInfo {
        let topo = &self.cfg.topology;
        let flow = &self.cfg.flows[f];
        PathInfo {
            planes: topo.ports,
            port_gbps: topo.links[topo.host_uplink(flow.src, 0) as usize].gbps,
            base_rtt: topo.base_rtt(flow.src, flow.dst, MTU_PAYLOAD + DATA_HEADER_BYTES),
            paths_per_plane: topo.shape.paths_per_plane(),
        }
    }

    fn flow_start(&mut self, f: usize) {
        let path = self.path_info(f);
        let flow = &self.cfg.flows[f];
        let (src, dst) = (flow.src, flow.dst);
        let (req, resp) = self.transport.connect(flow, &path);
        self.eps[2 * f] = Some(req);
        self.eps[2 * f + 1] = Some(resp);
        self.started.push(f as u32);
        self.update_timer(2 * f, false);
        self.update_timer(2 * f + 1, false);
        self.mark_ready(2 * f, src);
        self.mark_ready(2 * f + 1, dst);
        self.check_done(f);
        self.poll_host(src);
        if dst != src {
            self.poll_host(dst);
        }
    }

    // ---- faults ------------------------------------------------------------------------

    fn fault(&mut self, i: usize) {
        let fault = self.cfg.faults[i].clone();
        let l = fault.link as usize;
        let info = &self.cfg.topology.links[l];
        let what = match fault.kind {
            FaultKind::Down => "down".to_string(),
            FaultKind::Up => "up".to_string(),
            FaultKind::Degrade(f) => format!("degraded to {} % of its rate", f * 100.0),
            FaultKind::Loss(p) => format!("random loss {} %", p * 100.0),
        };
        let text = format!(
            "link {} ({}, plane {}, node {} <-> node {}) {}",
            fault.link,
            info.tier.name(),
            info.plane,
            info.from,
            info.to,
            what
        );
        self.timeline.push((self.now as f64 / US as f64, text));
        for link in [l, info.reverse as usize] {
            let base = self.cfg.topology.links[link].gbps;
            let ls = &mut self.links[link];
            match fault.kind {
                FaultKind::Down => {
                    if ls.down_since == NEVER {
                        ls.down_since = self.now;
                        ls.last_down = self.now;
                        ls.epoch += 1;
                        let mut lost = 0;
                        ls.q.drain(&mut self.arena, |arena, slot| {
                            arena.remove(slot);
                            lost += 1;
                        });
                        self.drops.link_down += lost;
                    }
                }
                FaultKind::Up => ls.down_since = NEVER,
                // A zero rate would never finish a packet; a floor keeps time finite.
                FaultKind::Degrade(f) => ls.gbps = base * f.max(1e-6),
                FaultKind::Loss(p) => ls.loss = p.clamp(0.0, 1.0),
            }
        }
    }

    // ---- time series -------------------------------------------------------------------

    fn sample_tick(&mut self) {
        let len = self.now - self.last_sample;
        self.sample(len);
        // Only keep ticking while something else can still happen.
        if !self.queue.is_empty() {
            self.push(self.now + self.cfg.sample_interval, SAMPLE, 0);
        }
    }

    fn sample(&mut self, len: Ps) {
        self.last_sample = self.now;
        let gbps = |bytes: u64| bytes as f64 * 8.0 * 1000.0 / len.max(1) as f64;
        // One stats() call per flow feeds both the aggregate and, on small runs, the per-flow
        // series (a flow not started yet has delivered nothing).
        let delivered: u64 = if self.flow_last_delivered.is_empty() {
            self.started
                .iter()
                .map(|&f| self.stats(2 * f as usize + 1).bytes_delivered)
                .sum()
        } else {
            let mut sum = 0;
            for f in 0..self.cfg.flows.len() {
                let d = self.stats(2 * f + 1).bytes_delivered;
                sum += d;
                let b = d - self.flow_last_delivered[f];
                self.flow_last_delivered[f] = d;
                self.series.flow_goodput_gbps[f].push(gbps(b) as f32);
            }
            sum
        };
        let bytes = delivered - self.last_delivered;
        self.last_delivered = delivered;
        let s = &mut self.series;
        s.data_link_down_drops.push(self.bucket_data_link_down);
        self.bucket_data_link_down = 0;
        s.goodput_gbps.push(gbps(bytes));
        for (plane, links) in self.fabric.iter().enumerate() {
            let (mut busy, mut up) = (0u64, 0u64);
            for &l in links {
                let ls = &mut self.links[l as usize];
                if ls.down_since == NEVER {
                    busy += ls.busy_acc;
                    up += 1;
                }
                ls.busy_acc = 0;
            }
            let u = if up == 0 {
                0.0
            } else {
                busy as f64 / (up as f64 * len.max(1) as f64)
            };
            s.plane_util[plane].push(u);
        }
        for i in 0..self.cfg.traced_flows.len() {
            let f = self.cfg.traced_flows[i] as usize;
            let st = self.stats(2 * f);
            self.series.cwnd[i].1.push(st.cwnd);
            self.series.rate_mbps[i].1.push(st.rate_mbps);
        }
    }

    fn stats(&self, e: usize) -> EndpointStats {
        self.eps
            .get(e)
            .and_then(|ep| ep.as_ref())
            .map(|ep| ep.stats())
            .unwrap_or_default()
    }

    // ---- results -----------------------------------------------------------------------

    fn result(&self) -> RunResult {
        let topo = &self.cfg.topology;
        let mut flows = Vec::with_capacity(self.cfg.flows.len());
        let (mut first_start, mut last_done, mut delivered) = (NEVER, 0, 0u64);
        for (f, spec) in self.cfg.flows.iter().enumerate() {
            let (req, resp) = (self.stats(2 * f), self.stats(2 * f + 1));
            let path = self.path_info(f);
            let pkts = spec.bytes.div_ceil(MTU_PAYLOAD as u64);
            let wire = spec.bytes + pkts * DATA_HEADER_BYTES as u64;
            let nic_gbps = path.port_gbps * path.planes as f64;
            let ideal_ps = (wire as f64 * 8.0 * 1000.0 / nic_gbps).ceil() + path.base_rtt as f64;
            first_start = first_start.min(spec.start);
            if let Some(c) = req.completed_at {
                last_done = last_done.max(c);
            }
            delivered += resp.bytes_delivered;
            flows.push(FlowResult {
                id: spec.id,
                src: spec.src,
                dst: spec.dst,
                bytes: spec.bytes,
                start_ns: spec.start as f64 / 1000.0,
                fct_us: req
                    .completed_at
                    .map(|c| c.saturating_sub(spec.start) as f64 / US as f64),
                ideal_fct_us: ideal_ps / US as f64,
                bytes_delivered: resp.bytes_delivered,
                dup_bytes: resp.dup_bytes,
                bytes_lost: req.bytes_lost,
                failed: req.failed,
                data_sent: req.data_sent,
                retransmits: req.retransmits,
                timeouts: req.timeouts,
                nacks: req.nacks_trimmed + req.nacks_other,
                trims: resp.trims_received,
                link_down_drops: self.flow_link_down[f],
            });
        }
        let fcts: Vec<f64> = flows.iter().filter_map(|f| f.fct_us).collect();
        let slowdowns: Vec<f64> = flows
            .iter()
            .filter_map(|f| f.fct_us.map(|x| x / f.ideal_fct_us))
            .collect();
        let span_end = if last_done > 0 { last_done } else { self.now };
        let span = span_end.saturating_sub(if first_start == NEVER { 0 } else { first_start });
        let goodput_gbps = if span == 0 {
            0.0
        } else {
            delivered as f64 * 8.0 * 1000.0 / span as f64
        };
        let sum = |g: fn(&FlowResult) -> u64| flows.iter().map(g).sum::<u64>();
        let mut ledger = self.ledger;
        ledger.in_flight = self.arena.live() as u64;
        let mut r = RunResult {
            transport: self.transport.name(),
            seed: self.cfg.seed,
            hosts: topo.hosts,
            fct_us: Summary::of(&fcts),
            fct_slowdown: Summary::of(&slowdowns),
            finished: fcts.len(),
            failed: flows.iter().filter(|f| f.failed).count(),
            goodput_gbps,
            retransmits: sum(|f| f.retransmits),
            trims: sum(|f| f.trims),
            nacks: sum(|f| f.nacks),
            timeouts: sum(|f| f.timeouts),
            bytes_lost: sum(|f| f.bytes_lost),
            drops: self.drops,
            ledger,
            delivered_over_down_link: self.delivered_over_down,
            last_data_link_down_us: self.last_data_link_down.map(|t| t as f64 / US as f64),
            end_us: self.now as f64 / US as f64,
            events: self.events,
            packet_hops: self.hops,
            timeline: self.timeline.clone(),
            series: self.series.clone(),
            flows,
            hash: 0,
        };
        r.hash = run_hash(&r);
        r
    }
}

/// FNV-1a, 64-bit.
struct Fnv(u64);

impl Fnv {
    fn u64(&mut self, x: u64) {
        for b in x.to_le_bytes() {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn f64(&mut self, x: f64) {
        self.u64(x.to_bits());
    }
}

/// The determinism fingerprint: every per-flow outcome and every counter.
fn run_hash(r: &RunResult) -> u64 {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    for f in &r.flows {
        for x in [f.id as u64, f.src as u64, f.dst as u64, f.bytes] {
            h.u64(x);
        }
        h.f64(f.start_ns);
        h.f64(f.fct_us.unwrap_or(-1.0));
        h.f64(f.ideal_fct_us);
        for x in [
            f.bytes_delivered,
            f.dup_bytes,
            f.bytes_lost,
            f.failed as u64,
            f.data_sent,
            f.retransmits,
            f.timeouts,
            f.nacks,
            f.trims,
            f.link_down_drops,
        ] {
            h.u64(x);
        }
    }
    let (d, l) = (&r.drops, &r.ledger);
    for x in [
        r.seed,
        r.hosts as u64,
        r.finished as u64,
        r.failed as u64,
        d.link_down,
        d.random_loss,
        d.queue_full,
        l.sent,
        l.delivered,
        l.in_flight,
        l.ecn_marked,
        l.trimmed,
        r.delivered_over_down_link,
        r.events,
        r.packet_hops,
    ] {
        h.u64(x);
    }
    h.f64(r.end_us);
    h.0
}

#[cfg(test)]
mod tests;
