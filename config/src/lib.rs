//! `NicConfig`: the single source of truth for every generated and modelled block.
//!
//! One TOML file (or the built-in default) is parsed, validated once, and then handed to the
//! RTL generator (`mrc-hdl`), the golden model (`mrc-model`), the cosim harness and the driver.
//! Nothing downstream re-derives a size on its own: it asks this crate.
//!
//! ```toml
//! planes = 8            # 1..=8 fabric planes
//! evs_per_plane = 16    # EVs per plane; planes * evs_per_plane <= 256
//! ```

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

pub mod core;
pub mod nscc;

/// Largest EV table one arbiter holds (MRC: 128..256 EVs per QP).
pub const MAX_EVS: u32 = 256;
/// Smallest table the RTL is generated for; smaller profiles are padded with disabled entries.
pub const MIN_TABLE: u32 = 16;
/// Boards the generator knows clock and part facts for.
pub const KNOWN_BOARDS: &[&str] = &["ecp5-85k", "alveo-u55c", "generic"];
/// Receiver SACK window sizes the bitmap RTL is generated for.
pub const SACK_WINDOWS: &[u32] = &[64, 128, 256, 512, 1024];

/// How the spray arbiter reacts to path feedback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SprayPolicy {
    /// MRC EV state machine: GOOD / SKIP / ASSUMED_BAD / DENIED.
    Mrc,
    /// UEC reference BITMAP: per-EV penalty (+1 ECN, +4 NACK, +15 timeout), skipped while > 0.
    Bitmap,
}

impl SprayPolicy {
    /// Value of the arbiter's `policy` input port.
    pub fn port_value(self) -> u32 {
        match self {
            SprayPolicy::Mrc => 0,
            SprayPolicy::Bitmap => 1,
        }
    }
}

/// The NIC configuration. Field docs state the legal range `validate()` enforces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NicConfig {
    /// Fabric planes the NIC sprays over: 1..=8.
    pub planes: u32,
    /// Entropy values per plane: 1..=256, with planes * evs_per_plane <= 256.
    pub evs_per_plane: u32,
    /// EV width in bits; MRC fixes it at 32 (UDP source port ‖ 16 bits of flow label).
    pub ev_width: u32,
    /// PSN width in bits; MRC uses the 24-bit BTH PSN.
    pub psn_width: u32,
    /// Receiver SACK window in PSNs: one of 64, 128, 256, 512, 1024.
    pub sack_window_bits: u32,
    /// Maximum PSN range, in units of 128 PSNs: 1..=255.
    pub mpr: u32,
    /// Target core clock in MHz: 50..=500. Drives generated constraints.
    pub clock_mhz: u32,
    /// Target board: one of `KNOWN_BOARDS`.
    pub board: String,
    /// Default spray policy loaded into the arbiter's `policy` input.
    pub spray_policy: SprayPolicy,
    /// Feedback never retires an EV when this few or fewer EVs remain active: 1..=EVs in the profile.
    pub ev_min_active: u32,
    /// Base seed of the per-QP spray LFSR: 1..=65535 (an LFSR seeded with 0 never moves).
    pub spray_seed: u32,
    /// Receiver: one coalesced SACK per this many bytes received: 1..=16_777_215 (24-bit).
    pub sack_coalesce_bytes: u32,
    /// Sender: retransmit timeout = 2^rto_exp timer ticks of 1.024 us (the notes' ACK timeout
    /// unit): 0..=24.
    pub rto_exp: u32,
    /// Sender: timeouts retried at the fixed interval before backoff starts: 0..=7.
    pub rto_linear_retries: u32,
    /// Sender: further timeouts retried with exponential backoff before the QP errors: 0..=25.
    pub rto_backoff_retries: u32,
    /// Sender: a hole is declared lost (retransmitted once) when a PSN this far above it has
    /// been SACKed: 0..=1023, 0 = only NACKs and timeouts retransmit. Spraying reorders
    /// packets, so keep it above the reordering depth the fabric produces.
    pub rtx_ooo_threshold: u32,
    /// NSCC: the NIC's line rate in Gb/s: 25..=1600. With `base_rtt_ns` it sets the BDP every
    /// NSCC constant scales from; `nscc_window` must keep up with one ACK per packet at it.
    pub link_gbps: u32,
    /// NSCC: the fabric's base RTT in ns (the initial base-RTT estimate; the min filter only
    /// lowers it): 2_000..=100_000.
    pub base_rtt_ns: u32,
    /// NSCC: payload bytes per full packet (the notes' MTU / MSS): 1024..=9216.
    pub mtu: u32,
    /// NSCC: switches trim instead of dropping, so the target delay is 0.75 RTT (1.0 without).
    pub trimming: bool,
    /// Queue pairs `mrc_core` serves: 1..=16. Each QP has its own scoreboard (replicated,
    /// state in flops); the receive tracker and the NSCC window are shared, a context per QP,
    /// and so are the EV table and the CSR block.
    pub qps: u32,
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            planes: 8,
            evs_per_plane: 16,
            ev_width: 32,
            psn_width: 24,
            sack_window_bits: 256,
            mpr: 255,
            clock_mhz: 250,
            board: "ecp5-85k".into(),
            spray_policy: SprayPolicy::Mrc,
            ev_min_active: 8,
            spray_seed: 0xACE1,
            sack_coalesce_bytes: 16_384,
            rto_exp: 4,
            rto_linear_retries: 7,
            rto_backoff_retries: 25,
            rtx_ooo_threshold: 16,
            link_gbps: 800,
            base_rtt_ns: 12_000,
            mtu: 4096,
            trimming: true,
            qps: 1,
        }
    }
}

