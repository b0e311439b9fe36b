//! `mrc_core` in the harness: port packing (`una` is a vector port, `una$i` per QP), the model
//! as a [`Stepper`], the Verilated core behind [`CoreSim`], and a seeded traffic source.
//!
//! The traffic source is closed-loop although the stimulus only sees the cycle number: it
//! steps a private copy of the golden model on the inputs it generates (the DUT must equal the
//! model, so the copy shows what the DUT does) and loops the core back on itself: its transmit
//! headers return as DATA headers on the same QP (delayed, reordered, lost, trimmed,
//! ECN-marked), its SACK/NACK headers return as receive SACK/NACK headers, so the scoreboards'
//! `una` advances, holes are retransmitted and NSCC sees ACKs, trims and RTT samples. Around
//! that: MMIO (QP enables, EV loads / deny / allow, XPORT parameters, QP_CTRL resets, EVQ pops,
//! reads of every block, illegal accesses), send-queue posts (some refused), junk headers
//! (QP out of range, bad kinds, random PSNs near the window), ticks, `now_ns`, plane flaps
//! and resets.

use crate::error::CosimError;
use crate::ports::{Port, PortMap};
use crate::stepper::Stepper;
use crate::verilator::{Dut, VerilatedLib};
use mrc_config::NicConfig;
use mrc_model::mrc_core::{CoreInputs, CoreOutputs, CoreSim, MrcCore, RX_DATA, RX_NACK, RX_SACK};
use mrc_model::rng::SplitMix64;
use std::sync::Arc;

pub const MODULE: &str = "mrc_core";

/// Input ports (name, width) in packing order; `clock` is driven by the shim.
pub const IN_PORTS: [(&str, u32); 29] = [
    ("rst", 1),
    ("wr_valid", 1),
    ("wr_addr", 12),
    ("wr_data", 32),
    ("wr_strb", 4),
    ("rd_valid", 1),
    ("rd_addr", 12),
    ("now_ns", 32),
    ("tick", 1),
    ("plane_ready", 8),
    ("sq_valid", 1),
    ("sq_qp", 8),
    ("sq_bytes", 32),
    ("rx_valid", 1),
    ("rx_qp", 8),
    ("rx_kind", 8),
    ("rx_psn", 24),
    ("rx_len", 16),
    ("rx_ecn", 1),
    ("rx_trimmed", 1),
    ("rx_lasthop", 1),
    ("rx_ackreq", 1),
    ("rx_ev", 32),
    ("rx_ev_idx", 8),
    ("rx_offset", 16),
    ("rx_bitmap", 64),
    ("rx_m", 2),
    ("rx_rcvd_bytes", 24),
    ("rx_reason", 8),
];
/// Output ports (name, width) in packing order, before `una$0..una$(qps-1)` (24 bits each).
pub const OUT_FIXED: [(&str, u32); 27] = [
    ("wr_ready", 1),
    ("rd_ready", 1),
    ("b_valid", 1),
    ("b_resp", 2),
    ("r_valid", 1),
    ("r_data", 32),
    ("r_resp", 2),
    ("tx_valid", 1),
    ("tx_qp", 8),
    ("tx_psn", 24),
    ("tx_ev", 32),
    ("tx_ev_idx", 8),
    ("tx_plane", 3),
    ("tx_rtx", 1),
    ("tx_len", 16),
    ("tx_last", 1),
    ("ack_valid", 1),
    ("ack_qp", 8),
    ("ack_nack", 1),
    ("ack_cack", 24),
    ("ack_offset", 16),
    ("ack_bitmap", 64),
    ("ack_m", 2),
    ("ack_ev", 32),
    ("ack_rcvd_bytes", 24),
    ("ack_reason", 8),
    ("ack_psn", 24),
];

/// The core's ports, looked up by name in the parsed Verilog.
#[derive(Debug, Clone)]
pub struct CorePorts {
    pm: PortMap,
    i: Vec<Port>,
    o: Vec<Port>,
    q: usize,
}

