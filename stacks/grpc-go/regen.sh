#!/usr/bin/env bash
# Regenerates internal/throughputpb from ../../protos/throughput.proto and internal/workerpb
# from ../../protos/worker.proto (the output is committed, so a build needs none of this).
# protoc comes from the kit's venv (grpcio-tools); the two Go plugins are installed at the
# pinned versions below into $(go env GOPATH)/bin.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
PROTOC_GEN_GO=v1.36.12        # google.golang.org/protobuf/cmd/protoc-gen-go
PROTOC_GEN_GO_GRPC=v1.6.2     # google.golang.org/grpc/cmd/protoc-gen-go-grpc
go install "google.golang.org/protobuf/cmd/protoc-gen-go@${PROTOC_GEN_GO}"
go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@${PROTOC_GEN_GO_GRPC}"
gobin="$(go env GOPATH)/bin"
protoc=("$repo/.venv/bin/python" -m grpc_tools.protoc -I"$repo/protos"
    --plugin=protoc-gen-go="$gobin/protoc-gen-go")
mod=kit/stacks/grpc-go/internal

# The Throughput service: messages and the gRPC stubs.
"${protoc[@]}" --plugin=protoc-gen-go-grpc="$gobin/protoc-gen-go-grpc" \
    --go_out="$here/internal/throughputpb" --go_opt=paths=source_relative \
    --go_opt=Mthroughput.proto="$mod/throughputpb" \
    --go-grpc_out="$here/internal/throughputpb" --go-grpc_opt=paths=source_relative \
    --go-grpc_opt=Mthroughput.proto="$mod/throughputpb" \
    throughput.proto
echo "regenerated $here/internal/throughputpb"

# The worker contract (jobs and the lines the programs print): messages only.
mkdir -p "$here/internal/workerpb"
"${protoc[@]}" \
    --go_out="$here/internal/workerpb" --go_opt=paths=source_relative \
    --go_opt=Mworker.proto="$mod/workerpb" \
    worker.proto
echo "regenerated $here/internal/workerpb"
