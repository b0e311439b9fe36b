//! The integration example: `mrc_nic_demo_top`, the generated `mrc_core` with the target's
//! clocking, written by `mrcgen gen` next to the IP.
//!
//! ```text
//!  mrc_nic_demo_top (per target: ECP5 EHXPLLL 25 MHz -> clock_mhz, reset from the button and
//!  |                 the PLL lock; U55C: core clock + CMAC clock, status crossing; generic)
//!  +- mrc_nic_demo_loop (core clock domain)
//!       init ROM (from the register map) --MMIO--> mrc_core: QP 0 reset + enable, the EV profile
//!       traffic: post DEMO_POST_BYTES on QP 0 whenever everything posted is acknowledged
//!       wire:    tx header --(1 clock)--> rx DATA;  ack header --(1 clock)--> rx SACK / NACK
//!                (an ACK and a data header in the same clock: the data header is lost, and the
//!                 core repairs it: the demo exercises retransmission by itself)
//!       faults:  an LFSR marks ECN on 1 in 16 data headers, trims 1 in 64, holds a plane busy
//!       reads:   after init, every readable register in turn, folded into one word
//!                (keeps the counters and the read mux: nothing unread is trimmed away)
//!       status:  init done, tx / ack activity, wire losses, una[0] progress, the reads'
//!                parity -> LEDs
//! ```
//!
//! The demo's EV values carry their table index in bits [7:0] (the profile's other bits kept),
//! so the loop maps an acknowledged EV back to its index without a lookup: on a real NIC the
//! header parser does that. The instance is connected by port name from the emitted Verilog's
//! header, so a port added to `mrc_core` without a connection here is an error, not a dangling
//! input.

use crate::targets::{Flow, Target};
use mrc_config::NicConfig;
use mrc_cosim::ports::PortMap;
use std::fmt::Write as _;

pub const LOOP_MODULE: &str = "mrc_nic_demo_loop";
pub const TOP_MODULE: &str = "mrc_nic_demo_top";
/// Bytes posted per round of the demo traffic.
pub const DEMO_POST_BYTES: u32 = 65_536;

/// (register address, value) writes the loop's init sequencer performs after reset.
pub fn init_writes(cfg: &NicConfig) -> Vec<(u32, u32)> {
    let map = mrc_regmap::build(cfg);
    let a = |b: &str, r: &str| map.find(b, r).expect("register in the map").addr;
    let mut w = vec![
        (a("QP", "QP_SEL"), 0),
        (a("QP", "QP_INIT_PSN"), 0),
        (a("QP", "QP_CTRL"), 3),
        (a("QP", "QP_CTRL"), 1),
    ];
    for (i, ev) in demo_ev_profile(cfg).iter().enumerate() {
        w.push((a("EVT", "EV_INDEX"), i as u32));
        w.push((a("EVT", "EV_VALUE"), *ev));
        w.push((a("EVT", "EV_OP"), 3));
    }
    w
}

/// BAR offsets the loop's read sweep visits, in order: every register a read may address
/// (every access but write-only).
pub fn sweep_reads(cfg: &NicConfig) -> Vec<u32> {
    mrc_regmap::build(cfg)
        .registers()
        .filter(|l| l.reg.access != mrc_regmap::Access::Wo)
        .map(|l| l.addr)
        .collect()
}

/// The config's default EV profile with each entry's index in bits [7:0].
pub fn demo_ev_profile(cfg: &NicConfig) -> Vec<u32> {
    cfg.default_ev_profile()
        .iter()
        .enumerate()
        .map(|(i, v)| (v & !0xFF) | i as u32)
        .collect()
}

/// The loop module's input expression for each `mrc_core` input port.
fn core_input(name: &str) -> Option<&'static str> {
    Some(match name {
        "rst" => "rst",
        "wr_valid" => "wr_valid",
        "wr_addr" => "wr_addr",
        "wr_data" => "wr_data",
        "wr_strb" => "4'hF",
        "rd_valid" => "rd_valid",
        "rd_addr" => "rd_addr",
        "now_ns" => "now_ns",
        "tick" => "tick",
        "plane_ready" => "plane_ready",
        "sq_valid" => "sq_valid",
        "sq_qp" => "8'd0",
        "sq_bytes" => "DEMO_POST_BYTES",
        "rx_valid" => "rx_valid",
        "rx_qp" => "8'd0",
        "rx_kind" => "rx_kind",
        "rx_psn" => "rx_psn",
        "rx_len" => "rx_len",
        "rx_ecn" => "rx_ecn",
        "rx_trimmed" => "rx_trimmed",
        "rx_lasthop" => "rx_lasthop",
        "rx_ackreq" => "rx_ackreq",
        "rx_ev" => "rx_ev",
        "rx_ev_idx" => "rx_ev_idx",
        "rx_offset" => "rx_offset",
        "rx_bitmap" => "rx_bitmap",
        "rx_m" => "rx_m",
        "rx_rcvd_bytes" => "rx_rcvd_bytes",
        "rx_reason" => "rx_reason",
        _ => return None,
    })
}

