package kit

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	wpb "kit/stacks/grpc-go/internal/workerpb"
)

// The jobs (protos/worker.proto) arrive as protobuf's canonical JSON and are decoded by
// protojson, strictly: an unknown field, a wrong type or text that is not JSON is the
// library's message. Every value in a job was checked by the kit; the programs check only
// that they can act on it (options.go).

// BadJob is a job the program cannot take: exit 2, one line.
type BadJob struct{ Msg string }

func (e *BadJob) Error() string { return e.Msg }

func bad(format string, args ...any) error { return &BadJob{Msg: fmt.Sprintf(format, args...)} }

const configFlag = "--config"

// ConfigSource names --config's JSON in a BadJob; WorkerSource a worker's stdin line.
const (
	ConfigSource = configFlag
	WorkerSource = "worker line"
)

// ConfigArg is the JSON of `--config JSON` or `--config=JSON`; anything else is a usage line.
func ConfigArg(args []string, usage string) (string, error) {
	switch {
	case len(args) == 1 && strings.HasPrefix(args[0], configFlag+"="):
		return args[0][len(configFlag)+1:], nil
	case len(args) == 2 && args[0] == configFlag:
		return args[1], nil
	}
	return "", bad("usage: %s (got %d argument(s))", usage, len(args))
}

var jobFormat = protojson.UnmarshalOptions{} // strict: unknown fields are errors

func decode(text, source string, job proto.Message) error {
	if !utf8.ValidString(text) {
		return bad("%s: not UTF-8", source)
	}
	if err := jobFormat.Unmarshal([]byte(text), job); err != nil {
		return bad("bad job: %s", OneLine(err.Error()))
	}
	return nil
}

// DecodeClientJob is one ClientJob from text (--config's JSON or a worker's line).
func DecodeClientJob(text, source string) (*wpb.ClientJob, error) {
	job := &wpb.ClientJob{}
	if err := decode(text, source, job); err != nil {
		return nil, err
	}
	if job.GetWork() == nil {
		return nil, bad("bad job: no work (a ClientJob needs download, unary or upload)")
	}
	return job, nil
}

// DecodeServerJob is one ServerJob from --config's JSON.
func DecodeServerJob(text, source string) (*wpb.ServerJob, error) {
	job := &wpb.ServerJob{}
	if err := decode(text, source, job); err != nil {
		return nil, err
	}
	return job, nil
}
