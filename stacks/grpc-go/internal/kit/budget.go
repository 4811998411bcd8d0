package kit

import (
	"container/list"
	"sync"
	"sync/atomic"
)

// The server's limits (ServerJob; servers/grpcio_server.py is the reference): what the
// Download calls hold together is bounded, and messages up to a size are built once and
// shared by every call.

// Budget is what the Download calls hold together, bytes: a call takes its charge before it
// allocates anything, or is refused; it gives the charge back when it ends, however it ends.
type Budget struct {
	mu        sync.Mutex
	max       uint64
	held      uint64
	sharedMax uint64
	refused   atomic.Uint64
}

func NewBudget(maxBytes, sharedMax uint64) *Budget {
	return &Budget{max: maxBytes, sharedMax: sharedMax}
}

// Charge is what one Download of messageBytes messages holds: the message its transport is
// sending, and, for a message too large to be shared, the copy built for it alone.
func (b *Budget) Charge(messageBytes uint64) uint64 {
	if messageBytes > b.sharedMax {
		return 2 * messageBytes
	}
	return messageBytes
}

// Take charges n, or refuses (and counts the refusal) when the calls would hold more than
// the budget; held is what they held before.
func (b *Budget) Take(n uint64) (ok bool, held uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.max || b.held > b.max-n {
		b.refused.Add(1)
		return false, b.held
	}
	b.held += n
	return true, b.held - n
}

// Release gives back a charge Take granted.
func (b *Budget) Release(n uint64) {
	b.mu.Lock()
	b.held -= n
	b.mu.Unlock()
}

func (b *Budget) Max() uint64 { return b.max }

func (b *Budget) Held() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

// Refused is how many calls Take refused.
func (b *Budget) Refused() uint64 { return b.refused.Load() }

// MessageCache keeps serialised download messages (Chunk{payload: 0x5a...}) by payload size,
// least recently used out first, at most maxBytes of them. A message up to sharedMax bytes
// is built once (under the lock, so concurrent first calls do not each build one) and shared
// by every call; a larger one is built per call and never kept.
type MessageCache struct {
	mu        sync.Mutex
	maxBytes  uint64
	sharedMax uint64
	bytes     uint64
	order     *list.List // of *cached, most recent at the front
	items     map[int]*list.Element
}

type cached struct {
	size int
	msg  []byte
}

func NewMessageCache(maxBytes, sharedMax uint64) *MessageCache {
	return &MessageCache{maxBytes: maxBytes, sharedMax: sharedMax, order: list.New(), items: map[int]*list.Element{}}
}

// Get is the serialised message with a payload of size bytes.
func (c *MessageCache) Get(size int) []byte {
	if uint64(size) > c.sharedMax {
		return EncodeChunk(size)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[size]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*cached).msg
	}
	msg := EncodeChunk(size)
	if uint64(len(msg)) > c.maxBytes {
		return msg // shared by nobody: it would push everything else out and itself too
	}
	c.items[size] = c.order.PushFront(&cached{size: size, msg: msg})
	c.bytes += uint64(len(msg))
	for c.bytes > c.maxBytes {
		old := c.order.Remove(c.order.Back()).(*cached)
		delete(c.items, old.size)
		c.bytes -= uint64(len(old.msg))
	}
	return msg
}

// CachedBytes is what the cache holds.
func (c *MessageCache) CachedBytes() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
