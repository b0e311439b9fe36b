//! The one register map of mrc-nic.
//!
//! [`build`] describes every register block once, as Rust tables (`map.rs`): name, byte
//! offset, width, access, reset value (computed from the [`NicConfig`] where the config holds
//! the value) and field docs. Everything else is generated from it: the C header
//! ([`gen::c_header`]), the Markdown reference ([`gen::markdown`]), JSON ([`gen::json`]), the
//! host driver's typed accessors (`mrc-host-driver`'s build script) and the CSR cycle model
//! (`mrc-model`'s `mrc_csr`). [`validate`] checks a map; a test runs it over the built map for
//! every example config.
//!
//! Every block begins with three constant registers: `TYPE` (a 32-bit block id, four ASCII
//! characters), `VERSION` and `NEXT` (the BAR byte offset of the next block, 0 on the last), so
//! a driver can walk the chain from offset 0. The layout (names, offsets, widths, access) does
//! not depend on the config; only reset values and `Const` values do.

use mrc_config::NicConfig;
use serde::Serialize;
use std::fmt;

pub mod gen;
mod map;

pub use map::build;

/// Bytes of BAR the map spans; every offset at or above it is unmapped.
pub const BAR_SIZE: u32 = 0x800;
/// Bytes between block bases.
pub const BLOCK_STRIDE: u32 = 0x100;
/// Offsets of the three header registers inside every block.
pub const TYPE_OFFSET: u32 = 0x0;
pub const VERSION_OFFSET: u32 = 0x4;
pub const NEXT_OFFSET: u32 = 0x8;

/// How software and hardware reach a register.
///
/// Every write must be a full 32-bit word at a 4-aligned offset (all four strobes); bits above
/// the register's width are ignored on write and read as 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Access {
    /// Read-only constant fixed at generation time (the reset value): block headers and
    /// config facts. A write is refused (SLVERR).
    Const,
    /// Read-only, driven by hardware (a status or counter input of the CSR block). A write is
    /// refused (SLVERR).
    Ro,
    /// Read/write, held in the CSR block, drives hardware.
    Rw,
    /// Sticky status bits: hardware sets bits; software writes 1 to a bit to clear it.
    W1c,
    /// Write-only strobe: a write hands the data to hardware for one clock; reads return 0.
    Wo,
    /// Read-only, maintained by the CSR block itself (the bad-access counter). A write is
    /// refused (SLVERR).
    Stat,
}

impl Access {
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Const => "CONST",
            Access::Ro => "RO",
            Access::Rw => "RW",
            Access::W1c => "W1C",
            Access::Wo => "WO",
            Access::Stat => "STAT",
        }
    }

    /// Whether a write to a register of this kind is accepted.
    pub fn writable(self) -> bool {
        matches!(self, Access::Rw | Access::W1c | Access::Wo)
    }
}

/// A named bit range of a register.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Field {
    pub name: &'static str,
    pub lsb: u32,
    pub width: u32,
    pub doc: &'static str,
}

impl Field {
    /// The field's bits in place (shifted by `lsb`).
    pub fn mask(&self) -> u32 {
        mask(self.width) << self.lsb
    }
}

/// One register.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Register {
    pub name: &'static str,
    /// Byte offset inside the block.
    pub offset: u32,
    /// Implemented bits, 1..=32, from bit 0.
    pub width: u32,
    pub access: Access,
    /// Value after reset (for `Const`: the value).
    pub reset: u32,
    pub doc: &'static str,
    /// Named bit ranges; empty when the register is one value.
    pub fields: Vec<Field>,
}

impl Register {
    /// The implemented bits.
    pub fn mask(&self) -> u32 {
        mask(self.width)
    }
}

/// One register block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Block {
    pub name: &'static str,
    /// Value of the block's `TYPE` register.
    pub type_id: u32,
    /// Value of the block's `VERSION` register.
    pub version: u32,
    /// BAR byte offset of the block.
    pub base: u32,
    /// Bytes the block spans.
    pub size: u32,
    pub doc: &'static str,
    /// Registers, `TYPE`, `VERSION`, `NEXT` first.
    pub regs: Vec<Register>,
}

