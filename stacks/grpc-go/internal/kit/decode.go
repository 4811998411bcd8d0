// Package kit is the kit's side of the two grpc-go programs: the process protocol
// (docs/process-protocol.md), the config records it sends (kit/plan/trial.py and
// kit/plan/processes.py, decoded as strictly as kit/results/codec.py decodes them), the
// result records (kit/results/client.py, kit/results/server.py) and grpc-go's knob table.
package kit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// UsageError is a bad config: exit 2, one line.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usage(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// ParseJSON reads one JSON value the way Python's json.loads does (one value, nothing after
// it); numbers keep their text so that ints and floats stay apart, as in Python.
func ParseJSON(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("extra data after the JSON value")
	}
	return v, nil
}

// pyType is the Python type name of a decoded JSON value (for messages like the codec's).
func pyType(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case json.Number:
		if isIntText(string(x)) {
			return "int"
		}
		return "float"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

// pyRepr is Python's repr of a decoded JSON value, near enough for one-line messages.
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return "'" + strings.ReplaceAll(x, "'", "\\'") + "'"
	case json.Number:
		if isIntText(string(x)) {
			return string(x)
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return string(x)
		}
		return PyFloat(f)
	case []any:
		parts := make([]string, len(x))
		for i, item := range x {
			parts[i] = pyRepr(item)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		var b bytes.Buffer
		_ = json.NewEncoder(&b).Encode(x)
		return strings.TrimSpace(b.String())
	}
	return fmt.Sprint(v)
}

// PyFloat formats a float as Python's repr does (1.0, 0.5, 1e-05, 1e+16).
func PyFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "inf"
	}
	if math.IsInf(f, -1) {
		return "-inf"
	}
	if math.IsNaN(f) {
		return "nan"
	}
	a := math.Abs(f)
	if a != 0 && (a < 1e-4 || a >= 1e16) {
		s := strconv.FormatFloat(f, 'e', -1, 64) // 1e-05 in Go is "1e-05" already
		return s
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

func isIntText(s string) bool { return !strings.ContainsAny(s, ".eE") }

// object is one JSON object being decoded into a record: its fields, and where it is.
type object struct {
	m     map[string]any
	where string
}

func newObject(data any, where string, fields []string, required ...string) (*object, error) {
	m, ok := data.(map[string]any)
	if !ok {
		return nil, usage("%s: a JSON object, not %s", where, pyType(data))
	}
	known := map[string]bool{}
	for _, f := range fields {
		known[f] = true
	}
	var unknown []string
	for k := range m {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, usage("%s: unknown field(s) %s", where, strings.Join(unknown, ", "))
	}
	var missing []string
	for _, r := range required {
		if _, ok := m[r]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return nil, usage("%s: missing field(s) %s", where, strings.Join(missing, ", "))
	}
	return &object{m: m, where: where}, nil
}

func (o *object) path(key string) string { return o.where + "." + key }

// Int is a whole number as the JSON had it: its value, or Big when it does not fit int64
// (every range the kit checks is inside int64, so a Big value is always out of range).
type Int struct {
	V   int64
	Big bool
	Txt string
}

func (i Int) String() string { return i.Txt }

func decodeInt(v any, where string) (Int, error) {
	n, ok := v.(json.Number)
	if !ok || !isIntText(string(n)) {
		return Int{}, usage("%s: %s is not a whole number", where, pyRepr(v))
	}
	x, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return Int{Big: true, Txt: string(n), V: math.MaxInt64}, nil
	}
	return Int{V: x, Txt: string(n)}, nil
}

func decodeFloat(v any, where string) (float64, error) {
	n, ok := v.(json.Number)
	if ok {
		f, err := strconv.ParseFloat(string(n), 64)
		if err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f, nil
		}
	}
	return 0, usage("%s: %s is not a finite number", where, pyRepr(v))
}

func (o *object) int(key string, def int64) (Int, error) {
	v, ok := o.m[key]
	if !ok {
		return Int{V: def, Txt: strconv.FormatInt(def, 10)}, nil
	}
	return decodeInt(v, o.path(key))
}

