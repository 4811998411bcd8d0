package kit

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync"
)

// A client connection's HTTP/2 frames, read off the socket as grpc-go writes and reads
// them (headers only; payloads are skipped, except SETTINGS and PING, which are tiny, and a
// GOAWAY's code and the start of its debug data): what
// grpc-go advertises (its BDP estimator's window steps are SETTINGS INITIAL_WINDOW_SIZE plus
// a connection WINDOW_UPDATE), how long its PINGs take to come back and why a server closed
// the connection. grpc-go's API does
// not expose either, and this costs a few comparisons per frame.

const (
	frameData         = 0x0
	frameSettings     = 0x4
	framePing         = 0x6
	frameGoAway       = 0x7
	frameWindowUpdate = 0x8
	flagAck           = 0x1
	settingInitialWin = 0x4
	clientPrefaceLen  = 24
	captureMax        = 256
)

// GoAway is a GOAWAY frame the server sent, at CLOCK_MONOTONIC ns.
type GoAway struct {
	AtNS  int64
	Code  uint32
	Debug string
}

// http2Codes are HTTP/2's error codes by number (RFC 9113, section 7).
var http2Codes = []string{"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
	"SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL",
	"COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"}

// CodeName is the error code's name (ENHANCE_YOUR_CALM), or its number.
func (g GoAway) CodeName() string {
	if int(g.Code) < len(http2Codes) {
		return http2Codes[g.Code]
	}
	return fmt.Sprintf("0x%x", g.Code)
}

// WindowStep is one stream window the client advertised, at CLOCK_MONOTONIC ns.
type WindowStep struct {
	AtNS   int64
	Window int64
}

// Tap gathers what one connection's frames said.
type Tap struct {
	mu          sync.Mutex
	clock       *Clock
	window      int64 // the stream window advertised last (65535 until a SETTINGS says)
	steps       []WindowStep
	pingSent    map[[8]byte]int64
	pingRTTs    []float64 // ms
	pingsSent   int       // PINGs (not acks) the client sent in the timed phase
	goAways     []GoAway  // every GOAWAY the server sent, timed phase or not
	recording   bool
	maxDataSeen int
}

func NewTap(clock *Clock) *Tap {
	return &Tap{clock: clock, window: 65535, pingSent: map[[8]byte]int64{}}
}

// Start begins the timed phase: steps and RTTs from now on are kept; the first step is the
// window in force now.
func (t *Tap) Start(now int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recording = true
	t.steps = append(t.steps[:0], WindowStep{AtNS: now, Window: t.window})
	t.pingRTTs = t.pingRTTs[:0]
	t.pingsSent = 0
}

// Stop ends the timed phase.
func (t *Tap) Stop() {
	t.mu.Lock()
	t.recording = false
	t.mu.Unlock()
}

// Steps and PingRTTs are what the timed phase saw.
func (t *Tap) Steps() []WindowStep {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]WindowStep(nil), t.steps...)
}

func (t *Tap) PingRTTs() []float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]float64(nil), t.pingRTTs...)
}

// GoAways are the GOAWAY frames the server sent on this channel's connections.
func (t *Tap) GoAways() []GoAway {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]GoAway(nil), t.goAways...)
}

// PingsSent is how many PINGs (not acks) the client sent in the timed phase: grpc-go's BDP
// estimator's and its keepalive's.
func (t *Tap) PingsSent() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pingsSent
}

// MaxDataFrame is the largest DATA frame the peer sent on this connection.
func (t *Tap) MaxDataFrame() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.maxDataSeen
}

func (t *Tap) sent(typ, flags byte, stream uint32, payload []byte, length int) {
	switch {
	case typ == frameSettings && flags&flagAck == 0:
		for i := 0; i+6 <= len(payload); i += 6 {
			if binary.BigEndian.Uint16(payload[i:]) == settingInitialWin {
				w := int64(binary.BigEndian.Uint32(payload[i+2:]))
				t.mu.Lock()
				t.window = w
				if t.recording {
					t.steps = append(t.steps, WindowStep{AtNS: t.clock.Now(), Window: w})
				}
				t.mu.Unlock()
			}
		}
	case typ == framePing && flags&flagAck == 0 && len(payload) == 8:
		var data [8]byte
		copy(data[:], payload)
		t.mu.Lock()
		t.pingSent[data] = t.clock.Now()
		if t.recording {
			t.pingsSent++
		}
		t.mu.Unlock()
	}
}

