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
        verilog: rename_top(&raw, module),
    })
}

/// rust-hdl names the top `top` and its children `top$...`; give them the module's name so
/// several modules can share one filelist.
fn rename_top(raw: &str, module: &str) -> String {
    raw.replace("module top(", &format!("module {module}("))
        .replace("module top$", &format!("module {module}$"))
        .replace("\ntop$", &format!("\n{module}$"))
        .replace(" top$", &format!(" {module}$"))
}
