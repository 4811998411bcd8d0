//! The live count of bytes delivered downstream (`kit run --interval`), as
//! `kit/delayline/counter.py`: one little-endian u64 in a shared map, one atomic add per
//! release, read by the kit whenever it likes.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

pub struct Counter {
    word: *mut u64,
}

// SAFETY: the map lives as long as the process; every access is an atomic on an aligned word.
unsafe impl Send for Counter {}
unsafe impl Sync for Counter {}

impl Counter {
    pub fn create(path: &str) -> io::Result<Counter> {
        let c_path =
            std::ffi::CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: a NUL-terminated path; the descriptor is closed once mapped.
        unsafe {
            let fd = libc::open(
                c_path.as_ptr(),
                libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
                0o600,
            );
            crate::sys::check(fd)?;
            let sized = libc::ftruncate(fd, 8);
            let map = libc::mmap(
                std::ptr::null_mut(),
                8,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            );
            let err = io::Error::last_os_error();
            libc::close(fd);
            if sized != 0 || map == libc::MAP_FAILED {
                return Err(err);
            }
            Ok(Counter { word: map.cast() })
        }
    }

    pub fn add(&self, n: u64) {
        // SAFETY: an aligned word of a live shared map (x86 and the kit's reader: little-endian).
        let word = unsafe { AtomicU64::from_ptr(self.word) };
        word.fetch_add(n, Ordering::Relaxed);
    }
}
