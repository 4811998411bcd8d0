#!/usr/bin/env bash
# Builds target/kit-grpc-java.jar (client and server in one fat jar) from a clean checkout,
# then target/kit-grpc-java.jsa, its class-data-sharing archive (a training run over loopback:
# it halves each client's start-up; the jar runs without it, only slower).
# Needs JDK 17+ and Maven 3.8+; fetches only from Maven Central (into ~/.m2, Maven's default).
set -euo pipefail
cd "$(dirname "$0")"
here="$(pwd -P)"  # the archive records the jar's path: the same absolute path programs.py uses
jar="$here/target/kit-grpc-java.jar"
jsa="$here/target/kit-grpc-java.jsa"
mvn -q -B package "$@"
rm -f "$jsa"
# The client's JVM flags (kit/topology/programs.py): an archive is made under the flags it is used with.
if ! java -XX:ArchiveClassesAtExit="$jsa" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
    -Xlog:disable -Xlog:all=error:stderr -jar "$jar" train >/dev/null 2>"$here/target/train.log"; then
  echo "warning: no class-data-sharing archive (see target/train.log); the jar works without it" >&2
  rm -f "$jsa"
fi
if [ -f "$jsa" ]; then echo "built $jar and $jsa" >&2; else echo "built $jar" >&2; fi
