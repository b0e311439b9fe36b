//! Arithmetic leaf blocks rust-hdl lacks: a two-stage pipelined full-width unsigned
//! multiplier (rust-hdl only multiplies 16 x 16) and a 32-bit leading-one finder laid out as a
//! shallow tree.

use rust_hdl::prelude::*;

/// `p = a * b` two clocks after `a` and `b` (unsigned, `A <= 34`, `B <= 17`, `P >= A + B`):
/// the first edge registers the two 17 x B partial products (one DSP tile each), the second
/// their sum, so neither a DSP nor the adder shares a clock period with other logic. It
/// samples every clock; a consumer reads `p` two clocks after the operands it wants.
#[derive(LogicBlock)]
pub struct PipeMul<const A: usize, const B: usize, const P: usize> {
    pub clock: Signal<In, Clock>,
    pub a: Signal<In, Bits<A>>,
    pub b: Signal<In, Bits<B>>,
    pub p: Signal<Out, Bits<P>>,
    /// rust-hdl simulation only: the two partial products and the previous clock level.
    _sim_lo: Bits<P>,
    _sim_hi: Bits<P>,
    _sim_clk: bool,
}

impl<const A: usize, const B: usize, const P: usize> Default for PipeMul<A, B, P> {
    fn default() -> Self {
        assert!(
            A <= 34 && B <= 17 && P >= A + B,
            "PipeMul<{A}, {B}, {P}> unsupported"
        );
        PipeMul {
            clock: Default::default(),
            a: Default::default(),
            b: Default::default(),
            p: Default::default(),
            _sim_lo: Bits::default(),
            _sim_hi: Bits::default(),
            _sim_clk: false,
        }
    }
}

fn shift_add<const P: usize>(a: Bits<P>, b: Bits<P>, bits: usize) -> Bits<P> {
    let mut acc: Bits<P> = Bits::default();
    for i in 0..bits {
        if b.get_bit(i) {
            acc = acc + (a << (i as u64));
        }
    }
    acc
}

impl<const A: usize, const B: usize, const P: usize> Logic for PipeMul<A, B, P> {
    fn update(&mut self) {
        let clk = self.clock.val().clk;
        if clk && !self._sim_clk {
            let lo_mask: Bits<P> = bit_cast::<P, 64>(((1u64 << 17) - 1).into());
            let a: Bits<P> = bit_cast(self.a.val());
            let b: Bits<P> = bit_cast(self.b.val());
            self.p.next = self._sim_lo + (self._sim_hi << 17u64);
            self._sim_lo = shift_add(a & lo_mask, b, B);
            self._sim_hi = shift_add(a >> 17u64, b, B);
        }
        self._sim_clk = clk;
    }

    fn connect(&mut self) {
        self.p.connect();
    }

