//! Per-module harnesses: the glue between one RTL module and its golden model.
//!
//! Adding a module = one file here (port packing, model stepper, random traffic) and one arm in
//! [`harness`]; the runner, the VCD writer, the CLI and the benches are shared.

pub mod ev_spray_arbiter;

use crate::error::CosimError;
use crate::stepper::Stepper;
use crate::verilator::{target_dir, BuildOptions, Dut, VerilatedLib};
use mrc_config::NicConfig;
use std::path::PathBuf;
use std::sync::Arc;

/// Fills one cycle of input words (a seeded random traffic source).
pub type Stimulus = Box<dyn FnMut(u64, &mut [u32]) + Send>;

/// Everything `compare` / `bench` need for one module on one config.
pub struct Harness {
    pub module: &'static str,
    pub lib: Arc<VerilatedLib>,
    pub dut: Dut,
    pub model: Box<dyn Stepper + Send>,
    pub stimulus: Stimulus,
}

/// Emit `module` for `cfg` and write it (with the project's waivers) under
/// `<target>/cosim-src/<sha256>/`, a path that only changes when the text does, so the
/// Verilator cache keyed on it stays warm across runs. Returns (verilog, waivers).
pub fn emit_sources(module: &str, cfg: &NicConfig) -> Result<(PathBuf, PathBuf), CosimError> {
    let e = mrc_hdl::emit_module(module, cfg).ok_or_else(|| CosimError::Parse {
        module: module.into(),
        message: format!("unknown module; known: {}", mrc_hdl::MODULES.join(", ")),
    })?;
    let vlt = mrc_hdl::generate::waivers(&[e.module.as_str()]);
    let hash = mrc_hdl::generate::sha256_hex(format!("{}\0{}", e.verilog, vlt).as_bytes());
    let dir = target_dir().join("cosim-src").join(&hash[..16]);
    let io = |context: String| move |source| CosimError::Io { context, source };
    std::fs::create_dir_all(&dir).map_err(io(format!("create {}", dir.display())))?;
    let v = dir.join(format!("{module}.v"));
    let w = dir.join(mrc_hdl::generate::WAIVERS);
    std::fs::write(&v, &e.verilog).map_err(io(format!("write {}", v.display())))?;
    std::fs::write(&w, vlt).map_err(io(format!("write {}", w.display())))?;
    Ok((v, w))
}

/// Verilate (or reuse) `module` for `cfg`.
pub fn build_lib(module: &str, cfg: &NicConfig) -> Result<Arc<VerilatedLib>, CosimError> {
    let (v, w) = emit_sources(module, cfg)?;
    let opts = BuildOptions {
        extra_args: vec![w.display().to_string()],
        ..BuildOptions::default()
    };
    Ok(Arc::new(VerilatedLib::build(&[v], module, &opts)?))
}

/// The lockstep harness for `module`: DUT, model and seeded random traffic.
pub fn harness(module: &str, cfg: &NicConfig, seed: u64) -> Result<Harness, CosimError> {
    match module {
        ev_spray_arbiter::MODULE => {
            use ev_spray_arbiter::*;
            let lib = build_lib(MODULE, cfg)?;
            let ports = ArbiterPorts::new(lib.port_map())?;
            let model = ArbiterModel::new(cfg, ports.clone());
            let mut traffic = ArbiterTraffic::new(cfg, seed, TrafficMix::default());
            let stimulus = move |cycle: u64, w: &mut [u32]| {
                let x = traffic.next_inputs(cycle);
                ports.pack_inputs(&x, w);
            };
            Ok(Harness {
                module: MODULE,
                dut: Dut::new(&lib),
                lib,
                model: Box::new(model),
                stimulus: Box::new(stimulus),
            })
        }
        other => Err(CosimError::Parse {
            module: other.into(),
            message: format!("unknown module; known: {}", mrc_hdl::MODULES.join(", ")),
        }),
    }
}
