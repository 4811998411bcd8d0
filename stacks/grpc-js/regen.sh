#!/usr/bin/env bash
# Regenerate lib/worker_pb.js from protos/worker.proto with protoc-gen-es (pinned in
# package-lock.json: a devDependency; the runtime, @bufbuild/protobuf, is a dependency of the
# same version) and the kit venv's protoc (grpc_tools). The generated file is committed: the
# build needs neither protoc nor the venv.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
python=${KIT_PYTHON:-$root/.venv/bin/python}
[ -x node_modules/.bin/protoc-gen-es ] || { echo "grpc-js regen: node_modules/.bin/protoc-gen-es is missing: run build.sh" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$python" -m grpc_tools.protoc \
    --plugin=protoc-gen-es=node_modules/.bin/protoc-gen-es \
    --es_out="$out" \
    --es_opt=target=js,js_import_style=legacy_commonjs \
    -I "$root/protos" "$root/protos/worker.proto"
cp "$out/worker_pb.js" lib/worker_pb.js
echo "grpc-js: lib/worker_pb.js from protos/worker.proto (protoc-gen-es $(node -p 'require("@bufbuild/protoc-gen-es/package.json").version'))"
