//! `mrcgen gen`: the generated IP as one directory a tool flow can take whole.
//!
//! The Verilog, filelist (`mrc_nic.f`), Verilator waivers, config and manifest come from
//! `mrc_hdl::generate::render`; this adds the target's constraint file (`constraints.rs`) and
//! a FuseSoC CAPI2 core file (`mrc_nic.core`), lists them in `manifest.json` with their
//! sha256 and the target's facts, and writes the directory through `outdir::replace_dir`
//! (temporary sibling, then rename).
//!
//! ```text
//! <out>/<module>.v ...     one file per module
//! <out>/mrc_nic.f          filelist (Verilog only, paths relative to the filelist)
//! <out>/mrc_nic.vlt        Verilator waivers
//! <out>/mrc_nic.{xdc,lpf,sdc}  constraints for the target
//! <out>/mrc_nic.core       FuseSoC CAPI2 core: filesets rtl / waivers / constraints
//! <out>/config.toml        the effective config (board = the target)
//! <out>/manifest.json      config, modules, target, sha256 of every other file
//! ```

use crate::synth::ECP5_DSP_DEFINE;
use crate::targets::{Flow, Target};
use crate::{constraints, demo_top, outdir, Fail};
use mrc_config::NicConfig;
use mrc_hdl::generate::{render, sha256_hex, ManifestFile, WAIVERS};
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

/// The FuseSoC core file's name.
pub const CORE_FILE: &str = "mrc_nic.core";
/// The core's VLNV without the version.
pub const CORE_VLN: &str = "mrc:nic:mrc_nic";

/// What `gen` wrote.
pub struct GenSummary {
    pub files: usize,
    pub modules: Vec<String>,
    pub constraints: String,
}

/// Every file of the output directory, in memory, and the manifest JSON.
pub fn render_all(
    cfg: &NicConfig,
    target: &Target,
) -> Result<(Vec<(String, String)>, String), Fail> {
    let (mut files, mut manifest) = render(cfg);
    let (cname, ctext) = constraints::render(target, cfg);
    let modules: Vec<&str> = manifest.modules.iter().map(String::as_str).collect();
    let core = fusesoc_core(cfg, target, &modules, &cname);
    let core_v = files
        .iter()
        .find(|(n, _)| n == "mrc_core.v")
        .map(|(_, t)| t.as_str())
        .ok_or_else(|| Fail(1, "mrc_core.v missing from the generated files".into()))?;
    let pm = mrc_cosim::ports::parse_ports(core_v, "mrc_core")
        .map_err(|e| Fail(1, format!("mrc_core ports: {e}")))?;
    let demo_loop = demo_top::render_loop(cfg, &pm).map_err(|e| Fail(1, e))?;
    let demo = demo_top::render_top(cfg, target);
    for (name, text) in [
        (cname.clone(), ctext),
        (CORE_FILE.to_string(), core),
        (format!("{}.v", demo_top::LOOP_MODULE), demo_loop),
        (format!("{}.v", demo_top::TOP_MODULE), demo),
    ] {
        manifest.files.push(ManifestFile {
            path: name.clone(),
            sha256: sha256_hex(text.as_bytes()),
        });
        files.push((name, text));
    }
    let mut json = serde_json::to_value(&manifest).expect("manifest serialises");
    let clocks: Vec<_> = target
        .clocks
        .iter()
        .map(|c| serde_json::json!({ "name": c.name, "mhz": c.mhz(cfg), "core": c.core }))
        .collect();
    json["target"] = serde_json::json!({
        "name": target.name,
        "part": target.part,
        "vendor": target.vendor,
        "family": target.family,
        "flow": target.flow.name(),
        "datapath_bits": target.datapath_bits,
        "clocks": clocks,
        "constraints": cname,
        "fusesoc_core": CORE_FILE,
    });
    json["demo_top"] = serde_json::json!({
        "module": demo_top::TOP_MODULE,
        "files": [format!("{}.v", demo_top::LOOP_MODULE), format!("{}.v", demo_top::TOP_MODULE)],
    });
    let text = serde_json::to_string_pretty(&json).expect("manifest serialises") + "\n";
    Ok((files, text))
}

