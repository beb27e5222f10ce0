//! A large regular file's bytes mapped into memory instead of copied: the pages already
//! in the kernel's cache are shared, so reading tens of MB costs no copy and no fresh
//! memory (which the kernel must zero before the first touch).

use std::ops::Deref;

/// Files below this size are read into a buffer: mapping them saves nothing that shows.
pub const MAP_FROM: u64 = 4 << 20;

/// A whole file's bytes, read into memory or mapped.
pub enum FileBytes {
    Read(Vec<u8>),
    Mapped(Mapping),
}

impl FileBytes {
    /// The bytes as an owned buffer (copied when mapped).
    pub fn into_vec(self) -> Vec<u8> {
        match self {
            FileBytes::Read(v) => v,
            FileBytes::Mapped(m) => m.to_vec(),
        }
    }
}

impl Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Read(v) => v,
            FileBytes::Mapped(m) => m,
        }
    }
}

/// A read-only, private mapping of a whole file, unmapped when dropped.
///
/// A mapping reads the file as it is when its pages are touched: a file cut shorter by
/// another program meanwhile ends the process with SIGBUS. The exports stallscope maps
/// are written once and then read, as a search tool's inputs are.
pub struct Mapping {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is read-only and owned by this value alone.
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps the first `len` bytes of `file` (its size, non-zero), its pages filled in
    /// ahead from the kernel's cache; `None` where the kernel refuses.
    pub fn of(file: &std::fs::File, len: u64) -> Option<Mapping> {
        use std::os::fd::AsRawFd;
        let len = usize::try_from(len).ok().filter(|&n| n > 0)?;
        // SAFETY: a fresh private read-only mapping of a file descriptor we hold open;
        // the kernel chooses the address and checks the length.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_POPULATE,
                file.as_raw_fd(),
                0,
            )
        };
        (ptr != libc::MAP_FAILED).then_some(Mapping { ptr, len })
    }
}

impl Deref for Mapping {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` is a live mapping of `len` readable bytes until drop.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping this value made, once.
        unsafe {
            libc::munmap(self.ptr, self.len);
        }
    }
}
