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
/// re-validated about four cycles after the SEND that clears it, which reaches the
/// scoreboard a cycle after the pick, through the scoreboard's input register, its I stage).
/// Measured on the core model's lossy transfers (`mrc_core/tests.rs` `transfer`, 5-20 %
/// loss and trims): with the scoreboard's two-stage P3, 5 or 6 lets the same PSN go twice
/// 6-7 cycles apart; at 7 no PSN goes twice within 16 cycles, as with 5 before. At most 3
/// bits (the core's hold counter).
pub const RTX_HOLD: u8 = 7;
/// Steps from a SACK in the R stage to its `acked_bytes` at the scoreboard's registered
/// outputs (one of them the scoreboard's I stage, which registers its ports).
pub const SACK_TO_ACKED: usize = 5;
/// Outstanding packets counted into `inflight` at most (windows are <= 1024 PSNs; a stale
/// `una` around a QP reset cannot overflow the product).
pub const INFL_PKTS_CAP: u32 = 2047;
/// PSNs of the scoreboard window the core leaves unused (kept although the core's check is
/// exact since the B stage (now the scoreboard's I stage): the cosim suites and pinned runs
/// were measured with it).
pub const WINDOW_MARGIN: u32 = 4;

/// RW registers (block, name) whose values drive the core's blocks, in the order both the
/// model and the RTL index them.
pub const CORE_RW_REGS: [(&str, &str); 12] = [
    ("QP", "QP_SEL"),
    ("QP", "QP_INIT_PSN"),
    ("XPORT", "MPR"),
    ("XPORT", "RTO_EXP"),
    ("XPORT", "RTO_LINEAR_RETRIES"),
    ("XPORT", "RTO_BACKOFF_RETRIES"),
    ("XPORT", "RTX_OOO_THRESHOLD"),
    ("XPORT", "SACK_COALESCE_BYTES"),
    ("XPORT", "SPRAY_POLICY"),
    ("XPORT", "EV_MIN_ACTIVE"),
    ("EVT", "EV_INDEX"),
    ("EVT", "EV_VALUE"),
];
/// RO registers the core drives (every RO register of the map), in the order both index them.
pub const CORE_RO_REGS: [(&str, &str); 22] = [
    ("QP", "QP_STATUS"),
    ("EVT", "EV_STATE"),
    ("EVT", "EV_READ_VALUE"),
    ("NSCC", "CWND"),
    ("NSCC", "MAXWND"),
    ("NSCC", "BASE_RTT"),
    ("CNT", "PKTS_SENT"),
    ("CNT", "RETRANSMITS"),
    ("CNT", "TRIMS"),
    ("CNT", "NACK_TRIMMED"),
    ("CNT", "NACK_TRIMMED_LASTHOP"),
    ("CNT", "NACK_OOR_WINDOW"),
    ("CNT", "NACK_OTHER"),
    ("CNT", "TIMEOUTS"),
    ("CNT", "OUT_OF_WINDOW"),
    ("CNT", "RX_DROPPED"),
    ("CNT", "REFUSED_OPS"),
    ("CNT", "NSCC_EV_DROPS"),
    ("CNT", "ACKS_SENT"),
    ("EVQ", "EVQ_HEAD"),
    ("EVQ", "EVQ_DEPTH"),
    ("EVQ", "EVQ_DROPS"),
];
