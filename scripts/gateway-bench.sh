#!/usr/bin/env bash
# Gateway throughput, API accepted → delivered, in a release build, one run (issue 17's release figures and issue
# 18 §5's "Gateway API → delivered on FCM ≥ 0.5× the bare FCM client"). A real `sealed-push-gateway serve` with
# delivery on, 1,000 devices registered over the API, COUNT deliveries posted as send requests to 1,000 devices each
# (two requests in flight, content sealed per device by the gateway), timed from the first POST until
# `sealedpush_gateway_sent_total` reaches COUNT. Then the bare client — `sealed-push send` (APNs) or `sealed-push
# fcm-send` (FCM), sealing each notification afresh, 128 in flight: the gateway's default `maxConcurrentSends` — sends
# COUNT to the same emulator. Prints both rates, the gateway's CPU per delivery, and the ratio.
#
#   bash scripts/gateway-bench.sh [PLATFORM] [STORE] [COUNT]
#
# RECEIPTS=1 adds a second round of COUNT deliveries while a receipt about every delivery of the first round is
# posted (issue 20 §3: the receipt path's share of delivered/s at full load). RECEIPT_NODE=1 (with RECEIPTS=1) takes
# the receipts on a second `serve` of the same store with delivery off — the deployment the README gives for heavy
# receipt traffic — and splits the two cores as two machines would be: the delivering gateway, the emulator and the
# senders on CPU 0 in both rounds, the receipt node and the poster on CPU 1 (`taskset`). On PostgreSQL the database
# server's processes go on CPU DATABASE_CPU (default 1, with the receipts; 0: with the delivering side) for the run —
# there is no third core for it here — and get every CPU back at the end.
#
# PLATFORM: fcm (default) or apns. STORE: sqlite (default) or postgres (a new database on the server
# SEALEDPUSH_TEST_POSTGRES_URL names, e.g. after `eval "$(bash scripts/postgres-test.sh start)"`; dropped at the
# end). COUNT: deliveries, a multiple of 1,000 (default 20000). BINDIR=... uses binaries built elsewhere instead of
# building in release.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f scripts/deps ] && source scripts/deps
platform=${1:-fcm}
store=${2:-sqlite}
count=${3:-20000}
devices=1000
case "$platform" in apns | fcm) ;; *) echo "gateway-bench: PLATFORM is apns or fcm" >&2; exit 2 ;; esac
(( count % devices == 0 )) || { echo "gateway-bench: COUNT must be a multiple of $devices" >&2; exit 2; }
rig_name=gateway-bench
source "$(dirname "${BASH_SOURCE[0]}")/lib/gateway-rig.sh"
rig_binaries
rig_database "$store"
receipt_node=${RECEIPT_NODE:-0}
pin_delivery=() pin_receipts=()
receipt_pid= postmaster=
pin_database() {  # CPUS: every process of the PostgreSQL server (the postmaster and its children) on CPUS
    local p status=0  # each process tried (a child may have ended meanwhile); fails if any was not moved
    for p in "$postmaster" $(pgrep -P "$postmaster"); do taskset -a -cp "$1" "$p" >/dev/null || status=1; done
    return "$status"
}
bench_cleanup() {
    [ -n "$receipt_pid" ] && kill "$receipt_pid" 2>/dev/null && wait "$receipt_pid" 2>/dev/null
    if [ -n "$postmaster" ]; then  # the database server's processes get every CPU back
        pin_database "0-$(( $(nproc) - 1 ))" 2>/dev/null || true
    fi
    rig_cleanup
}
trap bench_cleanup EXIT
if [ "$receipt_node" = 1 ]; then
    [ "${RECEIPTS:-0}" = 1 ] || { echo "gateway-bench: RECEIPT_NODE=1 needs RECEIPTS=1" >&2; exit 2; }
    (( $(nproc) >= 2 )) || { echo "gateway-bench: RECEIPT_NODE=1 needs two CPUs" >&2; exit 2; }
    pin_delivery=(taskset -c 0) pin_receipts=(taskset -c 1)
    if [ "$store" = postgres ]; then
        data_directory=$(psql -At "$database" -c "SHOW data_directory")
        [ -r "$data_directory/postmaster.pid" ] || {
            echo "gateway-bench: RECEIPT_NODE=1 pins the PostgreSQL server's processes: it must run on this machine" >&2
            exit 2
        }
        postmaster=$(head -1 "$data_directory/postmaster.pid")
        pin_database "${DATABASE_CPU:-1}"
    fi
