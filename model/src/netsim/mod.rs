//! Packet-level network simulator: discrete events, deterministic for a seed, sans-IO.
//!
//! ```text
//!  Scenario (TOML) --> Topology (fat tree | multi-plane) + traffic (flows) + faults
//!        |
//!        v
//!  Sim: one event heap (time ps, seq) ------------------------------------------+
//!    host NIC port free  -> Endpoint::poll_transmit(now, plane) -> link          |
//!    link tx done        -> propagation -> switch: route -> output queue         |
//!    output queue        -> ECN mark at dequeue (kmin..kmax), trim when full     |
//!                           (64-byte header on the control class, strict prio)  |
//!    arrival at host     -> Endpoint::handle_packet(now, pkt)                   |
//!    endpoint timer      -> Endpoint::handle_timeout(now) (poll_timeout())      |
//!    fault schedule      -> link down/up, degrade, reboot, random loss  --------+
//!        |
//!        v
//!  RunResult: FCTs, goodput, retransmits, trims, NACKs, timeouts, drops, time series
//! ```
//!
//! The engine is [`sim::Sim`] (`Sim::new(cfg, &transport).run(&mut progress)` or
//! `Sim::run_to_end`); switch output ports and the packet arena are in [`queue`], the
//! calendar event queue in [`events`].
//!
//! Time is integer picoseconds ([`Ps`]) everywhere, so serialisation at any link rate is
//! exact enough (a 64-byte header at 800 Gb/s is 640 ps) and runs are bit-reproducible.
//! Endpoints (`crate::transport`) see time only as the `now` argument.

pub mod config;
pub mod endpoint;
pub mod events;
pub mod packet;
pub mod queue;
pub mod report;
pub mod results;
pub mod scenario;
pub mod sim;
pub mod topology;
pub mod traffic;

#[cfg(test)]
mod integration_tests;

/// Simulated time in picoseconds.
pub type Ps = u64;
/// One nanosecond in [`Ps`].
pub const NS: Ps = 1_000;
/// One microsecond in [`Ps`].
pub const US: Ps = 1_000_000;
/// One millisecond in [`Ps`].
pub const MS: Ps = 1_000_000_000;

/// Serialisation time of `bytes` on a link of `gbps` Gb/s, in ps (rounded up: a link is never
/// faster than its rate).
pub fn tx_time(bytes: u32, gbps: f64) -> Ps {
    let bits = bytes as f64 * 8.0;
    (bits * 1000.0 / gbps).ceil() as Ps
}
