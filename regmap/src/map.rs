//! The register tables. To add a register: append a `reg(...)` line to its block at the next
//! free 4-aligned offset (never move an existing one), give it a width, access, reset value
//! (from `cfg` when the config holds it) and a doc; `cargo test -p mrc-regmap` validates the
//! map. A new block: a `block(...)` with a fresh four-character TYPE id, appended to the list
//! in `build` (bases and NEXT are assigned from the list order).

use crate::{fourcc, Access, Block, Field, RegMap, Register, BAR_SIZE, BLOCK_STRIDE};
use mrc_config::nscc::NsccFixed;
use mrc_config::NicConfig;

fn reg(
    offset: u32,
    name: &'static str,
    width: u32,
    access: Access,
    reset: u32,
    doc: &'static str,
) -> Register {
    Register {
        name,
        offset,
        width,
        access,
        reset,
        doc,
        fields: Vec::new(),
    }
}

fn field(name: &'static str, lsb: u32, width: u32, doc: &'static str) -> Field {
    Field {
        name,
        lsb,
        width,
        doc,
    }
}

impl Register {
    fn with(mut self, fields: Vec<Field>) -> Self {
        self.fields = fields;
        self
    }
}

struct Spec {
    name: &'static str,
    id: &'static [u8; 4],
    version: u32,
    doc: &'static str,
    regs: Vec<Register>,
}

