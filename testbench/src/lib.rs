//! Shared rigs for the integration and property suites in `tests/`.
//!
//! A rig runs the Verilated RTL and the golden model in lockstep over an explicit input
//! sequence and hands back the (identical) outputs, so directed tests can assert protocol
//! properties while every cycle is also an RTL-vs-model check.

use mrc_config::NicConfig;
use mrc_cosim::modules::ev_spray_arbiter::{ArbiterModel, ArbiterPorts, MODULE};
use mrc_cosim::modules::sack_rx_tracker::{TrackerModel, TrackerPorts};
use mrc_cosim::{run_lockstep, Dut, PortMap, RunOptions, RunReport, Stepper, VerilatedLib};
use mrc_model::ev_spray_arbiter::{ArbiterInputs, ArbiterOutputs};
use mrc_model::sack_rx_tracker::{TrackerInputs, TrackerOutputs};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The Verilated library for `module` on `cfg`, built once per process (and cached on disk
/// across processes). A missing Verilator is a loud test failure, never a skip.
pub fn lib_for(module: &str, cfg: &NicConfig) -> Arc<VerilatedLib> {
    static LIBS: OnceLock<Mutex<HashMap<String, Arc<VerilatedLib>>>> = OnceLock::new();
    let key = format!("{module}\n{}", cfg.to_toml());
    let mut libs = LIBS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    libs.entry(key)
        .or_insert_with(|| match mrc_cosim::modules::build_lib(module, cfg) {
            Ok(l) => l,
            Err(e) => panic!("cannot build {module} under Verilator: {e}"),
        })
        .clone()
}

/// Wraps a model and keeps its typed outputs, cycle by cycle.
struct Recording<'a> {
    inner: &'a mut ArbiterModel,
    log: Vec<ArbiterOutputs>,
}

impl Stepper for Recording<'_> {
    fn port_map(&self) -> &PortMap {
        self.inner.port_map()
    }
    fn step(&mut self, inputs: &[u32], outputs: &mut [u32]) {
        self.inner.step(inputs, outputs);
        self.log.push(self.inner.ports.unpack_outputs(outputs));
    }
}

/// DUT + model for `ev_spray_arbiter` on one config.
pub struct ArbiterRig {
    pub dut: Dut,
    pub model: ArbiterModel,
    pub ports: ArbiterPorts,
}

impl ArbiterRig {
    pub fn new(cfg: &NicConfig) -> Self {
        let lib = lib_for(MODULE, cfg);
        let ports = ArbiterPorts::new(lib.port_map()).expect("arbiter ports");
        ArbiterRig {
            dut: Dut::new(&lib),
            model: ArbiterModel::new(cfg, ports.clone()),
            ports,
        }
    }

    /// Lockstep over `inputs`; the report and, cycle by cycle, the outputs both sides produced.
    pub fn run_report(&mut self, inputs: &[ArbiterInputs]) -> (RunReport, Vec<ArbiterOutputs>) {
        let ports = self.ports.clone();
        let mut rec = Recording {
            inner: &mut self.model,
            log: Vec::with_capacity(inputs.len()),
        };
        let mut stim = |c: u64, w: &mut [u32]| ports.pack_inputs(&inputs[c as usize], w);
        let opts = RunOptions {
            module: MODULE.into(),
            ..RunOptions::default()
        };
        let report = run_lockstep(
            &mut self.dut,
            &mut rec,
            inputs.len() as u64,
            &mut stim,
            &opts,
        );
        (report, rec.log)
    }

    /// Lockstep over `inputs`; panics with the divergence report on the first mismatch.
    pub fn run(&mut self, inputs: &[ArbiterInputs]) -> Vec<ArbiterOutputs> {
        let (report, log) = self.run_report(inputs);
        if let Some(d) = &report.divergence {
            panic!("RTL diverged from the model:\n{d}");
        }
        log
    }
}

/// Two reset cycles, the usual way every sequence starts.
pub fn with_reset(base: ArbiterInputs) -> Vec<ArbiterInputs> {
    vec![ArbiterInputs { rst: true, ..base }; 2]
}

