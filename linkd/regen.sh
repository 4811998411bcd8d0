#!/usr/bin/env bash
# Regenerates src/pb/kit.worker.rs and kit.worker.serde.rs from protos/worker.proto: the kit
# venv's grpc_tools.protoc writes a descriptor set, prost-build 0.14.6 and pbjson-build 0.9.0
# (regen/) turn it into messages and their canonical JSON mapping. Run `make install` first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
fds="$(mktemp)"
trap 'rm -f "$fds"' EXIT
"$repo/.venv/bin/python" -m grpc_tools.protoc -I"$repo/protos" --include_imports \
    --descriptor_set_out="$fds" "$repo/protos/worker.proto"
mkdir -p "$here/src/pb"
cargo run --quiet --release --manifest-path "$here/regen/Cargo.toml" -- "$fds" "$here/src/pb"
echo "wrote $here/src/pb/kit.worker.rs and kit.worker.serde.rs"
