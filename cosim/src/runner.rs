//! Lockstep comparison of two [`Stepper`]s, stopping at the first divergence with a report and a
//! VCD of the cycles leading up to it.
//!
//! Tracing whole runs costs ≈12× and hundreds of MB per million cycles, so instead the runner
//! keeps the last `vcd_window` cycles of words in a ring buffer and only writes a VCD on failure.

use crate::ports::{Port, PortMap};
use crate::stepper::Stepper;
use std::fmt;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use vcd::{TimescaleUnit, Value};

/// Progress callback: `(cycles done, total cycles)`. `Fn` + `Sync` so it can drive a shared
/// progress bar from `&RunOptions`.
pub type ProgressFn = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// How a lockstep run reports.
#[derive(Clone)]
pub struct RunOptions {
    /// Cycles of history kept for the divergence VCD (the divergent cycle included).
    pub vcd_window: usize,
    /// Directory the divergence VCD is written to (created if missing).
    pub vcd_dir: PathBuf,
    /// Name used for the VCD file and scope; defaults to the DUT's module when empty.
    pub module: String,
    /// Called every `progress_every` cycles and once at the end.
    pub progress: Option<ProgressFn>,
    /// Cycles between progress calls.
    pub progress_every: u64,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            vcd_window: 256,
            vcd_dir: crate::verilator::target_dir().join("cosim-vcd"),
            module: String::new(),
            progress: None,
            progress_every: 1 << 16,
        }
    }
}

impl fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOptions")
            .field("vcd_window", &self.vcd_window)
            .field("vcd_dir", &self.vcd_dir)
            .field("module", &self.module)
            .field("progress", &self.progress.as_ref().map(|_| "Fn"))
            .field("progress_every", &self.progress_every)
            .finish()
    }
}

/// A named port value, rendered as zero-padded hex so any width prints exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortValue {
    /// Port name.
    pub name: String,
    /// Port width in bits.
    pub width: u32,
    /// `0x`-prefixed hex.
    pub hex: String,
}

/// An output port whose DUT value differs from the model's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Port name.
    pub port: String,
    /// Port width in bits.
    pub width: u32,
    /// The model's value (hex).
    pub expected: String,
    /// The DUT's value (hex).
    pub actual: String,
}

/// The first cycle at which DUT and model disagreed, with everything needed to start debugging.
#[derive(Debug, Clone)]
pub struct Divergence {
    /// Module (or run) name.
    pub module: String,
    /// Cycle index (0-based) whose outputs differed.
    pub cycle: u64,
    /// All inputs applied on that cycle.
    pub inputs: Vec<PortValue>,
    /// The differing outputs.
    pub mismatched: Vec<Mismatch>,
    /// Every output on that cycle as `(name, expected hex, actual hex)`.
    pub all_outputs: Vec<(String, String, String)>,
    /// Raw words of that cycle, for programmatic decoding by adapters.
    pub input_words: Vec<u32>,
    /// Raw expected (model) output words.
    pub expected_words: Vec<u32>,
    /// Raw actual (DUT) output words.
    pub actual_words: Vec<u32>,
    /// The window VCD, if it could be written.
    pub vcd_path: Option<PathBuf>,
    /// Why the VCD could not be written, if it could not.
    pub vcd_error: Option<String>,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "cosim divergence in `{}` at cycle {} ({} output port(s) differ)",
            self.module,
            self.cycle,
            self.mismatched.len()
        )?;
        let w = self
            .mismatched
            .iter()
            .map(|m| m.port.len())
            .chain(self.inputs.iter().map(|p| p.name.len()))
            .max()
            .unwrap_or(0);
        for m in &self.mismatched {
            writeln!(
                f,
                "  {:w$}  expected {}  got {}",
                m.port, m.expected, m.actual
            )?;
        }
        writeln!(f, "inputs on cycle {}:", self.cycle)?;
        for p in &self.inputs {
            writeln!(f, "  {:w$}  {}", p.name, p.hex)?;
        }
        match (&self.vcd_path, &self.vcd_error) {
            (Some(p), _) => write!(
                f,
                "waveform (last cycles, `<port>__expected` = model): {}",
                p.display()
            ),
            (None, Some(e)) => write!(f, "waveform could not be written: {e}"),
            (None, None) => write!(f, "no waveform written"),
        }
    }
}

