#!/usr/bin/env bash
# Builds the benchmark package and the `sealed-push` CLI in release (scratch path .build-bench) and runs every
# benchmark, printing each figure beside its comparison and, at the end, one Markdown table for BENCHMARKS.md.
#
#   scripts/bench.sh [--quick] [--only primitives,seal,open,blob,fanout,delivery,memory,tamper] [--tamper-envelopes N]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f scripts/deps ] && source scripts/deps
swift build -c release --package-path Benchmarks --scratch-path .build-bench
swift build -c release --package-path Benchmarks --scratch-path .build-bench --product sealed-push
exec .build-bench/release/sealed-push-bench --cli .build-bench/release/sealed-push "$@"