fi

cd "$work"
"$S" apns-keygen --out AuthKey.p8 >/dev/null
"$S" keygen --out bare-server.key >/dev/null
"$G" init --dir gw --app-id bench --topic com.example.bench --team-id BENCHTEAM1 --key-id BENCHKEY01 \
    --apns-key AuthKey.p8 --database "$database" >init.out
key=$(sed -n 's/^API key.*: //p' init.out)
rig_lift_receipt_limit gw/gateway.json  # for the receipt round
rig_emulator_prefix=("${pin_delivery[@]}")
if [ "$platform" = apns ]; then
    rig_start_apns_emulator BENCHKEY01 BENCHTEAM1
else
    rig_start_fcm_emulator bench
fi
SEALEDPUSH_GATEWAY_LISTEN=127.0.0.1:0 SEALEDPUSH_GATEWAY_LOG_LEVEL=warning "${pin_delivery[@]}" "$G" serve \
    --config gw/gateway.json >serve.out 2>&1 &
gateway_pid=$!
wait_for serve.out "listening on port"
port=$(sed -n 's/^listening on port \([0-9]*\).*/\1/p' serve.out | head -1)
api="http://127.0.0.1:$port/v1/apps/bench"

# 1,000 devices (one key ring, distinct tokens), registered 8 at a time.
if [ "$platform" = apns ]; then
    rig_register_apns_devices "$api" "$key" bench "$devices"
else
    rig_register_fcm_devices "$api" "$key" bench "$devices"
fi
device_public=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["publicKey"])' registration.json)
ids=$(seq 1 "$devices" | sed 's/.*/"bench-&"/' | paste -sd,)
content='a notification of ordinary length for the benchmark, about as long as a chat message'
printf '{"devices":[%s],"content":{"title":"Bench","body":"%s"},"ttl":3600}' "$ids" "$content" >send.json

sent() {  # the sum of sealedpush_gateway_sent_total over its labels
    curl -sS "http://127.0.0.1:$port/metrics" |
        awk '$1 == "sealedpush_gateway_sent_total" || index($1, "sealedpush_gateway_sent_total{") == 1 { t += $2 } END { printf "%d", t }'
}
cpu_seconds() { rig_process_cpu "$gateway_pid"; }

requests=$(( count / devices ))
cpu_before=$(cpu_seconds)
begin=$(date +%s.%N)
echo "==> gateway ($platform, $store): $requests send requests × $devices devices" >&2
seq 1 "$requests" | "${pin_delivery[@]}" xargs -P 2 -I{} curl -sS --fail-with-body -o /dev/null -X POST "$api/notifications" \
    -H "Authorization: Bearer $key" -H 'Content-Type: application/json' --data-binary @send.json
accepted_at=$(date +%s.%N)
stalled=0 previous=-1 done_count=0
while (( done_count < count )); do
    sleep 0.1
    done_count=$(sent)
    if (( done_count == previous )); then stalled=$(( stalled + 1 )); else stalled=0; fi
    previous=$done_count
    (( stalled < 600 )) || { echo "gateway-bench: delivery stalled at $done_count of $count" >&2; tail -20 serve.out >&2; exit 1; }
done
finish=$(date +%s.%N)
cpu_after=$(cpu_seconds)

receipt_figures=""
if [ "${RECEIPTS:-0}" = 1 ]; then
    # Issue 20 §3: the same load again while the devices post a `decrypted` receipt about every delivery of the
    # first round (sealed by the shared key ring, posted by 4 keep-alive connections as fast as the gateway takes
    # them): one receipt per delivery, at full load.
    rig_seal_receipts "$store" com.example.bench
    echo "==> gateway again, with $(wc -l <ids.txt) receipts posted meanwhile" >&2
    cat >post_receipts.py <<'PY'