/// Outcome of [`run_lockstep`].
#[derive(Debug, Clone)]
pub struct RunReport {
    /// Cycles executed, including the divergent one.
    pub cycles_run: u64,
    /// 0 or 1: the run stops at the first divergent cycle.
    pub mismatches: u64,
    /// Details of the divergence, if any.
    pub divergence: Option<Divergence>,
    /// Wall-clock time of the run (excluding VCD writing).
    pub elapsed: Duration,
}

impl RunReport {
    /// True when no divergence was found.
    pub fn passed(&self) -> bool {
        self.divergence.is_none()
    }
}

/// Fixed-size history of (inputs, expected, actual) words, one slot per cycle, allocation-free
/// in the hot loop.
struct Ring {
    stride: usize,
    in_w: usize,
    out_w: usize,
    cap: usize,
    buf: Vec<u32>,
}

impl Ring {
    fn new(cap: usize, in_w: usize, out_w: usize) -> Ring {
        let stride = in_w + 2 * out_w;
        Ring {
            stride,
            in_w,
            out_w,
            cap,
            buf: vec![0; stride * cap],
        }
    }
    fn slot(&mut self, cycle: u64) -> (&mut [u32], &mut [u32], &mut [u32]) {
        let i = (cycle % self.cap as u64) as usize * self.stride;
        let s = &mut self.buf[i..i + self.stride];
        let (inp, rest) = s.split_at_mut(self.in_w);
        let (exp, act) = rest.split_at_mut(self.out_w);
        (inp, exp, act)
    }
    fn get(&self, cycle: u64) -> (&[u32], &[u32], &[u32]) {
        let i = (cycle % self.cap as u64) as usize * self.stride;
        let s = &self.buf[i..i + self.stride];
        (
            &s[..self.in_w],
            &s[self.in_w..self.in_w + self.out_w],
            &s[self.in_w + self.out_w..],
        )
    }
}

/// Runs `dut` and `model` in lockstep for up to `cycles` cycles.
///
/// Each cycle `stimulus(cycle, inputs)` fills the input words (they start as the previous
/// cycle's values, so stimuli may update only what changes), both steppers take one clock edge,
/// and every output word is compared. Stops at the first divergence.
///
/// # Panics
/// If the two steppers' port layouts differ: comparing them word by word would be meaningless.
pub fn run_lockstep(
    dut: &mut dyn Stepper,
    model: &mut dyn Stepper,
    cycles: u64,
    stimulus: &mut dyn FnMut(u64, &mut [u32]),
    opts: &RunOptions,
) -> RunReport {
    let pm = dut.port_map().clone();
    assert!(
        pm.same_layout(model.port_map()),
        "DUT and model port maps differ:\n  dut:   {:?}\n  model: {:?}",
        pm,
        model.port_map()
    );
    let (in_w, out_w) = (pm.in_words(), pm.out_words());
    let window = opts.vcd_window.max(1);
    let mut ring = Ring::new(window, in_w, out_w);
    let mut inputs = vec![0u32; in_w];
    let mut expected = vec![0u32; out_w];
    let mut actual = vec![0u32; out_w];
    let every = opts.progress_every.max(1);
    let start = Instant::now();
    for cycle in 0..cycles {
        stimulus(cycle, &mut inputs);
        mask_inputs(&pm, &mut inputs);
        dut.step(&inputs, &mut actual);
        model.step(&inputs, &mut expected);
        let (ri, re, ra) = ring.slot(cycle);
        ri.copy_from_slice(&inputs);
        re.copy_from_slice(&expected);
        ra.copy_from_slice(&actual);
        if actual != expected {
            let elapsed = start.elapsed();
            let module = if opts.module.is_empty() {
                pm.module.clone()
            } else {
                opts.module.clone()
            };
            let mut d = divergence(&pm, &module, cycle, &inputs, &expected, &actual);
            let first = (cycle + 1).saturating_sub(window as u64);
            let path = opts
                .vcd_dir
                .join(format!("{}_divergence_cycle{cycle}.vcd", sanitize(&module)));
            match write_vcd(&path, &module, &pm, &ring, first, cycle) {
                Ok(()) => d.vcd_path = Some(path),
                Err(e) => d.vcd_error = Some(format!("{}: {e}", path.display())),
            }
            if let Some(p) = &opts.progress {
                p(cycle + 1, cycles);
            }
            return RunReport {
                cycles_run: cycle + 1,
                mismatches: 1,
                divergence: Some(d),
                elapsed,
            };
        }
        if let Some(p) = &opts.progress {
            if (cycle + 1) % every == 0 {
                p(cycle + 1, cycles);
            }
        }
    }
    let elapsed = start.elapsed();
    if let Some(p) = &opts.progress {
        p(cycles, cycles);
    }
    RunReport {
        cycles_run: cycles,
        mismatches: 0,
        divergence: None,
        elapsed,
    }
}