impl CorePorts {
    pub fn new(pm: &PortMap, cfg: &NicConfig) -> Result<Self, CosimError> {
        let q = cfg.qps as usize;
        let missing = |name: &str| CosimError::Parse {
            module: MODULE.into(),
            message: format!("port `{name}` missing from the Verilog"),
        };
        let i = IN_PORTS
            .iter()
            .map(|(n, _)| pm.input(n).cloned().ok_or_else(|| missing(n)))
            .collect::<Result<Vec<_>, _>>()?;
        let outs: Vec<String> = OUT_FIXED
            .iter()
            .map(|(n, _)| n.to_string())
            .chain((0..q).map(|k| format!("una${k}")))
            .collect();
        let o = outs
            .iter()
            .map(|n| pm.output(n).cloned().ok_or_else(|| missing(n)))
            .collect::<Result<Vec<_>, _>>()?;
        if pm.inputs.len() != i.len() || pm.outputs.len() != o.len() {
            return Err(CosimError::Parse {
                module: MODULE.into(),
                message: format!(
                    "the Verilog has ports the harness does not drive or check: {pm:?}"
                ),
            });
        }
        Ok(CorePorts {
            pm: pm.clone(),
            i,
            o,
            q,
        })
    }

    pub fn port_map(&self) -> &PortMap {
        &self.pm
    }

    pub fn pack_inputs(&self, x: &CoreInputs, w: &mut [u32]) {
        let v = [
            x.rst as u64,
            x.wr_valid as u64,
            u64::from(x.wr_addr),
            u64::from(x.wr_data),
            u64::from(x.wr_strb),
            x.rd_valid as u64,
            u64::from(x.rd_addr),
            u64::from(x.now_ns),
            x.tick as u64,
            u64::from(x.plane_ready),
            x.sq_valid as u64,
            u64::from(x.sq_qp),
            u64::from(x.sq_bytes),
            x.rx_valid as u64,
            u64::from(x.rx_qp),
            u64::from(x.rx_kind),
            u64::from(x.rx_psn),
            u64::from(x.rx_len),
            x.rx_ecn as u64,
            x.rx_trimmed as u64,
            x.rx_lasthop as u64,
            x.rx_ackreq as u64,
            u64::from(x.rx_ev),
            u64::from(x.rx_ev_idx),
            u64::from(x.rx_offset),
            x.rx_bitmap,
            u64::from(x.rx_m),
            u64::from(x.rx_rcvd_bytes),
            u64::from(x.rx_reason),
        ];
        for (p, v) in self.i.iter().zip(v) {
            p.set(w, v);
        }
    }

    /// The inputs as the RTL sees them (each field cut to its port width).
    pub fn unpack_inputs(&self, w: &[u32]) -> CoreInputs {
        let g = |k: usize| self.i[k].get(w);
        CoreInputs {
            rst: g(0) != 0,
            wr_valid: g(1) != 0,
            wr_addr: g(2) as u32,
            wr_data: g(3) as u32,
            wr_strb: g(4) as u8,
            rd_valid: g(5) != 0,
            rd_addr: g(6) as u32,
            now_ns: g(7) as u32,
            tick: g(8) != 0,
            plane_ready: g(9) as u8,
            sq_valid: g(10) != 0,
            sq_qp: g(11) as u8,
            sq_bytes: g(12) as u32,
            rx_valid: g(13) != 0,
            rx_qp: g(14) as u8,
            rx_kind: g(15) as u8,
            rx_psn: g(16) as u32,
            rx_len: g(17) as u16,
            rx_ecn: g(18) != 0,
            rx_trimmed: g(19) != 0,
            rx_lasthop: g(20) != 0,
            rx_ackreq: g(21) != 0,
            rx_ev: g(22) as u32,
            rx_ev_idx: g(23) as u8,
            rx_offset: g(24) as u16,
            rx_bitmap: g(25),
            rx_m: g(26) as u8,
            rx_rcvd_bytes: g(27) as u32,
            rx_reason: g(28) as u8,
        }
    }

