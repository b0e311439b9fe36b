//! End-to-end: a tiny non-ANSI Verilog counter through Verilator, the cache, the lockstep
//! runner (right and wrong Rust models), the divergence VCD and the native benchmark.
//!
//! These tests need Verilator; without it they fail with the `make deps` message, never skip.

use mrc_cosim::{
    native_bench, parse_ports, run_lockstep, time_stepper, BuildOptions, Dut, PortMap, RunOptions,
    Stepper, VerilatedLib,
};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// rust-hdl style (non-ANSI) module exercising CData (1, 8 bit), SData (12), QData (40) and
/// VlWide<4> (100) ports, plus an `output wire`.
const COUNTER_V: &str = r#"
module test_counter(clock,rst,en,tag,mid_in,wide_in,count,tag_out,mid_out,wide_out,parity);
    // Module arguments
    input wire  clock;
    input wire  rst;
    input wire  en;
    input wire  [11:0] tag;
    input wire  [39:0] mid_in;
    input wire  [99:0] wide_in;
    output reg  [7:0] count;
    output reg  [11:0] tag_out;
    output reg  [39:0] mid_out;
    output reg  [99:0] wide_out;
    output wire  parity;
    assign parity = ^wide_out;
    always @(posedge clock) begin
        if (rst) begin
            count <= 8'd0;
            tag_out <= 12'd0;
            mid_out <= 40'd0;
            wide_out <= 100'd0;
        end else begin
            if (en) count <= count + 8'd1;
            tag_out <= tag;
            mid_out <= mid_in;
            wide_out <= wide_in;
        end
    end
endmodule // test_counter
"#;

fn source() -> PathBuf {
    static SRC: OnceLock<PathBuf> = OnceLock::new();
    SRC.get_or_init(|| write_atomically("cosim_test_counter.v", COUNTER_V))
        .clone()
}

/// Writes under the cargo test tmp dir via rename, so test processes running in parallel
/// (e.g. under nextest) never read a half-written file.
fn write_atomically(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let tmp = dir.join(format!("{name}.{}", std::process::id()));
    std::fs::write(&tmp, text).unwrap();
    let path = dir.join(name);
    std::fs::rename(&tmp, &path).unwrap();
    path
}

