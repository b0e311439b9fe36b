//! `mrc_csr`: the CSR block, a 32-bit MMIO slave generated at elaboration from the register map
//! (`mrc-regmap`). Behaviour, handshake and refusal rules are those of `model/src/mrc_csr.rs`
//! (its module doc is the contract); the cosim suites prove the two equal every cycle.
//!
//! Structure: two stages. Decode (the accepting edge): one compare per register against the
//! 12-bit access address (misaligned and unmapped offsets match nothing), registered as one
//! flag per register (write hits already qualified by a full strobe, read hits by the read
//! being accepted), the constant registers' read data, the write data and the response
//! kind; every RO input, registered each clock (`ro_q`). Response (the next edge): the read
//! data is an AND-OR over the registered hits (no priority chain: the hits are one-hot);
//! responses, RW registers, W1C flags, WO strobes and the bad-access counter are registered.
//! Ports are vectors in map order per class: `ro`, `w1c_set` in; `rw`, `w1c`, `wo_stb`,
//! `wo_data` out.

use mrc_config::NicConfig;
use mrc_regmap::Access;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct MrcCsr {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub wr_valid: Signal<In, Bit>,
    pub wr_addr: Signal<In, Bits<12>>,
    pub wr_data: Signal<In, Bits<32>>,
    pub wr_strb: Signal<In, Bits<4>>,
    pub rd_valid: Signal<In, Bit>,
    pub rd_addr: Signal<In, Bits<12>>,
    pub ro: Vec<Signal<In, Bits<32>>>,
    pub w1c_set: Vec<Signal<In, Bits<32>>>,

    pub wr_ready: Signal<Out, Bit>,
    pub rd_ready: Signal<Out, Bit>,
    pub b_valid: Signal<Out, Bit>,
    pub b_resp: Signal<Out, Bits<2>>,
    pub r_valid: Signal<Out, Bit>,
    pub r_data: Signal<Out, Bits<32>>,
    pub r_resp: Signal<Out, Bits<2>>,
    pub rw: Vec<Signal<Out, Bits<32>>>,
    pub w1c: Vec<Signal<Out, Bits<32>>>,
    pub wo_stb: Vec<Signal<Out, Bit>>,
    pub wo_data: Vec<Signal<Out, Bits<32>>>,
    pub bad_access: Signal<Out, Bits<32>>,

    c_addr: Vec<Constant<Bits<12>>>,
    c_val: Vec<Constant<Bits<32>>>,
    ro_addr: Vec<Constant<Bits<12>>>,
    ro_mask: Vec<Constant<Bits<32>>>,
    rw_addr: Vec<Constant<Bits<12>>>,
    rw_mask: Vec<Constant<Bits<32>>>,
    rw_rst: Vec<Constant<Bits<32>>>,
    w1c_addr: Vec<Constant<Bits<12>>>,
    w1c_mask: Vec<Constant<Bits<32>>>,
    w1c_rst: Vec<Constant<Bits<32>>>,
    wo_addr: Vec<Constant<Bits<12>>>,
    wo_mask: Vec<Constant<Bits<32>>>,
    stat_addr: Constant<Bits<12>>,
    all_ones: Constant<Bits<32>>,

    rw_q: Vec<DFFWithInit<Bits<32>>>,
    /// Every RO input (masked) a clock old, so the read mux reads flops beside it rather
    /// than the sources across the die: a read returns the RO value of its accepting clock.
    ro_q: Vec<DFF<Bits<32>>>,
    w1c_q: Vec<DFFWithInit<Bits<32>>>,
    wo_stb_q: Vec<DFF<Bit>>,
    wo_data_q: Vec<DFF<Bits<32>>>,
    b_valid_q: DFF<Bit>,
    b_err_q: DFF<Bit>,
    r_valid_q: DFF<Bit>,
    r_data_q: DFF<Bits<32>>,
    r_err_q: DFF<Bit>,
    bad_q: DFF<Bits<32>>,

    // Decode stage (registered at the accepting edge; all clear on rst).
    /// A write was accepted / a read was accepted.
    s_wv: DFF<Bit>,
    s_rv: DFF<Bit>,
    /// The accepted access is refused (SLVERR, counted).
    s_werr: DFF<Bit>,
    s_rerr: DFF<Bit>,
    s_wdata: DFF<Bits<32>>,
    /// Read data of a CONST register hit (0 otherwise).
    s_cdata: DFF<Bits<32>>,
    /// One-hot write hits (full strobe) per RW / W1C / WO register.
    s_w_rw: Vec<DFF<Bit>>,
    s_w_w1c: Vec<DFF<Bit>>,
    s_w_wo: Vec<DFF<Bit>>,
    /// One-hot read hits per RO / RW / W1C register and the STAT register.
    s_r_ro: Vec<DFF<Bit>>,
    s_r_rw: Vec<DFF<Bit>>,
    s_r_w1c: Vec<DFF<Bit>>,
    s_r_stat: DFF<Bit>,

    /// Write accepted with a full strobe.
    l_wgo: Signal<Local, Bit>,
    /// Read accepted (no write offered).
    l_rgo: Signal<Local, Bit>,
    /// The write address names a writable register.
    l_whit: Signal<Local, Bit>,
    /// The read address names a register.
    l_rhit: Signal<Local, Bit>,
    l_cdata: Signal<Local, Bits<32>>,
    l_rdata: Signal<Local, Bits<32>>,
    l_clr: Signal<Local, Bits<32>>,

    _n_c: usize,
    _n_ro: usize,
    _n_rw: usize,
    _n_w1c: usize,
    _n_wo: usize,
}

