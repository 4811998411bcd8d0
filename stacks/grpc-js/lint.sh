#!/usr/bin/env bash
# The grpc-js programs' linters: node --check on every .js file, then ESLint (pinned in
# package-lock.json; eslint.config.js). Fails on any finding. Needs node_modules (build.sh).
set -euo pipefail
cd "$(dirname "$0")"
status=0
while IFS= read -r -d '' file; do
    node --check "$file" || status=1
done < <(find . -name node_modules -prune -o -name '*.js' -type f -print0)
[ -x node_modules/.bin/eslint ] || { echo "grpc-js lint: node_modules/.bin/eslint is missing: run build.sh" >&2; exit 1; }
node_modules/.bin/eslint --max-warnings 0 . || status=1
exit "$status"