/// The idle input for `cfg`: config policy, min_active and seed, all planes ready.
pub fn idle(cfg: &NicConfig) -> ArbiterInputs {
    ArbiterInputs::idle(cfg)
}

/// Wraps the tracker model and keeps its typed outputs, cycle by cycle.
struct TrackerRecording<'a> {
    inner: &'a mut TrackerModel,
    log: Vec<TrackerOutputs>,
}

impl Stepper for TrackerRecording<'_> {
    fn port_map(&self) -> &PortMap {
        self.inner.port_map()
    }
    fn step(&mut self, inputs: &[u32], outputs: &mut [u32]) {
        self.inner.step(inputs, outputs);
        self.log.push(self.inner.ports.unpack_outputs(outputs));
    }
}

/// DUT + model for `sack_rx_tracker` on one config.
pub struct TrackerRig {
    pub dut: Dut,
    pub model: TrackerModel,
    pub ports: TrackerPorts,
}

impl TrackerRig {
    pub fn new(cfg: &NicConfig) -> Self {
        use mrc_cosim::modules::sack_rx_tracker::MODULE as TRACKER;
        let lib = lib_for(TRACKER, cfg);
        let ports = TrackerPorts::new(lib.port_map()).expect("tracker ports");
        TrackerRig {
            dut: Dut::new(&lib),
            model: TrackerModel::new(cfg, ports.clone()),
            ports,
        }
    }

    /// Lockstep over `inputs`; the report and, cycle by cycle, the outputs both sides produced.
    pub fn run_report(&mut self, inputs: &[TrackerInputs]) -> (RunReport, Vec<TrackerOutputs>) {
        let ports = self.ports.clone();
        let mut rec = TrackerRecording {
            inner: &mut self.model,
            log: Vec::with_capacity(inputs.len()),
        };
        let mut stim = |c: u64, w: &mut [u32]| ports.pack_inputs(&inputs[c as usize], w);
        let opts = RunOptions {
            module: mrc_cosim::modules::sack_rx_tracker::MODULE.into(),
            ..RunOptions::default()
        };
        let report = run_lockstep(
            &mut self.dut,
            &mut rec,
            inputs.len() as u64,
            &mut stim,
            &opts,
        );
        (report, rec.log)
    }

    /// Lockstep over `inputs`; panics with the divergence report on the first mismatch.
    pub fn run(&mut self, inputs: &[TrackerInputs]) -> Vec<TrackerOutputs> {
        let (report, log) = self.run_report(inputs);
        if let Some(d) = &report.divergence {
            panic!("RTL diverged from the model:\n{d}");
        }
        log
    }
}

/// Two reset cycles of the tracker with `base` (its init_psn, mpr, ack_bytes).
pub fn tracker_reset(base: TrackerInputs) -> Vec<TrackerInputs> {
    vec![TrackerInputs { rst: true, ..base }; 2]
}

// ---- sack_tx_scoreboard ---------------------------------------------------------------------

use mrc_cosim::modules::sack_tx_scoreboard::{TxModel, TxPorts, MODULE as TX_MODULE};
use mrc_model::sack_tx_scoreboard::{TxInputs, TxOutputs};

/// Wraps the scoreboard model and keeps its typed outputs, cycle by cycle.
struct TxRecording<'a> {
    inner: &'a mut TxModel,
    log: Vec<TxOutputs>,
}

impl Stepper for TxRecording<'_> {
    fn port_map(&self) -> &PortMap {
        self.inner.port_map()
    }
    fn step(&mut self, inputs: &[u32], outputs: &mut [u32]) {
        self.inner.step(inputs, outputs);
        self.log.push(self.inner.ports.unpack_outputs(outputs));
    }
}

/// DUT + model for `sack_tx_scoreboard` on one config.
pub struct TxRig {
    pub dut: Dut,
    pub model: TxModel,
    pub ports: TxPorts,
}

impl TxRig {
    pub fn new(cfg: &NicConfig) -> Self {
        let lib = lib_for(TX_MODULE, cfg);
        let ports = TxPorts::new(lib.port_map()).expect("scoreboard ports");
        TxRig {
            dut: Dut::new(&lib),
            model: TxModel::new(cfg, ports.clone()),
            ports,
        }
    }