impl MrcCsr {
    pub fn new(cfg: &NicConfig) -> Self {
        fn sig<D: Direction, T: Synth>(n: usize) -> Vec<Signal<D, T>> {
            (0..n).map(|_| Signal::default()).collect()
        }
        let map = mrc_regmap::build(cfg);
        let a12 = |a: u32| Constant::new(Bits::<12>::from(u64::from(a)));
        let b32 = |v: u32| Constant::new(Bits::<32>::from(u64::from(v)));
        let of = |acc: Access| -> Vec<(u32, u32, u32)> {
            map.registers()
                .filter(|l| l.reg.access == acc)
                .map(|l| (l.addr, l.reg.mask(), l.reg.reset))
                .collect()
        };
        let (cs, ros, rws, w1cs, wos) = (
            of(Access::Const),
            of(Access::Ro),
            of(Access::Rw),
            of(Access::W1c),
            of(Access::Wo),
        );
        let stat = of(Access::Stat);
        assert_eq!(stat.len(), 1, "the map has one STAT register (BAD_ACCESS)");
        MrcCsr {
            clock: Default::default(),
            rst: Default::default(),
            wr_valid: Default::default(),
            wr_addr: Default::default(),
            wr_data: Default::default(),
            wr_strb: Default::default(),
            rd_valid: Default::default(),
            rd_addr: Default::default(),
            ro: sig(ros.len()),
            w1c_set: sig(w1cs.len()),
            wr_ready: Default::default(),
            rd_ready: Default::default(),
            b_valid: Default::default(),
            b_resp: Default::default(),
            r_valid: Default::default(),
            r_data: Default::default(),
            r_resp: Default::default(),
            rw: sig(rws.len()),
            w1c: sig(w1cs.len()),
            wo_stb: sig(wos.len()),
            wo_data: sig(wos.len()),
            bad_access: Default::default(),
            c_addr: cs.iter().map(|r| a12(r.0)).collect(),
            c_val: cs.iter().map(|r| b32(r.2)).collect(),
            ro_addr: ros.iter().map(|r| a12(r.0)).collect(),
            ro_mask: ros.iter().map(|r| b32(r.1)).collect(),
            rw_addr: rws.iter().map(|r| a12(r.0)).collect(),
            rw_mask: rws.iter().map(|r| b32(r.1)).collect(),
            rw_rst: rws.iter().map(|r| b32(r.2)).collect(),
            w1c_addr: w1cs.iter().map(|r| a12(r.0)).collect(),
            w1c_mask: w1cs.iter().map(|r| b32(r.1)).collect(),
            w1c_rst: w1cs.iter().map(|r| b32(r.2)).collect(),
            wo_addr: wos.iter().map(|r| a12(r.0)).collect(),
            wo_mask: wos.iter().map(|r| b32(r.1)).collect(),
            stat_addr: a12(stat[0].0),
            all_ones: b32(u32::MAX),
            rw_q: rws
                .iter()
                .map(|r| DFFWithInit::new(u64::from(r.2).to_bits()))
                .collect(),
            w1c_q: w1cs
                .iter()
                .map(|r| DFFWithInit::new(u64::from(r.2).to_bits()))
                .collect(),
            wo_stb_q: (0..wos.len()).map(|_| Default::default()).collect(),
            wo_data_q: (0..wos.len()).map(|_| Default::default()).collect(),
            b_valid_q: Default::default(),
            b_err_q: Default::default(),
            r_valid_q: Default::default(),
            r_data_q: Default::default(),
            r_err_q: Default::default(),
            bad_q: Default::default(),
            s_wv: Default::default(),
            s_rv: Default::default(),
            s_werr: Default::default(),
            s_rerr: Default::default(),
            s_wdata: Default::default(),
            s_cdata: Default::default(),
            s_w_rw: (0..rws.len()).map(|_| Default::default()).collect(),
            s_w_w1c: (0..w1cs.len()).map(|_| Default::default()).collect(),
            s_w_wo: (0..wos.len()).map(|_| Default::default()).collect(),
            s_r_ro: (0..ros.len()).map(|_| Default::default()).collect(),
            ro_q: (0..ros.len()).map(|_| Default::default()).collect(),
            s_r_rw: (0..rws.len()).map(|_| Default::default()).collect(),
            s_r_w1c: (0..w1cs.len()).map(|_| Default::default()).collect(),
            s_r_stat: Default::default(),
            l_wgo: Default::default(),
            l_rgo: Default::default(),
            l_whit: Default::default(),
            l_rhit: Default::default(),
            l_cdata: Default::default(),
            l_rdata: Default::default(),
            l_clr: Default::default(),
            _n_c: cs.len(),
            _n_ro: ros.len(),
            _n_rw: rws.len(),
            _n_w1c: w1cs.len(),
            _n_wo: wos.len(),
        }
    }
}