/// Output ports the loop reads (the others are left open on purpose, listed in the waiver).
const CORE_OUTPUTS_USED: &[&str] = &[
    "b_valid",
    "tx_valid",
    "tx_psn",
    "tx_ev",
    "tx_rtx",
    "tx_len",
    "tx_last",
    "ack_valid",
    "ack_nack",
    "ack_cack",
    "ack_offset",
    "ack_bitmap",
    "ack_m",
    "ack_ev",
    "ack_rcvd_bytes",
    "ack_reason",
    "ack_psn",
    "una$0",
    "rd_ready",
    "r_valid",
    "r_data",
];

fn wire_name(port: &str) -> String {
    format!("c_{}", port.replace('$', ""))
}

fn range(width: u32) -> String {
    if width == 1 {
        String::new()
    } else {
        format!("[{}:0] ", width - 1)
    }
}

/// `mrc_nic_demo_loop.v` for `cfg`, instantiating `mrc_core` with the ports in `core`.
pub fn render_loop(cfg: &NicConfig, core: &PortMap) -> Result<String, String> {
    let writes = init_writes(cfg);
    let n = writes.len();
    let ns_per_cycle = (1000 + cfg.clock_mhz / 2) / cfg.clock_mhz;
    let tick_cycles = (cfg.clock_mhz * 1024).div_ceil(1000);
    let pkts_per_post = DEMO_POST_BYTES.div_ceil(cfg.mtu);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// {LOOP_MODULE}: mrc_core sending to itself (init over MMIO, traffic, a one-clock wire).\n\
         // Generated by mrcgen from the config and the register map; do not edit.\n\
         // Config: {} planes x {} EVs, SACK window {}, MTU {}, core clock {} MHz.\n\
         module {LOOP_MODULE} (\n\
         \x20   input  wire        clock,\n\
         \x20   input  wire        rst,\n\
         \x20   output wire [7:0]  status,\n\
         \x20   output wire        init_done,\n\
         \x20   output wire [23:0] una0,\n\
         \x20   output wire [15:0] wire_losses,\n\
         \x20   output wire [15:0] reads_done\n\
         );",
        cfg.planes, cfg.evs_per_plane, cfg.sack_window_bits, cfg.mtu, cfg.clock_mhz
    );
    let _ = writeln!(
        s,
        "    // Bytes posted per round; ns per clock; clocks per 1.024 us timer tick.\n\
         \x20   localparam [31:0] DEMO_POST_BYTES = 32'd{DEMO_POST_BYTES};\n\
         \x20   localparam [23:0] PKTS_PER_POST = 24'd{pkts_per_post};\n\
         \x20   localparam [31:0] NS_PER_CYCLE = 32'd{ns_per_cycle};\n\
         \x20   localparam [15:0] TICK_CYCLES = 16'd{tick_cycles};\n\
         \x20   // MMIO writes of the init sequence.\n\
         \x20   localparam [9:0] N_INIT = 10'd{n};\n"
    );
    // Core output wires.
    for p in &core.outputs {
        let _ = writeln!(s, "    wire {}{};", range(p.width), wire_name(&p.name));
    }
    let w = |name: &str| -> Result<u32, String> {
        core.outputs
            .iter()
            .chain(core.inputs.iter())
            .find(|p| p.name == name)
            .map(|p| p.width)
            .ok_or_else(|| format!("mrc_core has no port `{name}`"))
    };
    let _ = writeln!(
        s,
        "\n    // Init sequencer: one write, wait for its response, next.\n\
         \x20   reg [9:0]  init_i;\n\
         \x20   reg        init_wait;\n\
         \x20   reg        done_q;\n\
         \x20   reg        wr_valid;\n\
         \x20   reg [{aw}:0] wr_addr;\n\
         \x20   reg [31:0] wr_data;\n\
         \x20   reg [{aw}:0] rom_addr;\n\
         \x20   reg [31:0] rom_data;\n\
         \x20   always @(*) begin\n\
         \x20       case (init_i)",
        aw = w("wr_addr")? - 1
    );
    for (i, (a, d)) in writes.iter().enumerate() {
        let _ = writeln!(
            s,
            "            10'd{i}: begin rom_addr = 'h{a:03X}; rom_data = 32'h{d:08X}; end"
        );
    }
    let _ = writeln!(
        s,
        "            default: begin rom_addr = 'h0; rom_data = 32'h0; end\n\
         \x20       endcase\n\
         \x20   end\n\
         \x20   always @(posedge clock) begin\n\
         \x20       if (rst) begin\n\
         \x20           init_i <= 10'd0; init_wait <= 1'b0; done_q <= 1'b0; wr_valid <= 1'b0;\n\
         \x20           wr_addr <= 'h0; wr_data <= 32'h0;\n\
         \x20       end else if (!done_q) begin\n\
         \x20           if (!init_wait) begin\n\
         \x20               wr_valid <= 1'b1; wr_addr <= rom_addr; wr_data <= rom_data; init_wait <= 1'b1;\n\
         \x20           end else begin\n\
         \x20               wr_valid <= 1'b0;\n\
         \x20               if (c_b_valid) begin\n\
         \x20                   init_wait <= 1'b0;\n\
         \x20                   init_i <= init_i + 10'd1;\n\
         \x20                   if (init_i == N_INIT - 10'd1) done_q <= 1'b1;\n\
         \x20               end\n\
         \x20           end\n\
         \x20       end else begin\n\
         \x20           wr_valid <= 1'b0;\n\
         \x20       end\n\
         \x20   end\n\
         \x20   assign init_done = done_q;\n"
    );
    // The read sweep keeps the CSR read path (counters, readback, the read mux) in the
    // design: a demo that never reads would let synthesis trim them, and the board flow's
    // figures would not be the IP's.
    let reads = sweep_reads(cfg);
    let _ = writeln!(
        s,
        "    // Read sweep after init: every readable register in turn (held until rd_ready, then\n\
         \x20   // wait for r_valid), each value folded into rd_fold; its parity is status[7].\n\
         \x20   localparam [9:0] N_READS = 10'd{};\n\
         \x20   reg [9:0]  rd_i;\n\
         \x20   reg        rd_wait;\n\
         \x20   reg        rd_valid;\n\
         \x20   reg [{aw}:0] rd_addr;\n\
         \x20   reg [{aw}:0] sweep_addr;\n\
         \x20   reg [31:0] rd_fold;\n\
         \x20   reg [15:0] rd_count;\n\
         \x20   always @(*) begin\n\
         \x20       case (rd_i)",
        reads.len(),
        aw = w("rd_addr")? - 1
    );
    for (i, a) in reads.iter().enumerate() {
        let _ = writeln!(s, "            10'd{i}: sweep_addr = 'h{a:03X};");
    }
    let _ = writeln!(
        s,
        "            default: sweep_addr = 'h0;\n\
         \x20       endcase\n\
         \x20   end\n\
         \x20   always @(posedge clock) begin\n\
         \x20       if (rst) begin\n\
         \x20           rd_i <= 10'd0; rd_wait <= 1'b0; rd_valid <= 1'b0; rd_addr <= 'h0;\n\
         \x20           rd_fold <= 32'd0; rd_count <= 16'd0;\n\
         \x20       end else if (done_q) begin\n\
         \x20           if (!rd_wait) begin\n\
         \x20               rd_valid <= 1'b1; rd_addr <= sweep_addr; rd_wait <= 1'b1;\n\
         \x20           end else begin\n\
         \x20               if (rd_valid && c_rd_ready) rd_valid <= 1'b0;\n\
         \x20               if (c_r_valid) begin\n\
         \x20                   rd_wait <= 1'b0;\n\
         \x20                   rd_fold <= {{rd_fold[30:0], rd_fold[31]}} ^ c_r_data;\n\
         \x20                   rd_count <= rd_count + 16'd1;\n\
         \x20                   rd_i <= (rd_i == N_READS - 10'd1) ? 10'd0 : rd_i + 10'd1;\n\
         \x20               end\n\
         \x20           end\n\
         \x20       end\n\
         \x20   end\n\
         \x20   assign reads_done = rd_count;\n"
    );
    let _ = writeln!(
        s,
        "    // Time: ns clock and the scoreboard timer tick.\n\
         \x20   reg [31:0] now_ns;\n\
         \x20   reg [15:0] tick_cnt;\n\
         \x20   reg        tick;\n\
         \x20   always @(posedge clock) begin\n\
         \x20       if (rst) begin\n\
         \x20           now_ns <= 32'd0; tick_cnt <= 16'd0; tick <= 1'b0;\n\
         \x20       end else begin\n\
         \x20           now_ns <= now_ns + NS_PER_CYCLE;\n\
         \x20           tick <= (tick_cnt == TICK_CYCLES - 16'd1);\n\
         \x20           tick_cnt <= (tick_cnt == TICK_CYCLES - 16'd1) ? 16'd0 : tick_cnt + 16'd1;\n\
         \x20       end\n\
         \x20   end\n"
    );
    let _ = writeln!(
        s,
        "    // Traffic: post a round when everything posted so far is acknowledged.\n\
         \x20   reg [23:0] target_psn;\n\
         \x20   reg        sq_valid;\n\
         \x20   always @(posedge clock) begin\n\
         \x20       if (rst) begin\n\
         \x20           target_psn <= 24'd0; sq_valid <= 1'b0;\n\
         \x20       end else begin\n\
         \x20           sq_valid <= done_q && !sq_valid && (c_una0 == target_psn);\n\
         \x20           if (sq_valid) target_psn <= target_psn + PKTS_PER_POST;\n\
         \x20       end\n\
         \x20   end\n"
    );
    let _ = writeln!(
        s,
        "    // Faults from a 16-bit LFSR (x^16 + x^14 + x^13 + x^11 + 1), so the logic that handles\n\
         \x20   // them is exercised and kept: one data header in 16 ECN-marked, one in 64 trimmed (half\n\
         \x20   // of those at the last hop), and in half the clocks one plane not ready.\n\
         \x20   reg [15:0] lfsr;\n\
         \x20   reg [7:0]  plane_ready;\n\
         \x20   always @(posedge clock) begin\n\
         \x20       if (rst) begin\n\
         \x20           lfsr <= 16'hACE1; plane_ready <= 8'hFF;\n\
         \x20       end else begin\n\
         \x20           lfsr <= {{1'b0, lfsr[15:1]}} ^ (lfsr[0] ? 16'hB400 : 16'h0000);\n\
         \x20           plane_ready <= ~(lfsr[15] ? (8'd1 << lfsr[13:11]) : 8'd0);\n\
         \x20       end\n\
         \x20   end\n\
         \x20   // The wire: one header per clock back into the core; an ACK wins a collision.\n\
         \x20   reg        rx_valid;\n\
         \x20   reg [{kw}:0]  rx_kind;\n\
         \x20   reg [{pw}:0] rx_psn;\n\
         \x20   reg [{lw}:0] rx_len;\n\
         \x20   reg        rx_ackreq;\n\
         \x20   reg [31:0] rx_ev;\n\
         \x20   reg [{iw}:0]  rx_ev_idx;\n\
         \x20   reg [{ow}:0] rx_offset;\n\
         \x20   reg [63:0] rx_bitmap;\n\
         \x20   reg [{mw}:0]  rx_m;\n\
         \x20   reg [{bw}:0] rx_rcvd_bytes;\n\
         \x20   reg [{rw}:0]  rx_reason;\n\
         \x20   reg        rx_ecn;\n\
         \x20   reg        rx_trimmed;\n\
         \x20   reg        rx_lasthop;\n\
         \x20   reg [15:0] losses;\n\
         \x20   always @(posedge clock) begin\n\
         \x20       if (rst) begin\n\
         \x20           rx_valid <= 1'b0; losses <= 16'd0;\n\
         \x20       end else begin\n\
         \x20           rx_valid <= c_ack_valid | c_tx_valid;\n\
         \x20           if (c_ack_valid & c_tx_valid) losses <= losses + 16'd1;\n\
         \x20       end\n\
         \x20       rx_kind <= c_ack_valid ? (c_ack_nack ? 'd3 : 'd2) : 'd1;\n\
         \x20       rx_psn <= c_ack_valid ? (c_ack_nack ? c_ack_psn : c_ack_cack) : c_tx_psn;\n\
         \x20       rx_len <= c_tx_rtx ? 'd{mtu} : c_tx_len;\n\
         \x20       rx_ackreq <= c_tx_last;\n\
         \x20       rx_ecn <= !c_ack_valid && (lfsr[3:0] == 4'd0);\n\
         \x20       rx_trimmed <= !c_ack_valid && (lfsr[9:4] == 6'd0);\n\
         \x20       rx_lasthop <= lfsr[10];\n\
         \x20       rx_ev <= c_tx_ev;\n\
         \x20       rx_ev_idx <= c_ack_ev[{iw}:0];\n\
         \x20       rx_offset <= c_ack_offset;\n\
         \x20       rx_bitmap <= c_ack_bitmap;\n\
         \x20       rx_m <= c_ack_m;\n\
         \x20       rx_rcvd_bytes <= c_ack_rcvd_bytes;\n\
         \x20       rx_reason <= c_ack_reason;\n\
         \x20   end\n\
         \x20   assign wire_losses = losses;\n\
         \x20   assign una0 = c_una0;\n",
        kw = w("rx_kind")? - 1,
        pw = w("rx_psn")? - 1,
        lw = w("rx_len")? - 1,
        iw = w("rx_ev_idx")? - 1,
        ow = w("rx_offset")? - 1,
        mw = w("rx_m")? - 1,
        bw = w("rx_rcvd_bytes")? - 1,
        rw = w("rx_reason")? - 1,
        mtu = cfg.mtu,
    );
    let _ = writeln!(
        s,
        "    // Status: init done, tx and ack activity (stretched), a wire loss toggle, una[0],\n\
         \x20   // the read sweep's parity.\n\
         \x20   reg [19:0] tx_seen;\n\
         \x20   reg [19:0] ack_seen;\n\
         \x20   always @(posedge clock) begin\n\
         \x20       if (rst) begin\n\
         \x20           tx_seen <= 20'd0; ack_seen <= 20'd0;\n\
         \x20       end else begin\n\
         \x20           tx_seen <= c_tx_valid ? 20'hFFFFF : (tx_seen == 20'd0 ? 20'd0 : tx_seen - 20'd1);\n\
         \x20           ack_seen <= c_ack_valid ? 20'hFFFFF : (ack_seen == 20'd0 ? 20'd0 : ack_seen - 20'd1);\n\
         \x20       end\n\
         \x20   end\n\
         \x20   assign status = {{^rd_fold, c_una0[12:10], losses[0], ack_seen != 20'd0, tx_seen != 20'd0, done_q}};\n"
    );
    let _ = writeln!(s, "    mrc_core core (\n        .clock(clock),");
    let mut conns = Vec::new();
    for p in &core.inputs {
        let e = core_input(&p.name).ok_or_else(|| {
            format!(
                "mrc_core input `{}` has no connection in the demo loop (cli/src/demo_top.rs)",
                p.name
            )
        })?;
        conns.push(format!("        .{}({e})", p.name));
    }
    for p in &core.outputs {
        conns.push(format!("        .{}({})", p.name, wire_name(&p.name)));
    }
    let _ = writeln!(s, "{}\n    );\nendmodule", conns.join(",\n"));
    for u in CORE_OUTPUTS_USED {
        w(u)?;
    }
    Ok(s)
}

