//! Runtime Verilator builder: Verilog files → cached shared library → [`Dut`] instances.
//!
//! The Verilog is generated from the config at run time, so a `build.rs` cannot know it; instead
//! the library is built on first use and cached under `<target>/cosim-cache/<sha256>/`, keyed by
//! everything that can change the binary. A cache hit costs one `verilator --version` per process.

use crate::error::CosimError;
use crate::ports::{parse_ports, Port, PortMap};
use crate::stepper::Stepper;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::ffi::c_void;
use std::fmt::Write as _;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// Knobs of the Verilator build; all of them are part of the cache key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BuildOptions {
    /// The Verilator program (a name looked up on PATH, or a path).
    pub verilator: String,
    /// Extra Verilator arguments, e.g. `-Wno-WIDTH` or a `.vlt` waiver file (an argument naming an
    /// existing file has its contents hashed into the cache key, so editing a waiver rebuilds).
    pub extra_args: Vec<String>,
    /// Parallel compile jobs (`-j`), for both Verilator's make and the link step.
    pub jobs: usize,
    /// Optimisation for the model's hot code. `-O1`: on the W = 256 `sack_tx_scoreboard` (rust-hdl
    /// unrolls its loops into one very large eval) g++ 12 took 113 s per file at `-O2` and 3.5 s at
    /// `-O1`, and the model ran as fast (54.4 k vs 53.1 k cycles/s); `-Os` was 20-30 % slower.
    pub opt_fast: String,
    /// Override for the cache root (default: `<cargo target dir>/cosim-cache`).
    pub cache_dir: Option<PathBuf>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            verilator: "verilator".to_string(),
            extra_args: Vec::new(),
            jobs: 2,
            opt_fast: "-O1".to_string(),
            cache_dir: None,
        }
    }
}

impl BuildOptions {
    /// The options as they enter the cache key (the cache dir itself does not change the output).
    fn key_text(&self) -> String {
        format!(
            "verilator={:?} extra={:?} jobs={} opt_fast={:?}",
            self.verilator, self.extra_args, self.jobs, self.opt_fast
        )
    }
}

/// Serialises builds inside one process: parallel test threads asking for the same model would
/// otherwise run Verilator twice on two cores. Across processes the atomic rename suffices.
static BUILD_LOCK: Mutex<()> = Mutex::new(());

/// `verilator --version` per program, so cache hits spawn Verilator at most once per process.
static VERSIONS: Mutex<Option<HashMap<String, String>>> = Mutex::new(None);

fn verilator_version(program: &str) -> Result<String, CosimError> {
    let mut guard = VERSIONS.lock().unwrap_or_else(|e| e.into_inner());
    let map = guard.get_or_insert_with(HashMap::new);
    if let Some(v) = map.get(program) {
        return Ok(v.clone());
    }
    let out = Command::new(program).arg("--version").output();
    let out = match out {
        Ok(o) if o.status.success() => o,
        Ok(_) | Err(_) => {
            return Err(CosimError::VerilatorNotFound {
                program: program.to_string(),
            })
        }
    };
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    map.insert(program.to_string(), v.clone());
    Ok(v)
}

/// The cargo target directory: `CARGO_TARGET_DIR`, else the `target` ancestor of the running
/// executable (tests and binaries live below it), else `./target`.
pub fn target_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(d);
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(t) = exe
            .ancestors()
            .find(|a| a.file_name().is_some_and(|n| n == "target"))
        {
            return t.to_path_buf();
        }
    }
    PathBuf::from("target")
}

/// Verilator's C++ name for a Verilog identifier (`__` → `___05F`, other symbols → `__0XX`).
pub(crate) fn cpp_ident(name: &str) -> String {
    let b = name.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'_' && b.get(i + 1) == Some(&b'_') {
            out.push_str("___05F");
            i += 2;
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            out.push(c as char);
            i += 1;
        } else {
            let _ = write!(out, "__0{c:02x}");
            i += 1;
        }
    }
    out
}

fn mask_literal(p: &Port) -> String {
    format!("0x{:08x}u", p.top_mask())
}