    pub fn pack_outputs(&self, y: &CoreOutputs, w: &mut [u32]) {
        let v = [
            y.wr_ready as u64,
            y.rd_ready as u64,
            y.b_valid as u64,
            u64::from(y.b_resp),
            y.r_valid as u64,
            u64::from(y.r_data),
            u64::from(y.r_resp),
            y.tx_valid as u64,
            u64::from(y.tx_qp),
            u64::from(y.tx_psn),
            u64::from(y.tx_ev),
            u64::from(y.tx_ev_idx),
            u64::from(y.tx_plane),
            y.tx_rtx as u64,
            u64::from(y.tx_len),
            y.tx_last as u64,
            y.ack_valid as u64,
            u64::from(y.ack_qp),
            y.ack_nack as u64,
            u64::from(y.ack_cack),
            u64::from(y.ack_offset),
            y.ack_bitmap,
            u64::from(y.ack_m),
            u64::from(y.ack_ev),
            u64::from(y.ack_rcvd_bytes),
            u64::from(y.ack_reason),
            u64::from(y.ack_psn),
        ];
        let una = y.una.iter().map(|&u| u64::from(u));
        for (p, v) in self.o.iter().zip(v.into_iter().chain(una)) {
            p.set(w, v);
        }
    }

    pub fn unpack_outputs(&self, w: &[u32]) -> CoreOutputs {
        let g = |k: usize| self.o[k].get(w);
        CoreOutputs {
            wr_ready: g(0) != 0,
            rd_ready: g(1) != 0,
            b_valid: g(2) != 0,
            b_resp: g(3) as u8,
            r_valid: g(4) != 0,
            r_data: g(5) as u32,
            r_resp: g(6) as u8,
            tx_valid: g(7) != 0,
            tx_qp: g(8) as u8,
            tx_psn: g(9) as u32,
            tx_ev: g(10) as u32,
            tx_ev_idx: g(11) as u8,
            tx_plane: g(12) as u8,
            tx_rtx: g(13) != 0,
            tx_len: g(14) as u16,
            tx_last: g(15) != 0,
            ack_valid: g(16) != 0,
            ack_qp: g(17) as u8,
            ack_nack: g(18) != 0,
            ack_cack: g(19) as u32,
            ack_offset: g(20) as u16,
            ack_bitmap: g(21),
            ack_m: g(22) as u8,
            ack_ev: g(23) as u32,
            ack_rcvd_bytes: g(24) as u32,
            ack_reason: g(25) as u8,
            ack_psn: g(26) as u32,
            una: (0..self.q).map(|k| g(OUT_FIXED.len() + k) as u32).collect(),
        }
    }
}

/// The golden model behind the word interface.
pub struct CoreModel {
    pub ports: CorePorts,
    pub model: MrcCore,
}

impl CoreModel {
    pub fn new(cfg: &NicConfig, ports: CorePorts) -> Self {
        CoreModel {
            ports,
            model: MrcCore::new(cfg),
        }
    }
}

impl Stepper for CoreModel {
    fn port_map(&self) -> &PortMap {
        self.ports.port_map()
    }

    fn step(&mut self, inputs: &[u32], outputs: &mut [u32]) {
        let x = self.ports.unpack_inputs(inputs);
        let y = self.model.step(&x);
        self.ports.pack_outputs(&y, outputs);
    }
}

/// The Verilated core behind [`CoreSim`] (typed inputs and outputs over the word interface).
pub struct CoreRtl {
    pub dut: Dut,
    pub ports: CorePorts,
    inw: Vec<u32>,
    outw: Vec<u32>,
}

impl CoreRtl {
    pub fn new(lib: &Arc<VerilatedLib>, cfg: &NicConfig) -> Result<Self, CosimError> {
        let ports = CorePorts::new(lib.port_map(), cfg)?;
        Ok(CoreRtl {
            dut: Dut::new(lib),
            inw: vec![0; ports.port_map().in_words()],
            outw: vec![0; ports.port_map().out_words()],
            ports,
        })
    }
}

impl CoreSim for CoreRtl {
    fn step(&mut self, x: &CoreInputs) -> CoreOutputs {
        self.inw.iter_mut().for_each(|w| *w = 0);
        self.ports.pack_inputs(x, &mut self.inw);
        self.dut.step(&self.inw, &mut self.outw);
        self.ports.unpack_outputs(&self.outw)
    }
    fn qps(&self) -> usize {
        self.ports.q
    }
}

