//! The targets (boards) `mrcgen` knows: the table in `constraints/targets.toml`, embedded in the
//! binary, its lookup, `--target NAME` config layering and `mrcgen targets`.
//!
//! A target is data: part, vendor/family, tool flow, clocks, the CDC pairs between them, the
//! demo top's pins (LPF only) and the config defaults the target asks for. The constraint
//! generators (`constraints.rs`) and the packaging (`package.rs`) read only this.

use crate::Fail;
use mrc_config::NicConfig;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

/// The checked-in target table.
pub const TARGETS_TOML: &str = include_str!("../../constraints/targets.toml");

/// Tool flow of a target; picks the constraint format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Flow {
    /// AMD Vivado: XDC.
    Vivado,
    /// Yosys + nextpnr-ecp5 (prjtrellis): LPF.
    NextpnrEcp5,
    /// Anything else: SDC.
    Generic,
}

impl Flow {
    pub fn name(self) -> &'static str {
        match self {
            Flow::Vivado => "vivado",
            Flow::NextpnrEcp5 => "nextpnr-ecp5",
            Flow::Generic => "generic",
        }
    }

    /// Extension of the constraint file this flow reads.
    pub fn constraint_ext(self) -> &'static str {
        match self {
            Flow::Vivado => "xdc",
            Flow::NextpnrEcp5 => "lpf",
            Flow::Generic => "sdc",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clock {
    pub name: String,
    /// Top-level port the clock enters on (XDC / SDC `get_ports`, LPF `FREQUENCY PORT`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    /// Internal net (e.g. a PLL output; LPF `FREQUENCY NET`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub net: Option<String>,
    /// The core clock: its frequency is the config's `clock_mhz`.
    #[serde(default)]
    pub core: bool,
    /// Fixed frequency of a non-core clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mhz: Option<f64>,
    pub purpose: String,
}

impl Clock {
    /// Frequency in MHz under `cfg`.
    pub fn mhz(&self, cfg: &NicConfig) -> f64 {
        if self.core {
            f64::from(cfg.clock_mhz)
        } else {
            self.mhz.expect("validated: a non-core clock has mhz")
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    pub port: String,
    pub site: String,
    pub iobuf: String,
    pub purpose: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    #[serde(skip_deserializing)]
    pub name: String,
    pub description: String,
    pub vendor: String,
    pub family: String,
    pub part: String,
    pub flow: Flow,
    pub datapath_bits: u32,
    pub cdc: Vec<[String; 2]>,
    /// Config defaults `--target` layers under the user's file.
    pub config: toml::Table,
    pub clocks: Vec<Clock>,
    #[serde(default)]
    pub pins: Vec<Pin>,
}

impl Target {
    pub fn clock(&self, name: &str) -> Option<&Clock> {
        self.clocks.iter().find(|c| c.name == name)
    }

    /// Checks the table's own consistency (run on load; a broken table is a build bug).
    fn validate(&self) -> Result<(), String> {
        let cores = self.clocks.iter().filter(|c| c.core).count();
        if cores != 1 {
            return Err(format!("{cores} core clocks, need exactly 1"));
        }
        for c in &self.clocks {
            if c.core == c.mhz.is_some() {
                return Err(format!(
                    "clock {}: give `mhz` exactly when it is not the core clock",
                    c.name
                ));
            }
            if c.port.is_some() == c.net.is_some() {
                return Err(format!("clock {}: give exactly one of port / net", c.name));
            }
            if c.mhz.is_some_and(|f| f.is_nan() || f <= 0.0) {
                return Err(format!("clock {}: mhz must be positive", c.name));
            }
            if self.flow != Flow::NextpnrEcp5 && c.net.is_some() {
                return Err(format!(
                    "clock {}: only an LPF can constrain a net clock",
                    c.name
                ));
            }
        }
        for [a, b] in &self.cdc {
            for n in [a, b] {
                if self.clock(n).is_none() {
                    return Err(format!("cdc names unknown clock {n}"));
                }
            }
        }
        if !self.pins.is_empty() && self.flow != Flow::NextpnrEcp5 {
            return Err("pins are only written to an LPF".into());
        }
        Ok(())
    }
}

/// Every target, in table (alphabetical) order.
pub fn all() -> &'static [Target] {
    static T: OnceLock<Vec<Target>> = OnceLock::new();
    T.get_or_init(|| {
        let map: BTreeMap<String, Target> =
            toml::from_str(TARGETS_TOML).expect("constraints/targets.toml parses");
        map.into_iter()
            .map(|(name, mut t)| {
                t.name = name;
                if let Err(e) = t.validate() {
                    panic!("constraints/targets.toml: [{}]: {e}", t.name);
                }
                t
            })
            .collect()
    })
}

pub fn names() -> Vec<&'static str> {
    all().iter().map(|t| t.name.as_str()).collect()
}

/// The target called `name`, or exit 2 listing the known ones.
pub fn get(name: &str) -> Result<&'static Target, Fail> {
    all().iter().find(|t| t.name == name).ok_or_else(|| {
        Fail(
            2,
            format!("unknown target `{name}`; known: {}", names().join(", ")),
        )
    })
}

