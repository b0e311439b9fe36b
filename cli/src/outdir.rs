//! Output directories that are never half-written: fill a temporary sibling, then rename.

use crate::Fail;
use std::fs;
use std::path::{Path, PathBuf};

/// Write `out` through a temporary sibling directory, then rename it into place, so `out` is
/// never half-written. An existing `out` is replaced only if empty or written by `command` (it holds `marker`,
/// which this writes).
pub fn write_atomically(
    out: &Path,
    marker: &str,
    command: &str,
    fill: impl FnOnce(&Path) -> Result<(), Fail>,
) -> Result<(), Fail> {
    let ours_or_empty = match fs::read_dir(out) {
        Ok(mut it) => it.next().is_none() || out.join(marker).exists(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => return Err(Fail(2, format!("{}: {e}", out.display()))),
    };
    if !ours_or_empty {
        return Err(Fail(
            2,
            format!(
                "{} is not empty and was not written by `{command}`; refusing to replace it",
                out.display()
            ),
        ));
    }
    replace_dir(out, |tmp| {
        fs::write(tmp.join(marker), format!("written by {command}\n"))?;
        fill(tmp)
    })
}

/// Fill a fresh temporary sibling of `out` with `fill`, then rename it over `out` (an existing
/// `out` is moved aside first and removed last), so `out` is never half-written and never a mix
/// of old and new files. On failure the temporary directory is removed and `out` kept. The
/// caller decides whether an existing `out` may be replaced.
pub fn replace_dir(out: &Path, fill: impl FnOnce(&Path) -> Result<(), Fail>) -> Result<(), Fail> {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent)?;
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    let old = parent.join(format!(".{name}.old-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir(&tmp)?;
    if let Err(e) = fill(&tmp) {
        let _ = fs::remove_dir_all(&tmp);
        return Err(e);
    }
    if out.exists() {
        fs::rename(out, &old)?;
    }
    if let Err(e) = fs::rename(&tmp, out) {
        if old.exists() {
            let _ = fs::rename(&old, out);
        }
        let _ = fs::remove_dir_all(&tmp);
        return Err(e.into());
    }
    if old.exists() {
        fs::remove_dir_all(&old)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_dir_is_replaced_only_if_ours_or_empty() {
        let base = std::env::temp_dir().join(format!("mrcgen-outdir-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        let out = base.join("out");
        let write = |tag: &'static str| {
            write_atomically(&out, ".m", "t", |d| {
                fs::write(d.join("x"), tag)?;
                Ok(())
            })
        };
        assert!(write("one").is_ok());
        assert!(write("two").is_ok());
        assert_eq!(fs::read_to_string(out.join("x")).unwrap(), "two");
        // No temporary or old directory is left beside it.
        assert_eq!(fs::read_dir(&base).unwrap().count(), 1);
        let foreign = base.join("foreign");
        fs::create_dir_all(&foreign).unwrap();
        fs::write(foreign.join("keep"), "").unwrap();
        let r = write_atomically(&foreign, ".m", "t", |_| Ok(()));
        assert!(matches!(r, Err(Fail(2, _))));
        assert!(foreign.join("keep").exists());
        fs::remove_dir_all(&base).unwrap();
    }
}
