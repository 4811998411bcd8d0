#!/usr/bin/env bash
# The stack's unit tests (JUnit 5, src/test/java): decoding the jobs, the error lines, the option
# table, the download budget and the shared messages. A few seconds; no network, no processes.
set -euo pipefail
cd "$(dirname "$0")"
mvn -q -B -DskipTests=false test "$@"