/// Shape of the random traffic; percentages per cycle unless said otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoreMix {
    /// A send-queue post.
    pub sq_pct: u64,
    /// Of the posts: refused ones (QP out of range, or a byte count that overflows).
    pub sq_bad_pct: u64,
    /// Looped-back DATA packets lost / trimmed / ECN-marked.
    pub loss_pct: u64,
    pub trim_pct: u64,
    pub ecn_pct: u64,
    /// Looped-back SACK/NACK headers lost.
    pub ack_loss_pct: u64,
    /// Largest extra delay of a looped-back header, cycles (reordering comes from it).
    pub max_delay: u64,
    /// A junk receive header (random PSN near the window, bad QP or kind).
    pub junk_pct: u64,
    /// An MMIO access beyond the setup writes.
    pub mmio_pct: u64,
    /// Ticks per thousand cycles.
    pub ticks_per_k: u64,
    /// Cycles with only some planes ready.
    pub plane_flap_pct: u64,
    pub resets_per_million: u64,
}

impl Default for CoreMix {
    fn default() -> Self {
        CoreMix {
            sq_pct: 6,
            sq_bad_pct: 5,
            loss_pct: 3,
            trim_pct: 3,
            ecn_pct: 10,
            ack_loss_pct: 3,
            max_delay: 40,
            junk_pct: 2,
            mmio_pct: 8,
            ticks_per_k: 10,
            plane_flap_pct: 2,
            resets_per_million: 50,
        }
    }
}

/// A header on its way back to the core.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    due: u64,
    x: CoreInputs,
}

/// Seeded closed-loop traffic (see the module doc). Deterministic for a seed and mix.
pub struct CoreTraffic {
    rng: SplitMix64,
    mix: CoreMix,
    q: usize,
    mtu: u32,
    total_evs: u32,
    shadow: MrcCore,
    last: CoreOutputs,
    now: u32,
    /// Setup writes still to issue: (address, data).
    script: std::collections::VecDeque<(u32, u32)>,
    /// `rst` last clock: the core is in reset this one.
    rst_d: bool,
    flight: Vec<InFlight>,
    profile: Vec<u32>,
    /// EV index of the last transmission of (qp, psn % 1024), for SACK/NACK `rx_ev_idx`.
    ev_of: Vec<u8>,
    /// Register addresses: every register, and the named ones the traffic writes.
    addrs: Vec<u32>,
    a: Addrs,
}

#[derive(Debug, Clone, Copy, Default)]
struct Addrs {
    qp_sel: u32,
    qp_ctrl: u32,
    qp_init_psn: u32,
    mpr: u32,
    rto_exp: u32,
    rto_lin: u32,
    rto_back: u32,
    rtx_thr: u32,
    coalesce: u32,
    policy: u32,
    min_active: u32,
    ev_index: u32,
    ev_value: u32,
    ev_op: u32,
    evq_pop: u32,
    evq_status: u32,
    ro: u32,
}

impl CoreTraffic {
    pub fn new(cfg: &NicConfig, seed: u64, mix: CoreMix) -> Self {
        let shadow = MrcCore::new(cfg);
        let map = shadow.csr().map();
        let at = |b: &str, r: &str| {
            map.find(b, r)
                .unwrap_or_else(|| panic!("{b}.{r} missing from the map"))
                .addr
        };
        let a = Addrs {
            qp_sel: at("QP", "QP_SEL"),
            qp_ctrl: at("QP", "QP_CTRL"),
            qp_init_psn: at("QP", "QP_INIT_PSN"),
            mpr: at("XPORT", "MPR"),
            rto_exp: at("XPORT", "RTO_EXP"),
            rto_lin: at("XPORT", "RTO_LINEAR_RETRIES"),
            rto_back: at("XPORT", "RTO_BACKOFF_RETRIES"),
            rtx_thr: at("XPORT", "RTX_OOO_THRESHOLD"),
            coalesce: at("XPORT", "SACK_COALESCE_BYTES"),
            policy: at("XPORT", "SPRAY_POLICY"),
            min_active: at("XPORT", "EV_MIN_ACTIVE"),
            ev_index: at("EVT", "EV_INDEX"),
            ev_value: at("EVT", "EV_VALUE"),
            ev_op: at("EVT", "EV_OP"),
            evq_pop: at("EVQ", "EVQ_POP"),
            evq_status: at("EVQ", "EVQ_STATUS"),
            ro: at("CNT", "PKTS_SENT"),
        };
        let addrs = map.registers().map(|l| l.addr).collect();
        let q = cfg.qps as usize;
        CoreTraffic {
            rng: SplitMix64::new(seed),
            mix,
            q,
            mtu: cfg.mtu,
            total_evs: cfg.total_evs(),
            last: shadow.outputs().clone(),
            shadow,
            now: 0,
            script: Default::default(),
            rst_d: false,
            flight: Vec::new(),
            profile: cfg.default_ev_profile(),
            ev_of: vec![0; q * 1024],
            addrs,
            a,
        }
    }

