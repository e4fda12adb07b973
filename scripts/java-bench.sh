#!/usr/bin/env bash
# Issue 19 §4 "Figures" for the Java opener (Android/): builds the library (bash Android/build.sh build), compiles
# Android/src/bench with javac --release 11 into Android/build/bench-classes and runs org.sealedpush.bench.OpenBench,
# which prints one Markdown table: open (FCM data / APNs body → content) vs the JDK primitives alone, blob decrypt vs
# one JDK ChaCha20-Poly1305 call, the heap needed to open and decrypt a 50 MB video (child JVMs), and the replay
# guard's check on a full state (16,384 ids) against an empty one (mean of 2,048 forced checks each) with the bytes
# written per recorded id.
# Needs only Debian's openjdk-17-jdk(-headless); nothing is fetched.
#   scripts/java-bench.sh                 full run (about 2 minutes)
#   scripts/java-bench.sh --quick         shorter warm-up, fewer rounds
#   scripts/java-bench.sh --skip-heap     without the child-JVM heap figures
#   scripts/java-bench.sh --only replay   one section only (open, blob, replay or heap)
# JAVA_BENCH_OPTS adds JVM options to the benchmark's own JVM (default: -Xmx1g).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="$repo/Android/build"
for tool in javac java; do
    command -v "$tool" >/dev/null || { echo "java-bench.sh: $tool missing (apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
done
bash "$repo/Android/build.sh" build
rm -rf "$out/bench-classes"
mkdir -p "$out/bench-classes"
find "$repo/Android/src/bench/java" -name '*.java' > "$out/bench-sources.txt"
javac --release 11 -Xlint:all -Werror -d "$out/bench-classes" -cp "$out/classes" @"$out/bench-sources.txt"
# shellcheck disable=SC2086
exec java ${JAVA_BENCH_OPTS:--Xmx1g} -cp "$out/classes:$out/bench-classes" org.sealedpush.bench.OpenBench "$@"
