#!/usr/bin/env bash
# Builds the SealedPush Java library (Android/) with the JDK from Debian (openjdk-17-jdk, source and target level 11)
# and runs its JUnit 5 tests with the console launcher of Debian's junit5 package. Nothing is fetched.
#   bash Android/build.sh            build the jar, build and run every test
#   bash Android/build.sh build      build the jars only
#   JUNIT_ARGS='--select-class org.sealedpush.EnvelopeVectorTests' bash Android/build.sh
# SEALEDPUSH_FUZZ_COUNT (default 1,000,000) sets the mutation test's inputs, SEALEDPUSH_INTEROP_COUNT (default 500)
# the notifications sealed by Swift. Tests that need the Swift CLI read SEALEDPUSH_CLI (a sealed-push binary); without it they are skipped, except
# under CI (CI=true), where they fail. The last line is "java: N tests passed, M failed" (from the launcher's summary);
# the exit status is non-zero on any failure.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
out="$here/build"
junit=/usr/share/java/junit-platform-console-standalone.jar
for tool in javac jar java; do
    command -v "$tool" >/dev/null || { echo "Android/build.sh: $tool missing (apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
done
rm -rf "$out/classes" "$out/tools-classes" "$out/test-classes"
mkdir -p "$out/classes" "$out/tools-classes" "$out/test-classes"
find "$here/src/main/java" -name '*.java' > "$out/main-sources.txt"
javac --release 11 -Xlint:all,-try -Werror -d "$out/classes" @"$out/main-sources.txt"
jar --create --file "$out/sealedpush-android.jar" -C "$out/classes" .
echo "==> $out/sealedpush-android.jar" >&2
# The command-line tools (src/tools: OpenDataMessage, the messaging step on a recorded FCM data map) in their own jar,
# so the library's jar holds the library only:
#   java -cp Android/build/sealedpush-android.jar:Android/build/sealedpush-android-tools.jar org.sealedpush.tools.OpenDataMessage …
find "$here/src/tools/java" -name '*.java' > "$out/tools-sources.txt"
javac --release 11 -Xlint:all,-try -Werror -d "$out/tools-classes" -cp "$out/classes" @"$out/tools-sources.txt"
jar --create --file "$out/sealedpush-android-tools.jar" -C "$out/tools-classes" .
echo "==> $out/sealedpush-android-tools.jar" >&2
[ "${1:-}" = build ] && exit 0
[ -f "$junit" ] || { echo "Android/build.sh: $junit missing (apt-get install junit5)" >&2; exit 1; }
find "$here/src/test/java" -name '*.java' > "$out/test-sources.txt"
javac --release 11 -Xlint:all,-serial -d "$out/test-classes" -cp "$out/classes:$out/tools-classes:$junit" @"$out/test-sources.txt"
log="$out/test-output.txt"
set +e
# shellcheck disable=SC2086
java -Dsealedpush.repo="$repo" -Dsealedpush.cli="${SEALEDPUSH_CLI:-}" -Dsealedpush.ci="${CI:-}" \
    -Dsealedpush.fuzz.count="${SEALEDPUSH_FUZZ_COUNT:-1000000}" -Dsealedpush.interop.count="${SEALEDPUSH_INTEROP_COUNT:-500}" \
    -jar "$junit" --disable-banner --details=summary --details-theme=ascii \
    --class-path "$out/classes:$out/tools-classes:$out/test-classes" ${JUNIT_ARGS:---scan-class-path} | tee "$log"
status=${PIPESTATUS[0]}
set -e
# The launcher's summary lines, e.g. "[        35 tests successful      ]" and "[         0 tests failed          ]".
passed="$(sed -n 's/^\[ *\([0-9][0-9]*\) tests successful *\]$/\1/p' "$log" | tail -n 1)"
failed="$(sed -n 's/^\[ *\([0-9][0-9]*\) tests failed *\]$/\1/p' "$log" | tail -n 1)"
if [ -z "$passed" ] || [ -z "$failed" ]; then
    echo "java: no test summary from the JUnit launcher (exit status $status)"
    exit 1
fi
# The last line, for CI logs.
echo "java: $passed tests passed, $failed failed"
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ]; then
    exit 1
fi
