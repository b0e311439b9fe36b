//! Verilog emission: rust-hdl's output, renamed and tidied into files a tool flow can take.

use mrc_config::NicConfig;
use rust_hdl::prelude::*;

/// Every module the generator emits, in dependency order.
pub const MODULES: &[&str] = &[
    "ev_spray_arbiter",
    "sack_rx_tracker",
    "sack_tx_scoreboard",
    "nscc_window",
    "mrc_csr",
    "mrc_core",
];

/// One emitted module: its name and Verilog text.
pub struct Emitted {
    pub module: String,
    pub verilog: String,
}

/// Emit `module` for `cfg`, or `None` if the name is unknown.
pub fn emit_module(module: &str, cfg: &NicConfig) -> Option<Emitted> {
    let raw = match module {
        "ev_spray_arbiter" => {
            let mut uut = crate::ev_spray_arbiter::EvSprayArbiter::new(cfg);
            uut.connect_all();
            generate_verilog(&uut)
        }
        "sack_rx_tracker" => {
            let mut uut = crate::sack_rx_tracker::SackRxTracker::new(cfg);
            uut.connect_all();
            generate_verilog(&uut)
        }
        "sack_tx_scoreboard" => {
            let mut uut = crate::sack_tx_scoreboard::SackTxScoreboard::new(cfg);
            uut.connect_all();
            generate_verilog(&uut)
        }
        "nscc_window" => {
            let mut uut = crate::nscc_window::NsccWindow::new(cfg);
            uut.connect_all();
            generate_verilog(&uut)
        }
        "mrc_csr" => {
            let mut uut = crate::mrc_csr::MrcCsr::new(cfg);
            uut.connect_all();
            generate_verilog(&uut)
        }
        "mrc_core" => {
            let mut uut = crate::mrc_core::MrcCore::new(cfg);
            uut.connect_all();
            generate_verilog(&uut)
        }
        _ => return None,
    };
    Some(Emitted {
        module: module.to_string(),
        verilog: keep_replicas(&rename_top(&raw, module)),
    })
}

/// Marks every flop module of a `*_rep` field `keep_hierarchy`: those are deliberate copies
/// of one register, one per group of consumers, and a tool that flattens first would merge
/// them back into one flop driving every consumer (Yosys's `opt_merge`, Vivado's equivalent
/// register removal). rust-hdl emits each flop as its own module, named
/// `<parent>$<field>` or `<parent>$<field>$<index>`.
fn keep_replicas(v: &str) -> String {
    let mut out = String::with_capacity(v.len() + 1024);
    for line in v.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("module ") {
            let name = rest.split('(').next().unwrap_or("");
            if name.split('$').any(|seg| seg.ends_with("_rep")) {
                out.push_str("(* keep_hierarchy = \"yes\" *)\n");
            }
        }
        out.push_str(line);
    }
    out
}

/// rust-hdl names the top `top` and its children `top$...`; give them the module's name so
/// several modules can share one filelist.
pub fn rename_top(raw: &str, module: &str) -> String {
    raw.replace("module top(", &format!("module {module}("))
        .replace("module top$", &format!("module {module}$"))
        .replace("\ntop$", &format!("\n{module}$"))
        .replace(" top$", &format!(" {module}$"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_replica_flops_are_kept_whole() {
        let v = "module s(a);\nendmodule\nmodule s$ctl_rep$3(d,q,clock);\nendmodule\n\
                 module s$ctl_reps(d);\nendmodule\nmodule s$x_rep(d);\nendmodule\n";
        let k = keep_replicas(v);
        assert_eq!(k.matches("(* keep_hierarchy = \"yes\" *)").count(), 2);
        assert!(k.contains("(* keep_hierarchy = \"yes\" *)\nmodule s$ctl_rep$3(d,q,clock);"));
        assert!(k.contains("(* keep_hierarchy = \"yes\" *)\nmodule s$x_rep(d);"));
        assert!(k.contains("endmodule\nmodule s$ctl_reps(d);"));
    }

    #[test]
    fn the_scoreboard_keeps_one_control_copy_per_group_and_its_ram_address_copies() {
        let cfg = NicConfig::default();
        let v = emit_module("sack_tx_scoreboard", &cfg).unwrap().verilog;
        let groups = cfg.sack_window_bits as usize / 16;
        for g in 0..groups {
            let m =
                format!("(* keep_hierarchy = \"yes\" *)\nmodule sack_tx_scoreboard$ctl_rep${g}(");
            assert!(v.contains(&m), "{m}");
        }
        // ... and the EV RAM's TICK-address copies of pc_q and una, nothing else.
        for rep in ["pc_ra_rep", "una_ra_rep"] {
            let m = format!("(* keep_hierarchy = \"yes\" *)\nmodule sack_tx_scoreboard${rep}(");
            assert!(v.contains(&m), "{m}");
        }
        assert_eq!(v.matches("keep_hierarchy").count(), groups + 2);
    }
}