import http.client, os, sys, threading, time, urllib.parse
url, path, threads = urllib.parse.urlparse(sys.argv[1]), sys.argv[2], int(sys.argv[3])
data = open(path, "rb").read()
receipts = [data[i:i + 354] for i in range(0, len(data), 354)]
statuses, lock = {}, threading.Lock()
def worker(part):
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    for receipt in part:
        connection.request("POST", url.path, body=receipt, headers={"Content-Type": "application/octet-stream"})
        response = connection.getresponse(); response.read()
        with lock: statuses[response.status] = statuses.get(response.status, 0) + 1
begin = time.time()
workers = [threading.Thread(target=worker, args=(receipts[i::threads],)) for i in range(threads)]
[w.start() for w in workers]; [w.join() for w in workers]
cpu = sum(os.times()[:2])  # this poster's own CPU (its threads), which competes for the same cores
print(f"{len(receipts)} {time.time() - begin:.3f} {cpu:.2f} {statuses}")
PY
    receipts_api=$api receipt_cpu_pid=$gateway_pid
    if [ "$receipt_node" = 1 ]; then
        SEALEDPUSH_GATEWAY_LISTEN=127.0.0.1:0 SEALEDPUSH_GATEWAY_LOG_LEVEL=warning SEALEDPUSH_GATEWAY_DELIVERY=off \
            "${pin_receipts[@]}" "$G" serve --config gw/gateway.json >serve-receipts.out 2>&1 &
        receipt_pid=$! receipt_cpu_pid=$!
        wait_for serve-receipts.out "listening on port"
        receipts_api="http://127.0.0.1:$(sed -n 's/^listening on port \([0-9]*\).*/\1/p' serve-receipts.out | head -1)/v1/apps/bench"
        echo "==> receipts taken by a second serve (delivery off) on CPU 1; delivery, emulator and senders on CPU 0" >&2
    fi
    receipt_cpu_before=$(rig_process_cpu "$receipt_cpu_pid")
    cpu_receipts_before=$(cpu_seconds)
    receipts_begin=$(date +%s.%N)
    "${pin_receipts[@]}" python3 post_receipts.py "$receipts_api/receipts" receipts.bin 4 >receipts.out &
    poster=$!
    seq 1 "$requests" | "${pin_delivery[@]}" xargs -P 2 -I{} curl -sS --fail-with-body -o /dev/null -X POST "$api/notifications" \
        -H "Authorization: Bearer $key" -H 'Content-Type: application/json' --data-binary @send.json
    while (( $(sent) < 2 * count )); do sleep 0.1; done
    receipts_deliveries_done=$(date +%s.%N)
    wait "$poster"
    receipts_finish=$(date +%s.%N)
    cpu_receipts_after=$(cpu_seconds)
    receipt_cpu_after=$(rig_process_cpu "$receipt_cpu_pid")
    if [ "$receipt_node" = 1 ]; then kill -TERM "$receipt_pid"; wait "$receipt_pid" || true; receipt_pid=; fi
    receipt_figures="$receipts_begin $receipts_deliveries_done $receipts_finish $cpu_receipts_before $cpu_receipts_after"
    receipt_figures+=" $receipt_node $receipt_cpu_before $receipt_cpu_after"
    cat receipts.out >&2
fi
kill -TERM "$gateway_pid"; wait "$gateway_pid" || true; gateway_pid=

echo "==> bare client: $count sealed afresh, 128 in flight" >&2
bare_begin=$(date +%s.%N)
if [ "$platform" = apns ]; then
    "${pin_delivery[@]}" "$S" send --endpoint "https://127.0.0.1:$emulator_port" --ca emulator.pem --auth-key AuthKey.p8 \
        --key-id BENCHKEY01 --team-id BENCHTEAM1 --topic com.example.bench --token "$(printf %064x 1)" \
        --server-key bare-server.key --device-public "$device_public" --title Bench --body "$content" \
        --count "$count" --concurrency 128 >bare.out 2>&1
