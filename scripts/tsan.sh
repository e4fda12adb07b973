#!/usr/bin/env bash
# Runs the concurrency-heavy tests under the thread sanitizer, in their own scratch path (.build-tsan) so the
# normal debug build is untouched.
#
#   scripts/tsan.sh [FILTER]
#
# FILTER is a `swift test --filter` regular expression (TSAN_SKIP a `--skip` one); the default selects the concurrency-heavy suites: the
# extension step and its races, the key store and replay guard (client), the delivery client against the emulator
# (connection loss, bulk with faults, recording, token renewal), the sealer's shared static-DH cache, and the
# gateway's delivery workers and attachment fetches. TSAN_OPTIONS defaults to halting on the first report, so any data
# race fails the run (exit status non-zero).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -f scripts/deps ] && source scripts/deps

default_filter='SealedPushClientTests\.(NotificationServiceStepTests|CompletionRaceTests|StepRaceTests|FileKeyStoreTests|ReplayGuardTests)'
default_filter+='|SealedPushAPNsTests\.(APNsConnectionLossTests|APNsBulkFaultTests|APNsEmulatorRecordingTests|ProviderTokenCacheTests)'
default_filter+='|SealedPushServerTests\.(StaticSecretCacheTests|SealerTests)'
# The gateway's delivery workers (claims, sends, leases, shutdown, two nodes; APNs and FCM) and its attachment fetches.
# (SealedPushFCMTests passed under TSan with no race reported, 2026-11-25; run with them in, the APNs connection-loss
# tests' deadlines passed on 2 cores, so they are not in the default set: `bash scripts/tsan.sh SealedPushFCMTests`.)
default_filter+='|SealedPushGatewayTests\.DeliverySQLiteTests|SealedPushGatewayHTTPTests\.AttachmentSendTests'
# The webhook reading the store's outbox (its reader, workers and wake-ups; stop and give-back).
default_filter+='|SealedPushGatewayTests\.WebhookOutboxDeliveryTests'
filter=${1:-$default_filter}
# TSAN_SKIP: a `swift test --skip` expression for tests to leave out under TSan. By default the APNs GOAWAY test at 1 %
# of 2,000 requests, which takes the code path of the one at 10 % of 500 (streams above a GOAWAY's last id resent on
# a new connection) and was 76 s of the run's critical path (its suite is serialized); TSAN_SKIP= runs it too.
skip=${TSAN_SKIP-goAwayOnOnePercentOfRequestsLosesNothing}
# Tests that scale their load down under the sanitizer read this (APNsBulkFaultTests: a fifth of its 10,000 sends).
export SEALEDPUSH_TEST_THREAD_SANITIZER=1
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}

start=$(date +%s)
# The default suites start none of the package's executables: only the test product is built (the executables'
# sanitized builds and links took minutes of CI). A filter of your own may select tests that run them (the CLI's, the
# gateway binary's): then everything is built.
if [ -z "${1:-}" ]; then
    swift build --product SealedPushPackageTests --sanitize=thread --scratch-path .build-tsan
else
    swift build --build-tests --sanitize=thread --scratch-path .build-tsan
fi
built=$(date +%s)
echo "==> tsan build: $(( built - start )) s"
skip_args=()
[ -n "$skip" ] && skip_args=(--skip "$skip")
swift test --skip-build --sanitize=thread --scratch-path .build-tsan --filter "$filter" "${skip_args[@]}"
echo "==> tsan tests: $(( $(date +%s) - built )) s (filter: $filter)"
