fn main() {
    let cfg = mrc_config::NicConfig::default();
    let e = mrc_hdl::emit_module("ev_spray_arbiter", &cfg).unwrap();
    print!("{}", e.verilog);
}
