//! `arith::OverCapStep` as Verilog under Verilator against the arithmetic it replaces:
//! `(outs + send - adv) mod 2^24 >= 2^11`, for every low part of outs (all 2^11), every
//! `adv` (0..=15), both steps, and high parts at and beside the two it treats apart (1 and
//! all ones) and zero. In `mrc_core` these crossings are out of reach of cosim (a send needs
//! outs below the window, at most 1024; outs jumps only at a reset), so this is where
//! the block's exactness is checked.
//!
//! Needs Verilator; without it the build fails with the `make deps` message, never skips.

use mrc_cosim::modules::{build_options, write_sources};
use mrc_cosim::{Dut, Stepper, VerilatedLib};
use mrc_hdl::arith::OverCapStep;
use rust_hdl::prelude::*;

const MODULE: &str = "over_cap_step_rig";

/// The block with its two outputs registered, so one Verilator step is one edge and the
/// outputs after it are the block's answer for the inputs before it.
#[derive(LogicBlock, Default)]
struct OverCapStepRig {
    clock: Signal<In, Clock>,
    outs: Signal<In, Bits<24>>,
    gt: Signal<In, Bit>,
    adv: Signal<In, Bits<4>>,
    stay: Signal<Out, Bit>,
    send: Signal<Out, Bit>,
    step: OverCapStep,
    stay_q: DFF<Bit>,
    send_q: DFF<Bit>,
}

impl Logic for OverCapStepRig {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, stay_q, send_q);
        self.step.outs.next = self.outs.val();
        self.step.gt.next = self.gt.val();
        self.step.adv.next = self.adv.val();
        self.stay_q.d.next = self.step.stay.val();
        self.send_q.d.next = self.step.send.val();
        self.stay.next = self.stay_q.q.val();
        self.send.next = self.send_q.q.val();
    }
}

fn lib() -> VerilatedLib {
    let mut uut = OverCapStepRig::default();
    uut.connect_all();
    let v = mrc_hdl::emit::rename_top(&generate_verilog(&uut), MODULE);
    let (v, w) = write_sources(MODULE, &v, mrc_hdl::generate::WAIVER_TEXT).unwrap();
    VerilatedLib::build(&[v], MODULE, &build_options(&w)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn over_cap_step_equals_the_arithmetic() {
    const MASK: u64 = (1 << 24) - 1;
    let lib = std::sync::Arc::new(lib());
    let pm = lib.port_map().clone();
    let mut dut = Dut::new(&lib);
    let mut i = vec![0u32; pm.in_words()];
    let mut o = vec![0u32; pm.out_words()];
    let (inp, out) = (|n| pm.input(n).unwrap(), |n| pm.output(n).unwrap());
    let mut checked = 0u64;
    for h in [0u64, 1, 2, 3, 0x800, 0x1000, 0x1ffd, 0x1ffe, 0x1fff] {
        for l in 0..1u64 << 11 {
            for adv in 0..16u64 {
                let outs = (h << 11) | l;
                inp("outs").set(&mut i, outs);
                inp("gt").set(&mut i, (h != 0) as u64);
                inp("adv").set(&mut i, adv);
                dut.step(&i, &mut o);
                let over = |x: u64| ((x & MASK) >= 1 << 11) as u64;
                let want_stay = over(outs.wrapping_sub(adv));
                let want_send = over((outs + 1).wrapping_sub(adv));
                let (stay, send) = (out("stay").get(&o), out("send").get(&o));
                assert_eq!(
                    (stay, send),
                    (want_stay, want_send),
                    "outs {outs:#x} (H {h:#x}, L {l}), adv {adv}: (stay, send)"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 9 * 2048 * 16);
}
