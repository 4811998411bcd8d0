#!/usr/bin/env bash
# Regenerates src/pb/kit.throughput.rs from protos/throughput.proto: the kit venv's
# grpc_tools.protoc (grpcio-tools 1.85.1) writes a descriptor set, tonic-prost-build 0.14.9
# (regen/) turns it into prost messages (bytes fields as bytes::Bytes) and the Throughput
# client and server. Run `make install` first (the venv).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
fds="$(mktemp)"
trap 'rm -f "$fds"' EXIT
"$repo/.venv/bin/python" -m grpc_tools.protoc -I"$repo/protos" --descriptor_set_out="$fds" \
    "$repo/protos/throughput.proto"
mkdir -p "$here/src/pb"
cargo run --quiet --release --manifest-path "$here/regen/Cargo.toml" -- "$fds" "$here/src/pb"
echo "wrote $here/src/pb/kit.throughput.rs"
