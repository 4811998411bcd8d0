#!/usr/bin/env bash
# Builds target/release/kit-tonic-client and kit-tonic-server (the paths
# kit/topology/programs.py runs) from the pinned Cargo.lock (--locked: a build never changes
# it). Needs Rust 1.88+ with cargo and crates.io (the first build downloads the crates); the
# generated protobuf/gRPC code is committed (src/pb/), so no protoc.
set -euo pipefail
cd "$(dirname "$0")"
cargo build --release --locked --bins
echo "built $(pwd)/target/release/kit-tonic-client and kit-tonic-server ($(rustc --version | cut -d' ' -f1-2))"
