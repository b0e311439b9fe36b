//! Sans-IO transports that plug into the network simulator through
//! [`crate::netsim::endpoint::Endpoint`] / [`crate::netsim::endpoint::Transport`].
//!
//! - [`mrc`]: the MRC queue pair (EV spraying, SACK, trim NACKs, NSCC, RTO, probes,
//!   placement into a registered memory region).
//! - [`spray`]: EV selection policies (MRC state machine, OBLIVIOUS, BITMAP, REPS, MIXED).
//! - [`memory`]: the responder's registered memory region (R_Key, bounds, exactly-once).
//! - [`core_ep`]: a requester driven by an `mrc_core` (model or Verilated RTL) clock by clock.
//! - [`roce`]: the RoCEv2 baseline (one ECMP path, go-back-N) with [`dcqcn`] rate control.

pub mod core_ep;
pub mod dcqcn;
pub mod memory;
pub mod mrc;
pub mod roce;
pub mod spray;

use crate::netsim::endpoint::Transport;
use crate::netsim::scenario::TransportChoice;
use mrc_config::NicConfig;

/// The transport a scenario names, built from the endpoints' config.
pub fn make(choice: TransportChoice, nic: &NicConfig) -> Box<dyn Transport> {
    match choice {
        TransportChoice::Mrc(policy) => {
            let mode = spray::SprayMode::ALL
                .into_iter()
                .find(|m| m.name() == policy)
                .unwrap_or_else(|| panic!("no spray mode named {policy}"));
            Box::new(mrc::MrcTransport::new(nic.clone(), mode))
        }
        TransportChoice::Roce { dcqcn } => Box::new(roce::RoceTransport::new(nic, dcqcn)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netsim::scenario::TRANSPORT_NAMES;

    #[test]
    fn every_scenario_transport_name_builds_the_transport_of_that_name() {
        for name in TRANSPORT_NAMES {
            let t = make(TransportChoice::parse(name).unwrap(), &NicConfig::default());
            assert_eq!(t.name(), *name);
        }
    }
}
