//! The one abstraction both sides of a lockstep run implement.

use crate::ports::PortMap;

/// A synchronous design advanced one rising clock edge at a time over flat u32 words.
///
/// The Verilated DUT and a hand-written Rust model both implement this, so the runner compares
/// them without knowing which is which. Reset is an ordinary input driven by the stimulus; the
/// trait deliberately knows nothing about it, so reset behaviour is compared like any other.
pub trait Stepper {
    /// The word layout of `inputs` and `outputs` in [`Stepper::step`].
    fn port_map(&self) -> &PortMap;

    /// Applies `inputs` (length `port_map().in_words()`), performs one rising clock edge, and
    /// writes the outputs as they are after that edge (length `port_map().out_words()`).
    fn step(&mut self, inputs: &[u32], outputs: &mut [u32]);
}
