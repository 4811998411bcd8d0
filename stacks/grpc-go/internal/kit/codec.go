package kit

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // registers "proto" first; Install wraps it
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	"kit/stacks/grpc-go/internal/throughputpb"
)

// Bulk messages skip protobuf on both sides, as the kit's Python processes do: a download
// message or an upload chunk is serialised once and sent as those bytes (Raw), and a
// received Chunk is counted, not copied (Counted). Every other message is protobuf, through
// grpc-go's own codec. The codec keeps grpc-go's name, "proto", so the wire is unchanged
// (content-type application/grpc).

// Raw is a message already in protobuf wire form: sent as it is.
type Raw struct{ Bytes []byte }

// Counted receives a Chunk without copying its payload: Len is the message's size on the
// wire, Payload the payload's length.
type Counted struct {
	Len     int
	Payload int
}

// EncodeChunk is Chunk{payload: size bytes of 0x5a} serialised, written straight into one
// buffer of its exact size (field 1, its length, the payload): no payload copy to marshal.
func EncodeChunk(size int) []byte {
	head := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.BytesType), uint64(size))
	b := make([]byte, len(head)+size)
	copy(b, head)
	payload := b[len(head):]
	for i := range payload {
		payload[i] = 0x5a
	}
	return b
}

type codec struct{ proto encoding.CodecV2 }

// InstallCodec registers the bulk-aware codec under grpc-go's codec name "proto".
func InstallCodec() {
	base := encoding.GetCodecV2("proto")
	if base == nil {
		panic("grpc-go has no proto codec registered")
	}
	encoding.RegisterCodecV2(&codec{proto: base})
}

func (c *codec) Name() string { return "proto" }

func (c *codec) Marshal(v any) (mem.BufferSlice, error) {
	if r, ok := v.(*Raw); ok {
		// A SliceBuffer is never freed or written to: one serialised message serves every send.
		return mem.BufferSlice{mem.SliceBuffer(r.Bytes)}, nil
	}
	return c.proto.Marshal(v)
}

func (c *codec) Unmarshal(data mem.BufferSlice, v any) error {
	counted, ok := v.(*Counted)
	if !ok {
		return c.proto.Unmarshal(data, v)
	}
	total := data.Len()
	counted.Len = total
	if total == 0 {
		counted.Payload = 0
		return nil
	}
	// The usual form: one field 1 (tag 0x0a), its length, the payload: read only the head.
	var head [16]byte
	n := 0
	for _, b := range data {
		n += copy(head[n:], b.ReadOnlyData())
		if n == len(head) {
			break
		}
	}
	if head[0] == 0x0a {
		if l, w := protowire.ConsumeVarint(head[1:n]); w > 0 && 1+w+int(l) == total {
			counted.Payload = int(l)
			return nil
		}
	}
	var chunk throughputpb.Chunk // anything else: parse it properly
	if err := c.proto.Unmarshal(data, &chunk); err != nil {
		return fmt.Errorf("a Chunk that does not parse: %w", err)
	}
	counted.Payload = len(chunk.Payload)
	return nil
}
