#!/usr/bin/env bash
# Runs `scripts/gateway-load.sh` RUNS times with the same settings and prints each run's capacity-phase figures and
# their spread: on a shared 2-core machine one run's ratio to the bare client moves by ±10-15 % (the bare client's
# own rate alone by as much between runs), so a claim about the ratio needs several runs, each with its own bare
# client measured in that run.
#
#   bash scripts/gateway-load-series.sh RUNS [STORE] [SECONDS]
#
# Every setting of gateway-load.sh passes through (CONNECTIONS, SLOTS, NODES, PLATFORM, FAULTS, BINDIR, ...); without
# BINDIR the release build happens once, before the first run. Each run's whole output is kept in a new directory
# under /tmp, named at the start. Prints one line a run, then the median, the lowest and the highest ratio (gateway
# delivered/s ÷ the bare client's, in the same run) and how many runs reached the issue's bar (0.5x on SQLite, 0.4x
# on PostgreSQL).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:?usage: gateway-load-series.sh RUNS [STORE] [SECONDS]}
store=${2:-sqlite}
seconds=${3:-10}
case "$runs" in *[!0-9]* | "" | 0) echo "gateway-load-series: RUNS is a positive number" >&2; exit 2 ;; esac
if [ -z "${BINDIR:-}" ]; then
    swift build -c release --product sealed-push >&2
    swift build -c release --product sealed-push-gateway >&2
    BINDIR=$(swift build -c release --show-bin-path)
fi
export BINDIR
logdir=$(mktemp -d /tmp/gateway-load-series.XXXXXX)
echo "gateway-load-series: each run's output in $logdir" >&2
logs=()
for run in $(seq 1 "$runs"); do
    log=$logdir/run-$run.log
    echo "==> run $run of $runs: gateway-load.sh $store $seconds" \
        "(CONNECTIONS=${CONNECTIONS:-32}, SLOTS=${SLOTS:-128})" >&2
    bash scripts/gateway-load.sh "$store" "$seconds" >"$log" 2>&1 || { tail -5 "$log" >&2; exit 1; }
    logs+=("$log")
done
python3 - "$store" "${logs[@]}" <<'PY'
import re, statistics, sys
store, logs = sys.argv[1], sys.argv[2:]
def find(pattern, text, cast=float):
    m = re.search(pattern, text)
    if m is None:
        sys.exit(f"gateway-load-series: '{pattern}' not found in a run's output")
    return cast(m.group(1).replace(",", ""))
rows = []
for log in logs:
    text = open(log).read()
    rows.append(dict(
        delivered=find(r"(?m)^\| capacity[^|]*\|[^|]*\|[^|]*\|[^|]*\|[^|]*\| ([\d,]+) \|", text),
        bare=find(r"same emulator\): ([\d,]+)/s", text),
        cpu=find(r"CPU per send at capacity \(ms, 2 cores\): gateway ([\d.]+)", text),
        idle=find(r"idle ([\d.]+); bare run", text),
        claimed=find(r"([\d,]+) claimed from the queue", text, lambda s: int(s)),
        verdict="PASS" if ": PASS" in text else "FAIL"))
for row in rows:
    row["ratio"] = row["delivered"] / row["bare"]
bar = 0.5 if store == "sqlite" else 0.4
print("| run | delivered/s | bare client/s | ratio | gateway CPU per send | idle per send | jobs claimed | checks |")
print("|---:|---:|---:|---:|---:|---:|---:|---|")
for number, row in enumerate(rows, 1):
    print(f"| {number} | {row['delivered']:,.0f} | {row['bare']:,.0f} | {row['ratio']:.2f}x | {row['cpu']:.3f} ms "
          f"| {row['idle']:.3f} ms | {row['claimed']:,} | {row['verdict']} |")
ratios = [row["ratio"] for row in rows]
print(f"\nratio over {len(rows)} runs: median {statistics.median(ratios):.2f}x, lowest {min(ratios):.2f}x, "
      f"highest {max(ratios):.2f}x; runs at or above {bar}x: {sum(r >= bar for r in ratios)} of {len(rows)}")
if any(row["verdict"] != "PASS" for row in rows):
    sys.exit("gateway-load-series: a run failed its checks (lost or duplicated jobs, or latency)")
PY