    /// The model copy the traffic steps (what the DUT should be doing).
    pub fn shadow(&self) -> &MrcCore {
        &self.shadow
    }

    /// After a reset: enable every QP (some first reset with a random initial PSN), and now
    /// and then a shorter RTO so timeouts happen.
    fn setup(&mut self) {
        self.script.clear();
        self.flight.clear();
        let a = self.a;
        for i in 0..self.q as u32 {
            self.script.push_back((a.qp_sel, i));
            if self.rng.chance(1, 3) {
                let psn = if self.rng.chance(1, 2) {
                    0xFF_FFFF - self.rng.below(200) as u32
                } else {
                    self.rng.below(1 << 24) as u32
                };
                self.script.push_back((a.qp_init_psn, psn));
                self.script.push_back((a.qp_ctrl, 3));
            }
            self.script.push_back((a.qp_ctrl, 1));
        }
        // The EV table is empty after a reset: load the default profile (now and then
        // skipping a few entries).
        for (k, &ev) in self.profile.iter().enumerate() {
            if self.rng.chance(1, 16) {
                continue;
            }
            self.script.push_back((a.ev_index, k as u32));
            self.script.push_back((a.ev_value, ev));
            self.script.push_back((a.ev_op, 3));
        }
        // A retransmit timeout of a few ticks, so lost packets come back within a run.
        self.script
            .push_back((a.rto_exp, 1 + self.rng.below(4) as u32));
    }

    fn mmio_random(&mut self, x: &mut CoreInputs) {
        let a = self.a;
        let r = &mut self.rng;
        let (addr, data) = match r.below(20) {
            0 => (a.mpr, 1 + r.below(16) as u32),
            1 => (a.rto_exp, 1 + r.below(4) as u32),
            2 => (a.rto_lin, r.below(8) as u32),
            3 => (a.rto_back, r.below(8) as u32),
            4 => (a.rtx_thr, r.below(64) as u32),
            5 => (a.coalesce, r.below(4 * u64::from(self.mtu)) as u32),
            6 => (a.policy, r.below(2) as u32),
            7 => (a.min_active, 1 + r.below(u64::from(self.total_evs)) as u32),
            8 => (a.ev_index, r.below(u64::from(self.total_evs) + 2) as u32),
            9 => (a.ev_value, r.next_u64() as u32),
            10 | 11 => (a.ev_op, 1 + r.below(3) as u32),
            12 => (a.qp_sel, r.below(self.q as u64 + 1) as u32),
            13 => (a.qp_ctrl, r.below(4) as u32),
            14 | 15 => (a.evq_pop, 1),
            16 => (a.evq_status, 1),
            17 => (a.qp_init_psn, r.below(1 << 24) as u32),
            // Illegal: a write to an RO register, a misaligned or unmapped offset.
            18 => (a.ro, r.next_u64() as u32),
            _ => {
                let base = self.addrs[r.below(self.addrs.len() as u64) as usize];
                ((base + 1 + r.below(3) as u32) & 0xFFF, r.next_u64() as u32)
            }
        };
        // QP_CTRL disable / reset are rare: they stall the loop.
        if addr == a.qp_ctrl && data != 1 && !r.chance(1, 8) {
            return;
        }
        x.wr_valid = true;
        x.wr_addr = addr;
        x.wr_data = data;
        x.wr_strb = if r.chance(95, 100) {
            0xF
        } else {
            r.below(16) as u8
        };
    }

