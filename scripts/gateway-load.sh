#!/usr/bin/env bash
# Gateway latency under load, release build (issue 17 §13): a real `sealed-push-gateway serve` (delivery on) and a
# real `sealed-push emulator` (or, with PLATFORM=fcm, `sealed-push fcm-emulator`) on loopback, 1,000 devices registered
# over the API, and `wrk` (Debian's) posting sends to one device each, as a backend sending chat messages would.
#
#   1. Capacity: `wrk -t2 -c32` for SECONDS, as fast as the gateway answers: sends accepted/s, POST p50/p99, then
#      delivered/s (accepted ÷ time until the last was sent).
#   2. Half capacity: `wrk -t2 -c16` paced (each connection waits between its requests) at half the smaller of the
#      two rates, for 2 × SECONDS: POST p50/p99 and accepted → delivered p50/p99 (each job's sent time against its
#      notification's accepted time, from the database). Without faults its p99 must be at most 1 s (the issue's bar;
#      with faults the bar is none lost and duplicates bounded: FCM's 429 and 503 carry a Retry-After to wait out).
#
# Where the cores went in phase 1, as CPU per send: the gateway, the emulator, wrk, every other process (the database
# server) and idle, against the bare client's own and the emulator's in its run; and what the issue's ratio (0.5x
# SQLite, 0.4x PostgreSQL) would leave the gateway per send with the rest as measured. With one node, two more runs
# of SECONDS split the gateway's own CPU per send: the API alone (a `serve` with delivery off, the same sends) and the
# HTTP server's floor (an unknown path's 404, answered at once). Also from phase 1: how many jobs were handed over at
# enqueue or claimed from the queue, and the mean group commit of sends and of job ends (the gateway's
# `sealedpush_gateway_store_batch_size`).
#
# Then every accepted notification must be sent exactly as often as the emulator accepted it: 0 lost (every job
# `sent`, every apns-id at the emulator), duplicates (an apns-id the emulator accepted twice: a send whose answer was
# lost to a fault) at most the sends in flight (`delivery.maxConcurrentSends`: 128, or SLOTS). FCM names each message
# it accepts anew, so there the FCM emulator's own counts decide: it accepted as many messages as there are `sent`
# jobs plus the bare client's (none lost), and its duplicates (a message id, the envelope's, accepted again) are at
# most the sends in flight.
#
#   bash scripts/gateway-load.sh [STORE] [SECONDS]
#
# STORE: sqlite (default) or postgres (a new database on the server SEALEDPUSH_TEST_POSTGRES_URL names; dropped at
# the end). SECONDS: default 10. FAULTS=P makes the emulator answer 429, 500 and GOAWAY each with probability P
# (FAULTS=0.05: 15 % of requests fail; with PLATFORM=fcm: 429, 500 and 503). RATE=N paces the second phase at N
# sends/s instead of half the capacity.
# CONNECTIONS=N: phase 1 over N connections instead of 32 (more requests in flight for the group commits).
# SLOTS=N: the gateway's `delivery.maxConcurrentSends` instead of 128 (a slot is held until the job's end is recorded,
# so 128 slots keep fewer than 128 APNs requests in flight; the bare client keeps 128).
# BINDIR=... uses binaries built elsewhere instead of building in release. NODES=2 runs two gateway processes on the
# same database (node ids load-1 and load-2, each delivering) and one `wrk` per node with half the connections each:
# accepted/s is their sum, POST p50 and p99 the larger of the two; CPU per send counts both processes.
# PLATFORM=fcm: the devices are Android devices (FCM registration tokens), delivered to `sealed-push fcm-emulator`,
# and the bare client is `sealed-push fcm-send` (sealing each, 128 in flight) to the same emulator.
set -euo pipefail
cd "$(dirname "$0")/.."
store=${1:-sqlite}
seconds=${2:-10}
faults=${FAULTS:-0}
nodes=${NODES:-1}
connections=${CONNECTIONS:-32}
platform=${PLATFORM:-apns}
case "$platform" in apns | fcm) ;; *) echo "gateway-load: PLATFORM is apns or fcm" >&2; exit 2 ;; esac
case "$connections" in *[!0-9]* | "") echo "gateway-load: CONNECTIONS is a number" >&2; exit 2 ;; esac
(( connections >= nodes )) || { echo "gateway-load: CONNECTIONS is at least NODES" >&2; exit 2; }
case "$nodes" in 1 | 2) ;; *) echo "gateway-load: NODES is 1 or 2" >&2; exit 2 ;; esac
devices=1000
in_flight=${SLOTS:-128}
case "$in_flight" in *[!0-9]* | "") echo "gateway-load: SLOTS is a number" >&2; exit 2 ;; esac
command -v wrk >/dev/null || { echo "gateway-load: needs wrk (apt-get install wrk)" >&2; exit 2; }
rig_name=gateway-load
source "$(dirname "${BASH_SOURCE[0]}")/lib/gateway-rig.sh"
rig_binaries
rig_database "$store"
gateway2_pid=
trap '[ -n "$gateway2_pid" ] && kill "$gateway2_pid" 2>/dev/null && wait "$gateway2_pid" 2>/dev/null; rig_cleanup' EXIT

