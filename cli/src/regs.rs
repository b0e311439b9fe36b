//! `mrcgen regs`: print the register map as a C header, Markdown or JSON.

use crate::Fail;
use mrc_config::NicConfig;
use std::path::{Path, PathBuf};

/// Output format of `mrcgen regs`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Format {
    /// C header: MRC_<BLOCK>_<REG>_OFFSET / _WIDTH / _MASK / _RESET, field _SHIFT / _MASK.
    C,
    /// Markdown register reference, one table per block.
    Md,
    /// The map as JSON.
    Json,
}

/// The text for `format`; `source` names the config in the generated file's header.
pub fn render(cfg: &NicConfig, format: Format, source: &str) -> Result<String, Fail> {
    let map = mrc_regmap::build_checked(cfg).map_err(|e| Fail(1, format!("register map: {e}")))?;
    Ok(match format {
        Format::C => mrc_regmap::gen::c_header(&map, source),
        Format::Md => mrc_regmap::gen::markdown(&map, source),
        Format::Json => mrc_regmap::gen::json(&map),
    })
}

pub fn regs_cmd(
    cfg: &NicConfig,
    config_path: Option<&Path>,
    format: Format,
    out: Option<&PathBuf>,
) -> Result<(), Fail> {
    let source = match config_path {
        Some(p) => format!("config {}", p.display()),
        None => "the built-in default config".to_string(),
    };
    let text = render(cfg, format, &source)?;
    match out {
        None => print!("{text}"),
        Some(p) => std::fs::write(p, text)
            .map_err(|e| Fail(1, format!("cannot write {}: {e}", p.display())))?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_renders_and_out_writes_the_file() {
        let cfg = NicConfig::default();
        for f in [Format::C, Format::Md, Format::Json] {
            let t = render(&cfg, f, "test").unwrap();
            assert!(t.contains("EVQ_POP"), "{f:?}");
        }
        let p = std::env::temp_dir().join(format!("mrcgen-regs-{}.h", std::process::id()));
        regs_cmd(&cfg, None, Format::C, Some(&p)).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let _ = std::fs::remove_file(&p);
        assert!(text.starts_with("/* mrc-nic register map."));
        assert!(text.contains("#define MRC_CSR_BAD_ACCESS_OFFSET 0x024u"));
    }
}
