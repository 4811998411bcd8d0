#!/usr/bin/env bash
# Builds target/kit-grpc-java.jar (client and server in one fat jar) from a clean checkout.
# Needs JDK 17+ and Maven 3.8+; fetches only from Maven Central (into ~/.m2, Maven's default).
set -euo pipefail
cd "$(dirname "$0")"
mvn -q -B package "$@"
echo "built $(pwd)/target/kit-grpc-java.jar" >&2
