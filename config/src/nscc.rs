//! NSCC constants, derived from the config exactly as `mrc-notes.md` section 4 says, in two
//! forms: real numbers for `model::nscc::Reference` and the fixed-point constants that
//! `model::nscc::Fixed` and the `nscc_window` RTL share. Nothing downstream derives an NSCC
//! constant on its own.
//!
//! Reference network of the notes: 100 Gb/s, 12 us RTT, BDP 150 KB. With this NIC's
//! `bdp = link_gbps * base_rtt_ns / 8` bytes, `a = bdp / 150 KB` and `b = target / 12 us`.

use crate::NicConfig;

/// Clocks `nscc_window` spends on an event that neither cuts the window nor runs a fulfill
/// (its shortest initiation interval).
pub const EVENT_CYCLES: u32 = 9;
/// Extra clocks when the event applies a multiplicative decrease.
pub const MD_CYCLES: u32 = 7;
/// Extra clocks when the event runs a fulfill (`cwnd += inc / cwnd`).
pub const FULFILL_CYCLES: u32 = 8;
/// Clocks per ACK on average at one ACK per full packet, rounded up: 9, plus 8 on every 9th
/// ACK (a fulfill per 8 MTU received), plus 7 at most once per base RTT. Config validation
/// refuses a line rate whose ACK rate at this cost exceeds the core clock.
pub const ACK_CYCLES_AT_LINE_RATE: u32 = 10;
/// Multiplier operands are at most 34 x 17 bits (two DSP tiles); wider constants are kept as
/// a 17-bit mantissa and a shift.
pub const MANTISSA_BITS: u32 = 17;
/// Reference BDP of the notes (100 Gb/s x 12 us), bytes.
pub const REF_BDP_BYTES: f64 = 150_000.0;
/// Reference RTT of the notes, ns.
pub const REF_RTT_NS: f64 = 12_000.0;
/// Fast increase applies while the delay stays below this for a whole window (1 us).
pub const FAST_DELAY_NS: u32 = 1_000;
/// Multiplicative decrease weight.
pub const GAMMA: f64 = 0.8;
/// Weight of a new sample in the delay EWMA.
pub const DELAY_EWMA: f64 = 0.0125;
/// Quick adapt only while achieved < maxwnd >> QA_GATE.
pub const QA_GATE: u32 = 3;
/// Floor of one multiplicative decrease (max_md_jump).
pub const MD_FLOOR: f64 = 0.5;
/// Bits of the reciprocal table index (the mantissa below the leading one).
pub const RECIP_INDEX_BITS: u32 = 10;
/// Fraction bits of a table entry: entry i = round(2^RECIP_FRAC / (2^INDEX + i)).
pub const RECIP_FRAC: u32 = 21;

/// The algorithm's parameters as real numbers (bytes, ns).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NsccParams {
    pub mtu: f64,
    /// Bandwidth-delay product at the configured base RTT, bytes.
    pub bdp: f64,
    pub a: f64,
    pub b: f64,
    /// Target queuing delay: 0.75 RTT with trimming, 1.0 RTT without, ns.
    pub target_ns: f64,
    /// Proportional increase gain, bytes per ns: 4 MSS a b / target.
    pub alpha: f64,
    /// Fair increase, bytes: 5 MSS a.
    pub fi: f64,
    /// Once-per-period additive increase, bytes: 0.15 MSS a.
    pub eta: f64,
    /// Fast increase per acked byte: 0.25 a.
    pub fi_scale: f64,
    /// Quick adapt trigger delay: 4 target, ns.
    pub qa_threshold_ns: f64,
    /// Fulfill after this many received bytes (8 MTU).
    pub adjust_bytes: f64,
    /// maxwnd = 1.5 BDP at the current base RTT: bytes per ns of base RTT.
    pub maxwnd_per_ns: f64,
    /// The configured base RTT (the min filter's starting value), ns.
    pub base_rtt_ns: f64,
}