fn build() -> VerilatedLib {
    VerilatedLib::build(&[source()], "test_counter", &BuildOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn lib() -> Arc<VerilatedLib> {
    static LIB: OnceLock<Arc<VerilatedLib>> = OnceLock::new();
    LIB.get_or_init(|| Arc::new(build())).clone()
}

/// Hand-written Rust model of `test_counter`; `bug_at` flips wide_out bit 99 on that cycle.
struct Model {
    pm: PortMap,
    count: u8,
    tag: u64,
    mid: u64,
    wide: [u32; 4],
    cycle: u64,
    bug_at: Option<u64>,
}

impl Model {
    fn new(pm: &PortMap, bug_at: Option<u64>) -> Model {
        Model {
            pm: pm.clone(),
            count: 0,
            tag: 0,
            mid: 0,
            wide: [0; 4],
            cycle: 0,
            bug_at,
        }
    }
}

impl Stepper for Model {
    fn port_map(&self) -> &PortMap {
        &self.pm
    }
    fn step(&mut self, i: &[u32], o: &mut [u32]) {
        let pm = &self.pm;
        let inp = |n: &str| pm.input(n).unwrap();
        if inp("rst").get(i) == 1 {
            (self.count, self.tag, self.mid, self.wide) = (0, 0, 0, [0; 4]);
        } else {
            if inp("en").get(i) == 1 {
                self.count = self.count.wrapping_add(1);
            }
            self.tag = inp("tag").get(i);
            self.mid = inp("mid_in").get(i);
            self.wide.copy_from_slice(inp("wide_in").slice(i));
            if Some(self.cycle) == self.bug_at {
                self.wide[3] ^= 1 << 3; // bit 99
            }
        }
        let out = |n: &str| pm.output(n).unwrap();
        out("count").set(o, self.count.into());
        out("tag_out").set(o, self.tag);
        out("mid_out").set(o, self.mid);
        out("wide_out").set_words(o, &self.wide);
        let parity = self.wide.iter().map(|w| w.count_ones()).sum::<u32>() & 1;
        out("parity").set(o, parity.into());
        self.cycle += 1;
    }
}

/// Deterministic pseudo-random stimulus: reset for 3 cycles, then random enable and data.
fn stimulus(pm: &PortMap) -> impl FnMut(u64, &mut [u32]) {
    let pm = pm.clone();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    move |cycle, w| {
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let inp = |n: &str| pm.input(n).unwrap();
        inp("rst").set(w, (cycle < 3) as u64);
        inp("en").set(w, next() & 1);
        inp("tag").set(w, next());
        inp("mid_in").set(w, next());
        inp("wide_in").set_u128(w, (u128::from(next()) << 64) | u128::from(next()));
    }
}

#[test]
fn ports_of_test_counter() {
    let pm = parse_ports(COUNTER_V, "test_counter").unwrap();
    let ins: Vec<_> = pm
        .inputs
        .iter()
        .map(|p| (p.name.as_str(), p.width, p.word_offset))
        .collect();
    assert_eq!(
        ins,
        [
            ("rst", 1, 0),
            ("en", 1, 1),
            ("tag", 12, 2),
            ("mid_in", 40, 3),
            ("wide_in", 100, 5)
        ]
    );
    let outs: Vec<_> = pm
        .outputs
        .iter()
        .map(|p| (p.name.as_str(), p.width, p.word_offset))
        .collect();
    assert_eq!(
        outs,
        [
            ("count", 8, 0),
            ("tag_out", 12, 1),
            ("mid_out", 40, 2),
            ("wide_out", 100, 4),
            ("parity", 1, 8)
        ]
    );
    assert_eq!((pm.in_words(), pm.out_words()), (9, 9));
}

#[test]
fn build_and_step_gives_register_values() {
    let lib = lib();
    let pm = lib.port_map().clone();
    let mut dut = Dut::new(&lib);
    let mut i = vec![0u32; pm.in_words()];
    let mut o = vec![0u32; pm.out_words()];
    let (inp, out) = (|n| pm.input(n).unwrap(), |n| pm.output(n).unwrap());
    inp("rst").set(&mut i, 1);
    dut.step(&i, &mut o);
    assert_eq!(out("count").get(&o), 0);
    inp("rst").set(&mut i, 0);
    inp("en").set(&mut i, 1);
    inp("tag").set(&mut i, 0xfff_abc); // truncated to 12 bits
    inp("mid_in").set(&mut i, 0xab_cdef_0123);
    let wide = (0xf_1234_5678u128 << 64) | 0x9abc_def0_0fed_cba9;
    inp("wide_in").set_u128(&mut i, wide);
    for n in 1..=5 {
        dut.step(&i, &mut o);
        assert_eq!(out("count").get(&o), n);
    }
    assert_eq!(out("tag_out").get(&o), 0xabc);
    assert_eq!(out("mid_out").get(&o), 0xab_cdef_0123);
    assert_eq!(out("wide_out").get_u128(&o), wide);
    assert_eq!(out("parity").get(&o), u64::from(wide.count_ones() & 1));
    // Upper bits beyond the width are masked by the shim, not passed to the model.
    i[pm.input("wide_in").unwrap().word_offset + 3] = u32::MAX;
    dut.step(&i, &mut o);
    assert_eq!(out("wide_out").get_u128(&o) >> 96, 0xf);
    // 255 more enabled cycles wrap the 8-bit counter.
    for _ in 0..255 {
        dut.step(&i, &mut o);
    }
    assert_eq!(out("count").get(&o), 5);
    // Independent instances do not share state.
    let mut other = Dut::new(&lib);
    other.step(&i, &mut o);
    assert_eq!(out("count").get(&o), 1);
}

#[test]
fn second_build_is_a_cache_hit() {
    let first = lib();
    let second = build();
    assert!(
        !second.built_fresh(),
        "second build ran verilator: {second:?}"
    );
    assert_eq!(first.path(), second.path());
    assert!(second
        .path()
        .starts_with(mrc_cosim::verilator::target_dir().join("cosim-cache")));
}

#[test]
fn lockstep_against_correct_model_passes() {
    let lib = lib();
    let pm = lib.port_map().clone();
    let mut dut = Dut::new(&lib);
    let mut model = Model::new(&pm, None);
    let r = run_lockstep(
        &mut dut,
        &mut model,
        20_000,
        &mut stimulus(&pm),
        &RunOptions::default(),
    );
    assert_eq!(r.mismatches, 0, "{}", r.divergence.unwrap());
    assert_eq!(r.cycles_run, 20_000);
}

#[test]
fn lockstep_against_wrong_model_reports_first_divergence_and_vcd() {
    let lib = lib();
    let pm = lib.port_map().clone();
    let mut dut = Dut::new(&lib);
    let mut model = Model::new(&pm, Some(77));
    let vcd_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cosim-vcd-test");
    let opts = RunOptions {
        vcd_window: 16,
        vcd_dir: vcd_dir.clone(),
        ..RunOptions::default()
    };
    let r = run_lockstep(&mut dut, &mut model, 1000, &mut stimulus(&pm), &opts);
    assert_eq!((r.mismatches, r.cycles_run), (1, 78));
    let d = r.divergence.expect("divergence");
    assert_eq!(d.cycle, 77);
    let ports: Vec<_> = d.mismatched.iter().map(|m| m.port.as_str()).collect();
    assert_eq!(ports, ["wide_out", "parity"]);
    let text = d.to_string();
    println!("{text}");
    assert!(text.contains("at cycle 77"), "{text}");
    assert!(
        text.contains("wide_out  expected 0x") && text.contains(" got 0x"),
        "{text}"
    );
    assert!(
        text.contains("wide_in") && text.contains("mid_in"),
        "{text}"
    );
    // Expected and actual differ exactly in bit 99 (the top hex digit's bit 3).
    let m = &d.mismatched[0];
    assert_eq!(m.expected.len(), 2 + 25);
    assert_ne!(m.expected[2..3], m.actual[2..3]);
    assert_eq!(m.expected[3..], m.actual[3..]);

    // The VCD parses back, has clock, inputs, both versions of each output, true cycle times.
    let path = d.vcd_path.expect("vcd written");
    let file = std::io::BufReader::new(std::fs::File::open(&path).unwrap());
    let mut parser = vcd::Parser::new(file);
    let header = parser.parse_header().unwrap();
    for name in [
        "clock",
        "rst",
        "wide_in",
        "count",
        "count__expected",
        "wide_out",
        "wide_out__expected",
    ] {
        assert!(
            header.find_var(&["test_counter", name]).is_some(),
            "missing {name}"
        );
    }
    let exp = header
        .find_var(&["test_counter", "wide_out__expected"])
        .unwrap();
    assert_eq!(exp.size, 100);
    let mut times = Vec::new();
    let mut last_expected = None;
    for cmd in parser {
        match cmd.unwrap() {
            vcd::Command::Timestamp(t) => times.push(t),
            vcd::Command::ChangeVector(id, v) if id == exp.code => last_expected = Some(v),
            _ => {}
        }
    }
    assert_eq!(times.first(), Some(&(10 * (77 - 15))));
    assert!(times.contains(&770) && times.contains(&775));
    assert_eq!(times.last(), Some(&780));
    let v = last_expected.unwrap();
    assert_eq!(v.len(), 100);
    let _ = std::fs::remove_dir_all(vcd_dir);
}

#[test]
fn native_bench_and_time_stepper_agree() {
    let lib = lib();
    let pm = lib.port_map().clone();
    // 1000 rows of stimulus replayed over 50_000 cycles.
    let mut stim_fn = stimulus(&pm);
    let mut stim = Vec::new();
    let mut row = vec![0u32; pm.in_words()];
    for c in 0..1000 {
        stim_fn(c, &mut row);
        stim.extend_from_slice(&row);
    }
    let cycles = 50_000;
    let native = native_bench(
        &[source()],
        "test_counter",
        &BuildOptions::default(),
        &stim,
        cycles,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (secs, chk) = time_stepper(&mut Dut::new(&lib), &stim, cycles);
    let (_, model_chk) = time_stepper(&mut Model::new(&pm, None), &stim, cycles);
    println!(
        "native: {:.0} cycles/s; cosim FFI: {:.0} cycles/s",
        native.cycles_per_s,
        cycles as f64 / secs
    );
    assert_eq!(native.cycles, cycles);
    assert!(native.seconds > 0.0);
    assert_eq!(native.checksum, chk, "native vs FFI checksum");
    assert_eq!(model_chk, chk, "Rust model vs FFI checksum");
    assert_ne!(chk, 0);
}

#[test]
fn verilator_build_failure_shows_its_output() {
    let p = write_atomically(
        "cosim_broken.v",
        "module broken(clock, q);\n  input wire clock;\n  output reg q;\n  always @(posedge clock) q <= ;\nendmodule\n",
    );
    let e = VerilatedLib::build(&[p], "broken", &BuildOptions::default()).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("`verilator` failed"), "{msg}");
    assert!(msg.contains("%Error"), "{msg}");
}