cd "$work"
"$S" apns-keygen --out AuthKey.p8 >/dev/null
"$G" init --dir gw --app-id load --topic com.example.load --team-id LOADTEAM01 --key-id LOADKEY001 \
    --apns-key AuthKey.p8 --database "$database" >init.out
key=$(sed -n 's/^API key.*: //p' init.out)
python3 - gw/gateway.json "$in_flight" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config.setdefault("delivery", {})["maxConcurrentSends"] = int(sys.argv[2])
config["delivery"]["nodeId"] = "load-1"
json.dump(config, open(sys.argv[1], "w"))
config["delivery"]["nodeId"] = "load-2"
json.dump(config, open(sys.argv[1].replace("gateway.json", "gateway-2.json"), "w"))
PY
if [ "$platform" = apns ]; then
    rig_start_apns_emulator LOADKEY001 LOADTEAM01 --record records.jsonl --fault-429 "$faults" --fault-500 "$faults" \
        --fault-goaway "$faults"
else
    rig_start_fcm_emulator load --fault-429 "$faults" --fault-500 "$faults" --fault-503 "$faults"
fi
start_serve() {  # CONFIG OUT [VAR=VALUE...]: a `serve` on a free loopback port; sets served_pid and served_port
    local config=$1 out=$2
    shift 2
    env "$@" SEALEDPUSH_GATEWAY_LISTEN=127.0.0.1:0 SEALEDPUSH_GATEWAY_LOG_LEVEL=warning "$G" serve --config "$config" \
        >"$out" 2>&1 &
    served_pid=$!
    wait_for "$out" "listening on port"
    served_port=$(sed -n 's/^listening on port \([0-9]*\).*/\1/p' "$out" | head -1)
}
start_serve gw/gateway.json serve.out
gateway_pid=$served_pid
api="http://127.0.0.1:$served_port/v1/apps/load"
apis=("$api")
if [ "$nodes" = 2 ]; then
    start_serve gw/gateway-2.json serve-2.out
    gateway2_pid=$served_pid
    apis+=("http://127.0.0.1:$served_port/v1/apps/load")
fi

if [ "$platform" = apns ]; then
    rig_register_apns_devices "$api" "$key" load "$devices"
else
    rig_register_fcm_devices "$api" "$key" load "$devices"
fi

# One device per send, a random one of the 1,000; PACE_MS > 0 makes each connection wait that long between requests.
cat >send.lua <<LUA
wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer $key"
wrk.headers["Content-Type"] = "application/json"
local pace = tonumber(os.getenv("PACE_MS") or "0")
math.randomseed(os.time())
request = function()
    local body = string.format(
        '{"devices":["load-%d"],"content":{"title":"Ana","body":"are we still on for lunch at one?"},"ttl":3600}',
        math.random(1, $devices))
    return wrk.format(nil, nil, nil, body)
end
if pace > 0 then delay = function() return pace end end
LUA

