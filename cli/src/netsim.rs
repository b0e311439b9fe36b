//! `mrcgen netsim`: run a scenario of the packet-level network simulator for each transport
//! (and seed) it names, in parallel across cores; print the table, write CSVs, JSON and SVG
//! plots.

use crate::outdir::write_atomically;
use crate::parallel::{default_jobs, map_parallel};
use crate::Fail;
use mrc_model::netsim::report::{self, Recovery};
use mrc_model::netsim::results::RunResult;
use mrc_model::netsim::scenario::{Scenario, TransportChoice, BUILTINS};
use mrc_model::netsim::sim::Sim;
use mrc_model::netsim::{Ps, US};
use plotters::prelude::*;
use serde::Serialize;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::time::Instant;

const MARKER: &str = ".mrcgen-netsim";

/// One run: a transport on the scenario with one seed.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub transport: String,
    pub seed: u64,
    pub wall_s: f64,
    pub events_per_s: f64,
    pub hops_per_s: f64,
    /// Goodput recovery after the scenario's first fault (None without faults).
    pub recovery: Option<Recovery>,
    /// Flows that lost packets to a down link, and their own goodput's recovery.
    pub hit_flows: usize,
    pub hit_recovery: Option<Recovery>,
    /// Incast victim's throughput, Gb/s.
    pub victim_gbps: Option<f64>,
    /// Mean per-flow throughput / NIC line rate.
    pub flow_rate_fraction: f64,
    pub result: RunResult,
}

pub fn list() {
    for (name, text) in BUILTINS {
        let d = Scenario::from_toml(text)
            .map(|s| s.description)
            .unwrap_or_default();
        println!("{name:<26} {d}");
    }
}

/// Run every (transport, seed) of the scenario on `jobs` threads.
pub fn run_scenario(
    s: &Scenario,
    transports: &[String],
    seeds: &[u64],
    jobs: usize,
    progress: bool,
) -> Result<Vec<Run>, Fail> {
    for t in transports {
        if TransportChoice::parse(t).is_none() {
            return Err(Fail(
                2,
                format!(
                    "unknown transport `{t}`; known: {}",
                    mrc_model::netsim::scenario::TRANSPORT_NAMES.join(", ")
                ),
            ));
        }
    }
    let base = s.sim_config().map_err(|e| Fail(2, e.to_string()))?;
    let work: Vec<(String, u64)> = seeds
        .iter()
        .flat_map(|&seed| transports.iter().map(move |t| (t.clone(), seed)))
        .collect();
    let multi = indicatif::MultiProgress::new();
    if !progress {
        multi.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let first_fault_us = base.faults.first().map(|f| f.at as f64 / US as f64);
    let victim = (s.traffic.pattern == "incast" && s.traffic.victim_bytes.unwrap_or(0) > 0)
        .then(|| base.flows.len() as u32 - 1);
    let line = s.nic_gbps();
    Ok(map_parallel(&work, jobs, |_, (tname, seed)| {
        let choice = TransportChoice::parse(tname).expect("checked above");
        let mut s2 = s.clone();
        s2.seed = *seed;
        let nic = s2
            .nic_config_for(choice)
            .expect("checked with the scenario");
        let transport = mrc_model::transport::make(choice, &nic);
        let mut cfg = s2
            .sim_config_for(choice)
            .expect("checked with the scenario");
        cfg.seed = *seed;
        let stop = cfg.stop_at;
        let flows = cfg.flows.len();
        let pb = multi.add(indicatif::ProgressBar::new(stop / 1000));
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{prefix:>16} [{elapsed_precise}] {bar:30} {pos}/{len} ns simulated  {msg}",
            )
            .expect("static template"),
        );
        pb.set_prefix(format!("{tname} s{seed}"));
        let t0 = Instant::now();
        let mut sim = Sim::new(cfg, transport.as_ref());
        let mut last = Instant::now();
        let r = sim.run(&mut |now: Ps, _stop: Ps, done: usize| {
            if last.elapsed().as_millis() >= 100 {
                last = Instant::now();
                pb.set_position(now / 1000);
                pb.set_message(format!("{done}/{flows} flows done"));
            }
        });
        let wall = t0.elapsed().as_secs_f64();
        pb.finish_and_clear();
        let hit = report::hit_by_link_faults(&r);
        Run {
            transport: tname.clone(),
            seed: *seed,
            wall_s: wall,
            events_per_s: r.events as f64 / wall.max(1e-9),
            hops_per_s: r.packet_hops as f64 / wall.max(1e-9),
            recovery: first_fault_us.and_then(|at| report::recovery(&r.series, at, 100.0, 0.95)),
            hit_flows: hit.len(),
            hit_recovery: first_fault_us
                .and_then(|at| report::recovery_of(&r, &hit, at, 100.0, 0.95)),
            victim_gbps: victim.and_then(|v| report::flow_gbps(&r, v)),
            flow_rate_fraction: report::mean_flow_gbps(&r) / line,
            result: r,
        }
    }))
}