    /// Lockstep over `inputs`; the report and the outputs both sides produced.
    pub fn run_report(&mut self, inputs: &[TxInputs]) -> (RunReport, Vec<TxOutputs>) {
        let ports = self.ports.clone();
        let mut rec = TxRecording {
            inner: &mut self.model,
            log: Vec::with_capacity(inputs.len()),
        };
        let mut stim = |c: u64, w: &mut [u32]| ports.pack_inputs(&inputs[c as usize], w);
        let opts = RunOptions {
            module: TX_MODULE.into(),
            ..RunOptions::default()
        };
        let report = run_lockstep(
            &mut self.dut,
            &mut rec,
            inputs.len() as u64,
            &mut stim,
            &opts,
        );
        (report, rec.log)
    }

    /// Lockstep over `inputs`; panics with the divergence report on the first mismatch.
    pub fn run(&mut self, inputs: &[TxInputs]) -> Vec<TxOutputs> {
        let (report, log) = self.run_report(inputs);
        if let Some(d) = &report.divergence {
            panic!("RTL diverged from the model:\n{d}");
        }
        log
    }
}

/// Two reset cycles loading `init_psn`, the usual start of a scoreboard sequence.
pub fn tx_with_reset(base: TxInputs, init_psn: u32) -> Vec<TxInputs> {
    vec![
        TxInputs {
            rst: true,
            init_psn,
            ..base
        };
        2
    ]
}

// ---- nscc_window ----------------------------------------------------------------------------

use mrc_cosim::modules::nscc_window::{NsccModel, NsccPorts, MODULE as NSCC_MODULE};
use mrc_model::nscc::{NsccEvent, NsccWindow, WindowInputs, WindowOutputs};

/// Wraps the NSCC window model and keeps its typed outputs, cycle by cycle.
struct NsccRecording<'a> {
    inner: &'a mut NsccModel,
    log: Vec<WindowOutputs>,
}

impl Stepper for NsccRecording<'_> {
    fn port_map(&self) -> &PortMap {
        self.inner.port_map()
    }
    fn step(&mut self, inputs: &[u32], outputs: &mut [u32]) {
        self.inner.step(inputs, outputs);
        self.log.push(self.inner.ports.unpack_outputs(outputs));
    }
}

/// DUT + model for `nscc_window` on one config.
pub struct NsccRig {
    pub dut: Dut,
    pub model: NsccModel,
    pub ports: NsccPorts,
    cfg: NicConfig,
}

/// A run of events offered back to back (see [`NsccRig::run_events`]).
#[derive(Debug, Clone)]
pub struct EventRun {
    /// The input sequence (two reset cycles first).
    pub inputs: Vec<WindowInputs>,
    /// Outputs every cycle.
    pub log: Vec<WindowOutputs>,
    /// Cycle each event was taken on.
    pub taken_at: Vec<usize>,
    /// Clocks each event occupied the block: taken at edge t, `ev_ready` again after edge
    /// t + cycles - 1, so the next event can be taken at edge t + cycles.
    pub cycles: Vec<usize>,
    /// Outputs after the first edge that shows each event's result (t + cycles).
    pub after: Vec<WindowOutputs>,
}

impl NsccRig {
    pub fn new(cfg: &NicConfig) -> Self {
        let lib = lib_for(NSCC_MODULE, cfg);
        let ports = NsccPorts::new(lib.port_map()).expect("nscc_window ports");
        NsccRig {
            dut: Dut::new(&lib),
            model: NsccModel::new(cfg, ports.clone()),
            ports,
            cfg: cfg.clone(),
        }
    }