/// The map for `cfg`. Blocks sit `BLOCK_STRIDE` apart from BAR offset 0, in this order, each
/// headed by TYPE / VERSION / NEXT.
pub fn build(cfg: &NicConfig) -> RegMap {
    use Access::*;
    let nscc = NsccFixed::new(cfg);
    let specs = vec![
        Spec {
            name: "CSR",
            id: b"MCSR",
            version: 1,
            doc: "The CSR block itself: identity, config facts, a scratch register and the \
                  bad-access counter. Always the first block (BAR offset 0).",
            regs: vec![
                reg(0x0C, "BLOCKS", 8, Const, 0, "Number of blocks in the NEXT chain."),
                reg(0x10, "PLANES", 4, Const, cfg.planes, "Fabric planes (NicConfig.planes)."),
                reg(0x14, "EVS_PER_PLANE", 9, Const, cfg.evs_per_plane, "EVs per plane (NicConfig.evs_per_plane)."),
                reg(0x18, "SACK_WINDOW", 11, Const, cfg.sack_window_bits, "Receiver SACK window in PSNs (NicConfig.sack_window_bits)."),
                reg(0x1C, "CLOCK_MHZ", 9, Const, cfg.clock_mhz, "Target core clock in MHz (NicConfig.clock_mhz)."),
                reg(0x20, "SCRATCH", 32, Rw, 0, "Scratch register for bus tests; drives nothing."),
                reg(0x24, "BAD_ACCESS", 32, Stat, 0, "Refused MMIO accesses (unmapped offset, write to a read-only register, \
                    misaligned offset, partial write strobe) since reset; saturates at 0xFFFFFFFF."),
                reg(0x28, "QPS", 5, Const, cfg.qps, "Queue pairs the transport core serves (NicConfig.qps)."),
            ],
        },
        Spec {
            name: "QP",
            id: b"MQPC",
            version: 1,
            doc: "Per-QP control, indirect: QP_SEL picks the QP that QP_CTRL acts on and QP_STATUS reports.",
            regs: vec![
                reg(0x0C, "QP_SEL", 16, Rw, 0, "QP number the QP_CTRL / QP_STATUS registers address."),
                reg(0x10, "QP_CTRL", 2, Wo, 0, "Write an operation for the selected QP.").with(vec![
                    field("OP", 0, 2, "0 none, 1 enable, 2 disable, 3 reset (transport state to its reset values)."),
                ]),
                reg(0x14, "QP_STATUS", 3, Ro, 0, "State of the selected QP.").with(vec![
                    field("ENABLED", 0, 1, "QP is enabled."),
                    field("IN_RESET", 1, 1, "A reset is in progress."),
                    field("ERROR", 2, 1, "Retries exhausted; the QP stopped."),
                ]),
                reg(0x18, "QP_INIT_PSN", 24, Rw, 0, "PSN a QP_CTRL reset loads into the selected QP's scoreboard (next PSN to send) and tracker (next PSN expected), as of the reset's clock."),
            ],
        },
        Spec {
            name: "XPORT",
            id: b"MXPT",
            version: 1,
            doc: "Transport parameters (reliability, timers, spraying). Reset values come from the NicConfig.",
            regs: vec![
                reg(0x0C, "MPR", 8, Rw, cfg.mpr, "Maximum PSN range in units of 128 PSNs (NicConfig.mpr)."),
                reg(0x10, "RTO_EXP", 5, Rw, cfg.rto_exp, "Retransmit timeout = 2^RTO_EXP ticks of 1.024 us (NicConfig.rto_exp)."),
                reg(0x14, "RTO_LINEAR_RETRIES", 3, Rw, cfg.rto_linear_retries, "Timeouts retried at the fixed interval (NicConfig.rto_linear_retries)."),
                reg(0x18, "RTO_BACKOFF_RETRIES", 5, Rw, cfg.rto_backoff_retries, "Further timeouts retried with exponential backoff (NicConfig.rto_backoff_retries)."),
                reg(0x1C, "RTX_OOO_THRESHOLD", 10, Rw, cfg.rtx_ooo_threshold, "Hole declared lost when a PSN this far above it is SACKed; 0 off (NicConfig.rtx_ooo_threshold)."),
                reg(0x20, "SACK_COALESCE_BYTES", 24, Rw, cfg.sack_coalesce_bytes, "Receiver: one coalesced SACK per this many bytes (NicConfig.sack_coalesce_bytes)."),
                reg(0x24, "SPRAY_POLICY", 1, Rw, cfg.spray_policy.port_value(), "Spray policy: 0 MRC EV states, 1 BITMAP penalties (NicConfig.spray_policy)."),
                reg(0x28, "EV_MIN_ACTIVE", 9, Rw, cfg.ev_min_active, "Feedback never retires an EV when this few remain active (NicConfig.ev_min_active)."),
            ],
        },
        Spec {
            name: "EVT",
            id: b"MEVT",
            version: 1,
            doc: "EV table: load, deny and allow entries, and read one entry back (index + value + op).",
            regs: vec![
                reg(0x0C, "EV_COUNT", 9, Const, cfg.total_evs(), "EVs in the profile (planes x evs_per_plane)."),
                reg(0x10, "EV_ENTRIES", 9, Const, cfg.ev_table_entries(), "Entries in the EV table (power of two >= 16); entries past EV_COUNT stay DENIED."),
                reg(0x14, "EV_INDEX", 8, Rw, 0, "Table entry that EV_OP acts on and EV_STATE / EV_READ_VALUE report."),
                reg(0x18, "EV_VALUE", 32, Rw, 0, "EV value that EV_OP LOAD writes (UDP source port in [31:16], flow label low bits in [15:0])."),
                reg(0x1C, "EV_OP", 2, Wo, 0, "Write an operation on entry EV_INDEX.").with(vec![
                    field("OP", 0, 2, "0 none, 1 DENY, 2 ALLOW (DENIED -> GOOD), 3 LOAD (EV_VALUE into the entry, state GOOD); the ev_spray_arbiter ctl_op encoding."),
                ]),
                reg(0x20, "EV_STATE", 16, Ro, 0, "State of entry EV_INDEX.").with(vec![
                    field("STATE", 0, 2, "0 GOOD, 1 SKIP, 2 ASSUMED_BAD, 3 DENIED."),
                    field("PENALTY", 8, 8, "BITMAP policy penalty."),
                ]),
                reg(0x24, "EV_READ_VALUE", 32, Ro, 0, "EV value of entry EV_INDEX."),
            ],
        },
        Spec {
            name: "NSCC",
            id: b"MNSC",
            version: 1,
            doc: "NSCC congestion control of the selected QP (QP.QP_SEL): readback and parameters.",
            regs: vec![
                reg(0x0C, "CWND", 32, Ro, 0, "Congestion window, bytes."),
                reg(0x10, "MAXWND", 32, Ro, 0, "Maximum window (1.5 BDP at the current base RTT), bytes."),
                reg(0x14, "BASE_RTT", 32, Ro, 0, "Base RTT estimate (min filter), ns."),
                reg(0x18, "MTU", 14, Const, cfg.mtu, "Payload bytes per full packet (NicConfig.mtu); the core segments posted bytes by it. \
                    Fixed at generation: every NSCC constant is derived from it."),
                reg(0x1C, "BASE_RTT_INIT", 17, Const, cfg.base_rtt_ns, "Initial base RTT estimate, ns (NicConfig.base_rtt_ns); fixed at generation."),
                reg(0x20, "TARGET_DELAY", 17, Const, nscc.target_ns, "Target queuing delay, ns (0.75 RTT with trimming, 1.0 without); fixed at generation."),
                reg(0x24, "TRIMMING", 1, Const, u32::from(cfg.trimming), "Switches trim instead of dropping (NicConfig.trimming); fixed at generation."),
            ],
        },
        Spec {
            name: "CNT",
            id: b"MCNT",
            version: 1,
            doc: "Event counters of the transport core, free running (wrap at 2^32); software takes differences.",
            regs: vec![
                reg(0x0C, "PKTS_SENT", 32, Ro, 0, "Data packets sent, retransmissions included."),
                reg(0x10, "RETRANSMITS", 32, Ro, 0, "Data packets retransmitted."),
                reg(0x14, "TRIMS", 32, Ro, 0, "Trimmed packets received (receiver side)."),
                reg(0x18, "NACK_TRIMMED", 32, Ro, 0, "NACKs received with reason TRIMMED (0x01)."),
                reg(0x1C, "NACK_TRIMMED_LASTHOP", 32, Ro, 0, "NACKs received with reason TRIMMED_LASTHOP (0x02)."),
                reg(0x20, "NACK_OOR_WINDOW", 32, Ro, 0, "NACKs received with reason PSN_OOR_WINDOW (0x0B)."),
                reg(0x24, "NACK_OTHER", 32, Ro, 0, "NACKs received with any other reason."),
                reg(0x28, "TIMEOUTS", 32, Ro, 0, "Retransmit timeouts."),
                reg(0x2C, "OUT_OF_WINDOW", 32, Ro, 0, "Received packets outside [cack+1, cack+MPR) (all QPs' trackers)."),
                reg(0x30, "RX_DROPPED", 32, Ro, 0, "Received headers refused before any block saw them: QP number >= QPS, \
                    unknown kind, or a disabled QP."),
                reg(0x34, "REFUSED_OPS", 32, Ro, 0, "Refused requests: QP_CTRL on a QP_SEL >= QPS, a send-queue post to a \
                    QP that is out of range, disabled or whose pending bytes would pass 2^32 - 1 (a refused post \
                    counts a clock after it)."),
                reg(0x38, "NSCC_EV_DROPS", 32, Ro, 0, "Congestion events (ACK, trim NACK, RTO) lost because the QP's NSCC event \
                    slot held an event of another kind (ACKs merge into a waiting ACK; TICKs are not counted)."),
                reg(0x3C, "ACKS_SENT", 32, Ro, 0, "SACKs and NACKs generated (all QPs)."),
            ],
        },
        Spec {
            name: "EVQ",
            id: b"MEVQ",
            version: 1,
            doc: "EV event queue: path feedback that changes an EV's state (every kind but ACK_GOOD and \
                  TRIMMED_LASTHOP), 16 deep; the driver drains it. Read EVQ_HEAD; if VALID, handle it \
                  and write EVQ_POP.",
            regs: vec![
                reg(0x0C, "EVQ_HEAD", 32, Ro, 0, "Oldest event, not removed by reading.").with(vec![
                    field("EV_INDEX", 0, 8, "EV table entry."),
                    field("STATE", 8, 2, "State the feedback asks for: 0 GOOD, 1 SKIP, 2 ASSUMED_BAD. The table applies it \
                        by the MRC transition rules (min-active may hold a retirement): read EV_STATE for the outcome."),
                    field("CAUSE", 12, 4, "The path feedback (ev_spray_arbiter fb_kind): 1 SKIP_ONCE (ECN), 2 ALWAYS_SKIP, \
                        3 NACK TRIMMED, 5 timeout, 6 probe answered, 7 probe answered with SKIP."),
                    field("VALID", 31, 1, "The queue is not empty."),
                ]),
                reg(0x10, "EVQ_DEPTH", 16, Ro, 0, "Events in the queue."),
                reg(0x14, "EVQ_DROPS", 32, Ro, 0, "Events dropped because the queue was full."),
                reg(0x18, "EVQ_POP", 1, Wo, 0, "Write 1 to remove the head event."),
                reg(0x1C, "EVQ_STATUS", 1, W1c, 0, "Sticky status; write 1 to clear.").with(vec![
                    field("OVERFLOW", 0, 1, "An event was dropped since the last clear."),
                ]),
            ],
        },
    ];
    let n = specs.len() as u32;
    let blocks = specs
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let i = i as u32;
            let base = i * BLOCK_STRIDE;
            let next = if i + 1 < n { base + BLOCK_STRIDE } else { 0 };
            let type_id = fourcc(s.id);
            let mut regs = vec![
                reg(
                    0x0,
                    "TYPE",
                    32,
                    Const,
                    type_id,
                    "Block id: four ASCII characters, first in [31:24].",
                ),
                reg(
                    0x4,
                    "VERSION",
                    32,
                    Const,
                    s.version,
                    "Block layout version.",
                ),
                reg(
                    0x8,
                    "NEXT",
                    32,
                    Const,
                    next,
                    "BAR byte offset of the next block; 0 on the last block.",
                ),
            ];
            regs.extend(s.regs.into_iter().map(|mut r| {
                if s.name == "CSR" && r.name == "BLOCKS" {
                    r.reset = n;
                }
                r
            }));
            Block {
                name: s.name,
                type_id,
                version: s.version,
                base,
                size: BLOCK_STRIDE,
                doc: s.doc,
                regs,
            }
        })
        .collect();
    RegMap {
        bar_size: BAR_SIZE,
        blocks,
    }
}
