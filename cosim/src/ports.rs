//! Port discovery and the flat word layout shared by the C++ shim, Rust models and the runner.
//!
//! Everything that crosses the FFI boundary is a flat `[u32]`: one batched call per clock edge is
//! as fast as per-port calls and keeps the shim generic. This module decides where each port lives
//! in that array, so the shim generator, the runner's reports and hand-written models all agree.

use crate::error::CosimError;
use std::collections::HashMap;

/// The clock port name; the shim toggles it, so it is never part of the input words.
pub const CLOCK_PORT: &str = "clock";

/// One port and its place in the flat word array.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Port {
    /// Port name as written in the Verilog.
    pub name: String,
    /// Width in bits (may exceed 64).
    pub width: u32,
    /// Index of the port's least significant word in the input or output word array.
    pub word_offset: usize,
}

/// The ports of a top module, in header order, each occupying `ceil(width/32)` words, LSW first.
///
/// Both sides of a lockstep run share this layout, so a Rust model only needs the same `PortMap`
/// (usually a clone of the DUT's) to be comparable word for word.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PortMap {
    /// Module name, used to name the generated library, VCDs and reports.
    pub module: String,
    /// Input ports except `clock`.
    pub inputs: Vec<Port>,
    /// Output ports.
    pub outputs: Vec<Port>,
}

impl Port {
    /// Number of u32 words the port occupies.
    pub fn words(&self) -> usize {
        words_for(self.width)
    }

    /// Mask of the valid bits in the most significant word (Verilator requires unused bits zero).
    pub fn top_mask(&self) -> u32 {
        match self.width % 32 {
            0 => u32::MAX,
            r => (1u32 << r) - 1,
        }
    }

    /// The port's words (LSW first); the general accessor for ports wider than 128 bits.
    pub fn slice<'a>(&self, words: &'a [u32]) -> &'a [u32] {
        &words[self.word_offset..self.word_offset + self.words()]
    }

    /// Mutable view of the port's words; callers must keep bits above `width` zero
    /// (prefer [`Port::set_words`], which masks).
    pub fn slice_mut<'a>(&self, words: &'a mut [u32]) -> &'a mut [u32] {
        let n = self.words();
        &mut words[self.word_offset..self.word_offset + n]
    }

    /// Copies `value` (LSW first) into the port, zero-extending or truncating to the port width.
    pub fn set_words(&self, words: &mut [u32], value: &[u32]) {
        let mask = self.top_mask();
        let dst = self.slice_mut(words);
        for (i, d) in dst.iter_mut().enumerate() {
            *d = value.get(i).copied().unwrap_or(0);
        }
        if let Some(last) = dst.last_mut() {
            *last &= mask;
        }
    }

    /// Sets the port from a u64, truncated to the port width (wider ports get zero upper words).
    pub fn set(&self, words: &mut [u32], value: u64) {
        self.set_words(words, &[value as u32, (value >> 32) as u32]);
    }

    /// Sets the port from a u128, truncated to the port width.
    pub fn set_u128(&self, words: &mut [u32], value: u128) {
        let v: [u32; 4] = std::array::from_fn(|i| (value >> (32 * i)) as u32);
        self.set_words(words, &v);
    }

    /// Reads a port of at most 64 bits.
    ///
    /// # Panics
    /// If the port is wider than 64 bits: silently truncating would hide mismatches.
    pub fn get(&self, words: &[u32]) -> u64 {
        assert!(
            self.width <= 64,
            "port `{}` is {} bits wide: use get_u128() or slice()",
            self.name,
            self.width
        );
        self.slice(words)
            .iter()
            .enumerate()
            .fold(0u64, |acc, (i, w)| acc | (u64::from(*w) << (32 * i)))
    }

    /// Reads a port of at most 128 bits.
    ///
    /// # Panics
    /// If the port is wider than 128 bits.
    pub fn get_u128(&self, words: &[u32]) -> u128 {
        assert!(
            self.width <= 128,
            "port `{}` is {} bits wide: use slice()",
            self.name,
            self.width
        );
        self.slice(words)
            .iter()
            .enumerate()
            .fold(0u128, |acc, (i, w)| acc | (u128::from(*w) << (32 * i)))
    }

    /// The port value as `0x`-prefixed hex, zero-padded to the port width, for reports.
    pub fn hex(&self, words: &[u32]) -> String {
        words_to_hex(self.slice(words), self.width)
    }
}

