//! The `linux` backend: a PCI BAR mapped from its sysfs resource file
//! (`/sys/bus/pci/devices/<DDDD:BB:DD.F>/resource<N>`), accessed with volatile 32-bit loads
//! and stores.
//!
//! ```text
//! let bar = LinuxBar::open("0000:03:00.0", 0)?;   // typed OpenError when no card is there
//! println!("{:04x}:{:04x}, {} bytes", bar.vendor(), bar.device(), bar.len());
//! let blocks = mrc_host_driver::check_blocks(&bar)?;
//! ```
//!
//! [`LinuxBar::open_path`] takes the sysfs root, so the tests map a regular file in a fake tree
//! (no hardware needed). The mapping needs a Unix host (`libc::mmap`); elsewhere the crate
//! still compiles and opening fails with [`OpenError::Mmap`].

use crate::{Bar, BusError};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

/// Where Linux lists PCI devices.
pub const SYSFS_PCI_DEVICES: &str = "/sys/bus/pci/devices";

/// Why a BAR could not be opened. Every variant names the path it concerns.
#[derive(Debug)]
pub enum OpenError {
    /// Not a `DDDD:BB:DD.F` address (hex domain, bus, device <= 1f, function <= 7).
    BadBdf { bdf: String },
    /// No device directory at `path`.
    NoDevice { path: PathBuf },
    /// The device has no `resource<bar>` file (PCI BARs are 0..=5).
    NoSuchBar { path: PathBuf, bar: u8 },
    /// The file exists but this process may not open it.
    PermissionDenied { path: PathBuf },
    /// The resource file has length 0 (an unimplemented BAR).
    EmptyResource { path: PathBuf },
    /// A `vendor` / `device` file that does not hold a hex id.
    BadId { path: PathBuf, text: String },
    /// `mmap` refused the resource file.
    Mmap { path: PathBuf, source: io::Error },
    /// Another I/O error on `path`.
    Io { path: PathBuf, source: io::Error },
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::BadBdf { bdf } => write!(
                f,
                "{bdf:?} is not a PCI address: expected DDDD:BB:DD.F in hex (e.g. 0000:03:00.0)"
            ),
            OpenError::NoDevice { path } => write!(
                f,
                "no PCI device at {}; is the card installed and the driver unbound?",
                path.display()
            ),
            OpenError::NoSuchBar { path, bar } => write!(
                f,
                "no BAR {bar}: {} does not exist (the device does not implement that BAR)",
                path.display()
            ),
            OpenError::PermissionDenied { path } => write!(
                f,
                "permission denied opening {}; run as root or give this user read/write access to it",
                path.display()
            ),
            OpenError::EmptyResource { path } => write!(
                f,
                "{} has length 0: the BAR is not implemented or not assigned",
                path.display()
            ),
            OpenError::BadId { path, text } => {
                write!(f, "{}: {text:?} is not a hex PCI id", path.display())
            }
            OpenError::Mmap { path, source } => {
                write!(f, "cannot mmap {}: {source}", path.display())
            }
            OpenError::Io { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for OpenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OpenError::Mmap { source, .. } | OpenError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Check `DDDD:BB:DD.F` (hex; device <= 0x1f, function <= 7) and return it in lower case, the
/// way sysfs spells it.
pub fn parse_bdf(bdf: &str) -> Result<String, OpenError> {
    let bad = || OpenError::BadBdf {
        bdf: bdf.to_string(),
    };
    let b = bdf.as_bytes();
    if b.len() != 12 || b[4] != b':' || b[7] != b':' || b[10] != b'.' {
        return Err(bad());
    }
    let hex = |s: &str| {
        if s.bytes().all(|c| c.is_ascii_hexdigit()) {
            u32::from_str_radix(s, 16).ok()
        } else {
            None
        }
    };
    match (
        hex(&bdf[0..4]),
        hex(&bdf[5..7]),
        hex(&bdf[8..10]),
        hex(&bdf[11..12]),
    ) {
        (Some(_), Some(_), Some(dev), Some(func)) if dev <= 0x1f && func <= 7 => {
            Ok(bdf.to_ascii_lowercase())
        }
        _ => Err(bad()),
    }
}

/// A PCI BAR mapped from sysfs. Unmapped on drop.
#[derive(Debug)]
pub struct LinuxBar {
    base: NonNull<u8>,
    len: usize,
    path: PathBuf,
    vendor: u16,
    device: u16,
}

impl LinuxBar {
    /// Map BAR `bar` of the device at `bdf` (`DDDD:BB:DD.F`) under [`SYSFS_PCI_DEVICES`].
    pub fn open(bdf: &str, bar: u8) -> Result<LinuxBar, OpenError> {
        LinuxBar::open_path(Path::new(SYSFS_PCI_DEVICES), bdf, bar)
    }

    /// As [`LinuxBar::open`], with the directory that lists the devices given (tests point it
    /// at a fake tree).
    pub fn open_path(root: &Path, bdf: &str, bar: u8) -> Result<LinuxBar, OpenError> {
        let dir = root.join(parse_bdf(bdf)?);
        if !dir.is_dir() {
            return Err(OpenError::NoDevice { path: dir });
        }
        let vendor = read_id(&dir.join("vendor"))?;
        let device = read_id(&dir.join("device"))?;
        let path = dir.join(format!("resource{bar}"));
        let file = match OpenOptions::new().read(true).write(true).open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(OpenError::NoSuchBar { path, bar })
            }
            Err(e) => return Err(io_error(path, e)),
        };
        let len = match file.metadata() {
            Ok(m) => m.len(),
            Err(e) => return Err(io_error(path, e)),
        };
        if len == 0 {
            return Err(OpenError::EmptyResource { path });
        }
        let len = match usize::try_from(len) {
            Ok(l) => l,
            Err(_) => {
                return Err(OpenError::Mmap {
                    path,
                    source: io::Error::other("resource larger than the address space"),
                })
            }
        };
        match map(&file, len) {
            Ok(base) => Ok(LinuxBar {
                base,
                len,
                path,
                vendor,
                device,
            }),
            Err(source) => Err(OpenError::Mmap { path, source }),
        }
    }