/// C++ statements copying the input words at `inp` into the model `m` (a pointer), masking the
/// unused top bits because Verilator assumes they are zero.
pub(crate) fn cpp_set_inputs(pm: &PortMap, m: &str, inp: &str) -> String {
    let mut s = String::new();
    for p in &pm.inputs {
        let (c, o, mask) = (cpp_ident(&p.name), p.word_offset, mask_literal(p));
        let _ = match p.width {
            0..=32 => writeln!(s, "    {m}->{c} = {inp}[{o}] & {mask};"),
            33..=64 => writeln!(
                s,
                "    {m}->{c} = (uint64_t){inp}[{o}] | ((uint64_t)({inp}[{}] & {mask}) << 32);",
                o + 1
            ),
            _ => {
                let n = p.words();
                writeln!(
                    s,
                    "    std::memcpy({m}->{c}.data(), {inp} + {o}, {n} * sizeof(uint32_t));\n    {m}->{c}.data()[{}] &= {mask};",
                    n - 1
                )
            }
        };
    }
    s
}

/// C++ statements copying every output of model `m` into the words at `out`.
pub(crate) fn cpp_get_outputs(pm: &PortMap, m: &str, out: &str) -> String {
    let mut s = String::new();
    for p in &pm.outputs {
        let (c, o) = (cpp_ident(&p.name), p.word_offset);
        let _ = match p.width {
            0..=32 => writeln!(s, "    {out}[{o}] = (uint32_t){m}->{c};"),
            33..=64 => writeln!(
                s,
                "    {out}[{o}] = (uint32_t){m}->{c};\n    {out}[{}] = (uint32_t)({m}->{c} >> 32);",
                o + 1
            ),
            _ => writeln!(
                s,
                "    std::memcpy({out} + {o}, {m}->{c}.data(), {} * sizeof(uint32_t));",
                p.words()
            ),
        };
    }
    s
}

/// The `extern "C"` shim: one batched call per clock edge, one `VerilatedContext` per model.
pub fn shim_source(pm: &PortMap) -> String {
    let top = &pm.module;
    format!(
        r#"// Generated by mrc-cosim for module `{top}`; regenerated on every build, do not edit.
#include "V{top}.h"
#include "verilated.h"
#include <cstdint>
#include <cstring>

double sc_time_stamp() {{ return 0; }}

namespace {{
struct CosimModel {{
    VerilatedContext ctx;
    V{top} model;
    CosimModel() : ctx(), model(&ctx, "TOP") {{}}
}};
}}  // namespace

extern "C" {{
void* cosim_new() {{ return new CosimModel(); }}

void cosim_free(void* p) {{
    CosimModel* c = static_cast<CosimModel*>(p);
    c->model.final();
    delete c;
}}

void cosim_cycle(void* p, const uint32_t* in, uint32_t* out) {{
    V{top}* m = &static_cast<CosimModel*>(p)->model;
{set}    m->clock = 0;
    m->eval();
    m->clock = 1;
    m->eval();
{get}}}

uint32_t cosim_in_words() {{ return {inw}; }}
uint32_t cosim_out_words() {{ return {outw}; }}
}}
"#,
        set = cpp_set_inputs(pm, "m", "in"),
        get = cpp_get_outputs(pm, "m", "out"),
        inw = pm.in_words(),
        outw = pm.out_words(),
    )
}

/// What to build on top of the Verilated model: the cosim shared library or the bench binary.
pub(crate) struct Artifact {
    /// Distinguishes cache entries of different artifacts of the same model.
    pub kind: &'static str,
    /// C++ file written next to the Verilated sources.
    pub cpp_name: &'static str,
    pub cpp_text: String,
    /// The make target producing the artifact, and its link command (a make recipe line).
    pub target: String,
    pub link_recipe: String,
}

impl Artifact {
    pub(crate) fn shared_lib(pm: &PortMap) -> Artifact {
        Artifact {
            kind: "cosim-shared-lib",
            cpp_name: "cosim_shim.cpp",
            cpp_text: shim_source(pm),
            target: format!("libcosim_{}.so", pm.module),
            // --whole-archive: the archive may be split into many objects on big designs.
            link_recipe: "$(CXX) -shared -fPIC $(LDFLAGS) -o $@ $(COSIM_OBJ) -Wl,--whole-archive \
                          $(VM_PREFIX)__ALL.a -Wl,--no-whole-archive $(VK_GLOBAL_OBJS) $(LDLIBS) \
                          $(CFG_LDLIBS_THREADS)"
                .to_string(),
        }
    }
}

/// Result of [`build_artifact`]: where it is and whether Verilator ran to produce it.
pub(crate) struct Built {
    pub dir: PathBuf,
    pub artifact_path: PathBuf,
    pub fresh: bool,
}

