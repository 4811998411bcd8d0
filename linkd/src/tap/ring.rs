//! The producer side of `kit/capture/ring.py`'s shared ring (its docstring gives the layout):
//! `write_pos` at 0, `read_pos` at 8, the "hurry" flag at 16, the consumer's "waiting" flag
//! at 24 (each an aligned native u64), records from byte 64. A record is a 24-byte header
//! (`@IIBBxxQ`: payload bytes, connection, direction, kind, t_ns) and its payload; it never
//! wraps (a PAD header, or nothing when less than a header is left, fills the end).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};

pub const DATA_OFFSET: usize = 64;
pub const RECORD_BYTES: usize = 24;
pub const KIND_BYTES: u8 = 0;
pub const KIND_EOF: u8 = 1;
pub const KIND_GAP: u8 = 2;
pub const KIND_CONN_DONE: u8 = 3;
pub const KIND_LINE: u8 = 4;
pub const KIND_PAD: u8 = 5;
pub const KIND_SCANNED: u8 = 6;
/// Ring the bell for plain bytes once 1/8 of the ring is taken (`kit/capture/ring.py`).
const BELL_FILL: usize = 8;

pub struct RingWriter {
    base: *mut u8,
    map_bytes: usize,
    pub capacity: usize,
    write_pos: u64,
    bell: Option<OwnedFd>,
}

// SAFETY: the map is only written by the one writer (callers hold it behind a Mutex); the
// positions the reader shares are atomics.
unsafe impl Send for RingWriter {}

impl RingWriter {
    /// A memfd of `capacity` record bytes (its descriptor to hand the decoder) and the writer.
    pub fn create(capacity: usize, bell: OwnedFd) -> io::Result<(OwnedFd, RingWriter)> {
        let size = DATA_OFFSET + capacity;
        // SAFETY: a NUL-terminated name; flags 0 (the decoder inherits the descriptor).
        let fd = unsafe { libc::memfd_create(c"kit-tap-ring".as_ptr(), 0) };
        let fd = crate::sys::check(fd)?;
        // SAFETY: a fresh descriptor of ours.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: sizing our own memfd.
        crate::sys::check(unsafe { libc::ftruncate(fd.as_raw_fd(), size as libc::off_t) })?;
        // SAFETY: a shared map of the whole memfd.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let writer = RingWriter {
            base: base.cast(),
            map_bytes: size,
            capacity,
            write_pos: 0,
            bell: Some(bell),
        };
        Ok((fd, writer))
    }

    fn word(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: offsets 0..32 are 8-aligned words inside the page-aligned map.
        unsafe { &*(self.base.add(offset) as *const AtomicU64) }
    }

    pub fn free_bytes(&self) -> usize {
        let read_pos = self.word(8).load(Ordering::Acquire);
        self.capacity - (self.write_pos - read_pos) as usize
    }

    /// Copy one record in if it fits and leaves `keep` bytes free; false otherwise. `urgent`:
    /// wake a waiting consumer for it (else only once the ring fills up).
    #[allow(clippy::too_many_arguments)]
    pub fn put(
        &mut self,
        kind: u8,
        conn: u32,
        direction: u8,
        t_ns: i64,
        payload: &[u8],
        keep: usize,
        urgent: bool,
    ) -> bool {
        let size = RECORD_BYTES + payload.len();
        let mut off = (self.write_pos % self.capacity as u64) as usize;
        let to_end = self.capacity - off;
        let waste = if size > to_end { to_end } else { 0 };
        if waste + size + keep > self.free_bytes() {
            return false;
        }
        if waste > 0 {
            if to_end >= RECORD_BYTES {
                self.header(off, 0, 0, 0, KIND_PAD, 0);
            }
            off = 0;
        }
        self.header(off, payload.len() as u32, conn, direction, kind, t_ns);
        // SAFETY: the record fits between `off` and the end (checked above).
        unsafe {
            std::ptr::copy_nonoverlapping(
                payload.as_ptr(),
                self.base.add(DATA_OFFSET + off + RECORD_BYTES),
                payload.len(),
            )
        };
        self.write_pos += (waste + size) as u64;
        self.word(0).store(self.write_pos, Ordering::Release);
        let filling = self.free_bytes() < self.capacity - self.capacity / BELL_FILL;
        if self.word(24).load(Ordering::Acquire) != 0 && (urgent || filling) {
            self.ring();
        }
        true
    }

    fn header(&mut self, off: usize, len: u32, conn: u32, direction: u8, kind: u8, t_ns: i64) {
        let mut h = [0u8; RECORD_BYTES];
        h[0..4].copy_from_slice(&len.to_ne_bytes());
        h[4..8].copy_from_slice(&conn.to_ne_bytes());
        h[8] = direction;
        h[9] = kind;
        h[16..24].copy_from_slice(&(t_ns as u64).to_ne_bytes());
        // SAFETY: a header's room is inside the ring (checked by the caller).
        unsafe { std::ptr::copy_nonoverlapping(h.as_ptr(), self.base.add(DATA_OFFSET + off), RECORD_BYTES) };
    }

    /// Ask the consumer to stop decoding and only count what is left (shutting down).
    pub fn hurry(&self) {
        self.word(16).store(1, Ordering::Release);
    }

    pub fn ring(&self) {
        if let Some(bell) = &self.bell {
            // SAFETY: one byte to a non-blocking pipe; a full or closed pipe is fine.
            unsafe { libc::write(bell.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
        }
    }

    /// End of input for the decoder: it drains the ring and exits.
    pub fn close_bell(&mut self) {
        self.bell = None;
    }
}

impl Drop for RingWriter {
    fn drop(&mut self) {
        // SAFETY: the map we made, unmapped once.
        unsafe { libc::munmap(self.base.cast(), self.map_bytes) };
    }
}
