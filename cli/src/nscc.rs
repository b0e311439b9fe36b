//! `mrcgen nscc`: NSCC `Fixed` (the RTL's arithmetic) vs `Reference` (f64) over the scripted
//! traces of `mrc_model::nscc_traces`: a table, one CSV per trace and SVG plots.

use crate::outdir::write_atomically;
use crate::Fail;
use mrc_config::NicConfig;
use mrc_model::nscc_traces::{self, Row, TraceComparison, NAMES};
use plotters::prelude::*;
use std::fs;
use std::path::Path;

/// Written into the output directory; an existing non-empty directory without it is not
/// replaced (it is not one of ours).
const MARKER: &str = ".mrcgen-nscc";
/// The combined plot's file name (one panel per trace).
pub const COMBINED: &str = "nscc-traces.svg";
/// Points per series and panel: each pixel column keeps its min and max.
const COLUMNS: usize = 600;

pub fn nscc_cmd(cfg: &NicConfig, traces: &[String], out: &Path, json: bool) -> Result<(), Fail> {
    let names: Vec<&str> = if traces.is_empty() {
        NAMES.to_vec()
    } else {
        let mut v = Vec::new();
        for t in traces {
            match NAMES.iter().find(|n| **n == t.as_str()) {
                Some(n) if !v.contains(n) => v.push(*n),
                Some(_) => {}
                None => {
                    return Err(Fail(
                        2,
                        format!("unknown trace `{t}`; known: {}", NAMES.join(", ")),
                    ))
                }
            }
        }
        v
    };
    let runs: Vec<(&str, TraceComparison)> = names
        .iter()
        .map(|&n| {
            let ev = nscc_traces::by_name(cfg, n).expect("name checked above");
            (n, nscc_traces::compare(cfg, &ev))
        })
        .collect();
    write_atomically(out, MARKER, "mrcgen nscc", |dir| {
        for (name, c) in &runs {
            fs::write(dir.join(format!("{name}.csv")), csv(c))?;
            fs::write(
                dir.join(format!("{name}.svg")),
                plot(&[(name, c)], 900, 420)?,
            )?;
        }
        let panels: Vec<(&str, &TraceComparison)> = runs.iter().map(|(n, c)| (*n, c)).collect();
        let h = 400 * panels.len() as u32;
        fs::write(dir.join(COMBINED), plot(&panels, 900, h)?)?;
        Ok(())
    })?;
    if json {
        let rows: Vec<_> = runs
            .iter()
            .map(|(name, c)| {
                serde_json::json!({
                    "trace": name, "events": c.rows.len(),
                    "reference_cwnd": c.reference.cwnd, "fixed_cwnd": c.fixed.cwnd,
                    "worst_abs_bytes": c.worst_abs.value, "worst_abs_event": c.worst_abs.index,
                    "worst_abs_time_ns": c.worst_abs.now,
                    "worst_rel": c.worst_rel.value, "worst_rel_event": c.worst_rel.index,
                    "worst_rel_time_ns": c.worst_rel.now,
                    "md": [c.reference.md_count, c.fixed.md_count],
                    "qa": [c.reference.qa_count, c.fixed.qa_count],
                    "violations": c.violations(), "first_violation": c.first_violation,
                    "pass": c.holds(),
                })
            })
            .collect();
        println!("{}", serde_json::Value::Array(rows));
    } else {
        println!(
            "NSCC Fixed vs Reference, {} Gb/s, base RTT {} ns, MTU {} B, trimming {}; \
             bound |fixed - reference| <= max(1 %, 1 MTU) at every event",
            cfg.link_gbps, cfg.base_rtt_ns, cfg.mtu, cfg.trimming
        );
        println!(
            "{:<15} {:>6} {:>12} {:>10}  {:>20}  {:>20} {:>9} {:>7}  bound",
            "trace",
            "events",
            "ref cwnd",
            "fixed cwnd",
            "worst |dev| B @ev",
            "worst rel % @ev",
            "md r/f",
            "qa r/f"
        );
        for (name, c) in &runs {
            println!(
                "{:<15} {:>6} {:>12.0} {:>10}  {:>10.0} @{:<9}  {:>9.4}% @{:<8} {:>9} {:>7}  {}",
                name,
                c.rows.len(),
                c.reference.cwnd,
                c.fixed.cwnd,
                c.worst_abs.value,
                c.worst_abs.index,
                c.worst_rel.value * 100.0,
                c.worst_rel.index,
                format!("{}/{}", c.reference.md_count, c.fixed.md_count),
                format!("{}/{}", c.reference.qa_count, c.fixed.qa_count),
                if c.holds() { "PASS" } else { "FAIL" }
            );
        }
        let (fixed_rate, ref_rate) = model_speed(cfg, &names);
        println!(
            "model speed on one core (a measurement, not a check): Fixed {:.1} M events/s, \
             Reference {:.1} M events/s",
            fixed_rate / 1e6,
            ref_rate / 1e6
        );
        println!(
            "wrote {}: <trace>.csv (time_us, reference_cwnd, fixed_cwnd), <trace>.svg, {COMBINED}",
            out.display()
        );
    }
    let failed: Vec<String> = runs
        .iter()
        .filter(|(_, c)| !c.holds())
        .map(|(n, c)| {
            format!(
                "{n} (first at event {}, {} events)",
                c.first_violation.unwrap_or(0),
                c.violations()
            )
        })
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Fail(
            1,
            format!("Fixed left the 1 % / 1 MTU bound: {}", failed.join(", ")),
        ))
    }
}

