//! Which bytes of a chunk the frame decoder needs, found by walking HTTP/2 frame headers: a
//! port of `kit/capture/scanner.py` (its docstring gives the rules), with the same ring
//! record (`encode_scanned`). DATA frames are counted here and left out; the preface, the
//! first frame and every other frame are handed over. Walking is capped per chunk; past the
//! cap the rest of the direction goes over whole.

use std::collections::HashMap;

const CLIENT_PREFACE_BYTES: usize = 24;
const HEADER_BYTES: usize = 9;
const TYPE_DATA: u8 = 0;
const MIN_HEADERS: usize = 16;
const BYTES_PER_HEADER: usize = 8192;

pub type Piece = (usize, usize);

pub struct DataScanner {
    preface_left: usize,
    hole_left: usize,
    copy_left: usize,
    header: Vec<u8>,
    first_seen: bool,
    pub whole: bool,
    data_frames: u64,
    data_bytes: u64,
    data_max: u64,
    streams: Vec<(u32, u64)>, // in first-seen order, as Python's dict
    stream_index: HashMap<u32, usize>,
    pub span: usize,
}

/// (carried header bytes, pieces of the chunk) to hand over; None: the chunk whole.
pub type Split = Option<(Vec<u8>, Vec<Piece>)>;

impl DataScanner {
    pub fn new(client_side: bool) -> Self {
        DataScanner {
            preface_left: if client_side { CLIENT_PREFACE_BYTES } else { 0 },
            hole_left: 0,
            copy_left: 0,
            header: Vec::new(),
            first_seen: false,
            whole: false,
            data_frames: 0,
            data_bytes: 0,
            data_max: 0,
            streams: Vec::new(),
            stream_index: HashMap::new(),
            span: 0,
        }
    }

    pub fn take_held(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.header)
    }

    pub fn in_data_payload(&self) -> usize {
        self.hole_left
    }

    pub fn take_data(&mut self) -> (u64, u64, u64) {
        let taken = (self.data_frames, self.data_bytes, self.data_max);
        self.data_frames = 0;
        self.data_bytes = 0;
        self.data_max = 0;
        taken
    }

    pub fn take_streams(&mut self) -> Vec<(u32, u64)> {
        self.stream_index.clear();
        std::mem::take(&mut self.streams)
    }

    pub fn split(&mut self, chunk: &[u8]) -> Split {
        if self.whole {
            return None;
        }
        let n = chunk.len();
        let (mut pos, mut headers) = (0usize, 0usize);
        let had_at_start = self.header.len();
        let max_headers = MIN_HEADERS + n / BYTES_PER_HEADER;
        let mut pieces: Vec<Piece> = Vec::new();
        let mut carried = Vec::new();
        let (mut preface, mut copy_left, mut hole_left) = (self.preface_left, self.copy_left, self.hole_left);
        while pos < n {
            if preface > 0 || copy_left > 0 {
                let take;
                if preface > 0 {
                    take = preface.min(n - pos);
                    preface -= take;
                } else {
                    take = copy_left.min(n - pos);
                    copy_left -= take;
                }
                append(&mut pieces, pos, take);
                pos += take;
            } else if hole_left > 0 {
                let take = hole_left.min(n - pos);
                hole_left -= take;
                pos += take;
            } else if self.header.is_empty() && pos + HEADER_BYTES <= n {
                headers += 1;
                if headers > max_headers {
                    self.whole = true;
                    append(&mut pieces, pos, n - pos);
                    break;
                }
                let h = &chunk[pos..pos + HEADER_BYTES];
                let length = (usize::from(h[0]) << 16) | (usize::from(h[1]) << 8) | usize::from(h[2]);
                if h[3] == TYPE_DATA && self.first_seen {
                    self.count(length, stream_id(h));
                    hole_left = length;
                } else {
                    self.first_seen = true;
                    append(&mut pieces, pos, HEADER_BYTES);
                    copy_left = length;
                }
                pos += HEADER_BYTES;
            } else {
                let had = std::mem::take(&mut self.header);
                let take = (HEADER_BYTES - had.len()).min(n - pos);
                let mut header = had.clone();
                header.extend_from_slice(&chunk[pos..pos + take]);
                if header.len() < HEADER_BYTES {
                    self.header = header;
                    break;
                }
                let length =
                    (usize::from(header[0]) << 16) | (usize::from(header[1]) << 8) | usize::from(header[2]);
                if header[3] == TYPE_DATA && self.first_seen {
                    self.count(length, stream_id(&header));
                    hole_left = length;
                } else {
                    self.first_seen = true;
                    carried = had;
                    append(&mut pieces, pos, take);
                    copy_left = length;
                }
                pos += take;
            }
        }
        self.preface_left = preface;
        self.copy_left = copy_left;
        self.hole_left = hole_left;
        self.span = n + had_at_start - self.header.len();
        Some((carried, pieces))
    }

    fn count(&mut self, length: usize, stream: u32) {
        let length = length as u64;
        match self.stream_index.get(&stream) {
            Some(&i) => self.streams[i].1 += length,
            None => {
                self.stream_index.insert(stream, self.streams.len());
                self.streams.push((stream, length));
            }
        }
        self.data_frames += 1;
        self.data_bytes += length;
        self.data_max = self.data_max.max(length);
    }
}

fn stream_id(h: &[u8]) -> u32 {
    u32::from_be_bytes([h[5] & 0x7F, h[6], h[7], h[8]])
}

fn append(pieces: &mut Vec<Piece>, offset: usize, length: usize) {
    if length == 0 {
        return;
    }
    if let Some(last) = pieces.last_mut() {
        if last.0 + last.1 == offset {
            last.1 += length;
            return;
        }
    }
    pieces.push((offset, length));
}

/// A scanned chunk in the ring: span, DATA frames, DATA bytes, largest DATA payload, number of
/// streams (native u64 each), (stream, bytes) per stream, then the handed-over bytes.
pub fn encode_scanned(
    chunk: &[u8],
    carried: &[u8],
    pieces: &[Piece],
    data: (u64, u64, u64),
    span: usize,
    streams: &[(u32, u64)],
) -> Vec<u8> {
    let kept: usize = carried.len() + pieces.iter().map(|p| p.1).sum::<usize>();
    let mut out = Vec::with_capacity(40 + 16 * streams.len() + kept);
    for v in [span as u64, data.0, data.1, data.2, streams.len() as u64] {
        out.extend_from_slice(&v.to_ne_bytes());
    }
    for &(sid, n) in streams {
        out.extend_from_slice(&u64::from(sid).to_ne_bytes());
        out.extend_from_slice(&n.to_ne_bytes());
    }
    out.extend_from_slice(carried);
    for &(offset, length) in pieces {
        out.extend_from_slice(&chunk[offset..offset + length]);
    }
    out
}