/// Reads all sources and finds the top module's ports in their concatenation.
pub(crate) fn read_sources(
    sources: &[PathBuf],
    top: &str,
) -> Result<(Vec<Vec<u8>>, PortMap), CosimError> {
    let mut texts = Vec::new();
    let mut all = String::new();
    for s in sources {
        let bytes = std::fs::read(s)
            .map_err(|e| CosimError::io(format!("reading Verilog source {}", s.display()), e))?;
        all.push_str(&String::from_utf8_lossy(&bytes));
        all.push('\n');
        texts.push(bytes);
    }
    let pm = parse_ports(&all, top)?;
    Ok((texts, pm))
}

fn tail(text: &str, lines: usize) -> String {
    let v: Vec<&str> = text.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

fn run_step(step: &str, cmd: &mut Command) -> Result<(), CosimError> {
    let shown = format!("{cmd:?}");
    let out = cmd.output().map_err(|e| {
        if e.kind() == ErrorKind::NotFound {
            CosimError::ToolNotFound {
                program: cmd.get_program().to_string_lossy().into_owned(),
            }
        } else {
            CosimError::io(format!("running {shown}"), e)
        }
    })?;
    if out.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Err(CosimError::Build {
        step: step.to_string(),
        command: shown,
        output_tail: tail(&text, 40),
    })
}

/// Builds (or finds in the cache) `artifact` for `top`; returns its directory.
pub(crate) fn build_artifact(
    sources: &[PathBuf],
    texts: &[Vec<u8>],
    pm: &PortMap,
    opts: &BuildOptions,
    artifact: &Artifact,
) -> Result<Built, CosimError> {
    let top = &pm.module;
    let version = verilator_version(&opts.verilator)?;
    let mut h = Sha256::new();
    for part in [
        artifact.kind.as_bytes(),
        top.as_bytes(),
        artifact.cpp_text.as_bytes(),
        artifact.link_recipe.as_bytes(),
        opts.key_text().as_bytes(),
        version.as_bytes(),
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    for t in texts {
        h.update((t.len() as u64).to_le_bytes());
        h.update(t);
    }
    // Files among the extra args (`.vlt` waivers, `-f` lists) change the build too.
    for a in &opts.extra_args {
        if let Ok(bytes) = std::fs::read(a) {
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(&bytes);
        }
    }
    let hash: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let root = opts
        .cache_dir
        .clone()
        .unwrap_or_else(|| target_dir().join("cosim-cache"));
    let dir = root.join(&hash);
    let artifact_path = dir.join("obj").join(&artifact.target);

    let _guard = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if artifact_path.exists() {
        return Ok(Built {
            dir,
            artifact_path,
            fresh: false,
        });
    }
    std::fs::create_dir_all(&root)
        .map_err(|e| CosimError::io(format!("creating cache dir {}", root.display()), e))?;
    let tmp = root.join(format!("{hash}.tmp-{}", std::process::id()));
    if tmp.exists() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    let obj = tmp.join("obj");
    std::fs::create_dir_all(&obj)
        .map_err(|e| CosimError::io(format!("creating {}", obj.display()), e))?;
    let result = build_in(&obj, sources, top, opts, artifact);
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    if let Err(e) = std::fs::rename(&tmp, &dir) {
        // Another process won the race: its complete build is as good as ours.
        let _ = std::fs::remove_dir_all(&tmp);
        if !artifact_path.exists() {
            return Err(CosimError::io(
                format!("moving build {} into the cache", tmp.display()),
                e,
            ));
        }
    }
    Ok(Built {
        dir,
        artifact_path,
        fresh: true,
    })
}

fn build_in(
    obj: &Path,
    sources: &[PathBuf],
    top: &str,
    opts: &BuildOptions,
    artifact: &Artifact,
) -> Result<(), CosimError> {
    let jobs = opts.jobs.max(1).to_string();
    let opt_fast = format!("OPT_FAST={}", opts.opt_fast);
    let mut cmd = Command::new(&opts.verilator);
    cmd.args(["--cc", "--build", "-j", &jobs, "-O3"])
        .args(["--prefix", &format!("V{top}"), "--top-module", top])
        .args(["-CFLAGS", "-fPIC", "-MAKEFLAGS", &opt_fast, "-Wno-fatal"])
        .arg("--Mdir")
        .arg(obj)
        .args(&opts.extra_args);
    for s in sources {
        cmd.arg(std::fs::canonicalize(s).unwrap_or_else(|_| s.clone()));
    }
    run_step("verilator", &mut cmd).map_err(|e| match e {
        CosimError::ToolNotFound { program } => CosimError::VerilatorNotFound { program },
        other => other,
    })?;

    let cpp = obj.join(artifact.cpp_name);
    std::fs::write(&cpp, &artifact.cpp_text)
        .map_err(|e| CosimError::io(format!("writing {}", cpp.display()), e))?;
    let cosim_obj = artifact.cpp_name.replace(".cpp", ".o");
    let mk = format!(
        "# Generated by mrc-cosim: builds the Verilator runtime objects and links `{target}`.\n\
         include V{top}.mk\n\
         COSIM_OBJ = {cosim_obj}\n\
         {cosim_obj}: {cpp_name}\n\
         \t$(OBJCACHE) $(CXX) $(CXXFLAGS) $(CPPFLAGS) $(OPT_FAST) -c -o $@ $<\n\
         {target}: $(COSIM_OBJ) $(VM_PREFIX)__ALL.a $(VK_GLOBAL_OBJS)\n\
         \t{recipe}\n",
        target = artifact.target,
        cpp_name = artifact.cpp_name,
        recipe = artifact.link_recipe,
    );
    let mk_path = obj.join("cosim.mk");
    std::fs::write(&mk_path, mk)
        .map_err(|e| CosimError::io(format!("writing {}", mk_path.display()), e))?;
    let mut make = Command::new("make");
    make.arg("-C")
        .arg(obj)
        .args(["-f", "cosim.mk", "-j", &jobs, &opt_fast, &artifact.target]);
    run_step("compile and link", &mut make)
}

type NewFn = unsafe extern "C" fn() -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);
type CycleFn = unsafe extern "C" fn(*mut c_void, *const u32, *mut u32);
type WordsFn = unsafe extern "C" fn() -> u32;

/// A loaded Verilated model library; instantiate it any number of times with [`Dut::new`].
///
/// Shared through `Arc` so test threads can build once and each run their own instances.
pub struct VerilatedLib {
    port_map: PortMap,
    path: PathBuf,
    fresh: bool,
    new_fn: NewFn,
    free_fn: FreeFn,
    cycle_fn: CycleFn,
    // Keeps the function pointers above valid; dropped last.
    _lib: libloading::Library,
}

impl std::fmt::Debug for VerilatedLib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerilatedLib")
            .field("module", &self.port_map.module)
            .field("path", &self.path)
            .field("fresh", &self.fresh)
            .finish()
    }
}

