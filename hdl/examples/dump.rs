//! Print one module's Verilog for a config: `cargo run -p mrc-hdl --example dump [config.toml]`.
fn main() {
    let cfg = match std::env::args().nth(1) {
        Some(p) => mrc_config::NicConfig::load(std::path::Path::new(&p)).expect("config"),
        None => mrc_config::NicConfig::default(),
    };
    let e = mrc_hdl::emit_module("ev_spray_arbiter", &cfg).unwrap();
    print!("{}", e.verilog);
}
