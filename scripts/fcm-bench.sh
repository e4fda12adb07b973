#!/usr/bin/env bash
# FCM delivery figures (issue 18 §5), release build, one run, the same FCM emulator for every sender at equal
# concurrency: our client (`sealed-push fcm-send`, sealing each notification afresh; and `--seal-once`, the client
# and HTTP/2 alone: the floor under our sealing) against Google's own Firebase Admin SDK for Python
# (`send_each`, its batch API: a thread per message; `send_each_async`: asyncio and httpx over HTTP/2). Prints
# notifications per second and the sender's CPU time per notification, and the ratios.
#
#   bash scripts/fcm-bench.sh [COUNT] [CONCURRENCY]    defaults 20000 and 64 (firebase-admin sends COUNT/4)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f scripts/deps ] && source scripts/deps
count=${1:-20000}
concurrency=${2:-64}
admin_count=$((count / 4))
swift build -c release --product sealed-push >&2
S="$(swift build -c release --show-bin-path)/sealed-push"
python3 -c "import firebase_admin" 2>/dev/null || python3 -m pip install -q "firebase-admin>=6,<8"
work=$(mktemp -d /tmp/sealed-push-fcm-bench.XXXXXX)
emulator=""
cleanup() {
    [ -n "$emulator" ] && kill -TERM "$emulator" 2>/dev/null && wait "$emulator" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
"$S" fcm-emulator --port 0 --cert-out "$work/fcm.pem" --service-account-out "$work/account.json" --project bench \
    --keep-total 0 >"$work/emulator.out" 2>&1 &
emulator=$!
for _ in $(seq 300); do grep -q 'listening on' "$work/emulator.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/^FCM emulator listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/emulator.out")
[ -n "$port" ] || { cat "$work/emulator.out" >&2; exit 1; }
"$S" keygen --out "$work/server.key" >/dev/null
"$S" device init --keyring "$work/ring" >"$work/registration.json"
device=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["publicKey"])' "$work/registration.json")
token="bEnchT0ken:APA91bHk2-Rz8yWcQx7LmV0sNtP4aJ6fUo1iE5rB9dG3hK8wX2cY7vZ0qT6uM4nS1pL9jF3gD8k"
body=$(python3 -c 'print("x" * 2000)')  # 2,000 bytes of content: an envelope of about 3 KB

# Runs a command, prints "WALL CPU" of it and its children (CPU: user + sys).
measure() {
    python3 - "$@" <<'PY'
import resource, subprocess, sys, time
started = time.monotonic()
result = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
wall = time.monotonic() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
if result.returncode != 0:
    sys.stderr.write(result.stdout + result.stderr)
    sys.exit(result.returncode)
sys.stderr.write(result.stdout.splitlines()[-1] if result.stdout else "")
sys.stderr.write("\n")
print(f"{wall:.3f} {usage.ru_utime + usage.ru_stime:.3f}")
PY
}
ours() {
    measure "$S" fcm-send --service-account "$work/account.json" --endpoint "https://127.0.0.1:$port" --ca "$work/fcm.pem" \
        --token "$token" --application-id com.example.bench --server-key "$work/server.key" --device-public "$device" \
        --body "$body" --count "$count" --concurrency "$concurrency" "$@"
}
admin() {
    python3 scripts/fcm_admin_bench.py "$work/account.json" "$work/fcm.pem" "https://127.0.0.1:$port" "$token" \
        "$admin_count" "$concurrency" "$1" | tee /dev/stderr | sed -n 's/.* sent, 0 failed, \([0-9.]*\) s, \([0-9.]*\) s CPU/\1 \2/p'
}
echo "==> ours: fcm-send, each notification sealed afresh ($count at concurrency $concurrency)" >&2
read -r ours_wall ours_cpu < <(ours)
echo "==> floor: fcm-send --seal-once (the client and HTTP/2, no sealing)" >&2
read -r floor_wall floor_cpu < <(ours --seal-once)
echo "==> firebase-admin send_each ($admin_count, chunks of $concurrency)" >&2
read -r each_wall each_cpu < <(admin send-each)
echo "==> firebase-admin send_each_async ($admin_count, chunks of $concurrency)" >&2
read -r async_wall async_cpu < <(admin send-each-async)
python3 - "$count" "$admin_count" "$concurrency" "$ours_wall" "$ours_cpu" "$floor_wall" "$floor_cpu" \
    "$each_wall" "$each_cpu" "$async_wall" "$async_cpu" <<'PY'
import sys
count, admin_count, concurrency = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
ow, oc, fw, fc, ew, ec, aw, ac = map(float, sys.argv[4:12])
rows = [
    ("SealedPushFCM, sealing each (fcm-send)", count, ow, oc),
    ("SealedPushFCM, sealed once (--seal-once): floor", count, fw, fc),
    ("firebase-admin send_each (threads)", admin_count, ew, ec),
    ("firebase-admin send_each_async (httpx, HTTP/2)", admin_count, aw, ac),
]
print(f"\nFCM delivery against the FCM emulator on loopback, concurrency {concurrency} (release build, one run)\n")
print("| sender | notifications | notifications/s | CPU ms per notification |")
print("|---|---:|---:|---:|")
for name, n, wall, cpu in rows:
    print(f"| {name} | {n} | {n / wall:,.0f} | {cpu * 1000 / n:.3f} |")
ours_rate, floor_rate = count / ow, count / fw
best_admin = max(admin_count / ew, admin_count / aw)
print(f"\nours / floor: {ours_rate / floor_rate:.2f}x the rate; ours / best firebase-admin: {ours_rate / best_admin:.1f}x "
      f"the rate (target >= 3x); CPU per notification: ours {oc * 1000 / count:.3f} ms, "
      f"firebase-admin {min(ec, ac) * 1000 / admin_count:.3f} ms")
PY
