#!/usr/bin/env bash
# Runs the concurrency-heavy tests under the thread sanitizer, in their own scratch path (.build-tsan) so the
# normal debug build is untouched.
#
#   scripts/tsan.sh [FILTER]
#
# FILTER is a `swift test --filter` regular expression; the default selects the extension step, the key store and
# replay guard, and the APNs delivery client. TSAN_OPTIONS defaults to halting on the first report, so any data
# race fails the run (exit status non-zero).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -f scripts/deps ] && source scripts/deps

default_filter='SealedPushClientTests\..*(Extension|Step|KeyStore|KeyRing|Replay|Race)|SealedPushAPNsTests\..*(Deliver|Client|Connection|Concurren)'
filter=${1:-$default_filter}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}

start=$(date +%s)
swift build --build-tests --sanitize=thread --scratch-path .build-tsan
built=$(date +%s)
echo "==> tsan build: $(( built - start )) s"
swift test --skip-build --sanitize=thread --scratch-path .build-tsan --filter "$filter"
echo "==> tsan tests: $(( $(date +%s) - built )) s (filter: $filter)"