impl Logic for MrcCsr {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, b_valid_q, b_err_q, r_valid_q, r_data_q, r_err_q, bad_q, s_wv, s_rv,
            s_werr, s_rerr, s_wdata, s_cdata, s_r_stat
        );
        // ---- decode stage: this clock's access, registered per register -------------------
        self.l_wgo.next = self.wr_valid.val() & (self.wr_strb.val() == 15) & !self.rst.val();
        self.l_rgo.next = self.rd_valid.val() & !self.wr_valid.val() & !self.rst.val();
        self.l_whit.next = false;
        self.l_rhit.next = false;
        self.l_cdata.next = 0.into();
        // Constants: their read data is known at decode.
        for i in 0..self._n_c {
            if self.rd_addr.val() == self.c_addr[i].val() {
                self.l_rhit.next = true;
                self.l_cdata.next = self.l_cdata.val() | self.c_val[i].val();
            }
        }
        for i in 0..self._n_ro {
            self.s_r_ro[i].clock.next = self.clock.val();
            self.s_r_ro[i].d.next =
                self.l_rgo.val() & (self.rd_addr.val() == self.ro_addr[i].val());
            if self.rd_addr.val() == self.ro_addr[i].val() {
                self.l_rhit.next = true;
            }
        }
        self.s_r_stat.d.next = self.l_rgo.val() & (self.rd_addr.val() == self.stat_addr.val());
        if self.rd_addr.val() == self.stat_addr.val() {
            self.l_rhit.next = true;
        }
        for i in 0..self._n_rw {
            self.s_r_rw[i].clock.next = self.clock.val();
            self.s_w_rw[i].clock.next = self.clock.val();
            self.s_r_rw[i].d.next =
                self.l_rgo.val() & (self.rd_addr.val() == self.rw_addr[i].val());
            self.s_w_rw[i].d.next =
                self.l_wgo.val() & (self.wr_addr.val() == self.rw_addr[i].val());
            if self.rd_addr.val() == self.rw_addr[i].val() {
                self.l_rhit.next = true;
            }
            if self.wr_addr.val() == self.rw_addr[i].val() {
                self.l_whit.next = true;
            }
        }
        for i in 0..self._n_wo {
            self.s_w_wo[i].clock.next = self.clock.val();
            self.s_w_wo[i].d.next =
                self.l_wgo.val() & (self.wr_addr.val() == self.wo_addr[i].val());
            if self.rd_addr.val() == self.wo_addr[i].val() {
                self.l_rhit.next = true;
            }
            if self.wr_addr.val() == self.wo_addr[i].val() {
                self.l_whit.next = true;
            }
        }
        for i in 0..self._n_w1c {
            self.s_r_w1c[i].clock.next = self.clock.val();
            self.s_w_w1c[i].clock.next = self.clock.val();
            self.s_r_w1c[i].d.next =
                self.l_rgo.val() & (self.rd_addr.val() == self.w1c_addr[i].val());
            self.s_w_w1c[i].d.next =
                self.l_wgo.val() & (self.wr_addr.val() == self.w1c_addr[i].val());
            if self.rd_addr.val() == self.w1c_addr[i].val() {
                self.l_rhit.next = true;
            }
            if self.wr_addr.val() == self.w1c_addr[i].val() {
                self.l_whit.next = true;
            }
        }
        self.s_wv.d.next = self.wr_valid.val() & !self.rst.val();
        self.s_werr.d.next =
            self.wr_valid.val() & !self.rst.val() & !(self.l_wgo.val() & self.l_whit.val());
        self.s_rv.d.next = self.l_rgo.val();
        self.s_rerr.d.next = self.l_rgo.val() & !self.l_rhit.val();
        self.s_wdata.d.next = self.wr_data.val();
        self.s_cdata.d.next = 0.into();
        if self.l_rgo.val() {
            self.s_cdata.d.next = self.l_cdata.val();
        }

        // ---- response stage: the access decoded at the last edge --------------------------
        // Read data: an OR over one-hot hits (every miss contributes 0).
        self.l_rdata.next = self.s_cdata.q.val();
        for i in 0..self._n_ro {
            self.ro_q[i].clock.next = self.clock.val();
            self.ro_q[i].d.next = self.ro[i].val() & self.ro_mask[i].val();
            if self.s_r_ro[i].q.val() {
                self.l_rdata.next = self.l_rdata.val() | self.ro_q[i].q.val();
            }
        }
        if self.s_r_stat.q.val() {
            self.l_rdata.next = self.l_rdata.val() | self.bad_q.q.val();
        }
        // RW registers.
        for i in 0..self._n_rw {
            self.rw_q[i].clock.next = self.clock.val();
            self.rw_q[i].d.next = self.rw_q[i].q.val();
            self.rw[i].next = self.rw_q[i].q.val();
            if self.s_r_rw[i].q.val() {
                self.l_rdata.next = self.l_rdata.val() | self.rw_q[i].q.val();
            }
            if self.s_w_rw[i].q.val() {
                self.rw_q[i].d.next = self.s_wdata.q.val() & self.rw_mask[i].val();
            }
            if self.rst.val() {
                self.rw_q[i].d.next = self.rw_rst[i].val();
            }
        }
        // Write-only strobes (read as 0).
        for i in 0..self._n_wo {
            self.wo_stb_q[i].clock.next = self.clock.val();
            self.wo_data_q[i].clock.next = self.clock.val();
            self.wo_stb_q[i].d.next = self.s_w_wo[i].q.val() & !self.rst.val();
            self.wo_data_q[i].d.next = self.wo_data_q[i].q.val();
            self.wo_stb[i].next = self.wo_stb_q[i].q.val();
            self.wo_data[i].next = self.wo_data_q[i].q.val();
            if self.s_w_wo[i].q.val() {
                self.wo_data_q[i].d.next = self.s_wdata.q.val() & self.wo_mask[i].val();
            }
            if self.rst.val() {
                self.wo_data_q[i].d.next = 0.into();
            }
        }
        // Sticky W1C bits: set wins over a clear at the same edge.
        for i in 0..self._n_w1c {
            self.w1c_q[i].clock.next = self.clock.val();
            self.w1c[i].next = self.w1c_q[i].q.val();
            if self.s_r_w1c[i].q.val() {
                self.l_rdata.next = self.l_rdata.val() | self.w1c_q[i].q.val();
            }
            self.l_clr.next = 0.into();
            if self.s_w_w1c[i].q.val() {
                self.l_clr.next = self.s_wdata.q.val();
            }
            self.w1c_q[i].d.next = ((self.w1c_q[i].q.val() & !self.l_clr.val())
                | self.w1c_set[i].val())
                & self.w1c_mask[i].val();
            if self.rst.val() {
                self.w1c_q[i].d.next = self.w1c_rst[i].val();
            }
        }
        // Responses and the counter (a refused read's hits are all clear, so its data is 0).
        self.b_valid_q.d.next = self.s_wv.q.val() & !self.rst.val();
        self.b_err_q.d.next = self.s_werr.q.val() & !self.rst.val();
        self.r_valid_q.d.next = self.s_rv.q.val() & !self.rst.val();
        self.r_err_q.d.next = self.s_rerr.q.val() & !self.rst.val();
        self.r_data_q.d.next = self.l_rdata.val();
        self.bad_q.d.next = self.bad_q.q.val();
        if (self.s_werr.q.val() | self.s_rerr.q.val()) & (self.bad_q.q.val() != self.all_ones.val())
        {
            self.bad_q.d.next = self.bad_q.q.val() + 1;
        }
        if self.rst.val() {
            self.r_data_q.d.next = 0.into();
            self.bad_q.d.next = 0.into();
            self.s_wv.d.next = false;
            self.s_rv.d.next = false;
            self.s_werr.d.next = false;
            self.s_rerr.d.next = false;
            self.s_cdata.d.next = 0.into();
        }
        self.wr_ready.next = true;
        self.rd_ready.next = !self.wr_valid.val();
        self.b_valid.next = self.b_valid_q.q.val();
        self.b_resp.next = 0.into();
        if self.b_err_q.q.val() {
            self.b_resp.next = 2.into();
        }
        self.r_valid.next = self.r_valid_q.q.val();
        self.r_data.next = self.r_data_q.q.val();
        self.r_resp.next = 0.into();
        if self.r_err_q.q.val() {
            self.r_resp.next = 2.into();
        }
        self.bad_access.next = self.bad_q.q.val();
    }
}
