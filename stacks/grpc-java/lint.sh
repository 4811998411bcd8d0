#!/usr/bin/env bash
# The stack's linter: javac with -Xlint:all and every warning an error (pom.xml's "lint"
# profile), over the main and the test sources, generated code included.
set -euo pipefail
cd "$(dirname "$0")"
mvn -q -B -Plint test-compile "$@"
echo "lint: clean" >&2