impl VerilatedLib {
    /// Verilates `sources` with `top` as the top module (or reuses the cached build) and loads it.
    pub fn build(
        sources: &[PathBuf],
        top: &str,
        opts: &BuildOptions,
    ) -> Result<VerilatedLib, CosimError> {
        let (texts, pm) = read_sources(sources, top)?;
        let built = build_artifact(sources, &texts, &pm, opts, &Artifact::shared_lib(&pm))?;
        Self::load(&built.artifact_path, pm, built.fresh)
    }

    fn load(path: &Path, pm: PortMap, fresh: bool) -> Result<VerilatedLib, CosimError> {
        let err = |m: String| CosimError::Load {
            path: path.to_path_buf(),
            message: m,
        };
        // SAFETY: the library is our generated shim; its initialisers are Verilator's static
        // constructors, which have no preconditions.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| err(e.to_string()))?;
        // SAFETY: the symbol types match the `extern "C"` signatures in `shim_source`.
        let (new_fn, free_fn, cycle_fn, in_w, out_w) = unsafe {
            let sym_err = |e: libloading::Error| err(e.to_string());
            (
                *lib.get::<NewFn>(b"cosim_new\0").map_err(sym_err)?,
                *lib.get::<FreeFn>(b"cosim_free\0").map_err(sym_err)?,
                *lib.get::<CycleFn>(b"cosim_cycle\0").map_err(sym_err)?,
                (*lib.get::<WordsFn>(b"cosim_in_words\0").map_err(sym_err)?)(),
                (*lib.get::<WordsFn>(b"cosim_out_words\0").map_err(sym_err)?)(),
            )
        };
        if in_w as usize != pm.in_words() || out_w as usize != pm.out_words() {
            return Err(err(format!(
                "library has {in_w}/{out_w} input/output words, port map expects {}/{}",
                pm.in_words(),
                pm.out_words()
            )));
        }
        Ok(VerilatedLib {
            port_map: pm,
            path: path.to_path_buf(),
            fresh,
            new_fn,
            free_fn,
            cycle_fn,
            _lib: lib,
        })
    }