/// One line per event.
fn csv(c: &TraceComparison) -> String {
    let mut s = String::from("time_us,reference_cwnd,fixed_cwnd\n");
    for r in &c.rows {
        s.push_str(&format!(
            "{:.3},{:.3},{}\n",
            f64::from(r.now) / 1_000.0,
            r.reference,
            r.fixed
        ));
    }
    s
}

/// `(time us, value)` points of a series, reduced to the min and max (in time order) of each
/// of `COLUMNS` time columns, so the plot keeps every excursion at a small size.
fn envelope(rows: &[Row], value: impl Fn(&Row) -> f64) -> Vec<(f64, f64)> {
    let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
        return Vec::new();
    };
    let t0 = f64::from(first.now);
    let span = (f64::from(last.now) - t0).max(1.0);
    let mut pts = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        let col = ((f64::from(rows[i].now) - t0) / span * COLUMNS as f64) as usize;
        let mut j = i;
        let (mut lo, mut hi) = (i, i);
        while j < rows.len()
            && ((f64::from(rows[j].now) - t0) / span * COLUMNS as f64) as usize == col
        {
            if value(&rows[j]) < value(&rows[lo]) {
                lo = j;
            }
            if value(&rows[j]) > value(&rows[hi]) {
                hi = j;
            }
            j += 1;
        }
        let mut keep = vec![i, lo, hi, j - 1];
        keep.sort_unstable();
        keep.dedup();
        for k in keep {
            pts.push((f64::from(rows[k].now) / 1_000.0, value(&rows[k])));
        }
        i = j;
    }
    pts
}

