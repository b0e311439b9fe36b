//! Hardware modules of mrc-nic, described in rust-hdl and emitted as Verilog.
//!
//! The emitted Verilog, not rust-hdl's own simulator, is what gets verified: `mrc-cosim` runs it
//! under Verilator in lockstep with the golden model in `mrc-model`.

pub mod arith;
pub mod emit;
pub mod ev_spray_arbiter;
pub mod generate;
pub mod lut_ram;
pub mod mrc_core;
pub mod mrc_csr;
pub mod nscc_window;
pub mod sack_rx_tracker;
pub mod sack_tx_scoreboard;

pub use emit::{emit_module, Emitted, MODULES};
