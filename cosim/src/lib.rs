//! Module-agnostic co-simulation of Verilog (via Verilator) against Rust models.
//!
//! Data flow:
//!
//! ```text
//! Verilog text ──parse_ports──▶ PortMap (flat u32 word layout, `clock` driven by the shim)
//!      │                           │
//!      │                           └──▶ C++ shim (extern "C" cosim_new/free/cycle)
//!      ▼                                   │
//! verilator --cc --build ──▶ objects ──g++ -shared──▶ libcosim_<top>.so (cached by sha256
//!                                                      under <target>/cosim-cache/)
//!                                                          │ libloading
//!                                                          ▼
//!               Dut: Stepper ◀── VerilatedLib       Rust model: Stepper
//!                        └────────── run_lockstep ──────────┘
//!                                        │
//!                    RunReport / Divergence (hex report + VCD of the last N cycles)
//! ```
//!
//! The Verilog under Verilator, not rust-hdl's own simulator, is what the model is checked
//! against: the two can disagree (e.g. literal widths), and the Verilog is what gets synthesised.
//! `native_bench` measures the same Verilated model in a plain C++ loop so cosim speed can be
//! reported against a real baseline.

pub mod error;
pub mod modules;
pub mod native_bench;
pub mod ports;
pub mod runner;
pub mod stepper;
pub mod verilator;

pub use error::CosimError;
pub use native_bench::{native_bench, time_stepper, NativeResult};
pub use ports::{parse_ports, Port, PortMap};
pub use runner::{run_lockstep, Divergence, Mismatch, PortValue, RunOptions, RunReport};
pub use stepper::Stepper;
pub use verilator::{BuildOptions, Dut, VerilatedLib};
