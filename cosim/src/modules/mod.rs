//! Per-module harnesses: the glue between one RTL module and its golden model.
//!
//! Adding a module = one file here (port packing, model stepper, random traffic) and one arm in
//! [`harness`]; the runner, the VCD writer, the CLI and the benches are shared.

pub mod ev_spray_arbiter;
pub mod mrc_core;
pub mod mrc_csr;
pub mod nscc_window;
pub mod sack_rx_tracker;
pub mod sack_tx_scoreboard;

use crate::error::CosimError;
use crate::ports::{Port, PortMap};
use crate::stepper::Stepper;
use crate::verilator::{target_dir, BuildOptions, Dut, VerilatedLib};
use mrc_config::NicConfig;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Fills one cycle of input words (a seeded random traffic source).
pub type Stimulus = Box<dyn FnMut(u64, &mut [u32]) + Send>;

/// Everything `compare` / `bench` need for one module on one config.
pub struct Harness {
    pub module: &'static str,
    pub lib: Arc<VerilatedLib>,
    /// The emitted Verilog and waiver file the library was built from (for the native bench).
    pub sources: (PathBuf, PathBuf),
    pub dut: Dut,
    pub model: Box<dyn Stepper + Send>,
    pub stimulus: Stimulus,
}

impl Harness {
    fn new(
        module: &'static str,
        lib: Arc<VerilatedLib>,
        sources: (PathBuf, PathBuf),
        model: impl Stepper + Send + 'static,
        stimulus: impl FnMut(u64, &mut [u32]) + Send + 'static,
    ) -> Self {
        Harness {
            module,
            dut: Dut::new(&lib),
            lib,
            sources,
            model: Box::new(model),
            stimulus: Box::new(stimulus),
        }
    }
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
    write_sources(module, &e.verilog, &vlt)
}

/// Write `verilog` (module `module`) and the waivers `vlt` under
/// `<target>/cosim-src/<sha256>/`, as [`emit_sources`] does for the emitted modules; also for
/// test-only Verilog (e.g. a leaf block inside a rig). Returns (verilog, waivers).
pub fn write_sources(
    module: &str,
    verilog: &str,
    vlt: &str,
) -> Result<(PathBuf, PathBuf), CosimError> {
    let hash = mrc_hdl::generate::sha256_hex(format!("{verilog}\0{vlt}").as_bytes());
    let dir = target_dir().join("cosim-src").join(&hash[..16]);
    let io = |context: String| move |source| CosimError::Io { context, source };
    std::fs::create_dir_all(&dir).map_err(io(format!("create {}", dir.display())))?;
    let v = dir.join(format!("{module}.v"));
    let w = dir.join(mrc_hdl::generate::WAIVERS);
    std::fs::write(&v, verilog).map_err(io(format!("write {}", v.display())))?;
    std::fs::write(&w, vlt).map_err(io(format!("write {}", w.display())))?;
    Ok((v, w))
}

/// Look `ins` and `outs` up by name in the ports parsed from `module`'s Verilog, in that
/// order, and refuse a Verilog with ports the harness would neither drive nor check: a
/// renamed or resized port fails loudly here instead of comparing the wrong words.
pub(crate) fn lookup_ports<const I: usize, const O: usize>(
    module: &str,
    pm: &PortMap,
    ins: [&str; I],
    outs: [&str; O],
) -> Result<([Port; I], [Port; O]), CosimError> {
    let find = |p: Option<&Port>, name: &str| {
        p.cloned().ok_or_else(|| CosimError::Parse {
            module: module.into(),
            message: format!("port `{name}` missing from the Verilog"),
        })
    };
    let mut i = Vec::new();
    for n in ins {
        i.push(find(pm.input(n), n)?);
    }
    let mut o = Vec::new();
    for n in outs {
        o.push(find(pm.output(n), n)?);
    }
    if pm.inputs.len() != I || pm.outputs.len() != O {
        return Err(CosimError::Parse {
            module: module.into(),
            message: format!("the Verilog has ports the harness does not drive or check: {pm:?}"),
        });
    }
    Ok((i.try_into().unwrap(), o.try_into().unwrap()))
}

/// Verilate (or reuse) `module` for `cfg`.
pub fn build_lib(module: &str, cfg: &NicConfig) -> Result<Arc<VerilatedLib>, CosimError> {
    let (v, w) = emit_sources(module, cfg)?;
    build_from(module, &v, &w)
}

/// The Verilator build options the project uses: the waiver file as an extra argument.
pub fn build_options(waivers: &Path) -> BuildOptions {
    BuildOptions {
        extra_args: vec![waivers.display().to_string()],
        ..BuildOptions::default()
    }
}