impl NsccParams {
    pub fn new(cfg: &NicConfig) -> Self {
        let mtu = f64::from(cfg.mtu);
        let base = f64::from(cfg.base_rtt_ns);
        let bdp = f64::from(cfg.link_gbps) * base / 8.0;
        let target_ns = base * if cfg.trimming { 0.75 } else { 1.0 };
        let a = bdp / REF_BDP_BYTES;
        let b = target_ns / REF_RTT_NS;
        NsccParams {
            mtu,
            bdp,
            a,
            b,
            target_ns,
            alpha: 4.0 * mtu * a * b / target_ns,
            fi: 5.0 * mtu * a,
            eta: 0.15 * mtu * a,
            fi_scale: 0.25 * a,
            qa_threshold_ns: 4.0 * target_ns,
            adjust_bytes: 8.0 * mtu,
            maxwnd_per_ns: 1.5 * f64::from(cfg.link_gbps) / 8.0,
            base_rtt_ns: base,
        }
    }
}

/// The fixed-point constants of `Fixed` and the RTL. Formats: bytes and ns are integers;
/// `_Q16` / `_Q8` are unsigned fractions with 16 / 8 fraction bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NsccFixed {
    pub mtu: u32,
    pub target_ns: u32,
    pub qa_threshold_ns: u32,
    /// Fair increase per acked byte, bytes (the increment accumulator is in bytes^2).
    pub fi: u32,
    /// fi ~= fi_m << fi_e with a 17-bit mantissa.
    pub fi_m: u32,
    pub fi_e: u32,
    /// Proportional gain, bytes per ns, Q16.
    pub alpha_q16: u32,
    /// alpha_q16 ~= alpha_m << alpha_e with a 17-bit mantissa (alpha_e <= 8).
    pub alpha_m: u32,
    pub alpha_e: u32,
    /// Fast increase per acked byte, Q8.
    pub fi_scale_q8: u32,
    pub eta: u32,
    pub adjust_bytes: u32,
    /// maxwnd = (base_rtt_ns * maxwnd_per_ns_q8) >> 8, exact: 1.5 / 8 * link_gbps = 48 / 256.
    pub maxwnd_per_ns_q8: u32,
    /// gamma in Q16.
    pub gamma_q16: u32,
    /// Delay EWMA weight in Q16.
    pub ewma_q16: u32,
    /// gamma * target * 2^8 (the average delay is kept in ns Q8), for the MD factor.
    pub gamma_target_q24: u64,
    pub base_rtt_ns: u32,
    /// cwnd and maxwnd after reset: 1.5 BDP.
    pub init_cwnd: u32,
}

impl NsccFixed {
    pub fn new(cfg: &NicConfig) -> Self {
        let p = NsccParams::new(cfg);
        let q16 = |x: f64| (x * 65536.0).round() as u32;
        let target_ns = p.target_ns.round() as u32;
        let maxwnd_per_ns_q8 = cfg.link_gbps * 48;
        let gamma_q16 = q16(GAMMA);
        let fi = p.fi.round() as u32;
        let alpha_q16 = q16(p.alpha);
        let split = |x: u32| {
            let e = (32 - x.leading_zeros()).saturating_sub(MANTISSA_BITS);
            (x >> e, e)
        };
        let (fi_m, fi_e) = split(fi);
        let (alpha_m, alpha_e) = split(alpha_q16);
        NsccFixed {
            mtu: cfg.mtu,
            target_ns,
            qa_threshold_ns: 4 * target_ns,
            fi,
            fi_m,
            fi_e,
            alpha_q16,
            alpha_m,
            alpha_e,
            fi_scale_q8: (p.fi_scale * 256.0).round() as u32,
            eta: p.eta.round() as u32,
            adjust_bytes: 8 * cfg.mtu,
            maxwnd_per_ns_q8,
            gamma_q16,
            ewma_q16: q16(DELAY_EWMA),
            gamma_target_q24: (u64::from(gamma_q16) * u64::from(target_ns)) << 8,
            base_rtt_ns: cfg.base_rtt_ns,
            init_cwnd: maxwnd_for(cfg.base_rtt_ns, maxwnd_per_ns_q8, cfg.mtu),
        }
    }
}

