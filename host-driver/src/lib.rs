//! Host driver for mrc-nic: MMIO through a [`Bar`], typed register accessors generated from
//! the one register map (`mrc-regmap`; `build.rs` writes the [`regs`] module, so no offset is
//! typed here), and [`walk_blocks`], which follows the TYPE / VERSION / NEXT chain from BAR
//! offset 0.
//!
//! ```text
//! use mrc_host_driver::{read, write, regs};
//! write(&bar, regs::xport::RTO_EXP, 6)?;
//! let cwnd = read(&bar, regs::nscc::CWND)?;
//! let state = read_field(&bar, regs::evt::EV_STATE, regs::evt::ev_state::STATE)?;
//! ```
//!
//! The driver API is [`device::Device`], generic over a [`device::Backend`] (a `Bar` plus a
//! reset and host memory the device reaches by DMA): open / reset (reset pulse, block check,
//! ring set-up), QPs, the EV profile, transport parameters, RDMA WRITEs through the SQ ring
//! and its doorbell, completions from the CQ ring, counters and the EV event queue. The ring
//! descriptors and the doorbell page are in [`queue`].
//!
//! Backends: [`cosim::CosimDevice`] wraps anything implementing
//! `mrc_model::mrc_core::CoreSim` (the golden model now, the Verilated RTL later) with a BAR
//! model, host memory and a DMA / queue engine model; [`linux::LinuxBar`] maps a PCI BAR from
//! its sysfs resource file (typed [`linux::OpenError`] when no device is present; MMIO only,
//! no DMA memory yet, so not a `Backend`). The tests run the driver against the model core
//! (two devices back to back), the `mrc_csr` cycle model behind the trait, and the Linux
//! backend against a fake sysfs tree.

use std::fmt;

pub mod cosim;
pub mod device;
pub mod linux;
pub mod queue;

pub use cosim::memory::MemError;

/// Generated register and field constants, one module per block (`regs::csr`, `regs::qp`,
/// `regs::xport`, `regs::evt`, `regs::nscc`, `regs::cnt`, `regs::evq`), plus [`regs::BLOCKS`].
pub mod regs {
    use super::{Access, Field, KnownBlock, Reg};
    include!(concat!(env!("OUT_DIR"), "/regs.rs"));
}

/// Offsets of the block header registers.
const TYPE_OFFSET: u32 = regs::csr::TYPE.offset;
const VERSION_OFFSET: u32 = regs::csr::VERSION.offset;
const NEXT_OFFSET: u32 = regs::csr::NEXT.offset;

/// Register access kinds (the map's `Access`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Const,
    Ro,
    Rw,
    W1c,
    Wo,
    Stat,
}

/// One register: where it is and how it may be accessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reg {
    pub block: &'static str,
    pub name: &'static str,
    /// BAR byte offset.
    pub offset: u32,
    pub width: u32,
    pub access: Access,
}

impl Reg {
    pub fn mask(&self) -> u32 {
        if self.width >= 32 {
            u32::MAX
        } else {
            (1 << self.width) - 1
        }
    }
}

/// A bit range of a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub lsb: u32,
    pub width: u32,
}

impl Field {
    /// The field's bits, not shifted.
    pub fn mask(&self) -> u32 {
        if self.width >= 32 {
            u32::MAX
        } else {
            (1 << self.width) - 1
        }
    }
    pub fn get(&self, reg_value: u32) -> u32 {
        (reg_value >> self.lsb) & self.mask()
    }
}

/// A block the driver was built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownBlock {
    pub name: &'static str,
    pub type_id: u32,
    pub version: u32,
    pub base: u32,
}

/// A failed bus access (the device answered with an error response: SLVERR; or, for
/// [`linux::LinuxBar`], an offset that is misaligned or past the BAR, refused before any access).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BusError {
    pub offset: u32,
    pub write: bool,
}

impl fmt::Display for BusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = if self.write { "write" } else { "read" };
        write!(f, "MMIO {op} at {:#05x} refused by the device", self.offset)
    }
}

impl std::error::Error for BusError {}