    fn delay(&mut self) -> u64 {
        2 + self.rng.below(self.mix.max_delay.max(1))
    }

    /// Headers the core emitted last cycle go back into flight.
    fn loop_back(&mut self, cycle: u64) {
        let o = self.last.clone();
        if o.tx_valid && (o.tx_qp as usize) < self.q {
            let slot = o.tx_qp as usize * 1024 + (o.tx_psn as usize & 1023);
            self.ev_of[slot] = o.tx_ev_idx;
            if !self.rng.chance(self.mix.loss_pct, 100) {
                let mut x = CoreInputs::idle();
                x.rx_valid = true;
                x.rx_qp = o.tx_qp;
                x.rx_kind = RX_DATA;
                x.rx_psn = o.tx_psn;
                x.rx_len = if o.tx_rtx { self.mtu as u16 } else { o.tx_len };
                x.rx_ev = o.tx_ev;
                x.rx_ecn = self.rng.chance(self.mix.ecn_pct, 100);
                x.rx_trimmed = self.rng.chance(self.mix.trim_pct, 100);
                x.rx_lasthop = x.rx_trimmed && self.rng.chance(1, 3);
                x.rx_ackreq = o.tx_last || self.rng.chance(1, 20);
                let due = cycle + self.delay();
                self.flight.push(InFlight { due, x });
            }
        }
        if o.ack_valid && !self.rng.chance(self.mix.ack_loss_pct, 100) {
            let mut x = CoreInputs::idle();
            x.rx_valid = true;
            x.rx_qp = o.ack_qp;
            x.rx_kind = if o.ack_nack { RX_NACK } else { RX_SACK };
            x.rx_psn = if o.ack_nack { o.ack_psn } else { o.ack_cack };
            x.rx_offset = o.ack_offset;
            x.rx_bitmap = o.ack_bitmap;
            x.rx_m = o.ack_m;
            x.rx_rcvd_bytes = o.ack_rcvd_bytes;
            x.rx_reason = o.ack_reason;
            x.rx_ecn = o.ack_m != 0;
            let slot = (o.ack_qp as usize).min(self.q - 1) * 1024 + (x.rx_psn as usize & 1023);
            x.rx_ev_idx = self.ev_of[slot];
            let due = cycle + self.delay();
            self.flight.push(InFlight { due, x });
        }
    }

    /// A header that does not come from the loop: random PSNs near the QP's window, a bad
    /// QP, a bad kind.
    fn junk(&mut self) -> CoreInputs {
        let r = &mut self.rng;
        let mut x = CoreInputs::idle();
        x.rx_valid = true;
        let qp = r.below(self.q as u64) as usize;
        x.rx_qp = qp as u8;
        let una = self.last.una[qp];
        let near = (una + r.below(96) as u32).wrapping_sub(16) & 0xFF_FFFF;
        x.rx_psn = near;
        x.rx_kind = match r.below(8) {
            0 => r.below(256) as u8,
            1..=3 => RX_DATA,
            4 | 5 => RX_SACK,
            _ => RX_NACK,
        };
        if r.chance(1, 6) {
            x.rx_qp = (self.q as u64 + r.below(256 - self.q as u64)) as u8;
        }
        x.rx_len = r.below(u64::from(self.mtu) + 1) as u16;
        x.rx_ecn = r.chance(1, 4);
        x.rx_trimmed = r.chance(1, 8);
        x.rx_ackreq = r.chance(1, 4);
        x.rx_ev = r.next_u64() as u32;
        x.rx_ev_idx = r.below(u64::from(self.total_evs)) as u8;
        x.rx_offset = r.below(80) as u16;
        x.rx_bitmap = r.next_u64();
        x.rx_m = r.below(4) as u8;
        x.rx_rcvd_bytes = r.below(1 << 24) as u32;
        x.rx_reason = match r.below(5) {
            0 => 1,
            1 => 2,
            2 => 0x0B,
            _ => r.below(256) as u8,
        };
        x
    }