    fn hdl(&self) -> Verilog {
        let lo = A.min(17);
        let tiles: Vec<(&str, usize, usize)> = if A > 17 {
            vec![("t_lo", 0, lo), ("t_hi", 17, A - 17)]
        } else {
            vec![("t_lo", 0, lo)]
        };
        // The ECP5 flow (`mrcgen synth`) defines MRC_ECP5_DSP: each partial product is a
        // MULT18X18D with its output register on (REG_OUTPUT_CLK), the same register as the
        // portable branch's `t_*` flop, moved inside the DSP so the DSP -> fabric route leaves
        // the critical path. Everything else (Verilator, other vendors) reads the `*`.
        let mut v = String::from("`ifdef MRC_ECP5_DSP\n");
        for (name, from, width) in &tiles {
            let pw = width + B;
            v += &format!(
                "wire [35:0] {name}_p;\nwire [{}:0] {name} = {name}_p[{}:0];\n",
                pw - 1,
                pw - 1
            );
            v += &format!(
                "MULT18X18D #(.REG_OUTPUT_CLK(\"CLK0\"), .REG_OUTPUT_CE(\"CE0\"), \
                 .REG_OUTPUT_RST(\"RST0\"), .RESETMODE(\"SYNC\")) {name}_dsp (\n"
            );
            let mut pins: Vec<String> = Vec::new();
            for i in 0..18 {
                let ai = if i < *width {
                    format!("a[{}]", from + i)
                } else {
                    "1'b0".into()
                };
                pins.push(format!(".A{i}({ai})"));
            }
            for i in 0..18 {
                let bi = if i < B {
                    format!("b[{i}]")
                } else {
                    "1'b0".into()
                };
                pins.push(format!(".B{i}({bi})"));
            }
            for i in 0..18 {
                pins.push(format!(".C{i}(1'b0)"));
            }
            pins.extend(
                [
                    ".SIGNEDA(1'b0)",
                    ".SIGNEDB(1'b0)",
                    ".SOURCEA(1'b0)",
                    ".SOURCEB(1'b0)",
                    ".CLK0(clock)",
                    ".CE0(1'b1)",
                    ".RST0(1'b0)",
                ]
                .map(String::from),
            );
            for i in 0..36 {
                pins.push(format!(".P{i}({name}_p[{i}])"));
            }
            v += &format!("  {}\n);\n", pins.join(",\n  "));
        }
        v += "`else\n";
        for (name, from, width) in &tiles {
            v += &format!(
                "reg [{w}:0] {name};\nalways @(posedge clock) {name} <= a[{h}:{from}] * b;\n",
                w = width + B - 1,
                h = from + width - 1
            );
        }
        v += "`endif\n";
        if A > 17 {
            v += "always @(posedge clock) p <= t_lo + (t_hi << 17);\n";
        } else {
            v += "always @(posedge clock) p <= t_lo;\n";
        }
        Verilog::Custom(v)
    }
}

/// Position of the highest set bit of `x` (0 when `x` is 0): which byte first (a 4-way
/// priority), then the bit inside that byte (an 8-way priority), so the depth is two short
/// chains rather than one of 32.
#[derive(LogicBlock)]
pub struct LeadingOne32 {
    pub x: Signal<In, Bits<32>>,
    pub pos: Signal<Out, Bits<5>>,
    hb: Signal<Local, Bits<2>>,
    sh: Signal<Local, Bits<32>>,
    sel: Signal<Local, Bits<8>>,
    lb: Signal<Local, Bits<3>>,
    bit_pos: Vec<Constant<Bits<3>>>,
}

impl Default for LeadingOne32 {
    fn default() -> Self {
        LeadingOne32 {
            x: Default::default(),
            pos: Default::default(),
            hb: Default::default(),
            sh: Default::default(),
            sel: Default::default(),
            lb: Default::default(),
            bit_pos: (0..8u64).map(|i| Constant::new(i.into())).collect(),
        }
    }
}

impl Logic for LeadingOne32 {
    #[hdl_gen]
    fn update(&mut self) {
        self.hb.next = bits::<2>(0);
        if (self.x.val() >> 8) != bits::<32>(0) {
            self.hb.next = bits::<2>(1);
        }
        if (self.x.val() >> 16) != bits::<32>(0) {
            self.hb.next = bits::<2>(2);
        }
        if (self.x.val() >> 24) != bits::<32>(0) {
            self.hb.next = bits::<2>(3);
        }
        self.sh.next = self.x.val() >> (bit_cast::<5, 2>(self.hb.val()) << 3);
        self.sel.next = bit_cast::<8, 32>(self.sh.val());
        self.lb.next = bits::<3>(0);
        // Bit 0 included so every bit of the byte is read (it picks 0, the default).
        for i in 0..8 {
            if self.sel.val().get_bit(i) {
                self.lb.next = self.bit_pos[i].val();
            }
        }
        self.pos.next = (bit_cast::<5, 2>(self.hb.val()) << 3) | bit_cast::<5, 3>(self.lb.val());
    }
}