/// The config for `--target NAME`: built-in defaults, then the target's `[NAME.config]`, then
/// the user's file (`file`: its path and text), with `board = NAME`. A file naming another
/// board is refused (exit 2): say one or the other.
pub fn retarget(target: &Target, file: Option<(&Path, &str)>) -> Result<NicConfig, Fail> {
    let mut merged = target.config.clone();
    if let Some((path, text)) = file {
        let user: toml::Table = toml::from_str(text).map_err(|e| {
            Fail(
                2,
                format!(
                    "{}: config is not valid TOML for NicConfig: {e}",
                    path.display()
                ),
            )
        })?;
        if let Some(b) = user.get("board") {
            if b.as_str() != Some(target.name.as_str()) {
                return Err(Fail(
                    2,
                    format!(
                        "--target {} conflicts with board = {b} in {}",
                        target.name,
                        path.display()
                    ),
                ));
            }
        }
        merged.extend(user);
    }
    merged.insert("board".into(), toml::Value::String(target.name.clone()));
    let text = toml::to_string(&merged).expect("a TOML table serialises");
    NicConfig::from_toml(&text).map_err(|e| Fail(2, format!("--target {}: {e}", target.name)))
}

/// `mrcgen targets [--json]`.
pub fn targets_cmd(json: bool) -> Result<(), Fail> {
    let cfg = NicConfig::default();
    if json {
        println!("{}", serde_json::to_string_pretty(all())?);
        return Ok(());
    }
    println!(
        "{:<11} {:<22} {:<13} {:<4} clocks",
        "target", "part", "flow", "file"
    );
    for t in all() {
        let clocks: Vec<String> = t
            .clocks
            .iter()
            .map(|c| {
                let f = if c.core {
                    format!("clock_mhz ({} by default)", clock_mhz_default(t, &cfg))
                } else {
                    format!("{} MHz", c.mhz(&cfg))
                };
                format!("{} {f}", c.name)
            })
            .collect();
        println!(
            "{:<11} {:<22} {:<13} {:<4} {}",
            t.name,
            t.part,
            t.flow.name(),
            t.flow.constraint_ext(),
            clocks.join(", ")
        );
    }
    Ok(())
}

/// The core clock `--target` gives when the user's file does not set one.
fn clock_mhz_default(t: &Target, cfg: &NicConfig) -> i64 {
    t.config
        .get("clock_mhz")
        .and_then(toml::Value::as_integer)
        .unwrap_or(i64::from(cfg.clock_mhz))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_the_config_boards() {
        let mut t = names();
        let mut b = mrc_config::KNOWN_BOARDS.to_vec();
        t.sort_unstable();
        b.sort_unstable();
        assert_eq!(t, b, "constraints/targets.toml vs mrc_config::KNOWN_BOARDS");
    }

    #[test]
    fn every_target_retargets_the_default_config() {
        for t in all() {
            let cfg = retarget(t, None).unwrap_or_else(|e| panic!("{}: {}", t.name, e.1));
            assert_eq!(cfg.board, t.name);
            if let Some(c) = t.config.get("clock_mhz") {
                assert_eq!(i64::from(cfg.clock_mhz), c.as_integer().unwrap());
            }
        }
    }

    #[test]
    fn unknown_target_lists_the_known_ones() {
        let Fail(code, msg) = get("de10").unwrap_err();
        assert_eq!(code, 2);
        for n in mrc_config::KNOWN_BOARDS {
            assert!(msg.contains(n), "{msg}");
        }
    }

    #[test]
    fn the_file_wins_over_the_target_and_may_not_name_another_board() {
        let t = get("ecp5-85k").unwrap();
        let p = Path::new("x.toml");
        let cfg = retarget(t, Some((p, "clock_mhz = 75\nplanes = 4\n"))).unwrap();
        assert_eq!((cfg.clock_mhz, cfg.planes, cfg.link_gbps), (75, 4, 25));
        let cfg = retarget(t, Some((p, "board = \"ecp5-85k\"\n"))).unwrap();
        assert_eq!(cfg.clock_mhz, 90);
        let Fail(code, msg) = retarget(t, Some((p, "board = \"generic\"\n"))).unwrap_err();
        assert_eq!(code, 2);
        assert!(msg.contains("conflicts"), "{msg}");
        let Fail(code, _) = retarget(t, Some((p, "clock_mhz = 7\n"))).unwrap_err();
        assert_eq!(code, 2);
    }
}