/// Peak resident memory of this process (Linux), MiB.
pub fn peak_rss_mib() -> Option<f64> {
    let s = fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn opt(x: Option<f64>, prec: usize) -> String {
    x.map_or("-".into(), |v| format!("{v:.prec$}"))
}

pub fn table(s: &Scenario, runs: &[Run]) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "scenario {}: {}", s.name, s.description);
    let _ = writeln!(
        t,
        "{:<14} {:>5} {:>9} {:>8} {:>8} {:>8} {:>8} {:>7} {:>8} {:>7} {:>6} {:>6} {:>5} {:>10} {:>14}",
        "transport", "seed", "done/fail", "min us", "p50 us", "p99 us", "max us", "p99/id",
        "Gb/s", "rtx", "trims", "NACKs", "TOs", "bytes lost", "drop dn/ls/q"
    );
    for r in runs {
        let x = &r.result;
        let _ = writeln!(
            t,
            "{:<14} {:>5} {:>9} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>7.2} {:>8.1} {:>7} {:>6} {:>6} {:>5} {:>10} {:>14}",
            r.transport,
            r.seed,
            format!("{}/{}", x.finished, x.failed),
            x.fct_us.min,
            x.fct_us.p50,
            x.fct_us.p99,
            x.fct_us.max,
            x.fct_slowdown.p99,
            x.goodput_gbps,
            x.retransmits,
            x.trims,
            x.nacks,
            x.timeouts,
            x.bytes_lost,
            format!("{}/{}/{}", x.drops.link_down, x.drops.random_loss, x.drops.queue_full),
        );
    }
    let line = s.nic_gbps();
    let _ = writeln!(t);
    for r in runs {
        let x = &r.result;
        let mut extra = format!(
            "{:<14} s{}: mean flow rate {:.1} % of {line:.0} Gb/s line rate, ideal FCT p50 {:.1} us",
            r.transport,
            r.seed,
            r.flow_rate_fraction * 100.0,
            ideal_fct_p50_us(x)
        );
        if let Some(rc) = r.recovery {
            let _ = write!(
                extra,
                "; goodput {:.0} Gb/s before the fault, dip {:.0}, back to >= 95 % after {} us",
                rc.before_gbps,
                rc.dip_gbps,
                opt(rc.after_us, 1)
            );
        }
        if let (Some(at), Some(last)) = (x.timeline.first().map(|t| t.0), x.last_data_link_down_us)
        {
            let _ = write!(
                extra,
                "; data lost to down links: 90 % within {} us of the first fault, the last after {:.1} us",
                opt(report::link_down_loss_span(&x.series, at, 0.9), 0),
                last - at
            );
        }
        if let Some(rc) = r.hit_recovery {
            let _ = write!(
                extra,
                "; the {} flows that lost packets to a down link: {:.0} Gb/s before, dip {:.0}, back to >= 95 % after {} us",
                r.hit_flows,
                rc.before_gbps,
                rc.dip_gbps,
                opt(rc.after_us, 1)
            );
        }
        if let Some(v) = r.victim_gbps {
            let _ = write!(
                extra,
                "; victim {v:.1} Gb/s ({:.1} % of line rate)",
                v / line * 100.0
            );
        }
        let _ = writeln!(t, "{extra}");
    }
    let _ = writeln!(t);
    for r in runs {
        let x = &r.result;
        let _ = writeln!(
            t,
            "{:<14} s{}: {} events, {} packet-hops in {:.2} s wall: {:.2} M events/s, {:.2} M hops/s; hash {:016x}",
            r.transport,
            r.seed,
            x.events,
            x.packet_hops,
            r.wall_s,
            r.events_per_s / 1e6,
            r.hops_per_s / 1e6,
            x.hash
        );
    }
    if let Some(m) = peak_rss_mib() {
        let _ = writeln!(t, "peak memory {m:.0} MiB");
    }
    t
}

fn ideal_fct_p50_us(x: &RunResult) -> f64 {
    let v: Vec<f64> = x.flows.iter().map(|f| f.ideal_fct_us).collect();
    mrc_model::netsim::results::Summary::of(&v).p50
}