fn build_from(
    module: &str,
    verilog: &Path,
    waivers: &Path,
) -> Result<Arc<VerilatedLib>, CosimError> {
    let lib = VerilatedLib::build(&[verilog.to_path_buf()], module, &build_options(waivers))?;
    Ok(Arc::new(lib))
}

/// The lockstep harness for `module`: DUT, model and seeded random traffic.
pub fn harness(module: &str, cfg: &NicConfig, seed: u64) -> Result<Harness, CosimError> {
    match module {
        ev_spray_arbiter::MODULE => {
            use ev_spray_arbiter::*;
            let (v, w) = emit_sources(MODULE, cfg)?;
            let lib = build_from(MODULE, &v, &w)?;
            let ports = ArbiterPorts::new(lib.port_map())?;
            let model = ArbiterModel::new(cfg, ports.clone());
            let mut traffic = ArbiterTraffic::new(cfg, seed, TrafficMix::default());
            let stimulus = move |cycle: u64, w: &mut [u32]| {
                let x = traffic.next_inputs(cycle);
                ports.pack_inputs(&x, w);
            };
            Ok(Harness::new(MODULE, lib, (v, w), model, stimulus))
        }
        sack_rx_tracker::MODULE => {
            use sack_rx_tracker::*;
            let (v, w) = emit_sources(MODULE, cfg)?;
            let lib = build_from(MODULE, &v, &w)?;
            let ports = TrackerPorts::new(lib.port_map())?;
            let model = TrackerModel::new(cfg, ports.clone());
            let mut traffic = SharedTrackerTraffic::new(cfg, seed, TrafficMix::default());
            let stimulus = move |cycle: u64, w: &mut [u32]| {
                let x = traffic.next_inputs(cycle);
                ports.pack_inputs(&x, w);
            };
            Ok(Harness::new(MODULE, lib, (v, w), model, stimulus))
        }
        sack_tx_scoreboard::MODULE => {
            use sack_tx_scoreboard::*;
            let (v, w) = emit_sources(MODULE, cfg)?;
            let lib = build_from(MODULE, &v, &w)?;
            let ports = TxPorts::new(lib.port_map())?;
            let model = TxModel::new(cfg, ports.clone());
            let mut peer = TxPeer::new(cfg, seed, TxMix::default());
            let stimulus = move |cycle: u64, w: &mut [u32]| {
                let x = peer.next_inputs(cycle);
                ports.pack_inputs(&x, w);
            };
            Ok(Harness::new(MODULE, lib, (v, w), model, stimulus))
        }
        nscc_window::MODULE => {
            use nscc_window::*;
            let (v, w) = emit_sources(MODULE, cfg)?;
            let lib = build_from(MODULE, &v, &w)?;
            let ports = NsccPorts::new(lib.port_map())?;
            let model = NsccModel::new(cfg, ports.clone());
            let mut traffic = NsccTraffic::new(cfg, seed, NsccMix::default());
            let stimulus = move |cycle: u64, w: &mut [u32]| {
                let x = traffic.next_inputs(cycle);
                ports.pack_inputs(&x, w);
            };
            Ok(Harness::new(MODULE, lib, (v, w), model, stimulus))
        }
        mrc_csr::MODULE => {
            use mrc_csr::*;
            let (v, w) = emit_sources(MODULE, cfg)?;
            let lib = build_from(MODULE, &v, &w)?;
            let ports = CsrWirePorts::new(lib.port_map(), cfg)?;
            let model = CsrModel::new(cfg, ports.clone());
            let mut traffic = CsrTraffic::new(cfg, seed, CsrMix::default());
            let stimulus = move |cycle: u64, w: &mut [u32]| {
                let x = traffic.next_inputs(cycle);
                ports.pack_inputs(&x, w);
            };
            Ok(Harness::new(MODULE, lib, (v, w), model, stimulus))
        }
        mrc_core::MODULE => {
            use mrc_core::*;
            let (v, w) = emit_sources(MODULE, cfg)?;
            let lib = build_from(MODULE, &v, &w)?;
            let ports = CorePorts::new(lib.port_map(), cfg)?;
            let model = CoreModel::new(cfg, ports.clone());
            let mut traffic = CoreTraffic::new(cfg, seed, CoreMix::default());
            let stimulus = move |cycle: u64, w: &mut [u32]| {
                let x = traffic.next_inputs(cycle);
                ports.pack_inputs(&x, w);
            };
            Ok(Harness::new(MODULE, lib, (v, w), model, stimulus))
        }
        other => Err(CosimError::Parse {
            module: other.into(),
            message: format!("unknown module; known: {}", mrc_hdl::MODULES.join(", ")),
        }),
    }
}
