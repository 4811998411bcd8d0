#!/usr/bin/env bash
# Regenerates internal/throughputpb from ../../protos/throughput.proto (the output is
# committed, so a build needs none of this). protoc comes from the kit's venv (grpcio-tools);
# the two Go plugins are installed at the pinned versions below into $(go env GOPATH)/bin.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
PROTOC_GEN_GO=v1.36.12        # google.golang.org/protobuf/cmd/protoc-gen-go
PROTOC_GEN_GO_GRPC=v1.6.2     # google.golang.org/grpc/cmd/protoc-gen-go-grpc
go install "google.golang.org/protobuf/cmd/protoc-gen-go@${PROTOC_GEN_GO}"
go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@${PROTOC_GEN_GO_GRPC}"
gobin="$(go env GOPATH)/bin"
pkg=kit/stacks/grpc-go/internal/throughputpb
PATH="$gobin:$PATH" "$repo/.venv/bin/python" -m grpc_tools.protoc -I"$repo/protos" \
    --plugin=protoc-gen-go="$gobin/protoc-gen-go" \
    --plugin=protoc-gen-go-grpc="$gobin/protoc-gen-go-grpc" \
    --go_out="$here/internal/throughputpb" --go_opt=paths=source_relative \
    --go_opt=Mthroughput.proto="$pkg" \
    --go-grpc_out="$here/internal/throughputpb" --go-grpc_opt=paths=source_relative \
    --go-grpc_opt=Mthroughput.proto="$pkg" \
    throughput.proto
echo "regenerated $here/internal/throughputpb"
