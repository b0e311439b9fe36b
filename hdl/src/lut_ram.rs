//! `LutRam`: rust-hdl's `RAM` (one write port, one registered read port, read-first), emitted
//! with `ram_style = "distributed"` so synthesis builds it from LUT RAM and fabric flops.
//!
//! ```text
//!   write_{address,data,enable} --> mem (LUT RAM, written at the edge)
//!   read_address --> mem[read_address] (asynchronous LUT read) --> flop --> read_data
//! ```
//!
//! Why not a block RAM: an ECP5 DP16KD without its output register has ~5.8 ns clock-to-out,
//! and Yosys 0.23 cannot use that register; on top of it Yosys emulates read-first between
//! the two ports with a bypass LUT, so a block-RAM read plus one route fills a 125 MHz period.
//! Here the read data comes from an ordinary flop. Read-first holds natively: the flop samples
//! the LUT read at the same edge that writes. Meant for small tables (the EV table is 256 x 32
//! at most: 64 to 128 DPR16X4 cells) read on the line-rate path; larger RAMs should stay
//! `RAM`. Other tools ignore the attribute or honour the same spelling (Vivado, Yosys).

use rust_hdl::prelude::*;
use std::collections::BTreeMap;

#[derive(LogicBlock, Default)]
pub struct LutRam<D: Synth, const N: usize> {
    pub read_address: Signal<In, Bits<N>>,
    pub read_clock: Signal<In, Clock>,
    pub read_data: Signal<Out, D>,
    pub write_address: Signal<In, Bits<N>>,
    pub write_clock: Signal<In, Clock>,
    pub write_data: Signal<In, D>,
    pub write_enable: Signal<In, bool>,
    _sim: BTreeMap<Bits<N>, D>,
}

impl<D: Synth, const N: usize> LutRam<D, N> {
    /// A RAM holding `values` at power-up (other addresses read 0).
    pub fn new(values: BTreeMap<Bits<N>, D>) -> Self {
        Self {
            _sim: values,
            ..Default::default()
        }
    }
}

impl<D: Synth, const N: usize> Logic for LutRam<D, N> {
    fn update(&mut self) {
        if self.read_clock.pos_edge() {
            self.read_data.next = *self
                ._sim
                .get(&self.read_address.val())
                .unwrap_or(&D::default());
        }
        if self.write_clock.pos_edge() && self.write_enable.val() {
            self._sim
                .insert(self.write_address.val(), self.write_data.val());
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        let init: String = self
            ._sim
            .iter()
            .map(|(a, d)| format!("    mem[{}] = {};\n", a.verilog(), d.verilog()))
            .collect();
        Verilog::Custom(format!(
            "(* ram_style = \"distributed\" *) reg [{msb}:0] mem [0:{last}];\n\
             initial begin\n{init}end\n\
             always @(posedge read_clock) read_data <= mem[read_address];\n\
             always @(posedge write_clock) if (write_enable) mem[write_address] <= write_data;\n",
            msb = D::BITS - 1,
            last = (1usize << N) - 1,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The emitted memory carries the attribute Yosys reads, and the init values.
    #[test]
    fn emits_distributed_attribute_and_init() {
        let mut init = BTreeMap::new();
        init.insert(Bits::<4>::from(3u64), Bits::<8>::from(0xa5u64));
        let ram = LutRam::<Bits<8>, 4>::new(init);
        let Verilog::Custom(v) = ram.hdl() else {
            panic!("LutRam must emit custom Verilog")
        };
        assert!(v.contains("(* ram_style = \"distributed\" *) reg [7:0] mem [0:15];"));
        assert!(v.contains("mem[4'h3] = 8'ha5;"), "{v}");
        assert!(v.contains("read_data <= mem[read_address]"));
    }
}
