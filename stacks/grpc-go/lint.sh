#!/usr/bin/env bash
# The grpc-go stack's own linters: gofmt (no file left unformatted) and go vet. Fails on any
# finding. Needs Go 1.26+ and the modules of go.sum (as build.sh).
set -euo pipefail
cd "$(dirname "$0")"
export GOFLAGS="${GOFLAGS:-} -mod=readonly"
unformatted="$(gofmt -l .)"
if [ -n "$unformatted" ]; then
    echo "gofmt: these files are not formatted (gofmt -w them):" >&2
    echo "$unformatted" >&2
    exit 1
fi
go vet ./...
echo "lint: gofmt and go vet clean"
