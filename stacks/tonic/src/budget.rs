//! The server's limits on Download calls (protos/worker.proto's ServerJob, as
//! servers/grpcio_server.py keeps them): what the calls hold together is charged to a budget
//! before anything is allocated and given back when the call ends, however it ends (the
//! charge is a guard the response body owns); the encoded messages are built once per size
//! and shared (an LRU cache bounded in bytes), the large ones once per call. Pure: no I/O.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use bytes_crate::{BufMut, Bytes};

/// What the Download calls hold together, bounded.
#[derive(Debug)]
pub struct Budget {
    max: u64,
    held: Mutex<u64>,
}

/// A call's share of the budget: given back when dropped.
#[derive(Debug)]
pub struct Charge {
    budget: Arc<Budget>,
    bytes: u64,
}

/// A call the budget has no room for: what it would hold, what is held, the maximum.
#[derive(Debug, PartialEq)]
pub struct Refused {
    pub would_hold: u64,
    pub held: u64,
    pub max: u64,
}

impl Budget {
    pub fn new(max: u64) -> Arc<Budget> {
        Arc::new(Budget {
            max,
            held: Mutex::new(0),
        })
    }

    /// Take `bytes` for a call, or refuse it (nothing taken).
    pub fn take(self: &Arc<Self>, bytes: u64) -> Result<Charge, Refused> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        match held.checked_add(bytes) {
            Some(total) if total <= self.max => {
                *held = total;
                Ok(Charge {
                    budget: self.clone(),
                    bytes,
                })
            }
            _ => Err(Refused {
                would_hold: bytes,
                held: *held,
                max: self.max,
            }),
        }
    }

    pub fn held(&self) -> u64 {
        *self.held.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        let mut held = self.budget.held.lock().unwrap_or_else(|e| e.into_inner());
        *held = held.saturating_sub(self.bytes);
    }
}

/// What one Download call of `message_bytes` messages is charged: its message (the copy its
/// transport holds), and again when the message is too large to be shared (its own copy).
pub fn charge_of(message_bytes: u64, shared_max: u64) -> u64 {
    let own = if message_bytes > shared_max {
        message_bytes
    } else {
        0
    };
    message_bytes.saturating_add(own)
}

/// One gRPC message on the wire (its 5-byte prefix, then the protobuf encoding of
/// `Chunk { payload }`), with a payload of `size` bytes of 0x5a, built without a second copy.
pub fn encoded_chunk(size: usize) -> Bytes {
    let mut body = Vec::with_capacity(11);
    body.put_u8(0x0a); // field 1 (payload), length-delimited
    prost::encoding::encode_varint(size as u64, &mut body);
    let len = body.len() + size;
    let mut out = Vec::with_capacity(5 + len);
    out.put_u8(0); // not compressed
    out.put_u32(len as u32);
    out.extend_from_slice(&body);
    out.resize(5 + len, 0x5a);
    Bytes::from(out)
}

/// Encoded Download messages by payload size, least recently used first out, at most
/// `max_bytes` in all; sizes above `shared_max` are built for their call alone.
#[derive(Debug)]
pub struct MessageCache {
    max_bytes: u64,
    shared_max: u64,
    entries: Mutex<VecDeque<(usize, Bytes)>>,
}

impl MessageCache {
    pub fn new(max_bytes: u64, shared_max: u64) -> MessageCache {
        MessageCache {
            max_bytes,
            shared_max,
            entries: Mutex::new(VecDeque::new()),
        }
    }

    /// The encoded message of `size` payload bytes (shared when it can be).
    pub fn get(&self, size: usize) -> Bytes {
        let shared = size as u64 <= self.shared_max;
        if shared {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(at) = entries.iter().position(|(s, _)| *s == size) {
                if let Some(entry) = entries.remove(at) {
                    let message = entry.1.clone();
                    entries.push_back(entry);
                    return message;
                }
            }
        }
        let message = encoded_chunk(size); // outside the lock: others go on meanwhile
        if shared {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            if !entries.iter().any(|(s, _)| *s == size) {
                entries.push_back((size, message.clone()));
            }
            let mut total: u64 = entries.iter().map(|(_, m)| m.len() as u64).sum();
            while total > self.max_bytes {
                match entries.pop_front() {
                    Some((_, old)) => total -= old.len() as u64,
                    None => break,
                }
            }
        }
        message
    }

    /// Bytes cached now.
    pub fn cached_bytes(&self) -> u64 {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.iter().map(|(_, m)| m.len() as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_call_takes_its_charge_and_gives_it_back_however_it_ends() {
        let budget = Budget::new(256 * MIB);
        let shared = 16 * MIB;
        assert_eq!(charge_of(256 << 10, shared), 256 << 10);
        assert_eq!(charge_of(16 * MIB, shared), 16 * MIB);
        assert_eq!(charge_of(64 * MIB, shared), 128 * MIB);
        let a = budget.take(charge_of(64 * MIB, shared)).unwrap();
        let b = budget.take(charge_of(64 * MIB, shared)).unwrap();
        assert_eq!(budget.held(), 256 * MIB);
        let refused = budget.take(charge_of(64 * MIB, shared)).unwrap_err();
        assert_eq!(
            refused,
            Refused {
                would_hold: 128 * MIB,
                held: 256 * MIB,
                max: 256 * MIB
            }
        );
        assert_eq!(budget.held(), 256 * MIB); // a refusal takes nothing
        drop(a);
        assert_eq!(budget.held(), 128 * MIB);
        let c = budget.take(1).unwrap();
        drop((b, c));
        assert_eq!(budget.held(), 0);
        assert!(budget.take(u64::MAX).is_err()); // no overflow
    }

    #[test]
    fn forty_calls_of_64_mib_two_run_the_rest_are_refused() {
        let budget = Budget::new(256 * MIB);
        let calls: Vec<_> = (0..40)
            .map(|_| budget.take(charge_of(64 * MIB, 16 * MIB)))
            .collect();
        assert_eq!(calls.iter().filter(|c| c.is_err()).count(), 38);
    }

    #[test]
    fn an_encoded_chunk_is_the_grpc_message() {
        for size in [0usize, 1, 127, 128, 16384, 300_000] {
            let m = encoded_chunk(size);
            assert_eq!(m[0], 0);
            let len = u32::from_be_bytes([m[1], m[2], m[3], m[4]]) as usize;
            assert_eq!(len + 5, m.len());
            let chunk = crate::pb::throughput::Chunk::decode(&m[5..]).unwrap();
            assert_eq!(chunk.payload.len(), size);
            assert!(chunk.payload.iter().all(|b| *b == 0x5a));
        }
    }

    #[test]
    fn the_cache_shares_small_messages_and_keeps_its_bound() {
        let cache = MessageCache::new(2500, 1000);
        let a = cache.get(1000);
        assert_eq!(a.as_ptr(), cache.get(1000).as_ptr()); // built once, shared
        let big = cache.get(1001);
        assert_ne!(big.as_ptr(), cache.get(1001).as_ptr()); // above the shared maximum: per call
        assert_eq!(cache.cached_bytes(), a.len() as u64);
        cache.get(900);
        cache.get(1000); // used: now the most recent
        cache.get(800); // over 2500: the least recently used (900) goes
        assert!(cache.cached_bytes() <= 2500);
        assert_eq!(a.as_ptr(), cache.get(1000).as_ptr());
        let sizes: Vec<usize> = cache
            .entries
            .lock()
            .unwrap()
            .iter()
            .map(|(s, _)| *s)
            .collect();
        assert_eq!(sizes, vec![800, 1000]);
    }
}
