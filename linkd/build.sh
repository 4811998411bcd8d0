#!/usr/bin/env bash
# Builds target/release/kit-linkd (the path kit/plan/programs.py runs) from the pinned
# Cargo.lock (--locked: a build never changes it). Needs Rust 1.88+ with cargo and crates.io
# (the first build downloads the crates); the generated protobuf code is committed (src/pb/),
# so no protoc.
set -euo pipefail
cd "$(dirname "$0")"
cargo build --release --locked --bin kit-linkd --bin kit-linkfwd
echo "built $(pwd)/target/release/kit-linkd and kit-linkfwd ($(rustc --version | cut -d' ' -f1-2))"