/// Formats LSW-first words as `0x` hex with `ceil(width/4)` digits.
pub fn words_to_hex(words: &[u32], width: u32) -> String {
    let mut s: String = words.iter().rev().map(|w| format!("{w:08x}")).collect();
    let digits = (width.max(1) as usize).div_ceil(4);
    if s.len() > digits {
        s = s.split_off(s.len() - digits);
    }
    format!("0x{s}")
}

fn words_for(width: u32) -> usize {
    (width as usize).div_ceil(32)
}

impl PortMap {
    /// Builds a map from `(name, width)` lists, assigning word offsets in order.
    ///
    /// Lets hand-written models and tests describe a module without Verilog text.
    pub fn from_widths(module: &str, inputs: &[(&str, u32)], outputs: &[(&str, u32)]) -> PortMap {
        fn lay_out(list: &[(&str, u32)]) -> Vec<Port> {
            let mut off = 0;
            list.iter()
                .map(|(n, w)| {
                    let p = Port {
                        name: n.to_string(),
                        width: *w,
                        word_offset: off,
                    };
                    off += words_for(*w);
                    p
                })
                .collect()
        }
        PortMap {
            module: module.to_string(),
            inputs: lay_out(inputs),
            outputs: lay_out(outputs),
        }
    }

    /// Total input words per cycle.
    pub fn in_words(&self) -> usize {
        self.inputs.iter().map(Port::words).sum()
    }

    /// Total output words per cycle.
    pub fn out_words(&self) -> usize {
        self.outputs.iter().map(Port::words).sum()
    }

    /// Looks up an input port by name.
    pub fn input(&self, name: &str) -> Option<&Port> {
        self.inputs.iter().find(|p| p.name == name)
    }

    /// Looks up an output port by name.
    pub fn output(&self, name: &str) -> Option<&Port> {
        self.outputs.iter().find(|p| p.name == name)
    }

    /// True when both maps lay out the same ports the same way (the module name may differ).
    pub fn same_layout(&self, other: &PortMap) -> bool {
        self.inputs == other.inputs && self.outputs == other.outputs
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Num(String),
    Punct(char),
}

fn tokenize(text: &str) -> Vec<Tok> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
        } else if c == b'(' && b.get(i + 1) == Some(&b'*') && b.get(i + 2) != Some(&b')') {
            // (* attribute *)
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b')') {
                i += 1;
            }
            i += 2;
        } else if c == b'`' {
            // Compiler directive: skip the rest of the line.
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else if c == b'\\' {
            // Escaped identifier: up to whitespace.
            let s = i + 1;
            while i < b.len() && !b[i].is_ascii_whitespace() {
                i += 1;
            }
            out.push(Tok::Ident(text[s..i].to_string()));
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$') {
                i += 1;
            }
            out.push(Tok::Ident(text[s..i].to_string()));
        } else if c.is_ascii_digit() || c == b'\'' {
            // Numbers, including sized/based literals like 8'hFF or 'd3.
            let s = i;
            while i < b.len()
                && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'\'' || b[i] == b'?')
            {
                i += 1;
            }
            out.push(Tok::Num(text[s..i].to_string()));
        } else {
            out.push(Tok::Punct(c as char));
            i += 1;
        }
    }
    out
}

fn is_ident(t: Option<&Tok>, s: &str) -> bool {
    matches!(t, Some(Tok::Ident(x)) if x == s)
}

fn is_punct(t: Option<&Tok>, c: char) -> bool {
    matches!(t, Some(Tok::Punct(x)) if *x == c)
}

/// Index just past the bracket matching the opener at `start`.
fn skip_balanced(toks: &[Tok], start: usize, open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate().skip(start) {
        if is_punct(Some(t), open) {
            depth += 1;
        } else if is_punct(Some(t), close) {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(i + 1);
            }
        }
    }
    None
}

fn parse_number(s: &str) -> Option<i128> {
    let s = s.replace('_', "");
    if let Some(pos) = s.find('\'') {
        let rest = &s[pos + 1..];
        let rest = rest.trim_start_matches(['s', 'S']);
        let (radix, digits) = match rest.chars().next()? {
            'd' | 'D' => (10, &rest[1..]),
            'h' | 'H' => (16, &rest[1..]),
            'b' | 'B' => (2, &rest[1..]),
            'o' | 'O' => (8, &rest[1..]),
            _ => return None,
        };
        i128::from_str_radix(digits, radix).ok()
    } else {
        s.parse().ok()
    }
}

