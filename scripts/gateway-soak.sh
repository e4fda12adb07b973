#!/usr/bin/env bash
# Memory soak of the gateway: drives COUNT deliveries through a real `sealed-push-gateway serve` (delivery on) into
# a real `sealed-push emulator` on loopback, and reads the gateway's VmRSS after a warm-up (a tenth of COUNT, at
# least 2,000 deliveries), at every tenth of COUNT (half-way among them) and at the end, each once the queue is
# empty. Fails unless
#
#   end <= warm-up + 32 MB   and   end <= half-way * 1.05   (a reading that fell is not growth)
#
# and every notification was sent (sealedpush_gateway_sent_total == COUNT, the emulator accepted COUNT).
#
#   scripts/gateway-soak.sh [STORE] [COUNT] [BINDIR]
#
# STORE: sqlite (default) or postgres (a new database on the server SEALEDPUSH_TEST_POSTGRES_URL names, e.g. after
# `eval "$(bash scripts/postgres-test.sh start)"`; dropped at the end). COUNT defaults to 200000; BINDIR to
# .build/debug (it needs sealed-push and sealed-push-gateway). Sends go 1,000 devices per request, at most
# BACKLOG (default 5,000) deliveries queued at a time.
set -euo pipefail
store=${1:-sqlite}
count=${2:-200000}
bindir=${3:-.build/debug}
backlog=${BACKLOG:-5000}
devices=1000
(( count % devices == 0 )) || { echo "gateway-soak: COUNT must be a multiple of $devices" >&2; exit 2; }

rig_name=gateway-soak
source "$(dirname "${BASH_SOURCE[0]}")/lib/gateway-rig.sh"
rig_binaries "$bindir"
rig_database "$store"

cd "$work"
"$S" apns-keygen --out AuthKey.p8 >/dev/null
rig_start_apns_emulator SOAKKEY001 SOAKTEAM01

"$G" init --dir gw --app-id soak --topic com.example.soak --team-id SOAKTEAM01 --key-id SOAKKEY001 \
    --apns-key AuthKey.p8 --database "$database" >init.out
key=$(sed -n 's/^API key.*: //p' init.out)
SEALEDPUSH_GATEWAY_LISTEN=127.0.0.1:0 SEALEDPUSH_GATEWAY_LOG_LEVEL=warning "$G" serve --config gw/gateway.json >serve.out 2>&1 &
gateway_pid=$!
wait_for serve.out "listening on port"
port=$(sed -n 's/^listening on port \([0-9]*\).*/\1/p' serve.out | head -1)
api="http://127.0.0.1:$port/v1/apps/soak"

# 1,000 devices (one key ring, distinct tokens), registered 8 at a time.
rig_register_apns_devices "$api" "$key" soak "$devices"
ids=$(seq 1 "$devices" | sed 's/.*/"soak-&"/' | paste -sd,)
printf '{"devices":[%s],"content":{"title":"Soak","body":"a notification of ordinary length for the soak"},"ttl":3600}' \
    "$ids" >send.json

metric() {  # NAME: the sum of a metric's series over all its labels (platform, reason), 0 when absent
    curl -sS "http://127.0.0.1:$port/metrics" |
        awk -v name="$1" '$1 == name || index($1, name "{") == 1 { total += $2 } END { printf "%d", total }'
}
sent=0
requested=0
deliver_until() {  # TARGET: send until TARGET deliveries were requested, then wait until all are sent
    local target=$1
    while (( requested < target )); do
        if (( requested - sent < backlog )); then
            curl -sS --fail-with-body -o /dev/null -X POST "$api/notifications" -H "Authorization: Bearer $key" \
                -H 'Content-Type: application/json' --data-binary @send.json
            requested=$(( requested + devices ))
        else
            sleep 0.2
        fi
        sent=$(metric sealedpush_gateway_sent_total)
    done
    local stalled=0 previous=-1
    while (( sent < target )); do
        sleep 0.5
        sent=$(metric sealedpush_gateway_sent_total)
        if (( sent == previous )); then stalled=$(( stalled + 1 )); else stalled=0; fi
        previous=$sent
        (( stalled < 120 )) || { echo "gateway-soak: delivery stalled at $sent of $target" >&2; tail -20 serve.out >&2; exit 1; }
    done
    sleep 2  # let the sends' last allocations settle
}
rss() { awk -v key="$1:" '$1 == key { printf "%.1f", $2 / 1024 }' "/proc/$gateway_pid/status"; }

warm_count=$(( count / 10 < 2000 ? 2000 : count / 10 ))
warm_count=$(( (warm_count + devices - 1) / devices * devices ))
half_count=$(( count / 2 / devices * devices ))
# Readings at the warm-up, at every tenth of COUNT (the curve: a leak climbs steadily, caches level off) and at the end.
targets=$( { echo "$warm_count"; echo "$half_count"; for i in $(seq 1 10); do echo $(( count * i / 10 / devices * devices )); done; } |
    awk -v w="$warm_count" '$1 >= w' | sort -n | uniq)
started=$(rss VmRSS)
begin=$(date +%s.%N)
for target in $targets; do
    deliver_until "$target"
    reading=$(rss VmRSS)
    echo "  $target delivered: VmRSS $reading MB"
    if (( target == warm_count )); then warm=$reading; fi
    if (( target == half_count )); then half=$reading; fi
    if (( target == count )); then end=$reading; fi
done
finish=$(date +%s.%N)
peak=$(rss VmHWM)
retries=$(metric sealedpush_gateway_retries_total)
kill -TERM "$gateway_pid"; wait "$gateway_pid" || true; gateway_pid=
kill -TERM "$emulator_pid"; wait "$emulator_pid" || true; emulator_pid=
accepted=$(sed -n 's/^stopped: [0-9]* requests, \([0-9]*\) accepted.*/\1/p' emulator.out | tail -1)

growth=$(echo "$end - $warm" | bc)
ratio=$(echo "scale=3; $end / $half" | bc)
seconds=$(echo "$finish - $begin" | bc)
printf 'gateway soak (%s, %s): VmRSS %s MB at start, %s MB after %s warm-up deliveries, %s MB at %s, %s MB at %s (peak %s MB); end - warm-up = %s MB (bound 32), end / half = %s (bound 1.05); sent %s, emulator accepted %s, retries %s; %.0f deliveries/s\n' \
    "$store" "$(basename "$(dirname "$G")")" "$started" "$warm" "$warm_count" "$half" "$half_count" "$end" "$count" \
    "$peak" "$growth" "$ratio" "$sent" "${accepted:-?}" "$retries" "$(echo "$count / $seconds" | bc -l)"
fail=0
if (( $(echo "$end > $warm + 32" | bc) )); then echo "FAIL: the gateway grew $growth MB after the warm-up (bound 32 MB)"; fail=1; fi
if (( $(echo "$end > $half * 1.05" | bc) )); then echo "FAIL: the gateway grew past 5 % after half-way ($ratio)"; fail=1; fi
if (( sent != count )); then echo "FAIL: $sent of $count sent"; fail=1; fi
if [ -n "$accepted" ] && (( accepted < count )); then echo "FAIL: the emulator accepted $accepted of $count"; fail=1; fi
exit $fail