/// `x - (a + b)` mod 2^24 as `~(~x + a + b)`: one carry-save (3:2) stage and one carry
/// chain, where `x - (a + b)` written out would put a's and b's chain in front of the
/// subtract's. For a difference whose subtrahend is itself a sum of two registers (e.g.
/// `nxt - (una + una_adv)` in `mrc_core`, where `una_adv` has a wide fan-out).
///
/// ```text
///   ~x ---+
///    a ---+--> s = ~x ^ a ^ b ----------------+--> + --> ~ --> diff
///    b ---+--> c = maj(~x, a, b) << 1 --------+
/// ```
#[derive(LogicBlock, Default)]
pub struct SubSum24 {
    pub x: Signal<In, Bits<24>>,
    pub a: Signal<In, Bits<24>>,
    pub b: Signal<In, Bits<24>>,
    pub diff: Signal<Out, Bits<24>>,
    nx: Signal<Local, Bits<24>>,
    s: Signal<Local, Bits<24>>,
    c: Signal<Local, Bits<24>>,
}

impl Logic for SubSum24 {
    #[hdl_gen]
    fn update(&mut self) {
        self.nx.next = !self.x.val();
        self.s.next = self.nx.val() ^ self.a.val() ^ self.b.val();
        // The carry out of bit 23 is dropped by the shift: the sum is mod 2^24.
        self.c.next = ((self.nx.val() & self.a.val())
            | (self.nx.val() & self.b.val())
            | (self.a.val() & self.b.val()))
            << 1;
        self.diff.next = !(self.s.val() + self.c.val());
    }
}

/// Whether a 24-bit count stays above the cap of 2^11 - 1 after one clock's step, formed
/// from the registered count and its registered flag rather than from the count's next value:
/// `stay` is `outs - adv >= 2^11` (mod 2^24) and `send` is `outs + 1 - adv >= 2^11`, for
/// `adv <= 15`, given `gt == (outs >= 2^11)`. Next to a 24-bit subtract this is a 5-bit compare
/// on `adv` and a mux; the rest reads only `outs`'s flops.
///
/// With `outs = H * 2^11 + L` (H 13 bits, L 11 bits), the step moves L by +1 at most and by
/// -15 at least, so H moves by at most one (mod 2^13), and `H' != 0` is:
///
/// ```text
///   carry  (L = 2^11 - 1, send, adv = 0)   H' = H + 1:  H != all ones
///   borrow (L + send < adv: L[10:4] = 0)   H' = H - 1:  H != 1
///   neither                                H' = H:      gt
/// ```
#[derive(LogicBlock, Default)]
pub struct OverCapStep {
    pub outs: Signal<In, Bits<24>>,
    pub gt: Signal<In, Bit>,
    pub adv: Signal<In, Bits<4>>,
    pub stay: Signal<Out, Bit>,
    pub send: Signal<Out, Bit>,
    h: Signal<Local, Bits<13>>,
    l: Signal<Local, Bits<11>>,
    l5: Signal<Local, Bits<5>>,
    a5: Signal<Local, Bits<5>>,
    h_one: Signal<Local, Bit>,
    h_ones: Signal<Local, Bit>,
    l_small: Signal<Local, Bit>,
    carry1: Signal<Local, Bit>,
    borrow0: Signal<Local, Bit>,
    borrow1: Signal<Local, Bit>,
}

impl Logic for OverCapStep {
    #[hdl_gen]
    fn update(&mut self) {
        self.h.next = self.outs.val().get_bits::<13>(11);
        self.l.next = bit_cast::<11, 24>(self.outs.val());
        self.h_one.next = self.h.val() == 1;
        self.h_ones.next = self.h.val() == 0x1fff;
        self.l_small.next = self.l.val().get_bits::<7>(4) == 0;
        self.l5.next = bit_cast::<5, 4>(self.l.val().get_bits::<4>(0));
        self.a5.next = bit_cast::<5, 4>(self.adv.val());
        self.borrow0.next = self.l_small.val() & (self.l5.val() < self.a5.val());
        self.borrow1.next = self.l_small.val() & ((self.l5.val() + 1) < self.a5.val());
        self.carry1.next = (self.l.val() == 0x7ff) & (self.adv.val() == 0);
        self.stay.next = self.gt.val();
        if self.borrow0.val() {
            self.stay.next = !self.h_one.val();
        }
        self.send.next = self.gt.val();
        if self.borrow1.val() {
            self.send.next = !self.h_one.val();
        }
        if self.carry1.val() {
            self.send.next = !self.h_ones.val();
        }
    }
}