func (o *object) optInt(key string) (*Int, error) {
	v, ok := o.m[key]
	if !ok || v == nil {
		return nil, nil
	}
	i, err := decodeInt(v, o.path(key))
	if err != nil {
		return nil, err
	}
	return &i, nil
}

func (o *object) float(key string, def float64) (float64, error) {
	v, ok := o.m[key]
	if !ok {
		return def, nil
	}
	return decodeFloat(v, o.path(key))
}

func (o *object) optFloat(key string) (*float64, error) {
	v, ok := o.m[key]
	if !ok || v == nil {
		return nil, nil
	}
	f, err := decodeFloat(v, o.path(key))
	if err != nil {
		return nil, err
	}
	return &f, nil
}

func (o *object) bool(key string, def bool) (bool, error) {
	v, ok := o.m[key]
	if !ok {
		return def, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, usage("%s: %s is not true or false", o.path(key), pyRepr(v))
	}
	return b, nil
}

func (o *object) str(key string, def string) (string, error) {
	v, ok := o.m[key]
	if !ok {
		return def, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", usage("%s: %s is not a string", o.path(key), pyRepr(v))
	}
	return s, nil
}

func (o *object) optStr(key string) (*string, error) {
	v, ok := o.m[key]
	if !ok || v == nil {
		return nil, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return nil, usage("%s: %s is not a string", o.path(key), pyRepr(v))
	}
	return &s, nil
}

func literalError(where string, v any, choices []string) error {
	quoted := make([]string, len(choices))
	for i, c := range choices {
		quoted[i] = "'" + c + "'"
	}
	return usage("%s: %s is not one of %s", where, pyRepr(v), strings.Join(quoted, ", "))
}

func (o *object) literal(key, def string, choices []string) (string, error) {
	v, ok := o.m[key]
	if !ok {
		return def, nil
	}
	s, isStr := v.(string)
	if !isStr || !contains(choices, s) {
		return "", literalError(o.path(key), v, choices)
	}
	return s, nil
}

func (o *object) optLiteral(key string, choices []string) (*string, error) {
	v, ok := o.m[key]
	if !ok || v == nil {
		return nil, nil
	}
	s, isStr := v.(string)
	if !isStr || !contains(choices, s) {
		return nil, literalError(o.path(key), v, choices)
	}
	return &s, nil
}

// Option is one [key, value] channel option; the value is a whole number or a string.
type Option struct {
	Key   string
	IsInt bool
	Int   Int
	Str   string
}

func (op Option) ValueText() string {
	if op.IsInt {
		return op.Int.Txt
	}
	return op.Str
}

func (o *object) options(key string) ([]Option, error) {
	v, ok := o.m[key]
	if !ok {
		return nil, nil
	}
	where := o.path(key)
	list, isList := v.([]any)
	if !isList {
		return nil, usage("%s: a JSON array, not %s", where, pyType(v))
	}
	out := make([]Option, 0, len(list))
	for i, item := range list {
		at := fmt.Sprintf("%s[%d]", where, i)
		pair, isPair := item.([]any)
		if !isPair {
			return nil, usage("%s: a JSON array, not %s", at, pyType(item))
		}
		if len(pair) != 2 {
			return nil, usage("%s: an array of 2 items, not %d", at, len(pair))
		}
		k, isStr := pair[0].(string)
		if !isStr {
			return nil, usage("%s[0]: %s is not a string", at, pyRepr(pair[0]))
		}
		op := Option{Key: k}
		switch val := pair[1].(type) {
		case json.Number:
			if !isIntText(string(val)) {
				return nil, usage("%s[1]: %s fits no allowed type", at, pyRepr(val))
			}
			n, _ := decodeInt(val, at)
			op.IsInt, op.Int = true, n
		case string:
			op.Str = val
		default:
			return nil, usage("%s[1]: %s fits no allowed type", at, pyRepr(val))
		}
		out = append(out, op)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
