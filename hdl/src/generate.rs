//! The generated IP for one config: `render()` gives every file (`mrcgen gen` adds the
//! target's constraints and the FuseSoC core, then writes them through the CLI's atomic
//! writer); `generate()` writes this set alone, atomically.
//!
//! Output directory layout:
//! ```text
//! <out>/ev_spray_arbiter.v   one file per module (rust-hdl output, top renamed)
//! <out>/mrc_nic.f            filelist, paths relative to the filelist
//! <out>/mrc_nic.vlt          Verilator waivers (narrow, commented)
//! <out>/config.toml          the config that produced this directory
//! <out>/manifest.json        config, module list, sha256 of every file
//! ```
//! The files are written into a sibling temp directory which is renamed into place, so a
//! failed or interrupted run never leaves a half-written `<out>`.

use crate::emit::{emit_module, MODULES};
use mrc_config::NicConfig;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// Filelist and waiver names inside the output directory.
pub const FILELIST: &str = "mrc_nic.f";
pub const WAIVERS: &str = "mrc_nic.vlt";

#[derive(Debug)]
pub enum GenError {
    /// `<out>` exists and is not empty, and `--force` was not given.
    NotEmpty(PathBuf),
    Io(PathBuf, std::io::Error),
}

impl fmt::Display for GenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenError::NotEmpty(p) => {
                write!(
                    f,
                    "output directory {} is not empty (use --force to replace it)",
                    p.display()
                )
            }
            GenError::Io(p, e) => write!(f, "{}: {e}", p.display()),
        }
    }
}

impl std::error::Error for GenError {}

#[derive(Debug, Serialize)]
pub struct ManifestFile {
    pub path: String,
    pub sha256: String,
}

#[derive(Debug, Serialize)]
pub struct Manifest {
    pub generator: String,
    pub config: NicConfig,
    pub modules: Vec<String>,
    pub filelist: String,
    pub waivers: String,
    pub files: Vec<ManifestFile>,
}

/// The checked-in Verilator waiver file (`hdl/lint/mrc_nic.vlt`), copied into every output.
pub const WAIVER_TEXT: &str = include_str!("../lint/mrc_nic.vlt");

/// The waivers that go with `modules`: the checked-in file, which must name every module.
pub fn waivers(modules: &[&str]) -> String {
    for m in modules {
        assert!(
            WAIVER_TEXT.contains(&format!("\"*/{m}.v\"")),
            "hdl/lint/mrc_nic.vlt has no entry for module {m}"
        );
    }
    WAIVER_TEXT.to_string()
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every file of the output directory, in memory: (relative path, contents).
pub fn render(cfg: &NicConfig) -> (Vec<(String, String)>, Manifest) {
    let mut files = Vec::new();
    for m in MODULES {
        let e = emit_module(m, cfg).expect("MODULES lists only known modules");
        files.push((format!("{m}.v"), e.verilog));
    }
    let filelist: String = MODULES.iter().map(|m| format!("{m}.v\n")).collect();
    files.push((FILELIST.to_string(), filelist));
    files.push((WAIVERS.to_string(), waivers(MODULES)));
    files.push(("config.toml".to_string(), cfg.to_toml()));
    let manifest = Manifest {
        generator: format!("mrcgen {}", env!("CARGO_PKG_VERSION")),
        config: cfg.clone(),
        modules: MODULES.iter().map(|m| m.to_string()).collect(),
        filelist: FILELIST.into(),
        waivers: WAIVERS.into(),
        files: files
            .iter()
            .map(|(p, c)| ManifestFile {
                path: p.clone(),
                sha256: sha256_hex(c.as_bytes()),
            })
            .collect(),
    };
    (files, manifest)
}

fn io<T>(p: &Path, r: std::io::Result<T>) -> Result<T, GenError> {
    r.map_err(|e| GenError::Io(p.to_owned(), e))
}

/// Write the generated directory to `out`. Refuses a non-empty `out` unless `force`.
pub fn generate(cfg: &NicConfig, out: &Path, force: bool) -> Result<Manifest, GenError> {
    let existing_nonempty = match fs::read_dir(out) {
        Ok(mut it) => it.next().is_some(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(GenError::Io(out.to_owned(), e)),
    };
    if existing_nonempty && !force {
        return Err(GenError::NotEmpty(out.to_owned()));
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    io(&parent, fs::create_dir_all(&parent))?;
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    io(&tmp, fs::create_dir(&tmp))?;
    let result = (|| {
        let (files, manifest) = render(cfg);
        for (rel, text) in &files {
            let p = tmp.join(rel);
            io(&p, fs::write(&p, text))?;
        }
        let mpath = tmp.join("manifest.json");
        let json = serde_json::to_string_pretty(&manifest).expect("manifest serialises");
        io(&mpath, fs::write(&mpath, json + "\n"))?;
        Ok(manifest)
    })();
    let manifest = match result {
        Ok(m) => m,
        Err(e) => {
            let _ = fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    // Move the old directory aside first so `out` is never a mix of old and new files.
    let old = parent.join(format!(".{name}.old-{}", std::process::id()));
    if out.exists() {
        io(out, fs::rename(out, &old))?;
    }
    if let Err(e) = fs::rename(&tmp, out) {
        if old.exists() {
            let _ = fs::rename(&old, out);
        }
        let _ = fs::remove_dir_all(&tmp);
        return Err(GenError::Io(out.to_owned(), e));
    }
    if old.exists() {
        io(&old, fs::remove_dir_all(&old))?;
    }
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file-handling tests need every module rendered, not the biggest one: a small
    /// window and table render in a fraction of the default's time (CI runs on two cores).
    fn small() -> NicConfig {
        NicConfig {
            planes: 3,
            evs_per_plane: 5,
            ev_min_active: 2,
            sack_window_bits: 64,
            ..NicConfig::default()
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mrc-gen-test-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn writes_every_file_with_matching_hashes() {
        let out = scratch("ok").join("build");
        let m = generate(&small(), &out, false).unwrap();
        for f in &m.files {
            let text = fs::read(out.join(&f.path)).unwrap();
            assert_eq!(sha256_hex(&text), f.sha256, "{}", f.path);
        }
        let v = fs::read_to_string(out.join("ev_spray_arbiter.v")).unwrap();
        assert!(
            v.contains("module ev_spray_arbiter("),
            "top must be renamed"
        );
        assert!(!v.contains("module top"), "no module may be called top");
        assert!(out.join("manifest.json").exists());
        // no temp dirs left beside it
        let leftovers: Vec<_> = fs::read_dir(out.parent().unwrap())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        fs::remove_dir_all(out.parent().unwrap()).unwrap();
    }

    #[test]
    fn refuses_non_empty_without_force_and_keeps_its_contents() {
        let out = scratch("nonempty");
        fs::create_dir_all(&out).unwrap();
        fs::write(out.join("keep.txt"), "mine").unwrap();
        let e = generate(&small(), &out, false).unwrap_err();
        assert!(matches!(e, GenError::NotEmpty(_)), "{e}");
        assert_eq!(fs::read_to_string(out.join("keep.txt")).unwrap(), "mine");
        generate(&small(), &out, true).unwrap();
        assert!(
            !out.join("keep.txt").exists(),
            "--force replaces the directory whole"
        );
        assert!(out.join("ev_spray_arbiter.v").exists());
        fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn emission_is_deterministic() {
        let (a, _) = render(&small());
        let (b, _) = render(&small());
        assert_eq!(a, b);
    }
}