/// A 32-bit MMIO window (a PCIe BAR, or a model of one).
pub trait Bar {
    fn read32(&self, offset: u32) -> Result<u32, BusError>;
    fn write32(&self, offset: u32, value: u32) -> Result<(), BusError>;
}

/// What the driver refuses or found wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverError {
    Bus(BusError),
    /// A write to a CONST / RO / STAT register.
    NotWritable {
        block: &'static str,
        reg: &'static str,
    },
    /// A read of a write-only strobe register.
    NotReadable {
        block: &'static str,
        reg: &'static str,
    },
    /// A value with bits above the register's (or field's) width.
    TooWide {
        block: &'static str,
        reg: &'static str,
        value: u32,
        width: u32,
    },
    /// The NEXT chain names an offset that is not 0x100-aligned or is past the BAR.
    BadNext {
        at: u32,
        next: u32,
    },
    /// The NEXT chain comes back to a block it visited.
    ChainLoop {
        at: u32,
    },
    /// A known TYPE found at another offset or version than the driver was built for.
    Mismatch {
        name: &'static str,
        expected: KnownBlock,
        found: FoundBlock,
    },
    /// A block the driver needs is not in the chain.
    Missing {
        name: &'static str,
    },
    /// The device did not answer an MMIO access within the backend's bound.
    Timeout {
        offset: u32,
        write: bool,
        cycles: u32,
    },
    /// A ring has no free entry (the device has not fetched the older ones yet).
    RingFull {
        ring: &'static str,
        entries: u32,
    },
    /// An argument the driver refuses before touching the device.
    BadArgument {
        what: &'static str,
        value: u64,
    },
    /// A QP number >= CSR.QPS.
    QpOutOfRange {
        qp: u32,
        qps: u32,
    },
    /// A host-memory access outside the DMA buffer.
    Mem(MemError),
    /// A CQE with a status code the driver does not know.
    BadCqe {
        index: u32,
        status: u8,
    },
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DriverError::Bus(e) => write!(f, "{e}"),
            DriverError::NotWritable { block, reg } => write!(f, "{block}.{reg} is read-only"),
            DriverError::NotReadable { block, reg } => write!(f, "{block}.{reg} is write-only"),
            DriverError::TooWide {
                block,
                reg,
                value,
                width,
            } => {
                write!(f, "{value:#x} does not fit {block}.{reg} ({width} bits)")
            }
            DriverError::BadNext { at, next } => {
                write!(
                    f,
                    "block at {at:#05x}: NEXT = {next:#x} is not a block offset in the BAR"
                )
            }
            DriverError::ChainLoop { at } => write!(f, "NEXT chain loops back to {at:#05x}"),
            DriverError::Mismatch {
                name,
                expected,
                found,
            } => write!(
                f,
                "block {name}: expected version {} at {:#05x}, found version {} at {:#05x}",
                expected.version, expected.base, found.version, found.offset
            ),
            DriverError::Missing { name } => write!(f, "block {name} not found in the NEXT chain"),
            DriverError::Timeout {
                offset,
                write,
                cycles,
            } => {
                let op = if *write { "write" } else { "read" };
                write!(
                    f,
                    "MMIO {op} at {offset:#05x}: no response within {cycles} cycles"
                )
            }
            DriverError::RingFull { ring, entries } => {
                write!(f, "{ring} ring full ({entries} entries outstanding)")
            }
            DriverError::BadArgument { what, value } => write!(f, "bad {what}: {value:#x}"),
            DriverError::QpOutOfRange { qp, qps } => {
                write!(f, "QP {qp} out of range: the device serves {qps} QPs")
            }
            DriverError::Mem(e) => write!(f, "{e}"),
            DriverError::BadCqe { index, status } => {
                write!(f, "CQE {index} has unknown status {status}")
            }
        }
    }
}

impl std::error::Error for DriverError {}

impl From<MemError> for DriverError {
    fn from(e: MemError) -> Self {
        DriverError::Mem(e)
    }
}

impl From<BusError> for DriverError {
    fn from(e: BusError) -> Self {
        DriverError::Bus(e)
    }
}

