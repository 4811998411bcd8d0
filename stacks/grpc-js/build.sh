#!/usr/bin/env bash
# Build the kit's grpc-js programs: the pinned packages of package-lock.json into
# node_modules/ (git-ignored). Needs Node 20+ and npm, and the npm registry. The job decoder
# (lib/worker_pb.js) is generated code, committed: regen.sh remakes it, the build does not.
# --ignore-scripts: nothing here is native; protobufjs's postinstall (a version check of its
# own CLI) is not needed.
set -euo pipefail
cd "$(dirname "$0")"
command -v node >/dev/null || { echo "grpc-js: node is not installed (Node 20+ and npm)" >&2; exit 3; }
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
    echo "grpc-js: Node $(node --version) is too old (20+ needed)" >&2
    exit 3
fi
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
node -e 'require("@grpc/grpc-js"); require("./lib/worker_pb")' # the programs load them
echo "grpc-js: @grpc/grpc-js $(node -p 'require("@grpc/grpc-js/package.json").version') on Node $(node --version)"