/// maxwnd at a base RTT: 1.5 BDP, never below one MTU.
pub fn maxwnd_for(base_rtt_ns: u32, maxwnd_per_ns_q8: u32, mtu: u32) -> u32 {
    let w = (u64::from(base_rtt_ns) * u64::from(maxwnd_per_ns_q8)) >> 8;
    (w.min(u64::from(u32::MAX)) as u32).max(mtu)
}

/// The reciprocal table `Fixed` and the RTL divide with: entry i = round(2^21 / (1024 + i)),
/// so for x with its leading one at bit p and the 10 bits below it = i,
/// 1/x ~= entry * 2^-(p + 11) (relative error below 0.1 %: the bits under the index are
/// dropped, the entry is rounded). It depends on no config field: built once, shared.
pub fn recip_table() -> &'static [u32] {
    static TABLE: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let n = 1u64 << RECIP_INDEX_BITS;
        (0..n)
            .map(|i| (((1u64 << RECIP_FRAC) + (n + i) / 2) / (n + i)) as u32)
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_network_gives_the_notes_constants() {
        // 100 Gb/s x 12 us is the notes' reference network: a = 1, b = 0.75 with trimming.
        let cfg = NicConfig {
            link_gbps: 100,
            mtu: 4096,
            ..NicConfig::default()
        };
        let p = NsccParams::new(&cfg);
        assert_eq!(p.bdp, 150_000.0);
        assert_eq!((p.a, p.b), (1.0, 0.75));
        assert_eq!(p.target_ns, 9_000.0);
        assert_eq!(p.fi, 5.0 * 4096.0);
        assert!((p.eta - 0.15 * 4096.0).abs() < 1e-9);
        assert_eq!(p.fi_scale, 0.25);
        assert_eq!(p.qa_threshold_ns, 36_000.0);
        // maxwnd = initial cwnd = 1.5 BDP.
        assert_eq!(NsccFixed::new(&cfg).init_cwnd, 225_000);
        let no_trim = NsccParams::new(&NicConfig {
            trimming: false,
            ..cfg
        });
        assert_eq!(no_trim.target_ns, 12_000.0);
    }

    #[test]
    fn fixed_constants_track_the_real_ones() {
        let cfg = NicConfig::default();
        let p = NsccParams::new(&cfg);
        let f = NsccFixed::new(&cfg);
        assert!((f64::from(f.alpha_q16) / 65536.0 / p.alpha - 1.0).abs() < 1e-4);
        assert!((f64::from(f.fi) / p.fi - 1.0).abs() < 1e-4);
        assert_eq!(f64::from(f.init_cwnd), 1.5 * p.bdp);
        assert_eq!(f.fi_scale_q8, (p.fi_scale * 256.0) as u32);
        assert!(f.fi_m < 1 << MANTISSA_BITS && f.alpha_m < 1 << MANTISSA_BITS);
        assert!((f64::from(f.fi_m << f.fi_e) / f64::from(f.fi) - 1.0).abs() < 1e-4);
        assert!((f64::from(f.alpha_m << f.alpha_e) / f64::from(f.alpha_q16) - 1.0).abs() < 1e-4);
        // The largest config: alpha's shift stays <= 8 (the RTL shifts the product by 9 - e).
        let big = NsccFixed::new(&NicConfig {
            link_gbps: 1600,
            base_rtt_ns: 100_000,
            mtu: 9216,
            clock_mhz: 500,
            ..NicConfig::default()
        });
        assert!(big.alpha_e <= 8 && big.fi_e <= 8);
    }

    #[test]
    fn recip_table_is_within_a_tenth_of_a_percent() {
        let t = recip_table();
        assert_eq!(t.len(), 1024);
        for x in [256u32, 4096, 4097, 5000, 123_457, 1_800_000, u32::MAX] {
            let p = 31 - x.leading_zeros();
            let i = if p >= 10 {
                (x >> (p - 10)) & 1023
            } else {
                (x << (10 - p)) & 1023
            };
            let approx = f64::from(t[i as usize]) / f64::from(2u32).powi(p as i32 + 11);
            let err = approx * f64::from(x) - 1.0;
            assert!((0.0..1e-3).contains(&err.abs()), "x = {x}: {err}");
        }
    }
}
