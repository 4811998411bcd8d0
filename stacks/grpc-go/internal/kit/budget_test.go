package kit

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	"kit/stacks/grpc-go/internal/throughputpb"
)

// The grpcio server's accounting (servers/grpcio_server.py, kit/plan/trial.py's
// server_held_bytes): a shared message is charged once, a larger one twice.
func TestTheBudgetChargesAsTheGrpcioServer(t *testing.T) {
	b := NewBudget(256*MiB, 16*MiB)
	if b.Charge(256*KiB) != 256*KiB || b.Charge(16*MiB) != 16*MiB || b.Charge(64*MiB) != 128*MiB {
		t.Fatal("charges")
	}
	// 40 calls of 64 MiB: two fit, 38 are refused (the hostile test's numbers).
	taken := 0
	for range 40 {
		if ok, _ := b.Take(b.Charge(64 * MiB)); ok {
			taken++
		}
	}
	if taken != 2 || b.Refused() != 38 || b.Held() != 256*MiB {
		t.Fatalf("taken %d, refused %d, held %d", taken, b.Refused(), b.Held())
	}
	ok, held := b.Take(1)
	if ok || held != 256*MiB {
		t.Fatal("a full budget takes nothing more")
	}
	b.Release(128 * MiB) // a call ends: its charge goes back
	if ok, held := b.Take(128 * MiB); !ok || held != 128*MiB {
		t.Fatal("what was given back can be taken again")
	}
	if ok, _ := NewBudget(10, 10).Take(11); ok {
		t.Fatal("a charge above the whole budget")
	}
	// 1024 streams of the default 256 KiB messages fit exactly.
	b = NewBudget(256*MiB, 16*MiB)
	for i := range 1024 {
		if ok, _ := b.Take(b.Charge(256 * KiB)); !ok {
			t.Fatalf("stream %d refused", i)
		}
	}
	if ok, _ := b.Take(b.Charge(256 * KiB)); ok || b.Refused() != 1 {
		t.Fatal("the 1025th fits")
	}
}

func TestMessagesAreSharedUpToASizeAndBounded(t *testing.T) {
	c := NewMessageCache(3*MiB, MiB)
	a, again := c.Get(MiB), c.Get(MiB)
	if &a[0] != &again[0] {
		t.Fatal("a shared message is built once")
	}
	big1, big2 := c.Get(MiB+1), c.Get(MiB+1)
	if &big1[0] == &big2[0] {
		t.Fatal("a message above the shared size is per call")
	}
	c.Get(MiB - 1)
	c.Get(MiB - 2)
	c.Get(MiB - 3) // 4 MiB of messages asked for: the least recently used goes
	if c.CachedBytes() > 3*MiB {
		t.Fatalf("the cache holds %d", c.CachedBytes())
	}
	if again = c.Get(MiB); &a[0] == &again[0] {
		t.Fatal("the least recently used was kept")
	}
}

func TestEncodeChunkIsTheChunkProtobufMakes(t *testing.T) {
	for _, size := range []int{1, 127, 128, 16384, MiB + 3} {
		payload := bytes.Repeat([]byte{0x5a}, size)
		want, err := proto.Marshal(&throughputpb.Chunk{Payload: payload})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(EncodeChunk(size), want) {
			t.Fatalf("size %d differs", size)
		}
	}
}