metric() {  # the sum of a counter over its labels (and over the nodes); a second argument keeps only the lines
    local a total=0  # that contain it (a label, e.g. path="claim")
    for a in "${apis[@]}"; do
        total=$(( total + $(curl -sS "${a%/v1/apps/load}/metrics" |
            awk -v name="$1" -v only="${2:-}" '($1 == name || index($1, name "{") == 1) && index($1, only) { t += $2 }
                END { printf "%d", t }') ))
    done
    printf "%d" "$total"
}
accepted_total() { metric sealedpush_gateway_sealed_total; }  # jobs (one device per send)
drain() {  # waits until every accepted job was sent; prints the time it happened
    local target=$1 stalled=0 previous=-1 done_count
    while :; do
        done_count=$(metric sealedpush_gateway_sent_total)
        (( done_count >= target )) && break
        if (( done_count == previous )); then stalled=$(( stalled + 1 )); else stalled=0; fi
        previous=$done_count
        (( stalled < 600 )) || { echo "gateway-load: delivery stalled at $done_count of $target" >&2; exit 1; }
        sleep 0.1
    done
    date +%s.%N
}
wrk_figures() {  # wrk output → "requests rate p50_ms p99_ms non2xx"
    python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def ms(label):
    m = re.search(r"^\s*" + label + r"\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
    value, unit = float(m.group(1)), m.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value
requests = int(re.search(r"(\d+) requests in", text).group(1))
rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
non2xx = int(m.group(1)) if (m := re.search(r"Non-2xx or 3xx responses: (\d+)", text)) else 0
errors = sum(int(x) for x in re.findall(r"(?:connect|read|write|timeout) (\d+)", text))
print(requests, rate, ms("50%"), ms("99%"), non2xx + errors)
PY
}
run_wrk() {  # CONNECTIONS SECONDS OUT: one wrk per node, each with CONNECTIONS / NODES; figures combined into OUT
    local connections=$(( $1 / nodes )) threads=$(( 2 / nodes )) i pids=()
    for i in "${!apis[@]}"; do
        wrk -t"$threads" -c"$connections" -d"$2s" --latency -s send.lua "${apis[$i]}/notifications" >"$3.$i" &
        pids+=($!)
    done
    wait "${pids[@]}"
    children_cpu "$3.cpu"  # wrk's CPU (every child waited for so far, read before and after)
    for i in "${!apis[@]}"; do wrk_figures "$3.$i"; done | python3 -c '
import sys
rows = [line.split() for line in sys.stdin if line.strip()]
print(sum(int(r[0]) for r in rows), sum(float(r[1]) for r in rows), max(float(r[2]) for r in rows),
      max(float(r[3]) for r in rows), sum(int(r[4]) for r in rows))' >"$3"
}

cpu_seconds() { rig_process_cpu "$gateway_pid" ${gateway2_pid:+"$gateway2_pid"}; }  # the gateway processes
emulator_cpu() { rig_process_cpu "$emulator_pid"; }
children_cpu() {  # FILE: user + system seconds of this script's children that ended and were waited for, into FILE
    times >"$1.times"  # (bash's `times`, in this shell: not in a pipeline or $(...), whose subshell has its own)
    sed -n 2p "$1.times" | awk '{ for (i = 1; i <= 2; i++) { split($i, p, "m"); t += p[1] * 60 + p[2] } }
        END { printf "%.2f", t }' >"$1"
}
per_send() {  # BEFORE AFTER COUNT: (AFTER - BEFORE) seconds as ms per one of COUNT
    python3 -c "print(($2 - $1) * 1000 / $3)"
}
machine_cpu() {  # busy and idle seconds of every core since boot (/proc/stat, 100 Hz)
    awk '$1 == "cpu" { printf "%.2f %.2f", ($2 + $3 + $4 + $7 + $8 + $9) / 100, ($5 + $6) / 100 }' /proc/stat
}

echo "==> capacity: wrk -t2 -c$connections -d${seconds}s over $nodes node(s) (faults $faults each of 429, 500, GOAWAY)" >&2
cpu_before=$(cpu_seconds)
emulator_before=$(emulator_cpu)
children_cpu capacity.cpu.before
read -r machine_busy_before machine_idle_before <<<"$(machine_cpu)"
begin=$(date +%s.%N)
run_wrk "$connections" "$seconds" capacity.txt
read -r cap_requests cap_rate cap_p50 cap_p99 cap_bad <capacity.txt
cap_accepted=$(accepted_total)
cap_done=$(drain "$cap_accepted")
cap_cpu=$(per_send "$cpu_before" "$(cpu_seconds)" "$cap_accepted")
# Where the cores went from the first POST until the last job was sent, in ms per send: the emulator, wrk, every
# other process (the database server, this script), idle.
read -r machine_busy_after machine_idle_after <<<"$(machine_cpu)"
cap_emulator=$(per_send "$emulator_before" "$(emulator_cpu)" "$cap_accepted")
cap_wrk=$(per_send "$(cat capacity.cpu.before)" "$(cat capacity.txt.cpu)" "$cap_accepted")
cap_busy=$(per_send "$machine_busy_before" "$machine_busy_after" "$cap_accepted")
cap_idle=$(per_send "$machine_idle_before" "$machine_idle_after" "$cap_accepted")
cap_delivered=$(python3 -c "print($cap_accepted / ($cap_done - $begin))")
cap_handed=$(metric sealedpush_gateway_jobs_started_total 'path="handover"')
cap_claimed=$(metric sealedpush_gateway_jobs_started_total 'path="claim"')
# The group commits so far, the capacity phase's (registering devices writes none): items written together.
group_mean() {  # WRITE: the mean batch of that group (sealedpush_gateway_store_batch_size{write=WRITE})
    local count
    count=$(metric sealedpush_gateway_store_batch_size_count "write=\"$1\"")
    python3 -c "print(f'{$(metric sealedpush_gateway_store_batch_size_sum "write=\"$1\"") / max(1, $count):.1f}')"
}
cap_groups="sends $(group_mean enqueue) a transaction, job ends $(group_mean finish)"

half=${RATE:-$(python3 -c "print(min($cap_rate, $cap_delivered) / 2)")}
pace=$(python3 -c "print(max(1, round(16 * 1000 / $half)))")
half_seconds=$(( 2 * seconds ))
echo "==> half capacity: ~${half%.*}/s (wrk -t2 -c16, ${pace} ms between a connection's requests) for ${half_seconds}s" >&2
half_begin_ms=$(python3 -c "import time; print(int(time.time() * 1000))")
PACE_MS=$pace run_wrk 16 "$half_seconds" half.txt
read -r half_requests half_rate half_p50 half_p99 half_bad <half.txt
total_accepted=$(accepted_total)
drain "$total_accepted" >/dev/null
sleep 1  # the emulator's record file is flushed in 64 KiB pieces and on exit
kill -TERM "$gateway_pid" ${gateway2_pid:+"$gateway2_pid"}
wait "$gateway_pid" || true; gateway_pid=
[ -z "$gateway2_pid" ] || { wait "$gateway2_pid" || true; gateway2_pid=; }
# The bare client in the same run: `sealed-push send` (or `fcm-send`), sealing each notification afresh, 128 in flight,
# to the same emulator (its faults too), as many as the capacity phase accepted.
"$S" keygen --out bare-server.key >/dev/null
device_public=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["publicKey"])' registration.json)
children_cpu bare.cpu.before
bare_emulator_before=$(emulator_cpu)
bare_begin=$(date +%s.%N)
if [ "$platform" = apns ]; then
    "$S" send --endpoint "https://127.0.0.1:$emulator_port" --ca emulator.pem --auth-key AuthKey.p8 \
        --key-id LOADKEY001 --team-id LOADTEAM01 --topic com.example.load --token "$(printf %064x 1)" \
        --server-key bare-server.key --device-public "$device_public" --title Ana \
        --body "are we still on for lunch at one?" --count "$cap_accepted" --concurrency 128 >bare.out 2>&1 ||
        { echo "gateway-load: the bare client failed:" >&2; tail -5 bare.out >&2; }
else
    "$S" fcm-send --service-account account.json --endpoint "https://127.0.0.1:$emulator_port" --ca emulator.pem \
        --token "$(rig_fcm_token load 1)" --application-id com.example.load --server-key bare-server.key \
        --device-public "$device_public" --title Ana --body "are we still on for lunch at one?" \
        --count "$cap_accepted" --concurrency 128 >bare.out 2>&1 ||
        { echo "gateway-load: the bare client failed:" >&2; tail -5 bare.out >&2; }
fi
bare_rate=$(python3 -c "print($cap_accepted / ($(date +%s.%N) - $bare_begin))")
children_cpu bare.cpu.after
bare_client_cpu=$(per_send "$(cat bare.cpu.before)" "$(cat bare.cpu.after)" "$cap_accepted")
bare_emulator_cpu=$(per_send "$bare_emulator_before" "$(emulator_cpu)" "$cap_accepted")
kill -INT "$emulator_pid"; wait "$emulator_pid" || true; emulator_pid=

# Each job: state, apns-id, accepted and sent times (ms).
query="SELECT j.state, COALESCE(j.apns_id, ''), n.created_at, j.updated_at FROM jobs j JOIN notifications n ON n.id = j.notification_id"
if [ "$store" = sqlite ]; then
    python3 -c 'import sqlite3,sys; [print("|".join(map(str, r))) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])]' \
        gw/gateway.sqlite "$query" >jobs.txt
else
    psql -At "$database" -c "$query" >jobs.txt
fi

# Where the gateway's own CPU goes, in two more runs of one node with delivery off (on the same store, after the checks
# above): the API alone (the same sends: request, key check, sealing, the durable group commit, the answer), and the
# HTTP server's floor (a request answered at once: an unknown path's 404 with the contract's Error object).
api_alone_cpu=nan api_alone_rate=nan floor_cpu=nan floor_rate=nan
if [ "$nodes" = 1 ]; then
    start_serve gw/gateway.json serve-parts.out SEALEDPUSH_GATEWAY_DELIVERY=off
    gateway_pid=$served_pid
    echo "==> the gateway's parts: the API alone (delivery off), then the HTTP server's floor, ${seconds}s each" >&2
    parts_before=$(cpu_seconds)
    wrk -t2 -c"$connections" -d"${seconds}s" --latency -s send.lua "http://127.0.0.1:$served_port/v1/apps/load/notifications" \
        >alone.txt
    read -r alone_requests api_alone_rate _ <<<"$(wrk_figures alone.txt)"
    parts_after=$(cpu_seconds)
    api_alone_cpu=$(per_send "$parts_before" "$parts_after" "$alone_requests")
    wrk -t2 -c"$connections" -d"${seconds}s" --latency "http://127.0.0.1:$served_port/v1/apps/load/nothing" >floor.txt
    read -r floor_requests floor_rate _ <<<"$(wrk_figures floor.txt)"
    floor_cpu=$(per_send "$parts_after" "$(cpu_seconds)" "$floor_requests")
    kill -TERM "$gateway_pid"; wait "$gateway_pid" || true; gateway_pid=
fi

CAP_GROUPS="$cap_groups" python3 - "$store" "$faults" "$seconds" "$half_begin_ms" "$(( in_flight * nodes ))" "$cap_cpu" "$bare_rate" "$nodes" \
    "$cap_requests" "$cap_rate" "$cap_p50" "$cap_p99" "$cap_bad" "$cap_accepted" "$cap_delivered" \
    "$half_requests" "$half_rate" "$half_p50" "$half_p99" "$half_bad" "$cap_handed" "$cap_claimed" \
    "$cap_emulator" "$cap_wrk" "$cap_busy" "$cap_idle" "$bare_client_cpu" "$bare_emulator_cpu" "$(nproc)" "$connections" \
    "$api_alone_cpu" "$api_alone_rate" "$floor_cpu" "$floor_rate" "$platform" <<'PY'
import collections, json, os, re, sys
store, faults, seconds, half_begin, in_flight = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
cap_cpu, bare_rate, nodes = float(sys.argv[6]), float(sys.argv[7]), int(sys.argv[8])
cap_requests, cap_rate, cap_p50, cap_p99, cap_bad, cap_accepted, cap_delivered = (
    int(sys.argv[9]), float(sys.argv[10]), float(sys.argv[11]), float(sys.argv[12]), int(sys.argv[13]), int(sys.argv[14]), float(sys.argv[15]))
half_requests, half_rate, half_p50, half_p99, half_bad = (
    int(sys.argv[16]), float(sys.argv[17]), float(sys.argv[18]), float(sys.argv[19]), int(sys.argv[20]))
cap_handed, cap_claimed = int(sys.argv[21]), int(sys.argv[22])
cap_emulator, cap_wrk, cap_busy, cap_idle, bare_client_cpu, bare_emulator_cpu = map(float, sys.argv[23:29])
cores, connections = int(sys.argv[29]), int(sys.argv[30])
api_alone_cpu, api_alone_rate, floor_cpu, floor_rate = map(float, sys.argv[31:35])
platform = sys.argv[35]
jobs = [line.rstrip("\n").split("|") for line in open("jobs.txt") if line.strip()]
states = collections.Counter(state for state, *_ in jobs)
latencies = sorted(int(sent) - int(accepted) for state, _, accepted, sent in jobs if state == "sent" and int(accepted) >= half_begin)
def pct(values, p): return values[min(len(values) - 1, int(len(values) * p / 100))] if values else float("nan")
if platform == "apns":
    sent_ids = {apns_id.lower() for state, apns_id, *_ in jobs if state == "sent"}
    accepted_ids = collections.Counter()  # the gateway's only (the bare client's sends are in the record too)
    for line in open("records.jsonl"):
        apns_id = json.loads(line)["apns-id"].lower()
        if apns_id in sent_ids: accepted_ids[apns_id] += 1
    missing = len(sent_ids - set(accepted_ids))
    duplicates = sum(count - 1 for count in accepted_ids.values())
    at_emulator = f"emulator accepted {sum(accepted_ids.values()):,} requests for {len(accepted_ids):,} apns-ids"
else:
    # FCM names every message it accepts anew: the FCM emulator's own counts (its stop line), less the bare client's.
    stopped = re.search(r"stopped: (\d+) sends, (\d+) accepted \((\d+) duplicate\)", open("emulator.out").read())
    bare = re.search(r"delivered: (\d+)/", open("bare.out").read())
    gateway_accepted = int(stopped.group(2)) - int(bare.group(1))
    duplicates = int(stopped.group(3))
    missing = max(0, states["sent"] - (gateway_accepted - duplicates))
    at_emulator = f"FCM emulator accepted {gateway_accepted:,} of the gateway's messages ({duplicates} again)"
lost = len(jobs) - states["sent"] + missing
provider, fault_kinds = ("APNs", "429/500/GOAWAY") if platform == "apns" else ("FCM", "429/500/503")
bare_name = "sealed-push send" if platform == "apns" else "sealed-push fcm-send"
print(f"\ngateway under load, {provider}, {store}, {nodes} node(s), faults {faults:g} each of {fault_kinds} (release build, one run)\n")
print("| phase | sends | accepted/s | POST p50 | POST p99 | delivered/s | accepted→delivered p50 | p99 | refused or errors |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
print(f"| capacity (wrk -c{connections}, {seconds} s) | {cap_accepted:,} | {cap_rate:,.0f} | {cap_p50:.1f} ms | {cap_p99:.1f} ms | {cap_delivered:,.0f} | | | {cap_bad} |")
print(f"| half capacity (wrk -c16 paced, {2 * seconds} s) | {half_requests:,} | {half_rate:,.0f} | {half_p50:.1f} ms | {half_p99:.1f} ms | | "
      f"{pct(latencies, 50):,} ms | {pct(latencies, 99):,} ms | {half_bad} |")
print(f"\ngateway CPU per send at capacity: {cap_cpu:.3f} ms; bare `{bare_name}` (sealing each, 128 in flight, "
      f"same emulator): {bare_rate:,.0f}/s; gateway delivered / bare: {cap_delivered / bare_rate:.2f}x")
print(f"capacity phase: {cap_handed:,} jobs handed over at enqueue, {cap_claimed:,} claimed from the queue; "
      f"group commits (mean): {os.environ['CAP_GROUPS']}")
# The cores' budget: what the issue's ratio (0.5x SQLite, 0.4x PostgreSQL) would leave the gateway per send, if the
# emulator, wrk and the other processes cost per send what they cost in this run and every core were busy.
others = max(0.0, cap_busy - cap_cpu - cap_emulator - cap_wrk)
print(f"CPU per send at capacity (ms, {cores} cores): gateway {cap_cpu:.3f}, emulator {cap_emulator:.3f}, wrk {cap_wrk:.3f}, "
      f"other processes {others:.3f} (the database server, this script), idle {cap_idle:.3f}; "
      f"bare run: client {bare_client_cpu:.3f}, emulator {bare_emulator_cpu:.3f}")
target = 0.5 if store == "sqlite" else 0.4
budget = cores * 1000 / (target * bare_rate) - cap_emulator - cap_wrk - others
print(f"for {target:g}x ({target * bare_rate:,.0f} delivered/s) the cores leave the gateway {budget:.3f} ms per send "
      f"(it spent {cap_cpu:.3f})")
if api_alone_cpu == api_alone_cpu:  # not NaN: one node
    print(f"the gateway's parts (ms of its CPU per send): the API alone (delivery off, {api_alone_rate:,.0f} accepted/s) "
          f"{api_alone_cpu:.3f}, of which the HTTP server's floor (a 404 answered at once, {floor_rate:,.0f}/s) "
          f"{floor_cpu:.3f}; delivery adds {cap_cpu - api_alone_cpu:.3f}; the bare client spends {bare_client_cpu:.3f} "
          f"sealing and sending")
print(f"\njobs: {len(jobs):,} ({dict(states)}); {at_emulator}; lost {lost}; duplicates {duplicates} "
      f"(bound: {in_flight} in flight)")
# The issue's latency bar is for a clean run; with faults it asks for none lost and duplicates within the bound (a
# 429 or 503 from FCM carries Retry-After, 1 s from the emulator, which a client must wait out: p99 is over 1 s there).
ok = lost == 0 and duplicates <= in_flight and cap_bad == 0 and half_bad == 0
bar = "0 lost, duplicates ≤ in flight"
if faults == 0:
    ok = ok and pct(latencies, 99) <= 1000
    bar = "p99 accepted→delivered at half capacity ≤ 1 s, " + bar
print(f"{bar}:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