/// `mrcgen gen`: refuses a non-empty `out` unless `force` (exit 2).
pub fn gen_cmd(
    cfg: &NicConfig,
    target: &Target,
    out: &Path,
    force: bool,
) -> Result<GenSummary, Fail> {
    let non_empty = match fs::read_dir(out) {
        Ok(mut it) => it.next().is_some(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(Fail(2, format!("{}: {e}", out.display()))),
    };
    if non_empty && !force {
        return Err(Fail(
            2,
            format!(
                "output directory {} is not empty (use --force to replace it)",
                out.display()
            ),
        ));
    }
    let (files, manifest) = render_all(cfg, target)?;
    outdir::replace_dir(out, |tmp| {
        for (rel, text) in &files {
            fs::write(tmp.join(rel), text).map_err(|e| Fail(1, format!("{rel}: {e}")))?;
        }
        fs::write(tmp.join("manifest.json"), &manifest)?;
        Ok(())
    })?;
    Ok(GenSummary {
        files: files.len() + 1,
        modules: mrc_hdl::MODULES.iter().map(|m| m.to_string()).collect(),
        constraints: constraints::file_name(target),
    })
}

/// FuseSoC CAPI2 core file for the generated directory (paths relative to it).
///
/// Targets: `default` (the RTL and the target's constraints, for a parent core to depend on)
/// and `lint_<module>` (Verilator `--lint-only -Wall` with the waivers, one per module). The
/// board build target `demo` (ECP5: trellis; U55C: vivado) builds `mrc_nic_demo_top`.
pub fn fusesoc_core(
    cfg: &NicConfig,
    target: &Target,
    modules: &[&str],
    constraint_file: &str,
) -> String {
    let version = env!("CARGO_PKG_VERSION");
    let ctype = match target.flow {
        Flow::Vivado => "xdc",
        Flow::NextpnrEcp5 => "LPF",
        Flow::Generic => "SDC",
    };
    let mut s = String::new();
    let _ = writeln!(s, "CAPI=2:");
    let _ = writeln!(
        s,
        "# {CORE_FILE}: FuseSoC package of the MRC NIC IP in this directory, written by\n\
         # `mrcgen gen --target {}`; paths are relative to this file. Do not edit: regenerate.\n\
         # Use: fusesoc library add mrc_nic <this directory>; depend on {CORE_VLN}:{version}\n\
         # from your top's core, or run `fusesoc run --target lint_<module> {CORE_VLN}`.",
        target.name
    );
    let _ = writeln!(s, "name: {CORE_VLN}:{version}");
    let _ = writeln!(
        s,
        "description: \"MRC SmartNIC transport IP (mrcgen {version}), target {} ({}), \
         {} planes x {} EVs, SACK window {}, core clock {} MHz\"",
        target.name,
        target.part,
        cfg.planes,
        cfg.evs_per_plane,
        cfg.sack_window_bits,
        cfg.clock_mhz
    );
    let _ = writeln!(
        s,
        "\nfilesets:\n  rtl:\n    file_type: verilogSource\n    files:"
    );
    for m in modules {
        let _ = writeln!(s, "      - {m}.v");
    }
    let _ = writeln!(
        s,
        "  waivers:\n    file_type: vlt\n    files:\n      - {WAIVERS}"
    );
    let _ = writeln!(
        s,
        "  constraints:\n    file_type: {ctype}\n    files:\n      - {constraint_file}"
    );
    let _ = writeln!(
        s,
        "  demo:\n    file_type: verilogSource\n    files:\n      - {}.v\n      - {}.v",
        demo_top::LOOP_MODULE,
        demo_top::TOP_MODULE
    );
    // ECP5: nscc_window's multipliers as explicit MULT18X18D with the output register inside
    // the DSP (the Fmax `mrcgen synth` reports); other flows get the portable Verilog.
    let ecp5 = target.flow == Flow::NextpnrEcp5;
    if ecp5 {
        let _ = writeln!(
            s,
            "\nparameters:\n  {ECP5_DSP_DEFINE}:\n    datatype: bool\n    paramtype: vlogdefine\n    \
             description: ECP5 MULT18X18D with its output register for nscc_window's multipliers\n    \
             default: true"
        );
    }
    let _ = writeln!(
        s,
        "\ntargets:\n  default:\n    filesets: [rtl, constraints]"
    );
    if ecp5 {
        let _ = writeln!(s, "    parameters: [{ECP5_DSP_DEFINE}]");
    }
    match target.flow {
        Flow::NextpnrEcp5 => {
            let _ = writeln!(
                s,
                "  demo:\n    default_tool: trellis\n    filesets: [rtl, demo, constraints]\n    \
                 parameters: [{ECP5_DSP_DEFINE}]\n    \
                 toplevel: {}\n    tools:\n      trellis:\n        nextpnr_options: [--85k, --package, CABGA381]",
                demo_top::TOP_MODULE
            );
        }
        Flow::Vivado => {
            let _ = writeln!(
                s,
                "  demo:\n    default_tool: vivado\n    filesets: [rtl, demo, constraints]\n    \
                 toplevel: {}\n    tools:\n      vivado:\n        part: {}",
                demo_top::TOP_MODULE,
                target.part
            );
        }
        Flow::Generic => {}
    }
    for m in modules {
        let _ = writeln!(
            s,
            "  lint_{m}:\n    default_tool: verilator\n    filesets: [rtl, waivers]\n    \
             toplevel: {m}\n    tools:\n      verilator:\n        mode: lint-only\n        \
             verilator_options: [-Wall]"
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::{all, get, retarget};
    use mrc_hdl::generate::FILELIST;

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("mrcgen-pkg-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn gen_writes_constraints_core_and_a_manifest_that_hashes_them() {
        let base = scratch("gen");
        // A small config (16-entry EV table, W = 64) keeps the Verilog quick to render.
        let small = "planes = 3\nevs_per_plane = 5\nev_min_active = 2\nsack_window_bits = 64\n";
        let small = Some((std::path::Path::new("small.toml"), small));
        for t in all() {
            let cfg = retarget(t, small).unwrap();
            let out = base.join(&t.name);
            let s = gen_cmd(&cfg, t, &out, false).unwrap();
            let m: serde_json::Value =
                serde_json::from_str(&fs::read_to_string(out.join("manifest.json")).unwrap())
                    .unwrap();
            assert_eq!(m["target"]["name"], t.name.as_str());
            assert_eq!(m["target"]["constraints"], s.constraints.as_str());
            let listed: Vec<&str> = m["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    let p = f["path"].as_str().unwrap();
                    let bytes = fs::read(out.join(p)).unwrap();
                    assert_eq!(f["sha256"].as_str().unwrap(), sha256_hex(&bytes), "{p}");
                    p
                })
                .collect();
            for f in [s.constraints.as_str(), CORE_FILE, FILELIST, "config.toml"] {
                assert!(listed.contains(&f), "{f} not in the manifest");
            }
            // Every file but the manifest is listed; nothing else is in the directory.
            assert_eq!(fs::read_dir(&out).unwrap().count(), listed.len() + 1);
            let written = fs::read_to_string(out.join("config.toml")).unwrap();
            assert_eq!(NicConfig::from_toml(&written).unwrap(), cfg);
        }
        // Refuses a non-empty directory without --force, replaces it with.
        let t = get("generic").unwrap();
        let cfg = retarget(t, small).unwrap();
        let out = base.join("generic");
        assert_eq!(gen_cmd(&cfg, t, &out, false).err().unwrap().0, 2);
        gen_cmd(&cfg, t, &out, true).unwrap();
        fs::remove_dir_all(&base).unwrap();
    }

    /// YAML: no tabs, and every line is indented by a multiple of two spaces.
    fn assert_yaml_indent(core: &str) {
        for l in core.lines() {
            let indent = l.len() - l.trim_start_matches(' ').len();
            assert!(!l.contains('\t') && indent % 2 == 0, "{l:?}");
        }
    }

    #[test]
    fn core_file_lists_every_module_and_the_constraints() {
        let t = get("alveo-u55c").unwrap();
        let cfg = retarget(t, None).unwrap();
        let core = fusesoc_core(&cfg, t, mrc_hdl::MODULES, "mrc_nic.xdc");
        assert!(core.starts_with("CAPI=2:\n"));
        assert!(core.contains(&format!("name: {CORE_VLN}:{}\n", env!("CARGO_PKG_VERSION"))));
        assert!(core.contains("    file_type: xdc\n    files:\n      - mrc_nic.xdc\n"));
        for m in mrc_hdl::MODULES {
            assert!(core.contains(&format!("      - {m}.v\n")), "{m}");
            assert!(core.contains(&format!("  lint_{m}:\n")), "{m}");
        }
        assert_yaml_indent(&core);
        assert!(
            !core.contains(ECP5_DSP_DEFINE),
            "the DSP define is ECP5's only"
        );
    }

    #[test]
    fn ecp5_core_defines_the_dsp_branch_for_its_targets() {
        let t = get("ecp5-85k").unwrap();
        let cfg = retarget(t, None).unwrap();
        let core = fusesoc_core(&cfg, t, mrc_hdl::MODULES, "mrc_nic.lpf");
        let def = format!(
            "parameters:\n  {ECP5_DSP_DEFINE}:\n    datatype: bool\n    paramtype: vlogdefine\n"
        );
        assert!(core.contains(&def), "{core}");
        // The define is listed in the board targets (`default`, `demo`), not in the lint ones.
        let block = |name: &str| -> String {
            let head = format!("  {name}:\n");
            let targets = &core[core.find("\ntargets:\n").expect("targets")..];
            let at = targets
                .find(&head)
                .unwrap_or_else(|| panic!("{name} in {core}"))
                + head.len();
            targets[at..]
                .lines()
                .take_while(|l| l.starts_with("    "))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let listed = format!("parameters: [{ECP5_DSP_DEFINE}]");
        assert!(block("default").contains(&listed), "{}", block("default"));
        assert!(block("demo").contains(&listed), "{}", block("demo"));
        assert!(!block("lint_nscc_window").contains(&listed));
        assert_yaml_indent(&core);
    }
}