    /// PCI vendor id (the device's `vendor` file).
    pub fn vendor(&self) -> u16 {
        self.vendor
    }
    /// PCI device id (the device's `device` file).
    pub fn device(&self) -> u16 {
        self.device
    }
    /// Bytes mapped (the resource file's length, i.e. the BAR size).
    pub fn len(&self) -> usize {
        self.len
    }
    /// Always false: an empty resource is refused at open.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The resource file that is mapped.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The word at `offset`, if it is 4-aligned and inside the mapping.
    fn word(&self, offset: u32, write: bool) -> Result<*mut u32, BusError> {
        let at = offset as usize;
        if !offset.is_multiple_of(4) || at.checked_add(4).is_none_or(|end| end > self.len) {
            return Err(BusError { offset, write });
        }
        // SAFETY: `at + 4 <= len`, so the pointer stays inside the one mapping of `len` bytes
        // (`add` within an allocation).
        Ok(unsafe { self.base.as_ptr().add(at) }.cast::<u32>())
    }
}

impl Bar for LinuxBar {
    /// A volatile 32-bit load (PCI is little-endian). A misaligned offset or one past the BAR
    /// is refused with a [`BusError`] without touching the device.
    fn read32(&self, offset: u32) -> Result<u32, BusError> {
        let p = self.word(offset, false)?;
        // SAFETY: `p` is inside the live mapping (checked by `word`; it is unmapped only in
        // `drop`), 4-aligned (page-aligned base + 4-aligned offset), and read as one volatile
        // access, so the compiler neither splits, merges nor elides it.
        Ok(u32::from_le(unsafe { p.read_volatile() }))
    }

    fn write32(&self, offset: u32, value: u32) -> Result<(), BusError> {
        let p = self.word(offset, true)?;
        // SAFETY: as in `read32`; the mapping is PROT_WRITE and MAP_SHARED, and no Rust
        // reference to the mapped bytes is ever created, so a store through `&self` aliases
        // nothing.
        unsafe { p.write_volatile(value.to_le()) };
        Ok(())
    }
}

impl Drop for LinuxBar {
    fn drop(&mut self) {
        unmap(self.base, self.len);
    }
}

/// Read a `0x10ee`-style id file.
fn read_id(path: &Path) -> Result<u16, OpenError> {
    let text = std::fs::read_to_string(path).map_err(|e| io_error(path.to_path_buf(), e))?;
    let t = text.trim();
    let digits = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    u16::from_str_radix(digits, 16).map_err(|_| OpenError::BadId {
        path: path.to_path_buf(),
        text: t.to_string(),
    })
}

fn io_error(path: PathBuf, e: io::Error) -> OpenError {
    if e.kind() == io::ErrorKind::PermissionDenied {
        OpenError::PermissionDenied { path }
    } else {
        OpenError::Io { path, source: e }
    }
}

#[cfg(unix)]
fn map(file: &File, len: usize) -> io::Result<NonNull<u8>> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: a fresh mapping at an address the kernel chooses (NULL hint), so it overlaps no
    // Rust object; `fd` is open for read and write for the duration of the call (the mapping
    // stays valid after the file is closed). The result is checked for MAP_FAILED.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned NULL"))
}

#[cfg(unix)]
fn unmap(base: NonNull<u8>, len: usize) {
    // SAFETY: `base`/`len` are exactly one mapping made by `map`, unmapped once (from `drop`);
    // no pointer into it outlives the `LinuxBar`.
    unsafe {
        libc::munmap(base.as_ptr().cast(), len);
    }
}

#[cfg(not(unix))]
fn map(_file: &File, _len: usize) -> io::Result<NonNull<u8>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "mapping a PCI resource file needs a Unix host",
    ))
}

#[cfg(not(unix))]
fn unmap(_base: NonNull<u8>, _len: usize) {}
