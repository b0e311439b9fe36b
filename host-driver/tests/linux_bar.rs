//! The `linux` backend without hardware: a fake sysfs tree in a temp directory whose
//! `resource0` is a regular file, mapped like a BAR.
#![cfg(unix)]

use mrc_host_driver::linux::{parse_bdf, LinuxBar, OpenError, SYSFS_PCI_DEVICES};
use mrc_host_driver::*;
use std::fs;
use std::path::{Path, PathBuf};

const BDF: &str = "0000:03:00.0";

/// A temp directory holding a fake `/sys/bus/pci/devices`, removed on drop.
struct FakeSysfs {
    root: PathBuf,
}

impl FakeSysfs {
    fn new(name: &str) -> Self {
        let root =
            std::env::temp_dir().join(format!("mrc-linux-bar-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(&root).unwrap();
        FakeSysfs { root }
    }
    /// A device directory with `vendor` / `device` files and, if given, `resource0` holding
    /// `bytes`.
    fn device(&self, bdf: &str, resource0: Option<&[u8]>) -> PathBuf {
        let dir = self.root.join(bdf);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("vendor"), "0x10ee\n").unwrap();
        fs::write(dir.join("device"), "0x9038\n").unwrap();
        if let Some(bytes) = resource0 {
            fs::write(dir.join("resource0"), bytes).unwrap();
        }
        dir
    }
}

impl Drop for FakeSysfs {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

#[test]
fn bdf_syntax_is_checked() {
    assert_eq!(parse_bdf("0000:03:00.0").unwrap(), "0000:03:00.0");
    assert_eq!(parse_bdf("0000:AF:1F.7").unwrap(), "0000:af:1f.7");
    for bad in [
        "",
        "03:00.0",
        "0000:03:00:0",
        "0000:03:00.8",
        "0000:03:20.0",
        "0000:g3:00.0",
        "0000:+3:00.0",
        "00000:03:00.0",
        "0000:03:00.00",
        "../../etc/pa",
    ] {
        let e = LinuxBar::open_path(Path::new("/nonexistent"), bad, 0).unwrap_err();
        assert!(matches!(e, OpenError::BadBdf { .. }), "{bad:?}: {e:?}");
        assert!(e.to_string().contains("DDDD:BB:DD.F"), "{e}");
    }
}

#[test]
fn missing_device_directory_is_no_device_naming_the_path() {
    let fake = FakeSysfs::new("nodev");
    let e = LinuxBar::open_path(&fake.root, BDF, 0).unwrap_err();
    let path = fake.root.join(BDF);
    assert!(
        matches!(&e, OpenError::NoDevice { path: p } if *p == path),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("is the card installed"), "{msg}");
}

#[test]
fn missing_resource_file_is_no_such_bar() {
    let fake = FakeSysfs::new("nobar");
    let dir = fake.device(BDF, Some(&[0; 4096]));
    let e = LinuxBar::open_path(&fake.root, BDF, 2).unwrap_err();
    assert!(
        matches!(&e, OpenError::NoSuchBar { path, bar: 2 } if *path == dir.join("resource2")),
        "{e:?}"
    );
    assert!(e.to_string().contains("resource2"), "{e}");
}

#[test]
fn zero_length_resource_is_refused() {
    let fake = FakeSysfs::new("empty");
    fake.device(BDF, Some(&[]));
    let e = LinuxBar::open_path(&fake.root, BDF, 0).unwrap_err();
    assert!(matches!(e, OpenError::EmptyResource { .. }), "{e:?}");
    assert!(e.to_string().contains("resource0"), "{e}");
}

#[test]
fn unreadable_id_file_is_a_typed_error() {
    let fake = FakeSysfs::new("badid");
    let dir = fake.device(BDF, Some(&[0; 4096]));
    fs::write(dir.join("vendor"), "nonsense\n").unwrap();
    let e = LinuxBar::open_path(&fake.root, BDF, 0).unwrap_err();
    assert!(matches!(e, OpenError::BadId { .. }), "{e:?}");
}

#[test]
fn mapped_file_round_trips_and_refuses_bad_offsets() {
    let fake = FakeSysfs::new("rw");
    let dir = fake.device(BDF, Some(&[0; 4096]));
    {
        let bar = LinuxBar::open_path(&fake.root, BDF, 0).unwrap();
        assert_eq!((bar.vendor(), bar.device()), (0x10ee, 0x9038));
        assert_eq!(bar.len(), 4096);
        assert_eq!(bar.path(), dir.join("resource0"));
        bar.write32(0x10, 0x1234_5678).unwrap();
        bar.write32(4092, 0xdead_beef).unwrap();
        assert_eq!(bar.read32(0x10).unwrap(), 0x1234_5678);
        assert_eq!(bar.read32(4092).unwrap(), 0xdead_beef);
        assert_eq!(bar.read32(0x14).unwrap(), 0);
        for (offset, write) in [(0x11, false), (0x12, true), (4096, false), (4096, true)] {
            let r = if write {
                bar.write32(offset, 1).map(|_| 0)
            } else {
                bar.read32(offset)
            };
            assert_eq!(r, Err(BusError { offset, write }));
        }
        assert!(bar.read32(u32::MAX - 3).is_err());
    }
    // MAP_SHARED: the stores reached the file, little-endian.
    let bytes = fs::read(dir.join("resource0")).unwrap();
    assert_eq!(&bytes[0x10..0x14], &[0x78, 0x56, 0x34, 0x12]);
    assert_eq!(&bytes[4092..4096], &0xdead_beefu32.to_le_bytes());
}

#[test]
fn walk_and_check_blocks_over_a_mapped_chain() {
    // The chain the driver was built for, laid out from the generated constants.
    let size = (regs::BAR_SIZE as usize).max(4096);
    let mut bytes = vec![0u8; size];
    let mut put = |at: u32, v: u32| {
        bytes[at as usize..at as usize + 4].copy_from_slice(&v.to_le_bytes());
    };
    for (i, k) in regs::BLOCKS.iter().enumerate() {
        let next = regs::BLOCKS.get(i + 1).map_or(0, |n| n.base);
        put(k.base + regs::csr::TYPE.offset, k.type_id);
        put(k.base + regs::csr::VERSION.offset, k.version);
        put(k.base + regs::csr::NEXT.offset, next);
    }
    let fake = FakeSysfs::new("walk");
    fake.device(BDF, Some(&bytes));
    let bar = LinuxBar::open_path(&fake.root, BDF, 0).unwrap();
    let found = check_blocks(&bar).unwrap();
    assert_eq!(found.len(), regs::BLOCKS.len());
    for (f, k) in found.iter().zip(regs::BLOCKS) {
        assert_eq!(
            (f.offset, f.type_id, f.version, f.name),
            (k.base, k.type_id, k.version, Some(k.name))
        );
    }
    assert_eq!(
        read(&bar, regs::csr::TYPE).unwrap(),
        regs::BLOCKS[0].type_id
    );
}

#[test]
fn absent_real_device_is_a_clear_no_device_error() {
    // 0000:ff:1f.7 is almost never populated; if it is, any outcome but a panic is fine.
    if let Err(e @ OpenError::NoDevice { path }) = &LinuxBar::open("0000:ff:1f.7", 0) {
        assert_eq!(*path, Path::new(SYSFS_PCI_DEVICES).join("0000:ff:1f.7"));
        let msg = e.to_string();
        assert!(
            msg.contains("no PCI device at /sys/bus/pci/devices/0000:ff:1f.7"),
            "{msg}"
        );
        assert!(msg.contains("driver unbound"), "{msg}");
    }
}

#[test]
fn unopenable_resource_is_permission_denied() {
    use std::os::unix::fs::PermissionsExt;
    let fake = FakeSysfs::new("perm");
    let dir = fake.device(BDF, Some(&[0; 4096]));
    fs::set_permissions(dir.join("resource0"), fs::Permissions::from_mode(0o400)).unwrap();
    // root ignores file modes, so a successful open is accepted too.
    if let Err(e) = LinuxBar::open_path(&fake.root, BDF, 0) {
        assert!(matches!(e, OpenError::PermissionDenied { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains("resource0") && msg.contains("root"), "{msg}");
    }
}