/// Clears bits above each port's width so a sloppy stimulus cannot make DUT and model disagree
/// about bits that do not exist.
fn mask_inputs(pm: &PortMap, words: &mut [u32]) {
    for p in &pm.inputs {
        if p.width % 32 != 0 {
            words[p.word_offset + p.words() - 1] &= p.top_mask();
        }
    }
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn divergence(
    pm: &PortMap,
    module: &str,
    cycle: u64,
    inputs: &[u32],
    expected: &[u32],
    actual: &[u32],
) -> Divergence {
    let value = |p: &Port, w: &[u32]| PortValue {
        name: p.name.clone(),
        width: p.width,
        hex: p.hex(w),
    };
    let mismatched = pm
        .outputs
        .iter()
        .filter(|p| p.slice(expected) != p.slice(actual))
        .map(|p| Mismatch {
            port: p.name.clone(),
            width: p.width,
            expected: p.hex(expected),
            actual: p.hex(actual),
        })
        .collect();
    Divergence {
        module: module.to_string(),
        cycle,
        inputs: pm.inputs.iter().map(|p| value(p, inputs)).collect(),
        mismatched,
        all_outputs: pm
            .outputs
            .iter()
            .map(|p| (p.name.clone(), p.hex(expected), p.hex(actual)))
            .collect(),
        input_words: inputs.to_vec(),
        expected_words: expected.to_vec(),
        actual_words: actual.to_vec(),
        vcd_path: None,
        vcd_error: None,
    }
}

fn bits(words: &[u32], width: u32) -> impl Iterator<Item = Value> + '_ {
    (0..width)
        .rev()
        .map(move |i| ((words[(i / 32) as usize] >> (i % 32)) & 1 == 1).into())
}