    /// Lockstep over `inputs`; the report and, cycle by cycle, the outputs both sides produced.
    pub fn run_report(&mut self, inputs: &[WindowInputs]) -> (RunReport, Vec<WindowOutputs>) {
        let ports = self.ports.clone();
        let mut rec = NsccRecording {
            inner: &mut self.model,
            log: Vec::with_capacity(inputs.len()),
        };
        let mut stim = |c: u64, w: &mut [u32]| ports.pack_inputs(&inputs[c as usize], w);
        let opts = RunOptions {
            module: NSCC_MODULE.into(),
            ..RunOptions::default()
        };
        let report = run_lockstep(
            &mut self.dut,
            &mut rec,
            inputs.len() as u64,
            &mut stim,
            &opts,
        );
        (report, rec.log)
    }

    /// Lockstep over `inputs`; panics with the divergence report on the first mismatch.
    pub fn run(&mut self, inputs: &[WindowInputs]) -> Vec<WindowOutputs> {
        let (report, log) = self.run_report(inputs);
        if let Some(d) = &report.divergence {
            panic!("RTL diverged from the model:\n{d}");
        }
        log
    }

    /// Two reset cycles, then `evs` offered back to back (each held until `ev_ready`; `base`
    /// supplies `inflight` / `next_len`), then idle until the last result shows. Run in
    /// lockstep (panics on a divergence); when each event was taken, how long it took, and
    /// the outputs that first show its result.
    pub fn run_events_with(&mut self, base: WindowInputs, evs: &[NsccEvent]) -> EventRun {
        let (inputs, taken_at) = nscc_event_inputs(&self.cfg, base, evs);
        let log = self.run(&inputs);
        EventRun::new(inputs, log, taken_at)
    }

    /// [`NsccRig::run_events_with`] with `inflight = next_len = 0`.
    pub fn run_events(&mut self, evs: &[NsccEvent]) -> EventRun {
        self.run_events_with(WindowInputs::default(), evs)
    }
}

/// The input sequence of [`NsccRig::run_events_with`] and the clock each event is taken on
/// (found by stepping the model).
pub fn nscc_event_inputs(
    cfg: &NicConfig,
    base: WindowInputs,
    evs: &[NsccEvent],
) -> (Vec<WindowInputs>, Vec<usize>) {
    let base = WindowInputs {
        rst: false,
        ev_valid: false,
        ..base
    };
    let mut shadow = NsccWindow::new(cfg);
    let mut inputs: Vec<WindowInputs> = Vec::new();
    let push = |x: WindowInputs, shadow: &mut NsccWindow, inputs: &mut Vec<WindowInputs>| {
        let ready = shadow.ready();
        shadow.step(&x);
        inputs.push(x);
        ready && x.ev_valid && !x.rst
    };
    let rst = WindowInputs { rst: true, ..base };
    push(rst, &mut shadow, &mut inputs);
    push(rst, &mut shadow, &mut inputs);
    let mut taken_at = Vec::new();
    let mut now = evs.first().map_or(0, |e| e.now());
    for e in evs {
        now = e.now();
        let x = WindowInputs {
            inflight: base.inflight,
            next_len: base.next_len,
            ..WindowInputs::offering(e)
        };
        loop {
            let c = inputs.len();
            if push(x, &mut shadow, &mut inputs) {
                taken_at.push(c);
                break;
            }
        }
    }
    let idle = WindowInputs {
        now_ns: now,
        ..base
    };
    while !shadow.ready() {
        push(idle, &mut shadow, &mut inputs);
    }
    push(idle, &mut shadow, &mut inputs);
    push(idle, &mut shadow, &mut inputs);
    (inputs, taken_at)
}

impl EventRun {
    /// Event lengths and results from a run's outputs (`log[c]` after edge `c`).
    pub fn new(inputs: Vec<WindowInputs>, log: Vec<WindowOutputs>, taken_at: Vec<usize>) -> Self {
        let cycles: Vec<usize> = taken_at
            .iter()
            .map(|&t| (t..log.len()).find(|&c| log[c].ev_ready).unwrap() - t + 1)
            .collect();
        let after = taken_at
            .iter()
            .zip(&cycles)
            .map(|(&t, &l)| log[t + l])
            .collect();
        EventRun {
            inputs,
            log,
            taken_at,
            cycles,
            after,
        }
    }
}

/// Wraps the CSR model and keeps its typed outputs, cycle by cycle.
struct CsrRecording<'a> {
    inner: &'a mut mrc_cosim::modules::mrc_csr::CsrModel,
    log: Vec<mrc_model::mrc_csr::CsrOutputs>,
}

