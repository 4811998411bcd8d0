#!/usr/bin/env bash
# Regenerates src/pb/ (committed) from protos/throughput.proto and protos/worker.proto: the kit
# venv's grpc_tools.protoc (grpcio-tools 1.85.1) writes a descriptor set, and regen/
# (tonic-prost-build 0.14.9, pbjson-build 0.9.0, pinned in regen/Cargo.toml and
# regen/Cargo.lock) turns it into:
#   src/pb/kit.throughput.rs   prost messages (bytes fields as bytes::Bytes), the Throughput
#                              client and server
#   src/pb/kit.worker.rs       prost messages of the worker contract
#   src/pb/kit.worker.serde.rs their serde impls: protobuf's canonical JSON (unknown fields
#                              refused, proto and camelCase names read, proto names written)
# Run `make install` first (the venv).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
fds="$(mktemp)"
trap 'rm -f "$fds"' EXIT
"$repo/.venv/bin/python" -m grpc_tools.protoc -I"$repo/protos" --descriptor_set_out="$fds" \
    "$repo/protos/throughput.proto" "$repo/protos/worker.proto"
mkdir -p "$here/src/pb"
cargo run --quiet --release --locked --manifest-path "$here/regen/Cargo.toml" -- "$fds" "$here/src/pb"
echo "wrote $here/src/pb/kit.throughput.rs, kit.worker.rs, kit.worker.serde.rs"
