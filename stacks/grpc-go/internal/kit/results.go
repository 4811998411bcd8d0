package kit

import (
	"fmt"
	"strings"
	"unicode"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const (
	KiB = 1024
	MiB = 1024 * 1024
)

// StatusText is an RPC error as the kit's Python clients word it: "UNAVAILABLE: details".
func StatusText(err error) string {
	st, ok := status.FromError(err)
	if !ok {
		return err.Error()
	}
	return CodeName(st.Code()) + ": " + st.Message()
}

// CodeName is the code's name as grpcio spells it (DEADLINE_EXCEEDED).
func CodeName(c codes.Code) string {
	name := c.String()
	if c == codes.OK {
		return "OK"
	}
	var b strings.Builder
	for i, r := range name {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// FormatBytes writes a size for people as the kit does (kit.plan.units.format_bytes):
// 64 KiB, 1.5 MiB, 1000 B.
func FormatBytes(n float64) string {
	for _, u := range []struct {
		name string
		size float64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size {
			s := strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", n/u.size), "0"), ".")
			return s + " " + u.name
		}
	}
	return fmt.Sprintf("%.0f B", n)
}