/// A refused configuration: which field, the value it had, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub field: &'static str,
    pub value: String,
    pub reason: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {}: {}", self.field, self.value, self.reason)
    }
}

impl std::error::Error for ConfigError {}

/// Anything that can go wrong loading a config file.
#[derive(Debug)]
pub enum LoadError {
    Io(std::path::PathBuf, std::io::Error),
    Parse(String),
    Invalid(ConfigError),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io(p, e) => write!(f, "cannot read config {}: {e}", p.display()),
            LoadError::Parse(e) => write!(f, "config is not valid TOML for NicConfig: {e}"),
            LoadError::Invalid(e) => write!(f, "invalid config: {e}"),
        }
    }
}

impl std::error::Error for LoadError {}

fn check(
    ok: bool,
    field: &'static str,
    value: impl fmt::Display,
    reason: impl Into<String>,
) -> Result<(), ConfigError> {
    if ok {
        Ok(())
    } else {
        Err(ConfigError {
            field,
            value: value.to_string(),
            reason: reason.into(),
        })
    }
}

impl NicConfig {
    /// Parse TOML text and validate it.
    pub fn from_toml(text: &str) -> Result<Self, LoadError> {
        let cfg: NicConfig = toml::from_str(text).map_err(|e| LoadError::Parse(e.to_string()))?;
        cfg.validate().map_err(LoadError::Invalid)?;
        Ok(cfg)
    }

    /// Read, parse and validate a TOML file.
    pub fn load(path: &Path) -> Result<Self, LoadError> {
        let text = std::fs::read_to_string(path).map_err(|e| LoadError::Io(path.to_owned(), e))?;
        Self::from_toml(&text)
    }