/// An SVG of cwnd (MB) over time (us), Reference and Fixed overlaid, one panel per trace
/// stacked vertically. Text is SVG `<text>` (no font is rasterised).
fn plot(panels: &[(&str, &TraceComparison)], w: u32, h: u32) -> Result<String, Fail> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE)?;
        let areas = root.split_evenly((panels.len(), 1));
        for (area, (name, c)) in areas.iter().zip(panels) {
            let (_, ph) = area.dim_in_pixel();
            let (top, bottom) = area.split_vertically(ph * 68 / 100);
            let mb = |x: f64| x / 1e6;
            let refs = envelope(&c.rows, |r| mb(r.reference));
            let fixed = envelope(&c.rows, |r| mb(f64::from(r.fixed)));
            let dev = envelope(&c.rows, Row::deviation);
            let x1 = refs.last().map_or(1.0, |p| p.0).max(1.0);
            let ymax = refs
                .iter()
                .chain(&fixed)
                .map(|p| p.1)
                .fold(0.0, f64::max)
                .max(1e-3)
                * 1.3;
            let title = format!(
                "{name}: worst |Fixed - Reference| = {:.0} B ({:.3} %), bound {}",
                c.worst_abs.value,
                c.worst_rel.value * 100.0,
                if c.holds() { "holds" } else { "BROKEN" }
            );
            let mut chart = ChartBuilder::on(&top)
                .caption(title, ("sans-serif", 16))
                .margin(10)
                .margin_bottom(2)
                .x_label_area_size(20)
                .y_label_area_size(64)
                .build_cartesian_2d(0.0..x1, 0.0..ymax)?;
            chart
                .configure_mesh()
                .y_desc("cwnd (MB)")
                .label_style(("sans-serif", 12))
                .draw()?;
            let ref_style = ShapeStyle {
                color: RGBColor(80, 140, 230).to_rgba(),
                filled: false,
                stroke_width: 4,
            };
            let fixed_style = ShapeStyle {
                color: RGBColor(200, 30, 30).to_rgba(),
                filled: false,
                stroke_width: 1,
            };
            chart
                .draw_series(LineSeries::new(refs, ref_style))?
                .label("Reference (f64)")
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], ref_style));
            chart
                .draw_series(LineSeries::new(fixed, fixed_style))?
                .label("Fixed (RTL arithmetic)")
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], fixed_style));
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 12))
                .draw()?;
            // Fixed - Reference in bytes, on a symmetric axis; the 1-MTU floor of the bound
            // as grey lines when it is in range.
            let mtu = f64::from(c.mtu);
            let span = (c.worst_abs.value * 1.25).max(mtu * 0.05).max(1.0);
            let mut chart = ChartBuilder::on(&bottom)
                .margin(10)
                .margin_top(2)
                .x_label_area_size(38)
                .y_label_area_size(64)
                .build_cartesian_2d(0.0..x1, -span..span)?;
            chart
                .configure_mesh()
                .x_desc("time (us)")
                .y_desc("Fixed - Ref (B)")
                .y_labels(5)
                .label_style(("sans-serif", 12))
                .draw()?;
            if mtu <= span {
                for y in [-mtu, mtu] {
                    chart.draw_series(LineSeries::new(
                        vec![(0.0, y), (x1, y)],
                        ShapeStyle {
                            color: RGBColor(150, 150, 150).to_rgba(),
                            filled: false,
                            stroke_width: 1,
                        },
                    ))?;
                }
            }
            chart.draw_series(LineSeries::new(dev, fixed_style))?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// Events per second through `Fixed` and `Reference` over the selected traces, each level run
/// until at least 0.2 s of wall time has passed.
fn model_speed(cfg: &NicConfig, names: &[&str]) -> (f64, f64) {
    use mrc_model::nscc::{Fixed, Reference};
    let traces: Vec<_> = names
        .iter()
        .filter_map(|n| nscc_traces::by_name(cfg, n))
        .collect();
    let rate = |apply: &mut dyn FnMut(&[mrc_model::nscc::NsccEvent]) -> u64| {
        let t0 = std::time::Instant::now();
        let mut events = 0u64;
        while t0.elapsed().as_secs_f64() < 0.2 {
            for t in &traces {
                events += apply(t);
            }
        }
        events as f64 / t0.elapsed().as_secs_f64()
    };
    let fixed = rate(&mut |ev| {
        let mut f = Fixed::new(cfg);
        for e in ev {
            f.apply(e);
        }
        std::hint::black_box(f.cwnd);
        ev.len() as u64
    });
    let reference = rate(&mut |ev| {
        let mut r = Reference::new(cfg);
        for e in ev {
            r.apply(e);
        }
        std::hint::black_box(r.cwnd);
        ev.len() as u64
    });
    (fixed, reference)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_keeps_extremes_and_is_small() {
        let cfg = NicConfig::default();
        let ev = nscc_traces::persistent_ecn(&cfg);
        let c = nscc_traces::compare(&cfg, &ev);
        let pts = envelope(&c.rows, |r| f64::from(r.fixed));
        assert!(pts.len() <= 4 * (COLUMNS + 1));
        let max = c.rows.iter().map(|r| r.fixed).max().unwrap();
        let min = c.rows.iter().map(|r| r.fixed).min().unwrap();
        assert!(pts.iter().any(|p| p.1 == f64::from(max)));
        assert!(pts.iter().any(|p| p.1 == f64::from(min)));
        assert!(pts.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn plot_is_svg_with_text() {
        let cfg = NicConfig::default();
        let ev = nscc_traces::steady_ramp(&cfg);
        let c = nscc_traces::compare(&cfg, &ev);
        let svg = plot(&[("steady_ramp", &c)], 600, 300).unwrap_or_else(|Fail(_, m)| panic!("{m}"));
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("<text") && svg.contains("cwnd (MB)"));
        assert!(svg.contains("Fixed (RTL arithmetic)") && svg.contains("<polyline"));
    }
}
