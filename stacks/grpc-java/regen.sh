#!/usr/bin/env bash
# Regenerates src/main/java/kit/worker/Worker.java (the jobs and lines of protos/worker.proto)
# with protoc 4.35.1 (libprotoc 35.1, the release the kit venv's grpcio-tools bundles: its own
# protoc has no Java generator) fetched from Maven Central into ~/.m2; protobuf-java in pom.xml
# is the same 4.35.1 (the generated code refuses an older runtime). The generated file is
# committed: the build never runs protoc.
set -euo pipefail
cd "$(dirname "$0")"
version=4.35.1
protoc="$HOME/.m2/repository/com/google/protobuf/protoc/$version/protoc-$version-linux-x86_64.exe"
if [ ! -x "$protoc" ]; then
  mvn -q -B org.apache.maven.plugins:maven-dependency-plugin:3.8.1:get -Dartifact="com.google.protobuf:protoc:$version:exe:linux-x86_64" \
    -Dtransitive=false
  chmod +x "$protoc"
fi
rm -rf src/main/java/kit/worker
"$protoc" -I ../../protos --java_out=src/main/java ../../protos/worker.proto
echo "regenerated src/main/java/kit/worker/Worker.java with $("$protoc" --version)" >&2