else
    "${pin_delivery[@]}" "$S" fcm-send --service-account account.json --endpoint "https://127.0.0.1:$emulator_port" --ca emulator.pem \
        --token "$(rig_fcm_token bench 1)" --application-id com.example.bench --server-key bare-server.key \
        --device-public "$device_public" --title Bench --body "$content" --count "$count" --concurrency 128 \
        >bare.out 2>&1
fi
bare_finish=$(date +%s.%N)
tail -1 bare.out >&2

python3 - "$platform" "$store" "$count" "$begin" "$accepted_at" "$finish" "$bare_begin" "$bare_finish" \
    "$cpu_before" "$cpu_after" "$(cat receipts.out 2>/dev/null || true)" $receipt_figures <<'PY'
import sys
platform, store, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
begin, accepted, finish, bare_begin, bare_finish, cpu0, cpu1 = map(float, sys.argv[4:11])
gateway = count / (finish - begin)
bare = count / (bare_finish - bare_begin)
target = 0.5 if store == "sqlite" else 0.4
print(f"\ngateway API → delivered, {platform.upper()}, {store}, {count} deliveries (release build, one run)\n")
print("| sender | deliveries/s | API accepted in | gateway CPU ms per delivery |")
print("|---|---:|---:|---:|")
print(f"| gateway (serve, {store}) | {gateway:,.0f} | {accepted - begin:.1f} s | {(cpu1 - cpu0) * 1000 / count:.3f} |")
print(f"| bare {'sealed-push send' if platform == 'apns' else 'sealed-push fcm-send'} | {bare:,.0f} | | |")
verdict = "PASS" if gateway / bare >= target else "below"
if len(sys.argv) >= 20 and sys.argv[17] == "1":
    verdict = "both on CPU 0 alone: not the two-core figure the target is about"
print(f"\nratio gateway / bare client: {gateway / bare:.2f}x (target >= {target}x: {verdict})")
if len(sys.argv) >= 20:
    summary = sys.argv[11].split()
    posted, post_seconds, poster_cpu = int(summary[0]), float(summary[1]), float(summary[2])
    statuses = " ".join(summary[3:])
    r_begin, r_delivered, r_finish, r_cpu0, r_cpu1 = map(float, sys.argv[12:17])
    separate = sys.argv[17] == "1"
    node_cpu0, node_cpu1 = map(float, sys.argv[18:20])
    with_receipts = count / (r_delivered - r_begin)
    where = ("to a second serve (delivery off) on CPU 1, the delivering gateway, emulator and senders on CPU 0 in "
             "both rounds" if separate else "to the delivering gateway, on the same cores")
    print(f"\nwith receipts: the same {count} deliveries while {posted:,} receipts were posted {where} ({statuses})\n")
    print("| round | deliveries/s | receipts/s | gateway CPU ms per delivery |")
    print("|---|---:|---:|---:|")
    print(f"| deliveries alone | {gateway:,.0f} | | {(cpu1 - cpu0) * 1000 / count:.3f} |")
    share = "" if separate else " (receipts' share included)"
    print(f"| deliveries + receipts | {with_receipts:,.0f} | {posted / post_seconds:,.0f} | {(r_cpu1 - r_cpu0) * 1000 / count:.3f}{share} |")
    if separate:
        receipt_cpu = (node_cpu1 - node_cpu0) * 1000 / posted
    else:
        receipt_cpu = ((r_cpu1 - r_cpu0) - (cpu1 - cpu0)) * 1000 / posted
    taker = "the receipt node's" if separate else "gateway"
    print(f"\n{taker} CPU per receipt: {receipt_cpu:.3f} ms; the poster (Python, on the same cores) used "
          f"{poster_cpu * 1000 / posted:.3f} ms per receipt ({poster_cpu / post_seconds:.2f} of a core while posting)")
    cost = 1 - with_receipts / gateway
    print(f"\nthe receipt path takes {cost * 100:.1f} % of delivered/s (target <= 10 %: {'PASS' if cost <= 0.10 else 'above'})")
PY