impl Stepper for CsrRecording<'_> {
    fn port_map(&self) -> &PortMap {
        self.inner.port_map()
    }
    fn step(&mut self, inputs: &[u32], outputs: &mut [u32]) {
        self.inner.step(inputs, outputs);
        self.log.push(self.inner.ports.unpack_outputs(outputs));
    }
}

/// DUT + model for `mrc_csr` on one config. State carries over between `run` calls, so a
/// test can issue one access, look at the answer and decide the next (a driver over MMIO).
pub struct CsrRig {
    pub dut: Dut,
    pub model: mrc_cosim::modules::mrc_csr::CsrModel,
    pub ports: mrc_cosim::modules::mrc_csr::CsrWirePorts,
}

impl CsrRig {
    pub fn new(cfg: &NicConfig) -> Self {
        use mrc_cosim::modules::mrc_csr::{CsrModel, CsrWirePorts, MODULE};
        let lib = lib_for(MODULE, cfg);
        let ports = CsrWirePorts::new(lib.port_map(), cfg).expect("mrc_csr ports");
        CsrRig {
            dut: Dut::new(&lib),
            model: CsrModel::new(cfg, ports.clone()),
            ports,
        }
    }

    /// Inputs with nothing offered and the right vector lengths.
    pub fn idle(&self) -> mrc_model::mrc_csr::CsrInputs {
        self.model.model.idle_inputs()
    }

    pub fn run_report(
        &mut self,
        inputs: &[mrc_model::mrc_csr::CsrInputs],
    ) -> (RunReport, Vec<mrc_model::mrc_csr::CsrOutputs>) {
        let ports = self.ports.clone();
        let mut rec = CsrRecording {
            inner: &mut self.model,
            log: Vec::with_capacity(inputs.len()),
        };
        let mut stim = |c: u64, w: &mut [u32]| ports.pack_inputs(&inputs[c as usize], w);
        let opts = RunOptions {
            module: mrc_cosim::modules::mrc_csr::MODULE.into(),
            ..RunOptions::default()
        };
        let report = run_lockstep(
            &mut self.dut,
            &mut rec,
            inputs.len() as u64,
            &mut stim,
            &opts,
        );
        (report, rec.log)
    }

    /// Lockstep over `inputs`; panics with the divergence report on the first mismatch.
    pub fn run(
        &mut self,
        inputs: &[mrc_model::mrc_csr::CsrInputs],
    ) -> Vec<mrc_model::mrc_csr::CsrOutputs> {
        let (report, log) = self.run_report(inputs);
        if let Some(d) = &report.divergence {
            panic!("RTL diverged from the model:\n{d}");
        }
        log
    }
}

/// DUT + model for `mrc_core` on one config, stepped one cycle at a time (closed-loop tests
/// decide each cycle's inputs from the last outputs) or over a traffic source.
pub struct CoreRig {
    pub rtl: mrc_cosim::modules::mrc_core::CoreRtl,
    pub model: mrc_model::mrc_core::MrcCore,
    cycle: u64,
}

impl CoreRig {
    pub fn new(cfg: &NicConfig) -> Self {
        use mrc_cosim::modules::mrc_core::{CoreRtl, MODULE};
        let lib = lib_for(MODULE, cfg);
        CoreRig {
            rtl: CoreRtl::new(&lib, cfg).expect("mrc_core ports"),
            model: mrc_model::mrc_core::MrcCore::new(cfg),
            cycle: 0,
        }
    }

    /// One clock on both; panics naming the cycle, the inputs and both outputs if they differ.
    pub fn step(
        &mut self,
        x: &mrc_model::mrc_core::CoreInputs,
    ) -> mrc_model::mrc_core::CoreOutputs {
        use mrc_model::mrc_core::CoreSim;
        // The model sees the inputs as the ports carry them.
        let ports = &self.rtl.ports;
        let mut w = vec![0u32; ports.port_map().in_words()];
        ports.pack_inputs(x, &mut w);
        let xm = ports.unpack_inputs(&w);
        let want = self.model.step(&xm);
        let got = self.rtl.step(x);
        assert_eq!(
            got, want,
            "mrc_core RTL diverged from the model at cycle {} (left RTL, right model); inputs {xm:?}",
            self.cycle
        );
        self.cycle += 1;
        want
    }