    /// The ports of the top module, as laid out in the shim's word arrays.
    pub fn port_map(&self) -> &PortMap {
        &self.port_map
    }

    /// Path of the loaded shared library (inside the cache directory).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True if this `build` ran Verilator; false on a cache hit. Lets tests prove the cache works
    /// without relying on timing.
    pub fn built_fresh(&self) -> bool {
        self.fresh
    }
}

/// One instance of a Verilated model with its own `VerilatedContext`.
///
/// `Send` (an instance can move to another thread) but not `Sync`: the model is single-threaded.
pub struct Dut {
    lib: Arc<VerilatedLib>,
    handle: *mut c_void,
}

// SAFETY: the handle is owned exclusively by this `Dut`; Verilator models may be used from any
// thread as long as calls are not concurrent, which `&mut self` guarantees. Not `Sync` (raw ptr).
unsafe impl Send for Dut {}

impl Dut {
    /// Creates a fresh model instance (registers at their initial values, nothing evaluated yet).
    pub fn new(lib: &Arc<VerilatedLib>) -> Dut {
        // SAFETY: `cosim_new` has no preconditions.
        let handle = unsafe { (lib.new_fn)() };
        assert!(!handle.is_null(), "cosim_new returned null");
        Dut {
            lib: Arc::clone(lib),
            handle,
        }
    }
}

impl Drop for Dut {
    fn drop(&mut self) {
        // SAFETY: handle came from `cosim_new` of the same (still loaded) library, freed once.
        unsafe { (self.lib.free_fn)(self.handle) }
    }
}

impl Stepper for Dut {
    fn port_map(&self) -> &PortMap {
        &self.lib.port_map
    }

    fn step(&mut self, inputs: &[u32], outputs: &mut [u32]) {
        let pm = &self.lib.port_map;
        assert_eq!(inputs.len(), pm.in_words(), "input word count");
        assert_eq!(outputs.len(), pm.out_words(), "output word count");
        // SAFETY: lengths checked above; the shim reads/writes exactly that many words.
        unsafe { (self.lib.cycle_fn)(self.handle, inputs.as_ptr(), outputs.as_mut_ptr()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpp_names_follow_verilator_encoding() {
        assert_eq!(cpp_ident("grant_ev"), "grant_ev");
        assert_eq!(cpp_ident("a__b"), "a___05Fb");
        assert_eq!(cpp_ident("x$y"), "x__024y");
        assert_eq!(cpp_ident("_lead"), "_lead");
    }

    #[test]
    fn shim_handles_every_data_type() {
        let pm = PortMap::from_widths(
            "m",
            &[("a", 1), ("b", 12), ("c", 40), ("d", 100)],
            &[("q", 8), ("r", 64), ("s", 65)],
        );
        let s = shim_source(&pm);
        assert!(s.contains("m->a = in[0] & 0x00000001u;"), "{s}");
        assert!(s.contains("m->c = (uint64_t)in[2] | ((uint64_t)(in[3] & 0x000000ffu) << 32);"));
        assert!(s.contains("std::memcpy(m->d.data(), in + 4, 4 * sizeof(uint32_t));"));
        assert!(s.contains("m->d.data()[3] &= 0x0000000fu;"));
        assert!(s.contains("out[2] = (uint32_t)(m->r >> 32);"));
        assert!(s.contains("std::memcpy(out + 3, m->s.data(), 3 * sizeof(uint32_t));"));
        assert!(s.contains("return 8;") && s.contains("return 6;"));
    }

    #[test]
    fn missing_verilator_is_a_clear_error() {
        let dir = std::env::temp_dir().join(format!("cosim-missing-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("m.v");
        std::fs::write(
            &src,
            "module m(clock, q); input clock; output q; endmodule\n",
        )
        .unwrap();
        let opts = BuildOptions {
            verilator: "verilator-definitely-not-installed".into(),
            cache_dir: Some(dir.join("cache")),
            ..BuildOptions::default()
        };
        let e = VerilatedLib::build(&[src], "m", &opts).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("verilator not found on PATH") && msg.contains("make deps"),
            "{msg}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