/// Tiny constant-expression evaluator for range bounds: integers, parameters, + - * and parens.
struct Expr<'a> {
    toks: &'a [Tok],
    pos: usize,
    params: &'a HashMap<String, i128>,
}

impl Expr<'_> {
    fn sum(&mut self) -> Option<i128> {
        let mut v = self.product()?;
        loop {
            match self.toks.get(self.pos) {
                Some(Tok::Punct('+')) => {
                    self.pos += 1;
                    v = v.checked_add(self.product()?)?;
                }
                Some(Tok::Punct('-')) => {
                    self.pos += 1;
                    v = v.checked_sub(self.product()?)?;
                }
                _ => return Some(v),
            }
        }
    }
    fn product(&mut self) -> Option<i128> {
        let mut v = self.atom()?;
        while is_punct(self.toks.get(self.pos), '*') {
            self.pos += 1;
            v = v.checked_mul(self.atom()?)?;
        }
        Some(v)
    }
    fn atom(&mut self) -> Option<i128> {
        let t = self.toks.get(self.pos)?.clone();
        self.pos += 1;
        match t {
            Tok::Num(n) => parse_number(&n),
            Tok::Ident(id) => self.params.get(&id).copied(),
            Tok::Punct('(') => {
                let v = self.sum()?;
                if !is_punct(self.toks.get(self.pos), ')') {
                    return None;
                }
                self.pos += 1;
                Some(v)
            }
            Tok::Punct('-') => self.atom().map(|v| -v),
            _ => None,
        }
    }
}