    /// The reset pulse and the clock it acts in, on both (see `CoreSim::reset`).
    pub fn reset(&mut self) -> mrc_model::mrc_core::CoreOutputs {
        mrc_model::mrc_core::CoreSim::reset(self)
    }

    /// Lockstep over `cycles` of [`CoreTraffic`](mrc_cosim::modules::mrc_core::CoreTraffic);
    /// the report carries the first divergence (with its VCD window).
    pub fn run_traffic(
        cfg: &NicConfig,
        seed: u64,
        mix: mrc_cosim::modules::mrc_core::CoreMix,
        cycles: u64,
    ) -> RunReport {
        use mrc_cosim::modules::mrc_core::{CoreModel, CorePorts, CoreTraffic, MODULE};
        let lib = lib_for(MODULE, cfg);
        let ports = CorePorts::new(lib.port_map(), cfg).expect("mrc_core ports");
        let mut dut = Dut::new(&lib);
        let mut model = CoreModel::new(cfg, ports.clone());
        let mut traffic = CoreTraffic::new(cfg, seed, mix);
        let mut stim = |c: u64, w: &mut [u32]| {
            let x = traffic.next_inputs(c);
            ports.pack_inputs(&x, w);
        };
        let opts = RunOptions {
            module: MODULE.into(),
            ..RunOptions::default()
        };
        run_lockstep(&mut dut, &mut model, cycles, &mut stim, &opts)
    }
}

impl mrc_model::mrc_core::CoreSim for CoreRig {
    fn step(&mut self, x: &mrc_model::mrc_core::CoreInputs) -> mrc_model::mrc_core::CoreOutputs {
        CoreRig::step(self, x)
    }
    fn qps(&self) -> usize {
        self.model.qps()
    }
}

/// The golden model seeing its inputs as the RTL's ports carry them (pack, then unpack: a
/// value wider than its port is cut the same way on both sides).
pub struct ModelAtPorts {
    ports: mrc_cosim::modules::mrc_core::CorePorts,
    model: mrc_model::mrc_core::MrcCore,
    w: Vec<u32>,
}

impl mrc_model::mrc_core::CoreSim for ModelAtPorts {
    fn step(&mut self, x: &mrc_model::mrc_core::CoreInputs) -> mrc_model::mrc_core::CoreOutputs {
        self.w.iter_mut().for_each(|v| *v = 0);
        self.ports.pack_inputs(x, &mut self.w);
        let xm = self.ports.unpack_inputs(&self.w);
        self.model.step(&xm)
    }
    fn qps(&self) -> usize {
        self.model.qps()
    }
}

/// The Verilated `mrc_core` for `cfg` (built once per process, cached on disk) in lockstep
/// with its golden model: a `CoreSim` that the host driver's cosim backend and the network
/// simulator's core endpoint drive like any core; `mismatches` / `first` say whether the RTL
/// ever differed from the model.
pub fn core_lockstep(
    cfg: &NicConfig,
) -> mrc_model::mrc_core::Lockstep<mrc_cosim::modules::mrc_core::CoreRtl, ModelAtPorts> {
    use mrc_cosim::modules::mrc_core::{CoreRtl, MODULE};
    let lib = lib_for(MODULE, cfg);
    let rtl = CoreRtl::new(&lib, cfg).expect("mrc_core ports");
    let ports = rtl.ports.clone();
    let w = vec![0; ports.port_map().in_words()];
    mrc_model::mrc_core::Lockstep::new(
        rtl,
        ModelAtPorts {
            ports,
            model: mrc_model::mrc_core::MrcCore::new(cfg),
            w,
        },
    )
}

/// `configs/<name>.toml`.
pub fn example_config(name: &str) -> NicConfig {
    let path = format!("{}/../configs/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    NicConfig::from_toml(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}
