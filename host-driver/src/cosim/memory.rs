//! The host-memory model: a byte array the driver writes descriptors into and the DMA engine
//! model reads and writes at host addresses (address 0 = byte 0), bounds checked.

use std::fmt;

/// A DMA or CPU access outside host memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemError {
    pub addr: u64,
    pub len: usize,
    /// Bytes of host memory.
    pub size: u64,
}

impl fmt::Display for MemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "host memory access of {} bytes at {:#x} is outside the {} bytes of host memory",
            self.len, self.addr, self.size
        )
    }
}

impl std::error::Error for MemError {}

/// Host memory: `size` bytes, zeroed.
#[derive(Debug, Clone)]
pub struct HostMemory {
    bytes: Vec<u8>,
}

impl HostMemory {
    pub fn new(size: usize) -> Self {
        HostMemory {
            bytes: vec![0; size],
        }
    }

    pub fn size(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn range(&self, addr: u64, len: usize) -> Result<std::ops::Range<usize>, MemError> {
        let err = MemError {
            addr,
            len,
            size: self.size(),
        };
        let end = addr.checked_add(len as u64).ok_or(err)?;
        if end > self.size() {
            return Err(err);
        }
        Ok(addr as usize..end as usize)
    }

    /// Copy `buf.len()` bytes from `addr`.
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemError> {
        let r = self.range(addr, buf.len())?;
        buf.copy_from_slice(&self.bytes[r]);
        Ok(())
    }

    /// Copy `data` to `addr`.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        let r = self.range(addr, data.len())?;
        self.bytes[r].copy_from_slice(data);
        Ok(())
    }

    pub fn read_u32(&self, addr: u64) -> Result<u32, MemError> {
        let mut b = [0; 4];
        self.read(addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    pub fn write_u32(&mut self, addr: u64, v: u32) -> Result<(), MemError> {
        self.write(addr, &v.to_le_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accesses_are_bounds_checked_little_endian() {
        let mut m = HostMemory::new(64);
        m.write_u32(60, 0x0403_0201).unwrap();
        let mut b = [0; 4];
        m.read(60, &mut b).unwrap();
        assert_eq!(b, [1, 2, 3, 4]);
        assert_eq!(m.read_u32(60).unwrap(), 0x0403_0201);
        let e = m.write_u32(61, 0).unwrap_err();
        assert_eq!(
            e,
            MemError {
                addr: 61,
                len: 4,
                size: 64
            }
        );
        assert!(m.read(u64::MAX, &mut b).is_err());
        assert!(m.read(64, &mut []).is_ok());
    }
}