/// Writes cycles `first..=last` from the ring: cycle N's inputs at time 10N with the clock low,
/// the rising edge and the resulting outputs at 10N+5.
fn write_vcd(
    path: &Path,
    module: &str,
    pm: &PortMap,
    ring: &Ring,
    first: u64,
    last: u64,
) -> io::Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    let file = std::fs::File::create(path)?;
    let mut w = vcd::Writer::new(BufWriter::new(file));
    w.comment(&format!(
        "mrc-cosim divergence window: cycles {first}..={last}; cycle N starts at time 10N, \
         rising edge at 10N+5; <port> = DUT, <port>__expected = model"
    ))?;
    w.timescale(1, TimescaleUnit::NS)?;
    w.add_module(&sanitize(module))?;
    let clock = w.add_wire(1, "clock")?;
    let in_ids = pm
        .inputs
        .iter()
        .map(|p| w.add_wire(p.width, &p.name))
        .collect::<io::Result<Vec<_>>>()?;
    let mut out_ids = Vec::new();
    for p in &pm.outputs {
        let act = w.add_wire(p.width, &p.name)?;
        let exp = w.add_wire(p.width, &format!("{}__expected", p.name))?;
        out_ids.push((act, exp));
    }
    w.upscope()?;
    w.enddefinitions()?;

    let change = |w: &mut vcd::Writer<_>, id, p: &Port, words: &[u32]| -> io::Result<()> {
        if p.width == 1 {
            w.change_scalar(id, words[p.word_offset] & 1 == 1)
        } else {
            w.change_vector(id, bits(p.slice(words), p.width))
        }
    };
    let mut prev: Option<(Vec<u32>, Vec<u32>, Vec<u32>)> = None;
    for cycle in first..=last {
        let (inp, exp, act) = ring.get(cycle);
        w.timestamp(10 * cycle)?;
        let initial = prev.is_none();
        if initial {
            w.begin(vcd::SimulationCommand::Dumpvars)?;
        }
        w.change_scalar(clock, Value::V0)?;
        for (p, id) in pm.inputs.iter().zip(&in_ids) {
            if prev
                .as_ref()
                .is_none_or(|(pi, _, _)| p.slice(pi) != p.slice(inp))
            {
                change(&mut w, *id, p, inp)?;
            }
        }
        if initial {
            // Outputs before the first recorded edge are unknown to us: show them as x.
            for (p, (a, e)) in pm.outputs.iter().zip(&out_ids) {
                for id in [*a, *e] {
                    if p.width == 1 {
                        w.change_scalar(id, Value::X)?;
                    } else {
                        w.change_vector(id, std::iter::repeat_n(Value::X, p.width as usize))?;
                    }
                }
            }
            w.end()?;
        }
        w.timestamp(10 * cycle + 5)?;
        w.change_scalar(clock, Value::V1)?;
        for (p, (a, e)) in pm.outputs.iter().zip(&out_ids) {
            let changed = |old: &[u32], new: &[u32]| p.slice(old) != p.slice(new);
            if prev.as_ref().is_none_or(|(_, _, pa)| changed(pa, act)) {
                change(&mut w, *a, p, act)?;
            }
            if prev.as_ref().is_none_or(|(_, pe, _)| changed(pe, exp)) {
                change(&mut w, *e, p, exp)?;
            }
        }
        prev = Some((inp.to_vec(), exp.to_vec(), act.to_vec()));
    }
    w.timestamp(10 * (last + 1))?;
    w.change_scalar(clock, Value::V0)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 8-bit counter with enable and reset; `bug_at` makes it count twice on that cycle.
    struct Counter {
        pm: PortMap,
        count: u8,
        cycle: u64,
        bug_at: Option<u64>,
    }

    impl Stepper for Counter {
        fn port_map(&self) -> &PortMap {
            &self.pm
        }
        fn step(&mut self, inp: &[u32], out: &mut [u32]) {
            let (rst, en) = (self.pm.inputs[0].get(inp), self.pm.inputs[1].get(inp));
            if rst == 1 {
                self.count = 0;
            } else if en == 1 {
                self.count = self.count.wrapping_add(1);
                if Some(self.cycle) == self.bug_at {
                    self.count = self.count.wrapping_add(1);
                }
            }
            self.pm.outputs[0].set(out, self.count.into());
            self.cycle += 1;
        }
    }

    fn counter(bug_at: Option<u64>) -> Counter {
        Counter {
            pm: PortMap::from_widths("ctr", &[("rst", 1), ("en", 1)], &[("count", 8)]),
            count: 0,
            cycle: 0,
            bug_at,
        }
    }

    fn stim(c: u64, w: &mut [u32]) {
        w[0] = (c < 2) as u32;
        w[1] = !matches!(c % 3, 0) as u32;
    }

    #[test]
    fn identical_models_pass() {
        let opts = RunOptions::default();
        let r = run_lockstep(
            &mut counter(None),
            &mut counter(None),
            1000,
            &mut stim,
            &opts,
        );
        assert!(r.passed());
        assert_eq!((r.cycles_run, r.mismatches), (1000, 0));
    }

    #[test]
    fn divergence_reports_cycle_and_writes_vcd() {
        let dir = std::env::temp_dir().join(format!("cosim-runner-{}", std::process::id()));
        let opts = RunOptions {
            vcd_window: 8,
            vcd_dir: dir.clone(),
            ..RunOptions::default()
        };
        let r = run_lockstep(
            &mut counter(Some(20)),
            &mut counter(None),
            100,
            &mut stim,
            &opts,
        );
        let d = r.divergence.expect("divergence");
        assert_eq!((d.cycle, r.cycles_run, r.mismatches), (20, 21, 1));
        assert_eq!(d.mismatched.len(), 1);
        let text = d.to_string();
        assert!(text.contains("cycle 20"), "{text}");
        assert!(text.contains("count  expected 0x0d  got 0x0e"), "{text}");
        let vcd = std::fs::read_to_string(d.vcd_path.unwrap()).unwrap();
        assert!(
            vcd.contains("count__expected") && vcd.contains("#205\n"),
            "{vcd}"
        );
        assert!(
            vcd.contains("#130\n") && !vcd.contains("#120\n"),
            "window of 8: {vcd}"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
