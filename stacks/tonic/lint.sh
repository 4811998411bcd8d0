#!/usr/bin/env bash
# The stack's linters, failing on any finding: rustfmt (cargo fmt --check, the programs and
# regen/) and clippy on the release build of the programs and their unit tests (the pinned
# Cargo.lock, --locked) with every warning an error. The generated code in src/pb/ is
# formatted as generated and not linted (lib.rs: #[allow(clippy::all)]).
set -euo pipefail
cd "$(dirname "$0")"
cargo fmt --check
cargo fmt --check --manifest-path regen/Cargo.toml
cargo clippy --release --locked --all-targets -- -D warnings
echo "tonic lint: clean"