fn flows_csv(r: &RunResult) -> String {
    let mut s = String::from(
        "id,src,dst,bytes,start_ns,fct_us,ideal_fct_us,delivered,dup_bytes,bytes_lost,failed,data_sent,retransmits,timeouts,nacks,trims\n",
    );
    for f in &r.flows {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{:.3},{},{},{},{},{},{},{},{},{}",
            f.id,
            f.src,
            f.dst,
            f.bytes,
            f.start_ns,
            f.fct_us.map_or(String::new(), |v| format!("{v:.3}")),
            f.ideal_fct_us,
            f.bytes_delivered,
            f.dup_bytes,
            f.bytes_lost,
            f.failed,
            f.data_sent,
            f.retransmits,
            f.timeouts,
            f.nacks,
            f.trims
        );
    }
    s
}

fn series_csv(r: &RunResult) -> String {
    let se = &r.series;
    let mut s = String::from("time_us,goodput_gbps");
    for p in 0..se.plane_util.len() {
        let _ = write!(s, ",plane{p}_util");
    }
    for (id, _) in &se.cwnd {
        let _ = write!(s, ",flow{id}_cwnd");
    }
    for (id, _) in &se.rate_mbps {
        let _ = write!(s, ",flow{id}_rate_mbps");
    }
    s.push('\n');
    for i in 0..se.goodput_gbps.len() {
        let _ = write!(
            s,
            "{:.3},{:.3}",
            i as f64 * se.bucket_us,
            se.goodput_gbps[i]
        );
        for p in &se.plane_util {
            let _ = write!(s, ",{:.4}", p.get(i).copied().unwrap_or(0.0));
        }
        for (_, v) in se.cwnd.iter().chain(&se.rate_mbps) {
            let _ = write!(s, ",{}", v.get(i).copied().unwrap_or(0));
        }
        s.push('\n');
    }
    s
}

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// One line chart: named series of (x, y), dashed grey verticals at `marks` (fault times).
fn line_plot(
    title: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
    marks: &[f64],
) -> Result<String, Fail> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 420)).into_drawing_area();
        root.fill(&WHITE)?;
        let x1 = series
            .iter()
            .flat_map(|s| s.1.last().map(|p| p.0))
            .fold(1.0, f64::max);
        let ymax = series
            .iter()
            .flat_map(|s| s.1.iter().map(|p| p.1))
            .fold(0.0, f64::max)
            .max(1e-9)
            * 1.15;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..x1, 0.0..ymax)?;
        chart
            .configure_mesh()
            .x_desc("simulated time (us)")
            .y_desc(y_desc)
            .label_style(("sans-serif", 12))
            .draw()?;
        for &m in marks {
            chart.draw_series(LineSeries::new(
                vec![(m, 0.0), (m, ymax)],
                ShapeStyle {
                    color: RGBColor(160, 160, 160).to_rgba(),
                    filled: false,
                    stroke_width: 1,
                },
            ))?;
        }
        for (i, (name, pts)) in series.iter().enumerate() {
            let style = ShapeStyle {
                color: COLORS[i % COLORS.len()].to_rgba(),
                filled: false,
                stroke_width: 2,
            };
            chart
                .draw_series(LineSeries::new(pts.clone(), style))?
                .label(name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
        if !series.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 12))
                .draw()?;
        }
        root.present()?;
    }
    Ok(svg)
}

fn at(se: &mrc_model::netsim::results::Series, i: usize) -> f64 {
    i as f64 * se.bucket_us
}

