//! Structural constants of `mrc_core`, shared by its golden model (`mrc_model::mrc_core`) and
//! its RTL (`mrc_hdl::mrc_core`) so neither types them twice. Not configurable: the cosim
//! suites were run at these values.

/// `rx_kind` codes of the receive header path.
pub const RX_DATA: u8 = 1;
pub const RX_SACK: u8 = 2;
pub const RX_NACK: u8 = 3;
/// Arbiter grants held ahead of the transmit pick.
pub const EV_FIFO_DEPTH: usize = 8;
/// Entries of the EV event queue.
pub const EVQ_DEPTH: usize = 16;
/// Cycles a QP waits after a retransmit before the next (the scoreboard's pick is
/// re-validated about three cycles after the SEND that clears it).
pub const RTX_HOLD: u8 = 4;
/// Steps from a SACK op to its `acked_bytes` at the scoreboard's registered outputs.
pub const SACK_TO_ACKED: usize = 4;
/// Outstanding packets counted into `inflight` at most (windows are <= 1024 PSNs; a stale
/// `una` around a QP reset cannot overflow the product).
pub const INFL_PKTS_CAP: u32 = 2047;
/// PSNs of the scoreboard window the core leaves unused (its `una` lags by up to two cycles).
pub const WINDOW_MARGIN: u32 = 4;