impl Block {
    pub fn reg(&self, name: &str) -> Option<&Register> {
        self.regs.iter().find(|r| r.name == name)
    }
}

/// The whole map: blocks in chain order from BAR offset 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegMap {
    pub bar_size: u32,
    pub blocks: Vec<Block>,
}

/// A register located in the BAR.
#[derive(Debug, Clone, Copy)]
pub struct Located<'a> {
    pub block: &'a Block,
    pub reg: &'a Register,
    /// BAR byte offset.
    pub addr: u32,
}

impl RegMap {
    pub fn block(&self, name: &str) -> Option<&Block> {
        self.blocks.iter().find(|b| b.name == name)
    }

    /// Look a register up by block and register name.
    pub fn find(&self, block: &str, reg: &str) -> Option<Located<'_>> {
        let b = self.block(block)?;
        let r = b.reg(reg)?;
        Some(Located {
            block: b,
            reg: r,
            addr: b.base + r.offset,
        })
    }

    /// The register at BAR byte offset `addr` (exact match), if any.
    pub fn at(&self, addr: u32) -> Option<Located<'_>> {
        self.registers().find(|l| l.addr == addr)
    }

    /// Every register in BAR order.
    pub fn registers(&self) -> impl Iterator<Item = Located<'_>> {
        self.blocks.iter().flat_map(|b| {
            b.regs.iter().map(move |r| Located {
                block: b,
                reg: r,
                addr: b.base + r.offset,
            })
        })
    }

    /// The map with reset values and constants removed: what must not change with the config.
    pub fn layout(&self) -> Vec<(&'static str, &'static str, u32, u32, Access)> {
        self.registers()
            .map(|l| (l.block.name, l.reg.name, l.addr, l.reg.width, l.reg.access))
            .collect()
    }
}

/// `width` low bits set (`width` <= 32).
pub fn mask(width: u32) -> u32 {
    if width >= 32 {
        u32::MAX
    } else {
        (1u32 << width) - 1
    }
}

/// Four ASCII characters as a block id, first character in the high byte.
pub const fn fourcc(s: &[u8; 4]) -> u32 {
    (s[0] as u32) << 24 | (s[1] as u32) << 16 | (s[2] as u32) << 8 | s[3] as u32
}

/// Why a map is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapError {
    /// `BLOCK` or `BLOCK.REG` or `BLOCK.REG.FIELD`.
    pub at: String,
    pub reason: String,
}

impl fmt::Display for MapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.reason)
    }
}

impl std::error::Error for MapError {}