/// The plots of the first seed's runs.
pub fn plots(s: &Scenario, runs: &[Run]) -> Result<Vec<(String, String)>, Fail> {
    let seed = runs.first().map_or(s.seed, |r| r.seed);
    let first: Vec<&Run> = runs.iter().filter(|r| r.seed == seed).collect();
    let marks: Vec<f64> = first
        .first()
        .map(|r| r.result.timeline.iter().map(|t| t.0).collect())
        .unwrap_or_default();
    let mut marks_dedup = marks.clone();
    marks_dedup.dedup();
    let mut out = Vec::new();
    let goodput: Vec<(String, Vec<(f64, f64)>)> = first
        .iter()
        .map(|r| {
            let se = &r.result.series;
            let pts = se
                .goodput_gbps
                .iter()
                .enumerate()
                .map(|(i, &g)| (at(se, i), g))
                .collect();
            (r.transport.clone(), pts)
        })
        .collect();
    out.push((
        "goodput.svg".into(),
        line_plot(
            &format!("{}: aggregate goodput (grey: faults)", s.name),
            "goodput (Gb/s)",
            &goodput,
            &marks_dedup,
        )?,
    ));
    let mut cwnd = Vec::new();
    for r in &first {
        let se = &r.result.series;
        // RoCE reports its fixed go-back-N window here; its congestion response is the
        // DCQCN rate (rate.svg).
        if r.transport.starts_with("roce") {
            continue;
        }
        for (id, v) in &se.cwnd {
            if v.iter().any(|&c| c > 0) {
                let pts = v
                    .iter()
                    .enumerate()
                    .map(|(i, &c)| (at(se, i), c as f64 / 1e3))
                    .collect();
                cwnd.push((format!("{} flow {id}", r.transport), pts));
            }
        }
    }
    out.push((
        "cwnd.svg".into(),
        line_plot(
            &format!("{}: congestion window of traced flows", s.name),
            "cwnd (KB)",
            &cwnd,
            &marks_dedup,
        )?,
    ));
    let mut rate = Vec::new();
    for r in &first {
        let se = &r.result.series;
        for (id, v) in &se.rate_mbps {
            if v.iter().any(|&c| c > 0) {
                let pts = v
                    .iter()
                    .enumerate()
                    .map(|(i, &c)| (at(se, i), c as f64 / 1e3))
                    .collect();
                rate.push((format!("{} flow {id}", r.transport), pts));
            }
        }
    }
    if !rate.is_empty() {
        out.push((
            "rate.svg".into(),
            line_plot(
                &format!("{}: paced rate of traced flows", s.name),
                "rate (Gb/s)",
                &rate,
                &marks_dedup,
            )?,
        ));
    }
    for r in &first {
        let se = &r.result.series;
        let planes: Vec<(String, Vec<(f64, f64)>)> = se
            .plane_util
            .iter()
            .enumerate()
            .map(|(p, v)| {
                (
                    format!("plane {p}"),
                    v.iter()
                        .enumerate()
                        .map(|(i, &u)| (at(se, i), u * 100.0))
                        .collect(),
                )
            })
            .collect();
        out.push((
            format!("plane-util-{}.svg", r.transport),
            line_plot(
                &format!(
                    "{} / {}: fabric link utilisation per plane",
                    s.name, r.transport
                ),
                "utilisation (%)",
                &planes,
                &marks_dedup,
            )?,
        ));
    }
    if let Some(r) = first.first() {
        // Failure timeline: links down over time, as a step function.
        let mut down: i64 = 0;
        let mut pts = vec![(0.0, 0.0)];
        for (t, what) in &r.result.timeline {
            let d = if what.contains(" down") {
                1
            } else if what.contains(" up") {
                -1
            } else {
                0
            };
            if d != 0 {
                pts.push((*t, down as f64));
                down += d;
                pts.push((*t, down as f64));
            }
        }
        let end = r.result.end_us.max(pts.last().map_or(0.0, |p| p.0));
        pts.push((end, down as f64));
        out.push((
            "failure-timeline.svg".into(),
            line_plot(
                &format!(
                    "{}: links down over time ({} fault events)",
                    s.name,
                    r.result.timeline.len()
                ),
                "links down",
                &[("links down".into(), pts)],
                &[],
            )?,
        ));
    }
    Ok(out)
}

pub fn write_outputs(out: &Path, s: &Scenario, runs: &[Run], table_text: &str) -> Result<(), Fail> {
    let plots = plots(s, runs)?;
    write_atomically(out, MARKER, "mrcgen netsim", |dir| {
        fs::write(dir.join("summary.txt"), table_text)?;
        fs::write(
            dir.join("results.json"),
            serde_json::to_string_pretty(runs)?,
        )?;
        let mut sum = String::from(
            "transport,seed,finished,failed,fct_min_us,fct_p50_us,fct_p99_us,fct_max_us,slowdown_p99,goodput_gbps,retransmits,trims,nacks,timeouts,bytes_lost,drops_link_down,drops_random,drops_queue,recovery_us,hit_flows,hit_recovery_us,victim_gbps,events,packet_hops,wall_s,hash\n",
        );
        for r in runs {
            let x = &r.result;
            let _ = writeln!(
                sum,
                "{},{},{},{},{:.3},{:.3},{:.3},{:.3},{:.4},{:.3},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3},{:016x}",
                r.transport,
                r.seed,
                x.finished,
                x.failed,
                x.fct_us.min,
                x.fct_us.p50,
                x.fct_us.p99,
                x.fct_us.max,
                x.fct_slowdown.p99,
                x.goodput_gbps,
                x.retransmits,
                x.trims,
                x.nacks,
                x.timeouts,
                x.bytes_lost,
                x.drops.link_down,
                x.drops.random_loss,
                x.drops.queue_full,
                r.recovery.and_then(|v| v.after_us).map_or(String::new(), |v| format!("{v:.1}")),
                r.hit_flows,
                r.hit_recovery.and_then(|v| v.after_us).map_or(String::new(), |v| format!("{v:.1}")),
                r.victim_gbps.map_or(String::new(), |v| format!("{v:.3}")),
                x.events,
                x.packet_hops,
                r.wall_s,
                x.hash
            );
            fs::write(
                dir.join(format!("flows-{}-s{}.csv", r.transport, r.seed)),
                flows_csv(x),
            )?;
            fs::write(
                dir.join(format!("series-{}-s{}.csv", r.transport, r.seed)),
                series_csv(x),
            )?;
        }
        fs::write(dir.join("summary.csv"), sum)?;
        if let Some(r) = runs.first() {
            let mut tl = String::from("time_us,event\n");
            for (t, what) in &r.result.timeline {
                let _ = writeln!(tl, "{t:.3},\"{what}\"");
            }
            fs::write(dir.join("timeline.csv"), tl)?;
        }
        for (name, svg) in &plots {
            fs::write(dir.join(name), svg)?;
        }
        Ok(())
    })
}

