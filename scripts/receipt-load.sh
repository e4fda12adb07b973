#!/usr/bin/env bash
# The receipt endpoint alone, release build (issue 20 §3): what one receipt costs the gateway when nothing else runs.
# A real `sealed-push-gateway serve` with delivery off, 1,000 devices registered over the API (one key ring), 20
# sends to all of them (20,000 jobs, each with its message id), then a `decrypted` receipt about every job sealed
# by `sealed-push seal-receipts` and posted by `wrk` (Debian's, 2 threads, 4 keep-alive connections, a Lua script
# that walks the receipts) for SECONDS: receipts taken per second and the gateway's CPU per receipt, beside the
# HPKE open alone (`sealed-push-bench --only receipt`: 36 µs). A receipt posted again once `wrk` has walked all of
# them is refused as a replay (422) after the same checks and open, so it costs about the same.
#
#   bash scripts/receipt-load.sh [STORE] [SECONDS]
#
# STORE: sqlite (default) or postgres (a new database on the server SEALEDPUSH_TEST_POSTGRES_URL names; dropped at
# the end). SECONDS: default 5. BINDIR=... uses binaries built elsewhere instead of building in release.
set -euo pipefail
cd "$(dirname "$0")/.."
store=${1:-sqlite}
seconds=${2:-5}
devices=1000
command -v wrk >/dev/null || { echo "receipt-load: needs wrk (apt-get install wrk)" >&2; exit 2; }
rig_name=receipt-load
source "$(dirname "${BASH_SOURCE[0]}")/lib/gateway-rig.sh"
rig_binaries
rig_database "$store"

cd "$work"
"$S" apns-keygen --out AuthKey.p8 >/dev/null
"$G" init --dir gw --app-id bench --topic com.example.bench --team-id BENCHTEAM1 --key-id BENCHKEY01 \
    --apns-key AuthKey.p8 --database "$database" >init.out
key=$(sed -n 's/^API key.*: //p' init.out)
rig_lift_receipt_limit gw/gateway.json
SEALEDPUSH_GATEWAY_DELIVERY=off SEALEDPUSH_GATEWAY_LISTEN=127.0.0.1:0 SEALEDPUSH_GATEWAY_LOG_LEVEL=warning \
    "$G" serve --config gw/gateway.json >serve.out 2>&1 &
gateway_pid=$!
wait_for serve.out "listening on port"
port=$(sed -n 's/^listening on port \([0-9]*\).*/\1/p' serve.out | head -1)
api="http://127.0.0.1:$port/v1/apps/bench"

rig_register_apns_devices "$api" "$key" bench "$devices"
ids=$(seq 1 "$devices" | sed 's/.*/"bench-&"/' | paste -sd,)
printf '{"devices":[%s],"content":{"title":"Bench","body":"a receipt is about this"},"ttl":3600}' "$ids" >send.json
for _ in $(seq 1 20); do
    curl -sS --fail-with-body -o /dev/null -X POST "$api/notifications" -H "Authorization: Bearer $key" \
        -H 'Content-Type: application/json' --data-binary @send.json
done
rig_seal_receipts "$store" com.example.bench
cat >post.lua <<LUA
local file = io.open("$work/receipts.bin", "rb")
local data = file:read("*all")
file:close()
local count = #data / 354
local threads = 0
function setup(thread)
    threads = threads + 1
    thread:set("first", threads - 1)
end
function init(args)
    index = first
end
function request()
    local i = index % count
    index = index + 2
    return wrk.format("POST", "/v1/apps/bench/receipts", {["Content-Type"] = "application/octet-stream"},
        data:sub(i * 354 + 1, i * 354 + 354))
end
LUA
cpu_seconds() { rig_process_cpu "$gateway_pid"; }
echo "==> $(wc -l <ids.txt) receipts posted by wrk -t2 -c4 for ${seconds}s" >&2
cpu_before=$(cpu_seconds)
wrk -t2 -c4 -d"${seconds}s" -s post.lua "http://127.0.0.1:$port" >wrk.out 2>&1
cpu_after=$(cpu_seconds)
taken=$(curl -sS "http://127.0.0.1:$port/metrics" |
    awk 'index($1, "sealedpush_gateway_receipts_total{") == 1 { t += $2 } END { printf "%d", t }')
python3 - "$store" "$seconds" "$cpu_before" "$cpu_after" "$taken" wrk.out <<'PY'
import re, sys
store, seconds, cpu0, cpu1, taken = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
out = open(sys.argv[6]).read()
requests, elapsed = re.search(r"(\d+) requests in ([\d.]+)(m?s)", out).group(1, 2)
unit = re.search(r"\d+ requests in [\d.]+(m?s)", out).group(1)
requests, elapsed = int(requests), float(elapsed) / (1000 if unit == "ms" else 1)
refused = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
refused = int(refused.group(1)) if refused else 0
print(f"\nreceipt endpoint alone, {store} (release build, delivery off, one run)\n")
print("| receipts posted | taken (204) | refused as replays | receipts/s | gateway CPU per receipt |")
print("|---:|---:|---:|---:|---:|")
print(f"| {requests:,} | {taken:,} | {refused:,} | {requests / elapsed:,.0f} | {(cpu1 - cpu0) * 1e6 / requests:.0f} µs |")
PY
