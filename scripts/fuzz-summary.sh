#!/usr/bin/env bash
# Totals of every scripts/fuzz.sh run recorded in fuzz-out/history.tsv: seconds, executions and findings per target.
#
#   scripts/fuzz-summary.sh [HISTORY_FILE ...]
set -euo pipefail
cd "$(dirname "$0")/.."
files=("${@:-fuzz-out/history.tsv}")
awk -F'\t' '
    { seconds[$2] += $3; execs[$2] += $4; findings[$2] += $5; runs[$2] += 1 }
    END {
        printf "%-22s %6s %9s %15s %9s\n", "target", "runs", "seconds", "executions", "findings"
        for (t in execs) {
            printf "%-22s %6d %9d %15d %9d\n", t, runs[t], seconds[t], execs[t], findings[t]
            ts += seconds[t]; te += execs[t]; tf += findings[t]
        }
        printf "%-22s %6s %9d %15d %9d\n", "total", "-", ts, te, tf
    }' "${files[@]}"