fn eval_expr(toks: &[Tok], params: &HashMap<String, i128>) -> Option<i128> {
    let mut e = Expr {
        toks,
        pos: 0,
        params,
    };
    let v = e.sum()?;
    (e.pos == toks.len()).then_some(v)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dir {
    In,
    Out,
    InOut,
}

fn direction(t: Option<&Tok>) -> Option<Dir> {
    match t {
        Some(Tok::Ident(s)) if s == "input" => Some(Dir::In),
        Some(Tok::Ident(s)) if s == "output" => Some(Dir::Out),
        Some(Tok::Ident(s)) if s == "inout" => Some(Dir::InOut),
        _ => None,
    }
}

const TYPE_WORDS: &[&str] = &[
    "wire", "reg", "logic", "var", "signed", "unsigned", "tri", "bit",
];

/// Parses `[type words] [range]` at `toks[i..]`, returning (width if a range was present, next index).
fn parse_type_and_range(
    toks: &[Tok],
    mut i: usize,
    params: &HashMap<String, i128>,
    module: &str,
) -> Result<(Option<u32>, usize), CosimError> {
    while matches!(toks.get(i), Some(Tok::Ident(s)) if TYPE_WORDS.contains(&s.as_str())) {
        i += 1;
    }
    if !is_punct(toks.get(i), '[') {
        return Ok((None, i));
    }
    let end = skip_balanced(toks, i, '[', ']')
        .ok_or_else(|| CosimError::parse(module, "unbalanced `[` in a port range"))?;
    let inner = &toks[i + 1..end - 1];
    let colon = inner
        .iter()
        .position(|t| is_punct(Some(t), ':'))
        .ok_or_else(|| CosimError::parse(module, "port range without `:`"))?;
    let msb = eval_expr(&inner[..colon], params);
    let lsb = eval_expr(&inner[colon + 1..], params);
    match (msb, lsb) {
        (Some(m), Some(l)) => {
            let w = (m - l).unsigned_abs() + 1;
            let w = u32::try_from(w)
                .map_err(|_| CosimError::parse(module, format!("port width {w} is too large")))?;
            // Packed multi-dimensional ports ([3:0][7:0] x) multiply out.
            let (more, next) = parse_type_and_range(toks, end, params, module)?;
            Ok((Some(w * more.unwrap_or(1)), next))
        }
        _ => Err(CosimError::parse(
            module,
            format!(
                "cannot evaluate port range `[{}]` (only integers, parameters, + - * are supported)",
                render(inner)
            ),
        )),
    }
}

fn render(toks: &[Tok]) -> String {
    toks.iter()
        .map(|t| match t {
            Tok::Ident(s) | Tok::Num(s) => s.clone(),
            Tok::Punct(c) => c.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Collects `parameter`/`localparam NAME = <const expr>` definitions in `toks`.
fn collect_params(toks: &[Tok], params: &mut HashMap<String, i128>) {
    let mut i = 0;
    while i < toks.len() {
        if is_ident(toks.get(i), "parameter") || is_ident(toks.get(i), "localparam") {
            let mut j = i + 1;
            // Skip an optional type and range.
            while matches!(toks.get(j), Some(Tok::Ident(s)) if TYPE_WORDS.contains(&s.as_str()) || s == "integer")
            {
                j += 1;
            }
            if is_punct(toks.get(j), '[') {
                j = skip_balanced(toks, j, '[', ']').unwrap_or(toks.len());
            }
            // NAME = expr {, NAME = expr}
            while let (Some(Tok::Ident(name)), true) = (toks.get(j), is_punct(toks.get(j + 1), '='))
            {
                let start = j + 2;
                let mut k = start;
                let mut depth = 0i32;
                while k < toks.len() {
                    match &toks[k] {
                        Tok::Punct('(') => depth += 1,
                        Tok::Punct(')') if depth == 0 => break,
                        Tok::Punct(')') => depth -= 1,
                        Tok::Punct(',') | Tok::Punct(';') if depth == 0 => break,
                        _ => {}
                    }
                    k += 1;
                }
                if let Some(v) = eval_expr(&toks[start..k], params) {
                    params.insert(name.clone(), v);
                }
                j = k;
                if is_punct(toks.get(j), ',') && is_ident(toks.get(j + 1), "parameter") {
                    j += 1;
                    break;
                }
                if is_punct(toks.get(j), ',') {
                    j += 1;
                } else {
                    break;
                }
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
}

/// Finds `module <module_name>` in Verilog text and returns its ports in header order.
///
/// Accepts the non-ANSI headers rust-hdl 0.46 emits (`module m(a,b); input wire [7:0] a; …`) and
/// ANSI headers. The `clock` input is required (the shim drives it) and left out of `inputs`.
pub fn parse_ports(verilog_text: &str, module_name: &str) -> Result<PortMap, CosimError> {
    let toks = tokenize(verilog_text);
    let m = module_name;
    // Locate the module header.
    let start = (0..toks.len())
        .find(|&i| {
            (is_ident(toks.get(i), "module") || is_ident(toks.get(i), "macromodule"))
                && is_ident(toks.get(i + 1), module_name)
        })
        .ok_or_else(|| CosimError::parse(m, "no `module` declaration with this name"))?;
    let end = (start..toks.len())
        .find(|&i| is_ident(toks.get(i), "endmodule"))
        .ok_or_else(|| CosimError::parse(m, "no `endmodule` after the module header"))?;
    let toks = &toks[start + 2..end];

    let mut params = HashMap::new();
    let mut i = 0;
    if is_punct(toks.get(i), '#') {
        let close = skip_balanced(toks, i + 1, '(', ')')
            .ok_or_else(|| CosimError::parse(m, "unbalanced parameter list"))?;
        collect_params(&toks[i + 2..close - 1], &mut params);
        i = close;
    }
    let mut header: Vec<(String, Option<(Dir, u32)>)> = Vec::new();
    let body_start;
    if is_punct(toks.get(i), '(') {
        let close = skip_balanced(toks, i, '(', ')')
            .ok_or_else(|| CosimError::parse(m, "unbalanced port list"))?;
        let list = &toks[i + 1..close - 1];
        body_start = close;
        collect_params(&toks[body_start..], &mut params);
        // Split at top-level commas.
        let mut items: Vec<&[Tok]> = Vec::new();
        let (mut s, mut depth) = (0usize, 0i32);
        for (k, t) in list.iter().enumerate() {
            match t {
                Tok::Punct('(') | Tok::Punct('[') | Tok::Punct('{') => depth += 1,
                Tok::Punct(')') | Tok::Punct(']') | Tok::Punct('}') => depth -= 1,
                Tok::Punct(',') if depth == 0 => {
                    items.push(&list[s..k]);
                    s = k + 1;
                }
                _ => {}
            }
        }
        if s < list.len() {
            items.push(&list[s..]);
        }
        let mut ansi: Option<(Dir, u32)> = None;
        for item in items {
            if let Some(dir) = direction(item.first()) {
                let (w, next) = parse_type_and_range(item, 1, &params, m)?;
                let Some(Tok::Ident(name)) = item.get(next) else {
                    return Err(CosimError::parse(
                        m,
                        format!("cannot read ANSI port `{}`", render(item)),
                    ));
                };
                ansi = Some((dir, w.unwrap_or(1)));
                header.push((name.clone(), ansi));
            } else if let [Tok::Ident(name)] = item {
                header.push((name.clone(), ansi));
            } else {
                return Err(CosimError::parse(
                    m,
                    format!("unsupported port list item `{}`", render(item)),
                ));
            }
        }
    } else {
        body_start = i;
        collect_params(&toks[body_start..], &mut params);
    }

    // Non-ANSI body declarations: `input [wire|reg] [range] a, b;` and `reg [range] a;`.
    let body = &toks[body_start..];
    let mut dirs: HashMap<String, (Dir, Option<u32>)> = HashMap::new();
    let mut net_widths: HashMap<String, u32> = HashMap::new();
    let mut k = 0;
    let mut at_stmt_start = true;
    let mut skip_until: Option<&str> = None;
    while k < body.len() {
        if let Some(end_kw) = skip_until {
            if is_ident(body.get(k), end_kw) {
                skip_until = None;
                at_stmt_start = true;
            }
            k += 1;
            continue;
        }
        if is_ident(body.get(k), "function") {
            skip_until = Some("endfunction");
            k += 1;
            continue;
        }
        if is_ident(body.get(k), "task") {
            skip_until = Some("endtask");
            k += 1;
            continue;
        }
        let dir = direction(body.get(k));
        let is_net =
            matches!(body.get(k), Some(Tok::Ident(s)) if s == "wire" || s == "reg" || s == "logic");
        if at_stmt_start && (dir.is_some() || is_net) {
            let (w, mut next) = parse_type_and_range(body, k + 1, &params, m)?;
            // Name list up to `;` (ignoring initialisers).
            let mut names = Vec::new();
            let mut expect_name = true;
            while next < body.len() && !is_punct(body.get(next), ';') {
                match &body[next] {
                    Tok::Ident(n) if expect_name => {
                        names.push(n.clone());
                        expect_name = false;
                    }
                    Tok::Punct(',') => expect_name = true,
                    _ => {}
                }
                next += 1;
            }
            for n in names {
                match dir {
                    Some(d) => {
                        dirs.insert(n, (d, w));
                    }
                    None => {
                        if let Some(w) = w {
                            net_widths.insert(n, w);
                        }
                    }
                }
            }
            k = next + 1;
            at_stmt_start = true;
            continue;
        }
        at_stmt_start = is_punct(body.get(k), ';')
            || matches!(body.get(k), Some(Tok::Ident(s)) if s == "begin" || s == "end");
        k += 1;
    }

    let mut map = PortMap {
        module: module_name.to_string(),
        inputs: Vec::new(),
        outputs: Vec::new(),
    };
    let (mut in_off, mut out_off) = (0usize, 0usize);
    let mut saw_clock = false;
    for (name, ansi) in header {
        let (dir, width) = match ansi {
            Some(dw) => dw,
            None => {
                let (d, w) = dirs.get(&name).copied().ok_or_else(|| {
                    CosimError::parse(m, format!("port `{name}` has no input/output declaration"))
                })?;
                (d, w.or_else(|| net_widths.get(&name).copied()).unwrap_or(1))
            }
        };
        if width == 0 {
            return Err(CosimError::parse(
                m,
                format!("port `{name}` has zero width"),
            ));
        }
        match dir {
            Dir::InOut => {
                return Err(CosimError::parse(
                    m,
                    format!("inout port `{name}` is not supported by the cosim shim"),
                ))
            }
            Dir::In if name == CLOCK_PORT => {
                if width != 1 {
                    return Err(CosimError::parse(
                        m,
                        format!("the `{CLOCK_PORT}` input must be 1 bit, found {width}"),
                    ));
                }
                saw_clock = true;
            }
            Dir::In => {
                let p = Port {
                    name,
                    width,
                    word_offset: in_off,
                };
                in_off += p.words();
                map.inputs.push(p);
            }
            Dir::Out => {
                let p = Port {
                    name,
                    width,
                    word_offset: out_off,
                };
                out_off += p.words();
                map.outputs.push(p);
            }
        }
    }
    if !saw_clock {
        return Err(CosimError::parse(
            m,
            format!(
                "no 1-bit `{CLOCK_PORT}` input: the cosim shim drives a port named `{CLOCK_PORT}`"
            ),
        ));
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARB: &str = r#"
module ev_spray_arbiter(clock,rst,req,plane_ready,grant_ev,grant_valid,wide);
    // Module arguments
    input wire  clock;
    input wire  rst;
    input wire  [3:0] req;
    input wire  [7:0] plane_ready;
    output reg  [31:0] grant_ev;
    output reg  grant_valid;
    output wire [127:0] wide;
    /* a comment with input wire fake; */
    reg [3:0] state$next;
    always @(posedge clock) state$next <= req;
endmodule // ev_spray_arbiter
module other(clock, x); input wire clock; input wire [99:0] x; endmodule
"#;

    #[test]
    fn parses_non_ansi_rust_hdl_header() {
        let pm = parse_ports(ARB, "ev_spray_arbiter").unwrap();
        let ins: Vec<_> = pm
            .inputs
            .iter()
            .map(|p| (p.name.as_str(), p.width, p.word_offset))
            .collect();
        assert_eq!(
            ins,
            vec![("rst", 1, 0), ("req", 4, 1), ("plane_ready", 8, 2)]
        );
        let outs: Vec<_> = pm
            .outputs
            .iter()
            .map(|p| (p.name.as_str(), p.width, p.word_offset))
            .collect();
        assert_eq!(
            outs,
            vec![("grant_ev", 32, 0), ("grant_valid", 1, 1), ("wide", 128, 2)]
        );
        assert_eq!(pm.in_words(), 3);
        assert_eq!(pm.out_words(), 6);
        let other = parse_ports(ARB, "other").unwrap();
        assert_eq!(other.inputs[0].width, 100);
        assert_eq!(other.in_words(), 4);
    }

    #[test]
    fn parses_ansi_header_with_parameters() {
        let v =
            "module a #(parameter W = 12, parameter N=2) (input wire clock, input [W-1:0] x, y,\n\
                 output reg [N*W-1:0] z, output logic v);\nendmodule";
        let pm = parse_ports(v, "a").unwrap();
        assert_eq!(pm.inputs.len(), 2);
        assert_eq!(pm.input("y").unwrap().width, 12);
        assert_eq!(pm.output("z").unwrap().width, 24);
        assert_eq!(pm.output("v").unwrap().width, 1);
    }

    #[test]
    fn verilog_1995_width_on_reg_declaration() {
        let v = "module b(clock, q); input clock; output q; reg [5:0] q; endmodule";
        assert_eq!(parse_ports(v, "b").unwrap().outputs[0].width, 6);
    }

    #[test]
    fn errors_are_specific() {
        let e = parse_ports(ARB, "nope").unwrap_err().to_string();
        assert!(e.contains("nope") && e.contains("no `module`"), "{e}");
        let e = parse_ports("module c(x); input x; endmodule", "c")
            .unwrap_err()
            .to_string();
        assert!(e.contains("clock"), "{e}");
        let e = parse_ports("module d(clock, y); input clock; endmodule", "d")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`y`"), "{e}");
    }

    #[test]
    fn word_helpers_mask_and_round_trip() {
        let pm = PortMap::from_widths("t", &[("a", 5), ("b", 40), ("c", 100)], &[]);
        let mut w = vec![0u32; pm.in_words()];
        assert_eq!(w.len(), 1 + 2 + 4);
        let (a, b, c) = (&pm.inputs[0], &pm.inputs[1], &pm.inputs[2]);
        a.set(&mut w, 0xff);
        assert_eq!(a.get(&w), 0x1f);
        b.set(&mut w, u64::MAX);
        assert_eq!(b.get(&w), (1 << 40) - 1);
        b.set(&mut w, 0x12_3456_789a);
        assert_eq!(b.get(&w), 0x12_3456_789a);
        c.set_u128(&mut w, u128::MAX);
        assert_eq!(c.get_u128(&w), (1u128 << 100) - 1);
        assert_eq!(c.slice(&w)[3], 0xf);
        assert_eq!(c.hex(&w), format!("0x{}", "f".repeat(25)));
        assert_eq!(a.hex(&w), "0x1f");
        assert_eq!(b.hex(&w), "0x123456789a");
        assert_eq!(words_to_hex(&[1], 1), "0x1");
    }

    #[test]
    #[should_panic(expected = "use get_u128")]
    fn get_refuses_wide_ports() {
        let pm = PortMap::from_widths("t", &[("c", 100)], &[]);
        pm.inputs[0].get(&[0; 4]);
    }
}
