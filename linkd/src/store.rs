//! Where one direction's bytes wait for their due time: FIFO segments that are either pipes
//! (the bytes never enter this process: `splice` from the socket into a pipe on arrival, and
//! from the pipe into the other socket when due) or heap blocks (`read` / `send`: when the
//! tap must see the bytes, or the kernel refuses another pipe).
//!
//! A pipe holds `PIPE_BYTES` (F_SETPIPE_SZ); what waits longer than one pipe's worth waits
//! in the next one, so a direction can hold its whole cap however long the delay. A splice
//! into a pipe that says "try again" is either a full pipe or an empty socket: the store
//! tells them apart by trying once more with a fresh pipe.

use crate::sys::{self, Pipe};
use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, RawFd};

pub const PIPE_BYTES: usize = 1 << 20;
const SPARE_PIPES: usize = 4;
const SPARE_BLOCKS: usize = 4;

enum Seg {
    Pipe {
        pipe: Pipe,
        bytes: usize,
        full: bool,
    },
    Heap {
        buf: Box<[u8]>,
        start: usize,
        end: usize,
    },
}

pub struct Store {
    segs: VecDeque<Seg>,
    pub len: usize,
    use_pipes: bool,
    block_bytes: usize,
    spare_pipes: Vec<Pipe>,
    spare_blocks: Vec<Box<[u8]>>,
}

/// What a fill did: bytes read (0: the end of the stream) and, in copy mode, where they are.
pub enum Filled<'a> {
    Spliced(usize),
    Copied(&'a [u8]),
}

impl Store {
    /// `use_pipes`: zero-copy; else every byte is read into this process (the tap's case).
    pub fn new(use_pipes: bool, read_bytes: usize) -> Self {
        Store {
            segs: VecDeque::new(),
            len: 0,
            use_pipes,
            block_bytes: read_bytes.clamp(64 * 1024, 1 << 20),
            spare_pipes: Vec::new(),
            spare_blocks: Vec::new(),
        }
    }

    /// Take up to `max` bytes from `src` (non-blocking): `WouldBlock` when it has none.
    pub fn fill(&mut self, src: RawFd, max: usize) -> io::Result<Filled<'_>> {
        if self.use_pipes {
            if let Some(n) = self.splice_in(src, max)? {
                return Ok(Filled::Spliced(n));
            }
        }
        self.read_in(src, max)
    }

    /// Some(bytes) through a pipe; None: no pipe to be had (fall back to the heap).
    fn splice_in(&mut self, src: RawFd, max: usize) -> io::Result<Option<usize>> {
        for attempt in 0..2 {
            let Some(w) = self.tail_pipe() else {
                return Ok(None);
            };
            match sys::splice(src, w, max) {
                Ok(n) => {
                    if let Some(Seg::Pipe { bytes, .. }) = self.segs.back_mut() {
                        *bytes += n;
                    }
                    self.len += n;
                    return Ok(Some(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && attempt == 0 => {
                    match self.segs.back_mut() {
                        Some(Seg::Pipe { bytes, full, .. }) if *bytes > 0 => *full = true,
                        _ => return Err(e), // an empty pipe: the socket has nothing
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Err(io::ErrorKind::WouldBlock.into())
    }

    /// The write end of a pipe with room at the tail (a new one if needed).
    fn tail_pipe(&mut self) -> Option<RawFd> {
        if let Some(Seg::Pipe {
            pipe, full: false, ..
        }) = self.segs.back()
        {
            return Some(pipe.w.as_raw_fd());
        }
        let pipe = match self.spare_pipes.pop() {
            Some(p) => p,
            None => Pipe::with_size(PIPE_BYTES)?,
        };
        let w = pipe.w.as_raw_fd();
        self.segs.push_back(Seg::Pipe {
            pipe,
            bytes: 0,
            full: false,
        });
        Some(w)
    }

    fn read_in(&mut self, src: RawFd, max: usize) -> io::Result<Filled<'_>> {
        let room = match self.segs.back() {
            Some(Seg::Heap { buf, end, .. }) => buf.len() - end,
            _ => 0,
        };
        if room == 0 {
            let buf = self
                .spare_blocks
                .pop()
                .unwrap_or_else(|| vec![0u8; self.block_bytes].into_boxed_slice());
            self.segs.push_back(Seg::Heap {
                buf,
                start: 0,
                end: 0,
            });
        }
        let Some(Seg::Heap { buf, end, .. }) = self.segs.back_mut() else {
            unreachable!()
        };
        let at = *end;
        let take = (buf.len() - at).min(max);
        let n = sys::read(src, &mut buf[at..at + take])?;
        *end += n;
        self.len += n;
        Ok(Filled::Copied(&buf[at..at + n]))
    }

    /// Write up to `max` bytes, oldest first, to `dst` (non-blocking); the bytes written.
    pub fn drain(&mut self, dst: RawFd, max: usize) -> io::Result<usize> {
        let (mut done, mut short) = (0, false);
        while done < max && !short {
            let Some(seg) = self.segs.front_mut() else { break };
            let n = match seg {
                Seg::Pipe { pipe, bytes, .. } => {
                    if *bytes == 0 {
                        0
                    } else {
                        let want = (*bytes).min(max - done);
                        match sys::splice(pipe.r.as_raw_fd(), dst, want) {
                            Ok(n) => {
                                *bytes -= n;
                                if n < want {
                                    short = true; // the socket is full: no second try now
                                }
                                n
                            }
                            Err(e) if done > 0 && e.kind() == io::ErrorKind::WouldBlock => break,
                            Err(e) => return Err(e),
                        }
                    }
                }
                Seg::Heap { buf, start, end } => {
                    if start == end {
                        0
                    } else {
                        let take = (*end - *start).min(max - done);
                        match sys::send(dst, &buf[*start..*start + take]) {
                            Ok(n) => {
                                *start += n;
                                if n < take {
                                    short = true;
                                }
                                n
                            }
                            Err(e) if done > 0 && e.kind() == io::ErrorKind::WouldBlock => break,
                            Err(e) => return Err(e),
                        }
                    }
                }
            };
            done += n;
            self.len -= n;
            if !self.retire_front() && n == 0 {
                break;
            }
        }
        Ok(done)
    }

    /// Drop the front segment once it is spent and no longer filled; true if it went.
    fn retire_front(&mut self) -> bool {
        let spent = match self.segs.front() {
            Some(Seg::Pipe { bytes, full, .. }) => *bytes == 0 && (*full || self.segs.len() > 1),
            Some(Seg::Heap { buf, start, end }) => {
                *start == *end && (*end == buf.len() || self.segs.len() > 1)
            }
            None => false,
        };
        if !spent {
            return false;
        }
        match self.segs.pop_front() {
            Some(Seg::Pipe { pipe, .. }) if self.spare_pipes.len() < SPARE_PIPES => {
                self.spare_pipes.push(pipe)
            }
            Some(Seg::Heap { buf, .. }) if self.spare_blocks.len() < SPARE_BLOCKS => {
                self.spare_blocks.push(buf)
            }
            _ => {}
        }
        true
    }

    /// Forget everything (the connection is gone).
    pub fn clear(&mut self) {
        self.segs.clear();
        self.len = 0;
    }
}