    /// The config as TOML (what `mrcgen gen` records in its manifest).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("NicConfig always serialises")
    }

    /// Refuse any value the generator, model or driver cannot honour, naming the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check(
            (1..=8).contains(&self.planes),
            "planes",
            self.planes,
            "must be 1..=8",
        )?;
        check(
            (1..=MAX_EVS).contains(&self.evs_per_plane),
            "evs_per_plane",
            self.evs_per_plane,
            format!("must be 1..={MAX_EVS}"),
        )?;
        check(
            self.total_evs() <= MAX_EVS,
            "evs_per_plane",
            self.evs_per_plane,
            format!(
                "planes * evs_per_plane = {} exceeds the {MAX_EVS}-entry EV table",
                self.total_evs()
            ),
        )?;
        check(
            (1..=16).contains(&self.qps),
            "qps",
            self.qps,
            "must be 1..=16 (each QP replicates the scoreboard and adds a tracker and an NSCC context)",
        )?;
        check(
            self.ev_width == 32,
            "ev_width",
            self.ev_width,
            "MRC EVs are 32 bits; must be 32",
        )?;
        check(
            self.psn_width == 24,
            "psn_width",
            self.psn_width,
            "the BTH PSN is 24 bits; must be 24",
        )?;
        check(
            SACK_WINDOWS.contains(&self.sack_window_bits),
            "sack_window_bits",
            self.sack_window_bits,
            format!("must be one of {SACK_WINDOWS:?}"),
        )?;
        check(
            (1..=255).contains(&self.mpr),
            "mpr",
            self.mpr,
            "must be 1..=255 (units of 128 PSNs)",
        )?;
        check(
            (50..=500).contains(&self.clock_mhz),
            "clock_mhz",
            self.clock_mhz,
            "must be 50..=500",
        )?;
        check(
            KNOWN_BOARDS.contains(&self.board.as_str()),
            "board",
            format!("{:?}", self.board),
            format!("unknown board; known: {}", KNOWN_BOARDS.join(", ")),
        )?;
        check(
            (1..=self.total_evs()).contains(&self.ev_min_active),
            "ev_min_active",
            self.ev_min_active,
            format!("must be 1..={} (the EVs in the profile)", self.total_evs()),
        )?;
        check(
            (1..=0xFFFF).contains(&self.spray_seed),
            "spray_seed",
            self.spray_seed,
            "must be 1..=65535 (16-bit LFSR, never 0)",
        )?;
        check(
            (1..=0xFF_FFFF).contains(&self.sack_coalesce_bytes),
            "sack_coalesce_bytes",
            self.sack_coalesce_bytes,
            "must be 1..=16777215 (24-bit byte counter)",
        )?;
        check(
            self.rto_exp <= 24,
            "rto_exp",
            self.rto_exp,
            "must be 0..=24 (timeout = 1.024 us * 2^rto_exp)",
        )?;
        check(
            self.rto_linear_retries <= 7,
            "rto_linear_retries",
            self.rto_linear_retries,
            "must be 0..=7",
        )?;
        check(
            self.rto_backoff_retries <= 25,
            "rto_backoff_retries",
            self.rto_backoff_retries,
            "must be 0..=25",
        )?;
        check(
            self.rtx_ooo_threshold < 1024,
            "rtx_ooo_threshold",
            self.rtx_ooo_threshold,
            "must be 0..=1023 (0 disables hole detection)",
        )?;
        check(
            (25..=1600).contains(&self.link_gbps),
            "link_gbps",
            self.link_gbps,
            "must be 25..=1600",
        )?;
        check(
            (2_000..=100_000).contains(&self.base_rtt_ns),
            "base_rtt_ns",
            self.base_rtt_ns,
            "must be 2000..=100000 (2 us .. 100 us)",
        )?;
        check(
            (1024..=9216).contains(&self.mtu),
            "mtu",
            self.mtu,
            "must be 1024..=9216 bytes",
        )?;
        // nscc_window spends a few clocks per event; refuse a line rate whose worst case (an
        // ACK for every full packet) it could not follow at the core clock.
        let need = u64::from(self.link_gbps) * 1000 * u64::from(nscc::ACK_CYCLES_AT_LINE_RATE);
        let have = u64::from(self.clock_mhz) * 8 * u64::from(self.mtu);
        check(
            need <= have,
            "link_gbps",
            self.link_gbps,
            format!(
                "one ACK per {}-byte packet at {} Gb/s is {:.1} M events/s, above what \
                 nscc_window takes at {} MHz ({} cycles per ACK = {:.1} M/s): raise \
                 clock_mhz or mtu",
                self.mtu,
                self.link_gbps,
                self.link_gbps as f64 * 1e3 / (8.0 * self.mtu as f64),
                self.clock_mhz,
                nscc::ACK_CYCLES_AT_LINE_RATE,
                self.clock_mhz as f64 / nscc::ACK_CYCLES_AT_LINE_RATE as f64
            ),
        )?;
        Ok(())
    }

    /// EVs in one QP's profile.
    pub fn total_evs(&self) -> u32 {
        self.planes * self.evs_per_plane
    }

    /// Entries in the generated EV table: the profile rounded up to a power of two (>= 16).
    /// Entries past `total_evs()` are held DENIED and never granted.
    pub fn ev_table_entries(&self) -> u32 {
        self.total_evs().next_power_of_two().max(MIN_TABLE)
    }

    /// Width of an EV table index.
    pub fn ev_index_bits(&self) -> u32 {
        self.ev_table_entries().trailing_zeros()
    }

    /// Plane of EV table entry `i` (entries are laid out plane-major), or `None` for padding.
    pub fn plane_of(&self, i: u32) -> Option<u32> {
        (i < self.total_evs()).then(|| i / self.evs_per_plane)
    }

    /// The built-in EV profile: one 32-bit EV per entry (UDP source port in the high half, flow
    /// label low bits in the low half), a fixed scramble of the seed so runs are reproducible.
    /// The RTL's EV RAM is initialised with it and the model starts from the same table.
    pub fn default_ev_profile(&self) -> Vec<u32> {
        (0..self.total_evs())
            .map(|i| {
                let mut z = (u64::from(self.spray_seed) << 32 | u64::from(i))
                    .wrapping_add(0x9E37_79B9_7F4A_7C15);
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                (z ^ (z >> 31)) as u32
            })
            .collect()
    }

    /// Per-QP spray seed: the base seed scrambled by the QP number so QPs sharing a profile
    /// do not rotate in lock-step. Never 0.
    pub fn qp_spray_seed(&self, qp: u32) -> u16 {
        let x = (self.spray_seed ^ qp.wrapping_mul(0x9E37)) as u16;
        if x == 0 {
            0xACE1
        } else {
            x
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_has_128_evs() {
        let c = NicConfig::default();
        c.validate().unwrap();
        assert_eq!(c.total_evs(), 128);
        assert_eq!(c.ev_table_entries(), 128);
        assert_eq!(c.ev_index_bits(), 7);
    }

    #[test]
    fn refuses_nine_planes_naming_field_and_reason() {
        let e = NicConfig::from_toml("planes = 9").unwrap_err();
        assert_eq!(e.to_string(), "invalid config: planes = 9: must be 1..=8");
    }

    #[test]
    fn refuses_each_bad_field() {
        let cases = [
            ("evs_per_plane = 0", "evs_per_plane"),
            ("planes = 8\nevs_per_plane = 64", "evs_per_plane"),
            ("ev_width = 16", "ev_width"),
            ("psn_width = 32", "psn_width"),
            ("sack_window_bits = 100", "sack_window_bits"),
            ("mpr = 0", "mpr"),
            ("clock_mhz = 5000", "clock_mhz"),
            ("board = \"de10\"", "board"),
            ("ev_min_active = 0", "ev_min_active"),
            ("ev_min_active = 129", "ev_min_active"),
            ("spray_seed = 0", "spray_seed"),
            ("sack_coalesce_bytes = 0", "sack_coalesce_bytes"),
            ("rto_exp = 25", "rto_exp"),
            ("rto_linear_retries = 8", "rto_linear_retries"),
            ("rto_backoff_retries = 26", "rto_backoff_retries"),
            ("rtx_ooo_threshold = 1024", "rtx_ooo_threshold"),
            ("qps = 0", "qps"),
            ("qps = 17", "qps"),
            ("link_gbps = 24", "link_gbps"),
            ("link_gbps = 1601", "link_gbps"),
            ("link_gbps = 1600", "link_gbps"),
            ("base_rtt_ns = 1999", "base_rtt_ns"),
            ("base_rtt_ns = 100001", "base_rtt_ns"),
            ("mtu = 1023", "mtu"),
            ("mtu = 9217", "mtu"),
        ];
        for (text, field) in cases {
            match NicConfig::from_toml(text) {
                Err(LoadError::Invalid(e)) => assert_eq!(e.field, field, "{text}"),
                other => panic!("{text}: expected invalid {field}, got {other:?}"),
            }
        }
    }

    #[test]
    fn refuses_unknown_fields_and_wrong_types() {
        assert!(matches!(
            NicConfig::from_toml("plane = 8"),
            Err(LoadError::Parse(_))
        ));
        assert!(matches!(
            NicConfig::from_toml("planes = \"eight\""),
            Err(LoadError::Parse(_))
        ));
        assert!(matches!(
            NicConfig::from_toml("spray_policy = \"reps\""),
            Err(LoadError::Parse(_))
        ));
    }

    #[test]
    fn odd_profiles_pad_to_a_power_of_two() {
        let c = NicConfig::from_toml("planes = 3\nevs_per_plane = 5\nev_min_active = 2").unwrap();
        assert_eq!(c.total_evs(), 15);
        assert_eq!(c.ev_table_entries(), 16);
        assert_eq!(c.plane_of(14), Some(2));
        assert_eq!(c.plane_of(15), None);
    }

    #[test]
    fn round_trips_through_toml() {
        let c = NicConfig::default();
        assert_eq!(NicConfig::from_toml(&c.to_toml()).unwrap(), c);
    }

    #[test]
    fn qp_seeds_differ_and_are_never_zero() {
        let c = NicConfig::default();
        let seeds: std::collections::HashSet<u16> = (0..64).map(|q| c.qp_spray_seed(q)).collect();
        assert_eq!(seeds.len(), 64);
        assert!(!seeds.contains(&0));
    }
}