fn err<T>(at: impl Into<String>, reason: impl Into<String>) -> Result<T, MapError> {
    Err(MapError {
        at: at.into(),
        reason: reason.into(),
    })
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Check a map: names (upper-case C identifiers, unique), block bases and sizes (aligned to
/// `BLOCK_STRIDE`, inside the BAR, not overlapping), registers (4-aligned, inside the block,
/// no two at one offset, width 1..=32, reset value inside the width, header registers first
/// with the right values), fields (inside the width, not overlapping, named), and the NEXT
/// chain (starts at offset 0, visits every block exactly once, ends with 0).
pub fn validate(map: &RegMap) -> Result<(), MapError> {
    if map.blocks.is_empty() {
        return err("map", "no blocks");
    }
    let mut seen_names = Vec::new();
    let mut seen_types = Vec::new();
    for b in &map.blocks {
        if !is_ident(b.name) {
            return err(b.name, "block name must be an upper-case identifier");
        }
        if seen_names.contains(&b.name) {
            return err(b.name, "duplicate block name");
        }
        seen_names.push(b.name);
        if seen_types.contains(&b.type_id) {
            return err(b.name, format!("duplicate TYPE id {:#010x}", b.type_id));
        }
        seen_types.push(b.type_id);
        if b.base % BLOCK_STRIDE != 0 || b.size == 0 || b.size % BLOCK_STRIDE != 0 {
            return err(
                b.name,
                format!(
                    "base {:#x} and size {:#x} must be multiples of {BLOCK_STRIDE:#x}",
                    b.base, b.size
                ),
            );
        }
        if b.base
            .checked_add(b.size)
            .is_none_or(|end| end > map.bar_size)
        {
            return err(
                b.name,
                format!("block ends past the BAR ({:#x} bytes)", map.bar_size),
            );
        }
        for o in &map.blocks {
            if o.name != b.name && b.base < o.base + o.size && o.base < b.base + b.size {
                return err(b.name, format!("overlaps block {}", o.name));
            }
        }
        let header = [
            ("TYPE", TYPE_OFFSET),
            ("VERSION", VERSION_OFFSET),
            ("NEXT", NEXT_OFFSET),
        ];
        for (i, (name, off)) in header.iter().enumerate() {
            match b.regs.get(i) {
                Some(r)
                    if r.name == *name
                        && r.offset == *off
                        && r.access == Access::Const
                        && r.width == 32 => {}
                _ => {
                    return err(
                        b.name,
                        format!("register {i} must be {name} at {off:#x}, CONST, 32 bits"),
                    )
                }
            }
        }
        if b.regs[0].reset != b.type_id || b.regs[1].reset != b.version {
            return err(
                b.name,
                "TYPE / VERSION values differ from the block's type_id / version",
            );
        }
        let mut reg_names = Vec::new();
        for r in &b.regs {
            let at = format!("{}.{}", b.name, r.name);
            if !is_ident(r.name) {
                return err(at, "register name must be an upper-case identifier");
            }
            if reg_names.contains(&r.name) {
                return err(at, "duplicate register name");
            }
            reg_names.push(r.name);
            if r.offset % 4 != 0 {
                return err(at, format!("offset {:#x} is not 4-aligned", r.offset));
            }
            if r.offset >= b.size {
                return err(
                    at,
                    format!(
                        "offset {:#x} outside the block ({:#x} bytes)",
                        r.offset, b.size
                    ),
                );
            }
            if let Some(o) = b
                .regs
                .iter()
                .find(|o| o.name != r.name && o.offset == r.offset)
            {
                return err(at, format!("same offset as {}", o.name));
            }
            if !(1..=32).contains(&r.width) {
                return err(at, format!("width {} not in 1..=32", r.width));
            }
            if r.reset & !r.mask() != 0 {
                return err(
                    at,
                    format!("reset value {:#x} does not fit {} bits", r.reset, r.width),
                );
            }
            if r.doc.is_empty() {
                return err(at, "no doc");
            }
            let mut used = 0u32;
            let mut field_names = Vec::new();
            for f in &r.fields {
                let fat = format!("{at}.{}", f.name);
                if !is_ident(f.name) || field_names.contains(&f.name) {
                    return err(fat, "field name must be a unique upper-case identifier");
                }
                field_names.push(f.name);
                if f.width == 0 || f.lsb + f.width > r.width {
                    return err(
                        fat,
                        format!(
                            "bits [{}+{}] outside the register's {} bits",
                            f.lsb, f.width, r.width
                        ),
                    );
                }
                if used & f.mask() != 0 {
                    return err(fat, "overlaps another field");
                }
                used |= f.mask();
            }
        }
    }
    // The NEXT chain from offset 0.
    let mut visited = Vec::new();
    let mut at = 0u32;
    loop {
        let Some(b) = map.blocks.iter().find(|b| b.base == at) else {
            return err(
                "NEXT",
                format!("chain names {at:#x}, where no block starts"),
            );
        };
        if visited.contains(&b.name) {
            return err(b.name, "NEXT chain loops");
        }
        visited.push(b.name);
        at = b.regs[2].reset;
        if at == 0 {
            break;
        }
    }
    if visited.len() != map.blocks.len() {
        let missed: Vec<_> = map
            .blocks
            .iter()
            .filter(|b| !visited.contains(&b.name))
            .map(|b| b.name)
            .collect();
        return err("NEXT", format!("chain misses blocks {missed:?}"));
    }
    Ok(())
}

/// Build the map for `cfg` and validate it (the built map is always valid; a failure is a bug
/// in `map.rs`, which the tests catch).
pub fn build_checked(cfg: &NicConfig) -> Result<RegMap, MapError> {
    let m = build(cfg);
    validate(&m)?;
    Ok(m)
}

#[cfg(test)]
mod tests;