func (t *Tap) received(typ, flags byte, stream uint32, payload []byte, length int) {
	switch {
	case typ == framePing && flags&flagAck != 0 && len(payload) == 8:
		var data [8]byte
		copy(data[:], payload)
		now := t.clock.Now()
		t.mu.Lock()
		if at, ok := t.pingSent[data]; ok {
			delete(t.pingSent, data)
			if t.recording {
				t.pingRTTs = append(t.pingRTTs, float64(now-at)/1e6)
			}
		}
		t.mu.Unlock()
	case typ == frameGoAway && len(payload) >= 8:
		g := GoAway{AtNS: t.clock.Now(), Code: binary.BigEndian.Uint32(payload[4:8]), Debug: string(payload[8:])}
		t.mu.Lock()
		t.goAways = append(t.goAways, g)
		t.mu.Unlock()
	case typ == frameData:
		if length > t.maxDataSeen { // only the reader goroutine writes it
			t.mu.Lock()
			t.maxDataSeen = length
			t.mu.Unlock()
		}
	}
}

// scanner follows the frames in one direction of a byte stream, across Read/Write calls.
type scanner struct {
	skip    int // bytes still to skip before the next frame header (the client preface)
	hdr     [9]byte
	hdrN    int
	left    int // payload bytes of the current frame still to come
	length  int
	capture bool
	buf     []byte
	onFrame func(typ, flags byte, stream uint32, payload []byte, length int)
}

func (s *scanner) feed(p []byte) {
	for len(p) > 0 {
		if s.skip > 0 {
			n := min(s.skip, len(p))
			s.skip -= n
			p = p[n:]
			continue
		}
		if s.left == 0 && s.hdrN < 9 {
			n := copy(s.hdr[s.hdrN:], p)
			s.hdrN += n
			p = p[n:]
			if s.hdrN < 9 {
				return
			}
			s.length = int(s.hdr[0])<<16 | int(s.hdr[1])<<8 | int(s.hdr[2])
			typ := s.hdr[3]
			// GOAWAY: its code and the start of its debug data.
			s.capture = (typ == frameSettings || typ == framePing) && s.length <= captureMax || typ == frameGoAway
			s.buf = s.buf[:0]
			s.left = s.length
			if s.left == 0 {
				s.done()
			}
			continue
		}
		n := min(s.left, len(p))
		if s.capture && len(s.buf) < captureMax {
			s.buf = append(s.buf, p[:min(n, captureMax-len(s.buf))]...)
		}
		s.left -= n
		p = p[n:]
		if s.left == 0 {
			s.done()
		}
	}
}

func (s *scanner) done() {
	stream := binary.BigEndian.Uint32(s.hdr[5:9]) & 0x7fffffff
	s.onFrame(s.hdr[3], s.hdr[4], stream, s.buf, s.length)
	s.hdrN = 0
}

// tapConn is a client's TCP connection with a Tap on both directions.
type tapConn struct {
	net.Conn
	out, in scanner
	wmu     sync.Mutex
}

// TapConn wraps a freshly dialled client connection (before the HTTP/2 preface).
func TapConn(c net.Conn, tap *Tap) net.Conn {
	tc := &tapConn{Conn: c}
	tc.out = scanner{skip: clientPrefaceLen, onFrame: tap.sent}
	tc.in = scanner{onFrame: tap.received}
	return tc
}

func (c *tapConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	c.out.feed(p) // before the write: a PING's clock starts as it leaves
	c.wmu.Unlock()
	return c.Conn.Write(p)
}

func (c *tapConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.in.feed(p[:n])
	}
	return n, err
}