    pub fn next_inputs(&mut self, cycle: u64) -> CoreInputs {
        self.loop_back(cycle);
        let mut x = CoreInputs::idle();
        self.now = self.now.wrapping_add(1 + self.rng.below(6) as u32);
        x.now_ns = self.now;
        x.rst = cycle < 2 || self.rng.chance(self.mix.resets_per_million, 1_000_000);
        if x.rst {
            self.setup();
        }
        x.tick = self.rng.chance(self.mix.ticks_per_k, 1000);
        if self.rng.chance(self.mix.plane_flap_pct, 100) {
            x.plane_ready = self.rng.below(256) as u8;
        }
        // Keep the loop alive: now and then re-enable a disabled QP and reset one that the
        // scoreboard put in error (retries exhausted).
        // The core's reset acts a clock after `rst` (registered): the script waits for it.
        let in_reset = x.rst || self.rst_d;
        self.rst_d = x.rst;
        if !in_reset && self.script.is_empty() && self.rng.chance(1, 256) {
            let i = self.rng.below(self.q as u64) as usize;
            if !self.shadow.enabled(i) {
                self.script.push_back((self.a.qp_sel, i as u32));
                self.script.push_back((self.a.qp_ctrl, 1));
            } else if self.shadow.scoreboard(i).outputs().qp_error {
                self.script.push_back((self.a.qp_sel, i as u32));
                self.script.push_back((self.a.qp_ctrl, 3));
            }
        }
        // MMIO: the setup script first, then random accesses; reads of any register.
        if !in_reset {
            if let Some((addr, data)) = self.script.pop_front() {
                x.wr_valid = true;
                x.wr_addr = addr;
                x.wr_data = data;
                x.wr_strb = 0xF;
            } else if self.rng.chance(self.mix.mmio_pct, 100) {
                self.mmio_random(&mut x);
            }
        }
        if self.rng.chance(self.mix.mmio_pct, 100) {
            x.rd_valid = true;
            x.rd_addr = if self.rng.chance(9, 10) {
                self.addrs[self.rng.below(self.addrs.len() as u64) as usize]
            } else {
                self.rng.below(1 << 12) as u32
            };
        }
        // Send queue.
        if self.rng.chance(self.mix.sq_pct, 100) {
            x.sq_valid = true;
            x.sq_qp = self.rng.below(self.q as u64) as u8;
            x.sq_bytes = 1 + self.rng.below(3 * u64::from(self.mtu)) as u32;
            if self.rng.chance(self.mix.sq_bad_pct, 100) {
                // an unknown QP, a post that would overflow the pending count, or an empty
                // post (accepted, and it must not change whether the QP has bytes to send)
                match self.rng.below(3) {
                    0 => x.sq_qp = (self.q as u64 + self.rng.below(8)) as u8,
                    1 => x.sq_bytes = u32::MAX - self.rng.below(1000) as u32,
                    _ => x.sq_bytes = 0,
                }
            }
        }
        // Receive: junk, or a looped-back header that is due (any of them: reordering).
        if self.rng.chance(self.mix.junk_pct, 100) {
            let j = self.junk();
            copy_rx(&mut x, &j);
        } else {
            let due: Vec<usize> = (0..self.flight.len())
                .filter(|&k| self.flight[k].due <= cycle)
                .collect();
            if !due.is_empty() {
                let k = due[self.rng.below(due.len() as u64) as usize];
                let h = self.flight.swap_remove(k);
                copy_rx(&mut x, &h.x);
            }
        }
        self.last = self.shadow.step(&x);
        x
    }
}

fn copy_rx(x: &mut CoreInputs, h: &CoreInputs) {
    x.rx_valid = h.rx_valid;
    x.rx_qp = h.rx_qp;
    x.rx_kind = h.rx_kind;
    x.rx_psn = h.rx_psn;
    x.rx_len = h.rx_len;
    x.rx_ecn = h.rx_ecn;
    x.rx_trimmed = h.rx_trimmed;
    x.rx_lasthop = h.rx_lasthop;
    x.rx_ackreq = h.rx_ackreq;
    x.rx_ev = h.rx_ev;
    x.rx_ev_idx = h.rx_ev_idx;
    x.rx_offset = h.rx_offset;
    x.rx_bitmap = h.rx_bitmap;
    x.rx_m = h.rx_m;
    x.rx_rcvd_bytes = h.rx_rcvd_bytes;
    x.rx_reason = h.rx_reason;
}
