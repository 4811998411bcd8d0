#!/usr/bin/env bash
# Builds bin/client and bin/server (the paths kit/topology/programs.py runs) from this
# module's pinned go.mod/go.sum. Needs Go 1.26+ and the Go module proxy (the first build
# downloads the modules into the module cache); the generated protobuf code is committed.
set -euo pipefail
cd "$(dirname "$0")"
export GOFLAGS="${GOFLAGS:-} -mod=readonly -trimpath"
mkdir -p bin
go build -o bin/client ./cmd/client
go build -o bin/server ./cmd/server
echo "built $(pwd)/bin/client and $(pwd)/bin/server ($(go version | cut -d' ' -f3))"
