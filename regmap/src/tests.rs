use super::*;
use std::path::PathBuf;

fn configs() -> Vec<(String, NicConfig)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../configs");
    let mut v = vec![("default".to_string(), NicConfig::default())];
    for e in std::fs::read_dir(&dir).expect("configs/") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "toml") {
            let cfg = NicConfig::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            v.push((p.display().to_string(), cfg));
        }
    }
    assert!(v.len() > 3, "expected the example configs");
    v
}

#[test]
fn built_map_is_valid_for_every_example_config() {
    for (name, cfg) in configs() {
        validate(&build(&cfg)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn layout_does_not_depend_on_the_config() {
    let base = build(&NicConfig::default());
    for (name, cfg) in configs() {
        assert_eq!(build(&cfg).layout(), base.layout(), "{name}");
    }
}

#[test]
fn reset_values_come_from_the_config() {
    let cfg = NicConfig {
        rto_exp: 9,
        mpr: 17,
        mtu: 2048,
        ..NicConfig::default()
    };
    let m = build(&cfg);
    assert_eq!(m.find("XPORT", "RTO_EXP").unwrap().reg.reset, 9);
    assert_eq!(m.find("XPORT", "MPR").unwrap().reg.reset, 17);
    assert_eq!(m.find("NSCC", "MTU").unwrap().reg.reset, 2048);
    assert_eq!(
        m.find("CSR", "BLOCKS").unwrap().reg.reset,
        m.blocks.len() as u32
    );
    assert_eq!(m.find("CSR", "TYPE").unwrap().addr, 0);
    assert_eq!(m.find("CSR", "TYPE").unwrap().reg.reset, fourcc(b"MCSR"));
}

#[test]
fn the_registers_mrc_core_needs_are_mapped() {
    let m = build(&NicConfig::default());
    for (b, r) in [
        ("EVT", "EV_INDEX"),
        ("EVT", "EV_VALUE"),
        ("EVT", "EV_OP"),
        ("EVT", "EV_STATE"),
        ("NSCC", "CWND"),
        ("NSCC", "MAXWND"),
        ("NSCC", "BASE_RTT"),
        ("XPORT", "MPR"),
        ("XPORT", "RTO_EXP"),
        ("XPORT", "RTO_LINEAR_RETRIES"),
        ("XPORT", "RTO_BACKOFF_RETRIES"),
        ("XPORT", "RTX_OOO_THRESHOLD"),
        ("QP", "QP_CTRL"),
        ("CNT", "PKTS_SENT"),
        ("CNT", "RETRANSMITS"),
        ("CNT", "TRIMS"),
        ("CNT", "NACK_TRIMMED"),
        ("CNT", "TIMEOUTS"),
        ("CNT", "OUT_OF_WINDOW"),
        ("EVQ", "EVQ_POP"),
        ("EVQ", "EVQ_DEPTH"),
        ("EVQ", "EVQ_DROPS"),
        ("CSR", "BAD_ACCESS"),
    ] {
        assert!(m.find(b, r).is_some(), "{b}.{r}");
    }
}

fn broken(f: impl FnOnce(&mut RegMap)) -> MapError {
    let mut m = build(&NicConfig::default());
    f(&mut m);
    validate(&m).expect_err("the broken map must be refused")
}

#[test]
fn validation_refuses_overlaps_alignment_widths_fields_and_chain_faults() {
    let e = broken(|m| m.blocks[1].regs[4].offset = m.blocks[1].regs[3].offset);
    assert!(e.reason.contains("same offset"), "{e}");
    let e = broken(|m| m.blocks[1].regs[3].offset = 0x0E);
    assert!(e.reason.contains("4-aligned"), "{e}");
    let e = broken(|m| m.blocks[1].regs[3].offset = 0x100);
    assert!(e.reason.contains("outside the block"), "{e}");
    let e = broken(|m| m.blocks[0].regs[5].width = 33);
    assert!(e.reason.contains("width"), "{e}");
    let e = broken(|m| m.blocks[0].regs[4].reset = 1 << 8);
    assert!(e.reason.contains("does not fit"), "{e}");
    let e = broken(|m| m.blocks[3].regs[8].fields[1].lsb = 12);
    assert!(e.reason.contains("outside"), "{e}");
    let e = broken(|m| m.blocks[3].regs[8].fields[1].lsb = 1);
    assert!(e.reason.contains("overlaps"), "{e}");
    let e = broken(|m| m.blocks[6].base = 0x680);
    assert!(e.reason.contains("multiples"), "{e}");
    let e = broken(|m| m.blocks[2].base = 0x100);
    assert!(e.reason.contains("overlaps"), "{e}");
    let e = broken(|m| m.blocks[6].base = 0x800);
    assert!(e.reason.contains("past the BAR"), "{e}");
    let e = broken(|m| m.blocks[1].regs[2].reset = 0x300);
    assert!(e.reason.contains("misses"), "{e}");
    let e = broken(|m| m.blocks[2].regs[2].reset = 0x100);
    assert!(e.reason.contains("loops"), "{e}");
    let e = broken(|m| m.blocks[2].regs[2].reset = 0x780);
    assert!(e.reason.contains("no block starts"), "{e}");
    let e = broken(|m| m.blocks[2].regs.swap(0, 1));
    assert!(e.reason.contains("must be TYPE"), "{e}");
    let e = broken(|m| m.blocks[2].type_id = m.blocks[1].type_id);
    assert!(e.reason.contains("duplicate TYPE"), "{e}");
    let e = broken(|m| m.blocks[2].regs[5].name = "RTO_EXP");
    assert!(e.reason.contains("duplicate register"), "{e}");
}

#[test]
fn c_header_names_every_register_and_compiles() {
    let m = build(&NicConfig::default());
    let h = gen::c_header(&m, "the built-in default config");
    assert!(h.contains("#define MRC_CSR_TYPE_OFFSET 0x000u"));
    assert!(h.contains("#define MRC_EVT_EV_STATE_PENALTY_MASK 0x0000ff00u"));
    assert!(h.contains("#define MRC_XPORT_RTO_EXP_RESET 0x00000004u"));
    for l in m.registers() {
        let name = format!(
            "MRC_{}_{}_OFFSET 0x{:03x}u",
            l.block.name, l.reg.name, l.addr
        );
        assert!(h.contains(&name), "{name}");
    }
    // Compile it with checks that the values are what the map says; the compiler must exist.
    let dir = std::env::temp_dir().join(format!("mrc-regmap-cc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mrc_regs.h"), &h).unwrap();
    let mut c = String::from("#include \"mrc_regs.h\"\n#include <stdint.h>\n");
    for l in m.registers() {
        let q = format!("MRC_{}_{}", l.block.name, l.reg.name);
        c += &format!(
            "_Static_assert({q}_OFFSET == {}u && {q}_RESET == {}u && {q}_MASK == {}u, \"{q}\");\n",
            l.addr,
            l.reg.reset,
            l.reg.mask()
        );
    }
    c += "uint32_t first_next(void) { return MRC_CSR_NEXT_RESET; }\n";
    std::fs::write(dir.join("check.c"), c).unwrap();
    let out = std::process::Command::new("cc")
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsyntax-only",
            "check.c",
        ])
        .current_dir(&dir)
        .output()
        .expect("a C compiler (`cc`) must be installed for this test");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "cc refused the header:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn markdown_has_one_table_per_block_and_a_row_per_register() {
    let m = build(&NicConfig::default());
    let md = gen::markdown(&m, "the built-in default config");
    assert_eq!(md.matches("\n## ").count(), m.blocks.len());
    assert_eq!(md.matches("| offset | register |").count(), m.blocks.len());
    for l in m.registers() {
        let row = format!(
            "| 0x{:03x} | {} | {} | {} |",
            l.addr,
            l.reg.name,
            l.reg.width,
            l.reg.access.as_str()
        );
        assert!(md.contains(&row), "{row}");
    }
    assert!(md.contains("`PENALTY` [15:8]"));
}

#[test]
fn json_round_trips_the_map() {
    let m = build(&NicConfig::default());
    let v: serde_json::Value = serde_json::from_str(&gen::json(&m)).unwrap();
    let blocks = v["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), m.blocks.len());
    assert_eq!(blocks[0]["name"], "CSR");
    assert_eq!(blocks[0]["regs"][0]["name"], "TYPE");
    assert_eq!(blocks[3]["regs"][8]["access"], "RO");
    assert_eq!(v["bar_size"], BAR_SIZE);
}