/// ECP5 EHXPLLL dividers for `mhz` from 25 MHz: (CLKI_DIV, CLKFB_DIV, CLKOP_DIV, achieved MHz).
/// The VCO (out x CLKOP_DIV) must be 400..800 MHz and the PFD (25 / CLKI_DIV) >= 3.125 MHz.
pub fn ecp5_pll(mhz: u32) -> (u32, u32, u32, f64) {
    let mut best = (1, 1, 1, f64::MAX);
    for ki in 1..=8u32 {
        for kf in 1..=80u32 {
            let out = 25.0 * f64::from(kf) / f64::from(ki);
            for ko in 1..=128u32 {
                let vco = out * f64::from(ko);
                if (400.0..=800.0).contains(&vco)
                    && (out - f64::from(mhz)).abs() < (best.3 - f64::from(mhz)).abs()
                {
                    best = (ki, kf, ko, out);
                }
            }
        }
    }
    best
}

/// `mrc_nic_demo_top.v` for the target.
pub fn render_top(cfg: &NicConfig, target: &Target) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// {TOP_MODULE}: integration example for target `{}` ({}).\n\
         // Generated by `mrcgen gen --target {}`; do not edit.",
        target.name, target.part, target.name
    );
    match target.flow {
        Flow::NextpnrEcp5 => {
            let (ki, kf, ko, out) = ecp5_pll(cfg.clock_mhz);
            let _ = writeln!(
                s,
                "// EHXPLLL: 25 MHz -> {out:.3} MHz (config clock_mhz = {}), VCO {:.0} MHz.\n\
                 module {TOP_MODULE} (\n\
                 \x20   input  wire       clk_25mhz,\n\
                 \x20   input  wire       rst_n,\n\
                 \x20   output wire [7:0] led,\n\
                 \x20   output wire       ftdi_rxd,\n\
                 \x20   input  wire       ftdi_txd\n\
                 );\n\
                 \x20   wire core_clk;\n\
                 \x20   wire locked;\n\
                 \x20   wire pll_intfb;\n\
                 \x20   (* FREQUENCY_PIN_CLKI=\"25\", FREQUENCY_PIN_CLKOP=\"{out:.3}\", ICP_CURRENT=\"12\", LPF_RESISTOR=\"8\", MFG_ENABLE_FILTEROPAMP=\"1\", MFG_GMCREF_SEL=\"2\" *)\n\
                 \x20   EHXPLLL #(\n\
                 \x20       .PLLRST_ENA(\"DISABLED\"), .INTFB_WAKE(\"DISABLED\"), .STDBY_ENABLE(\"DISABLED\"),\n\
                 \x20       .DPHASE_SOURCE(\"DISABLED\"), .OUTDIVIDER_MUXA(\"DIVA\"), .OUTDIVIDER_MUXB(\"DIVB\"),\n\
                 \x20       .OUTDIVIDER_MUXC(\"DIVC\"), .OUTDIVIDER_MUXD(\"DIVD\"), .CLKI_DIV({ki}),\n\
                 \x20       .CLKOP_ENABLE(\"ENABLED\"), .CLKOP_DIV({ko}), .CLKOP_CPHASE({}), .CLKOP_FPHASE(0),\n\
                 \x20       .FEEDBK_PATH(\"CLKOP\"), .CLKFB_DIV({kf})\n\
                 \x20   ) pll (\n\
                 \x20       .RST(1'b0), .STDBY(1'b0), .CLKI(clk_25mhz), .CLKOP(core_clk), .CLKFB(core_clk),\n\
                 \x20       .CLKINTFB(pll_intfb), .PHASESEL0(1'b0), .PHASESEL1(1'b0), .PHASEDIR(1'b1),\n\
                 \x20       .PHASESTEP(1'b1), .PHASELOADREG(1'b1), .PLLWAKESYNC(1'b0), .ENCLKOP(1'b0),\n\
                 \x20       .LOCK(locked)\n\
                 \x20   );\n\
                 \x20   // Reset: the button (active low) or PLL not locked, synchronised to core_clk.\n\
                 \x20   reg [1:0] rst_sync;\n\
                 \x20   always @(posedge core_clk or negedge locked) begin\n\
                 \x20       if (!locked) rst_sync <= 2'b11;\n\
                 \x20       else rst_sync <= {{rst_sync[0], !rst_n}};\n\
                 \x20   end\n\
                 \x20   wire init_done;\n\
                 \x20   wire [23:0] una0;\n\
                 \x20   wire [15:0] wire_losses;\n\
                 \x20   wire [15:0] reads_done;\n\
                 \x20   {LOOP_MODULE} demo (\n\
                 \x20       .clock(core_clk), .rst(rst_sync[1]), .status(led),\n\
                 \x20       .init_done(init_done), .una0(una0), .wire_losses(wire_losses),\n\
                 \x20       .reads_done(reads_done)\n\
                 \x20   );\n\
                 \x20   // The UART is not used by the demo: idle high. (ftdi_txd is read by nothing.)\n\
                 \x20   assign ftdi_rxd = 1'b1;\n\
                 endmodule",
                cfg.clock_mhz,
                out * f64::from(ko),
                (ko / 2).saturating_sub(1)
            );
        }
        Flow::Vivado => {
            let _ = writeln!(
                s,
                "// The core runs on `clock` ({} MHz); the status crosses into the CMAC clock\n\
                 // domain (`cmac_clk`, 322.265625 MHz) bit by bit through two-flop synchronisers:\n\
                 // each bit is an independent, slowly changing flag (the XDC bounds the crossing\n\
                 // with set_max_delay -datapath_only). A real integration puts async FIFOs between\n\
                 // the CMAC's AXI4-Stream and the header ports here.\n\
                 module {TOP_MODULE} (\n\
                 \x20   input  wire       clock,\n\
                 \x20   input  wire       cmac_clk,\n\
                 \x20   input  wire       rst,\n\
                 \x20   output wire [7:0] status_cmac\n\
                 );\n\
                 \x20   wire [7:0] status;\n\
                 \x20   wire init_done;\n\
                 \x20   wire [23:0] una0;\n\
                 \x20   wire [15:0] wire_losses;\n\
                 \x20   wire [15:0] reads_done;\n\
                 \x20   {LOOP_MODULE} demo (\n\
                 \x20       .clock(clock), .rst(rst), .status(status),\n\
                 \x20       .init_done(init_done), .una0(una0), .wire_losses(wire_losses),\n\
                 \x20       .reads_done(reads_done)\n\
                 \x20   );\n\
                 \x20   (* ASYNC_REG = \"TRUE\" *) reg [7:0] sync0;\n\
                 \x20   (* ASYNC_REG = \"TRUE\" *) reg [7:0] sync1;\n\
                 \x20   always @(posedge cmac_clk) begin\n\
                 \x20       sync0 <= status;\n\
                 \x20       sync1 <= sync0;\n\
                 \x20   end\n\
                 \x20   assign status_cmac = sync1;\n\
                 endmodule",
                cfg.clock_mhz
            );
        }
        Flow::Generic => {
            let _ = writeln!(
                s,
                "module {TOP_MODULE} (\n\
                 \x20   input  wire       clock,\n\
                 \x20   input  wire       rst,\n\
                 \x20   output wire [7:0] status\n\
                 );\n\
                 \x20   wire init_done;\n\
                 \x20   wire [23:0] una0;\n\
                 \x20   wire [15:0] wire_losses;\n\
                 \x20   wire [15:0] reads_done;\n\
                 \x20   {LOOP_MODULE} demo (\n\
                 \x20       .clock(clock), .rst(rst), .status(status),\n\
                 \x20       .init_done(init_done), .una0(una0), .wire_losses(wire_losses),\n\
                 \x20       .reads_done(reads_done)\n\
                 \x20   );\n\
                 endmodule"
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::{all, retarget};
    use std::path::Path;
    use std::process::Command;

    /// A behavioural stand-in for the ECP5 PLL primitive (the vendor cell library is not
    /// here): clock through, locked.
    const EHXPLLL_STUB: &str = "module EHXPLLL #(parameter PLLRST_ENA=\"\", INTFB_WAKE=\"\", \
        STDBY_ENABLE=\"\", DPHASE_SOURCE=\"\", OUTDIVIDER_MUXA=\"\", OUTDIVIDER_MUXB=\"\", \
        OUTDIVIDER_MUXC=\"\", OUTDIVIDER_MUXD=\"\", CLKI_DIV=1, CLKOP_ENABLE=\"\", CLKOP_DIV=1, \
        CLKOP_CPHASE=0, CLKOP_FPHASE=0, FEEDBK_PATH=\"\", CLKFB_DIV=1) (input RST, input STDBY, \
        input CLKI, output CLKOP, input CLKFB, output CLKINTFB, input PHASESEL0, input PHASESEL1, \
        input PHASEDIR, input PHASESTEP, input PHASELOADREG, input PLLWAKESYNC, input ENCLKOP, \
        output LOCK);\n  assign CLKOP = CLKI;\n  assign CLKINTFB = 1'b0;\n  assign LOCK = 1'b1;\nendmodule\n";

    /// `mrcgen gen --target T` for every target writes a demo top that passes
    /// `verilator --lint-only -Wall` with mrc_core and the checked-in waivers. Fails (never
    /// skips) without Verilator: `make test` installs it.
    #[test]
    fn the_demo_top_of_every_target_lints_clean_with_mrc_core() {
        let base = std::env::temp_dir().join(format!("mrcgen-demo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let small =
            "planes = 3\nevs_per_plane = 5\nev_min_active = 2\nqps = 2\nsack_window_bits = 64\n";
        for t in all() {
            let cfg = retarget(t, Some((Path::new("small.toml"), small))).unwrap();
            let out = base.join(&t.name);
            crate::package::gen_cmd(&cfg, t, &out, false).unwrap();
            let mut args: Vec<String> = vec![
                "--lint-only".into(),
                "-Wall".into(),
                "--top-module".into(),
                TOP_MODULE.into(),
            ];
            for f in [
                "mrc_nic.vlt",
                "mrc_core.v",
                "mrc_nic_demo_loop.v",
                "mrc_nic_demo_top.v",
            ] {
                args.push(out.join(f).display().to_string());
            }
            if t.flow == Flow::NextpnrEcp5 {
                let stub = out.join("ehxplll_stub.v");
                std::fs::write(&stub, EHXPLLL_STUB).unwrap();
                let vlt = out.join("stub.vlt");
                std::fs::write(
                    &vlt,
                    "`verilator_config\nlint_off -file \"*/ehxplll_stub.v\"\n",
                )
                .unwrap();
                args.push(vlt.display().to_string());
                args.push(stub.display().to_string());
            }
            let o = Command::new("verilator")
                .args(&args)
                .output()
                .expect("verilator on PATH (make test installs it)");
            assert!(
                o.status.success(),
                "{}: {}",
                t.name,
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn pll_hits_common_core_clocks_within_its_vco_range() {
        for mhz in [50, 62, 100, 125] {
            let (ki, kf, ko, out) = ecp5_pll(mhz);
            assert!(
                (out - f64::from(mhz)).abs() / f64::from(mhz) < 0.02,
                "{mhz}: {out}"
            );
            let vco = out * f64::from(ko);
            assert!((400.0..=800.0).contains(&vco), "{mhz}: vco {vco}");
            assert!(25.0 / f64::from(ki) >= 3.125 && kf >= 1);
        }
        // 25 -> 50 MHz is the classic ecppll answer.
        assert_eq!(ecp5_pll(50).3, 50.0);
        // Every clock the config accepts renders (CLKOP_DIV can be 1 at the top of the range).
        for mhz in [50, 400, 500] {
            let cfg = NicConfig {
                clock_mhz: mhz,
                ..NicConfig::default()
            };
            let t = crate::targets::get("ecp5-85k").unwrap();
            assert!(render_top(&cfg, t).contains("EHXPLLL"));
        }
    }

    /// The demo loop itself under Verilator, at a small config: the init sequence completes,
    /// the core sends to itself for several rounds through the one-clock wire (whose
    /// collisions lose data headers, which the core must repair), and the read sweep completes
    /// whole rounds. The Verilog is what `mrcgen gen` writes; only the lint test above looked
    /// at it before. Fails, never skips, without Verilator.
    #[test]
    fn the_demo_loop_initialises_sends_to_itself_and_sweeps_its_registers() {
        use mrc_cosim::{Dut, Stepper, VerilatedLib};
        let t = crate::targets::get("ecp5-85k").unwrap();
        let small = "planes = 3\nevs_per_plane = 5\nev_min_active = 2\nsack_window_bits = 64\n";
        let cfg = retarget(t, Some((Path::new("small.toml"), small))).unwrap();
        let out = std::env::temp_dir().join(format!("mrcgen-demo-sim-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        crate::package::gen_cmd(&cfg, t, &out, false).unwrap();
        let opts = mrc_cosim::modules::build_options(&out.join("mrc_nic.vlt"));
        let sources = [out.join("mrc_core.v"), out.join("mrc_nic_demo_loop.v")];
        let lib = std::sync::Arc::new(VerilatedLib::build(&sources, LOOP_MODULE, &opts).unwrap());
        let pm = lib.port_map().clone();
        let mut dut = Dut::new(&lib);
        let (mut inw, mut outw) = (vec![0u32; pm.in_words()], vec![0u32; pm.out_words()]);
        let o = |name: &str| pm.output(name).unwrap().clone();
        let (status, init_done, una0) = (o("status"), o("init_done"), o("una0"));
        let (losses, reads_done) = (o("wire_losses"), o("reads_done"));
        let rst = pm.input("rst").unwrap().clone();
        rst.set(&mut inw, 1);
        for _ in 0..4 {
            dut.step(&inw, &mut outw);
        }
        rst.set(&mut inw, 0);

        let n_init = init_writes(&cfg).len() as u64;
        let n_reads = sweep_reads(&cfg).len() as u64;
        let pkts = u64::from(DEMO_POST_BYTES.div_ceil(cfg.mtu));
        let (mut init_at, mut parity_seen) = (None, [false; 2]);
        let mut cycles = 0u64;
        while cycles < 400_000 {
            dut.step(&inw, &mut outw);
            cycles += 1;
            if init_at.is_none() && init_done.get(&outw) == 1 {
                init_at = Some(cycles);
            }
            parity_seen[(status.get(&outw) >> 7) as usize & 1] = true;
            if una0.get(&outw) >= 4 * pkts && reads_done.get(&outw) >= 2 * n_reads {
                break;
            }
        }
        let init_at = init_at.expect("the init sequence never finished");
        // One write in flight at a time, each answered within a few clocks.
        assert!(
            init_at <= 8 * n_init,
            "init took {init_at} clocks for {n_init} writes"
        );
        assert!(
            una0.get(&outw) >= 4 * pkts,
            "traffic stalled: una {} after {cycles} clocks (4 rounds are {})",
            una0.get(&outw),
            4 * pkts
        );
        assert!(
            reads_done.get(&outw) >= 2 * n_reads,
            "read sweep stalled: {} reads after {cycles} clocks ({n_reads} per round)",
            reads_done.get(&outw)
        );
        assert!(
            losses.get(&outw) > 0,
            "no collision on the wire: the run did not exercise retransmission"
        );
        assert!(
            parity_seen[0] && parity_seen[1],
            "the read parity never changed"
        );
        assert_eq!(status.get(&outw) & 1, 1, "status[0] is init done");
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn the_read_sweep_visits_every_readable_register_and_no_write_only_one() {
        let cfg = NicConfig::default();
        let map = mrc_regmap::build(&cfg);
        let reads = sweep_reads(&cfg);
        let a = |b: &str, r: &str| map.find(b, r).unwrap().addr;
        // Counters and readback are what the sweep is for; the operation registers are WO.
        assert!(reads.contains(&a("CNT", "PKTS_SENT")));
        assert!(reads.contains(&a("QP", "QP_INIT_PSN")));
        for wo in [("QP", "QP_CTRL"), ("EVT", "EV_OP"), ("EVQ", "EVQ_POP")] {
            assert!(!reads.contains(&a(wo.0, wo.1)), "{wo:?}");
        }
        assert_eq!(
            reads.len(),
            map.registers().count() - 3,
            "every register but the three WO ones"
        );
        // The loop's ROM is that list in order, and its parity reaches the status.
        let core_v = mrc_hdl::generate::render(&cfg)
            .0
            .into_iter()
            .find(|(n, _)| n == "mrc_core.v")
            .unwrap()
            .1;
        let pm = mrc_cosim::ports::parse_ports(&core_v, "mrc_core").unwrap();
        let v = render_loop(&cfg, &pm).unwrap();
        let rom: Vec<u32> = v
            .lines()
            .filter_map(|l| l.split("sweep_addr = 'h").nth(1))
            .filter_map(|h| u32::from_str_radix(h.trim_end_matches(';'), 16).ok())
            .collect();
        assert_eq!(&rom[..reads.len()], &reads[..]);
        assert!(v.contains("assign status = {^rd_fold,"));
        assert!(v.contains(".rd_valid(rd_valid)") && v.contains(".rd_addr(rd_addr)"));
    }

    #[test]
    fn init_writes_reset_and_enable_qp0_then_load_every_ev() {
        let cfg = NicConfig::default();
        let w = init_writes(&cfg);
        assert_eq!(w.len(), 4 + 3 * cfg.total_evs() as usize);
        let map = mrc_regmap::build(&cfg);
        assert_eq!(w[2], (map.find("QP", "QP_CTRL").unwrap().addr, 3));
        assert_eq!(w[3], (map.find("QP", "QP_CTRL").unwrap().addr, 1));
        for (i, ev) in demo_ev_profile(&cfg).iter().enumerate() {
            assert_eq!(ev & 0xFF, i as u32);
        }
    }
}