/// Read a register (refuses WO strobes, which read 0).
pub fn read(bar: &dyn Bar, reg: Reg) -> Result<u32, DriverError> {
    if reg.access == Access::Wo {
        return Err(DriverError::NotReadable {
            block: reg.block,
            reg: reg.name,
        });
    }
    Ok(bar.read32(reg.offset)? & reg.mask())
}

/// Read one field of a register.
pub fn read_field(bar: &dyn Bar, reg: Reg, field: Field) -> Result<u32, DriverError> {
    Ok(field.get(read(bar, reg)?))
}

/// Write a register (refuses read-only registers and values wider than the register).
pub fn write(bar: &dyn Bar, reg: Reg, value: u32) -> Result<(), DriverError> {
    if !matches!(reg.access, Access::Rw | Access::W1c | Access::Wo) {
        return Err(DriverError::NotWritable {
            block: reg.block,
            reg: reg.name,
        });
    }
    if value & !reg.mask() != 0 {
        return Err(DriverError::TooWide {
            block: reg.block,
            reg: reg.name,
            value,
            width: reg.width,
        });
    }
    Ok(bar.write32(reg.offset, value)?)
}

/// Read-modify-write one field of an RW register.
pub fn write_field(bar: &dyn Bar, reg: Reg, field: Field, value: u32) -> Result<(), DriverError> {
    if value & !field.mask() != 0 {
        return Err(DriverError::TooWide {
            block: reg.block,
            reg: reg.name,
            value,
            width: field.width,
        });
    }
    if reg.access != Access::Rw {
        return Err(DriverError::NotWritable {
            block: reg.block,
            reg: reg.name,
        });
    }
    let old = read(bar, reg)?;
    let v = (old & !(field.mask() << field.lsb)) | (value << field.lsb);
    write(bar, reg, v)
}

/// A block found by [`walk_blocks`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FoundBlock {
    /// BAR byte offset.
    pub offset: u32,
    pub type_id: u32,
    pub version: u32,
    pub next: u32,
    /// The name, if the TYPE id is one the driver was built for.
    pub name: Option<&'static str>,
}

/// Follow TYPE / VERSION / NEXT from BAR offset 0 and return the blocks in chain order. Stops
/// at NEXT = 0; refuses a NEXT that is not a 0x100-aligned offset inside the BAR, and a loop.
pub fn walk_blocks(bar: &dyn Bar) -> Result<Vec<FoundBlock>, DriverError> {
    let stride = regs::BLOCKS.get(1).map_or(0x100, |b| b.base);
    let mut found: Vec<FoundBlock> = Vec::new();
    let mut at = 0u32;
    loop {
        if found.iter().any(|b| b.offset == at) {
            return Err(DriverError::ChainLoop { at });
        }
        let type_id = bar.read32(at + TYPE_OFFSET)?;
        let b = FoundBlock {
            offset: at,
            type_id,
            version: bar.read32(at + VERSION_OFFSET)?,
            next: bar.read32(at + NEXT_OFFSET)?,
            name: regs::BLOCKS
                .iter()
                .find(|k| k.type_id == type_id)
                .map(|k| k.name),
        };
        found.push(b);
        if b.next == 0 {
            return Ok(found);
        }
        if !b.next.is_multiple_of(stride) || b.next >= regs::BAR_SIZE {
            return Err(DriverError::BadNext { at, next: b.next });
        }
        at = b.next;
    }
}

/// Walk the chain and check that every block the driver was built for is there, at its
/// offset, with its version (unknown extra blocks are allowed).
pub fn check_blocks(bar: &dyn Bar) -> Result<Vec<FoundBlock>, DriverError> {
    let found = walk_blocks(bar)?;
    for k in regs::BLOCKS {
        let Some(f) = found.iter().find(|f| f.type_id == k.type_id) else {
            return Err(DriverError::Missing { name: k.name });
        };
        if f.offset != k.base || f.version != k.version {
            return Err(DriverError::Mismatch {
                name: k.name,
                expected: *k,
                found: *f,
            });
        }
    }
    Ok(found)
}
