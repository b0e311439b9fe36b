//! Sans-IO transports that plug into the network simulator through
//! [`crate::netsim::endpoint::Endpoint`] / [`crate::netsim::endpoint::Transport`].
//!
//! - [`mrc`]: the MRC queue pair (EV spraying, SACK, trim NACKs, NSCC, RTO, probes,
//!   placement into a registered memory region).
//! - [`spray`]: EV selection policies (MRC state machine, OBLIVIOUS, BITMAP, REPS, MIXED).
//! - [`memory`]: the responder's registered memory region (R_Key, bounds, exactly-once).
//! - [`roce`]: the RoCEv2 baseline (one ECMP path, go-back-N) with [`dcqcn`] rate control.

pub mod dcqcn;
pub mod memory;
pub mod mrc;
pub mod roce;
pub mod spray;