#[allow(clippy::too_many_arguments)]
pub fn netsim_cmd(
    scenario: &str,
    transports: &[String],
    seed: Option<u64>,
    seeds: u32,
    jobs: Option<usize>,
    out: Option<&Path>,
    json: bool,
) -> Result<(), Fail> {
    let mut s = Scenario::load(scenario).map_err(|e| Fail(2, e.to_string()))?;
    if let Some(x) = seed {
        s.seed = x;
    }
    let ts: Vec<String> = if transports.is_empty() {
        s.transports.clone()
    } else {
        transports.to_vec()
    };
    if seeds == 0 {
        return Err(Fail(2, "--seeds must be at least 1".into()));
    }
    let seed_list: Vec<u64> = (0..seeds as u64).map(|i| s.seed + i).collect();
    let jobs = jobs.unwrap_or_else(default_jobs);
    let runs = run_scenario(&s, &ts, &seed_list, jobs, !json)?;
    let text = table(&s, &runs);
    let out_dir = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new("build/netsim").join(&s.name));
    write_outputs(&out_dir, &s, &runs, &text)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
    } else {
        print!("{text}");
        println!("wrote {}", out_dir.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoke_runs_every_transport_and_writes_tables_csvs_and_plots() {
        let s = Scenario::load("smoke").unwrap();
        let runs = run_scenario(&s, &s.transports, &[s.seed, s.seed + 1], 2, false).unwrap();
        assert_eq!(runs.len(), 2 * s.transports.len());
        // Runs come back in (seed, transport) order whatever thread ran them.
        assert_eq!(runs[0].transport, s.transports[0]);
        assert_eq!(runs[1].transport, s.transports[1]);
        assert_eq!(runs[2].seed, s.seed + 1);
        assert!(runs
            .iter()
            .all(|r| r.result.finished == r.result.flows.len()));
        assert!(runs.iter().all(|r| r.recovery.is_some()));
        let text = table(&s, &runs);
        assert!(text.contains("scenario smoke") && text.contains("roce"));
        let out = std::env::temp_dir().join(format!("mrcgen-netsim-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&out);
        write_outputs(&out, &s, &runs, &text).unwrap();
        for f in [
            "summary.txt",
            "summary.csv",
            "results.json",
            "timeline.csv",
            "goodput.svg",
        ] {
            assert!(out.join(f).exists(), "{f}");
        }
        let flows = fs::read_to_string(out.join(format!("flows-mrc-s{}.csv", s.seed))).unwrap();
        assert_eq!(flows.lines().count(), 1 + 16);
        let svg = fs::read_to_string(out.join("failure-timeline.svg")).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("links down"));
        // The same seed gives the same run, whichever thread ran it.
        let again = run_scenario(&s, &s.transports[..1], &[s.seed], 1, false).unwrap();
        assert_eq!(again[0].result.hash, runs[0].result.hash);
        fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn unknown_transports_and_scenarios_are_refused_with_exit_2() {
        let s = Scenario::load("smoke").unwrap();
        let e = run_scenario(&s, &["tcp".into()], &[1], 1, false).unwrap_err();
        assert_eq!(e.0, 2);
        assert!(e.1.contains("mrc-mixed"), "{}", e.1);
        let e = netsim_cmd("no_such", &[], None, 1, None, None, true).unwrap_err();
        assert_eq!(e.0, 2);
        assert!(e.1.contains("smoke"), "{}", e.1);
    }
}
