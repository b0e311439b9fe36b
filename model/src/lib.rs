//! Golden models of mrc-nic, in plain Rust and sans-IO: no threads, clocks or sockets.
//!
//! Each per-module reference is cycle- and bit-exact with its RTL in `mrc-hdl`; the cosim
//! harness runs both in lockstep. Time, where a model needs it, is an argument.

pub mod ev_spray_arbiter;
pub mod go_back_n;
pub mod loss_experiment;
pub mod mrc_core;
pub mod mrc_csr;
pub mod netsim;
pub mod nscc;
pub mod nscc_traces;
pub mod rng;
pub mod sack_rx_tracker;
pub mod sack_tx_scoreboard;
pub mod transport;
