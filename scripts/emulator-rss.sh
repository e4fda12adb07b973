#!/usr/bin/env bash
# Measures the resident memory of a `sealed-push emulator` process before and after a sustained load sent by
# `sealed-push send` (both real processes on loopback): VmRSS after a 1,000-notification warm-up, then after COUNT
# more, and the peak (VmHWM).
#
#   scripts/emulator-rss.sh [CLI] [COUNT] [-- extra emulator options, e.g. --record /tmp/history.jsonl]
#
# CLI defaults to .build/release/sealed-push, COUNT to 200000 (545-byte bodies to 1,000 device tokens, 100 in flight).
set -euo pipefail
cli=${1:-.build/release/sealed-push}
count=${2:-200000}
shift $(( $# >= 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift
extra=("$@")

work=$(mktemp -d)
emulator_pid=
cleanup() {
    [ -n "$emulator_pid" ] && kill "$emulator_pid" 2>/dev/null && wait "$emulator_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

"$cli" apns-keygen --out "$work/AuthKey.p8" >/dev/null
"$cli" emulator --cert-out "$work/cert.pem" --auth-key "$work/AuthKey.p8" --key-id RSSKEY0001 --team-id RSSTEAM001 \
    "${extra[@]}" >"$work/emulator.out" 2>&1 &
emulator_pid=$!
for _ in $(seq 1 100); do grep -q "listening on" "$work/emulator.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' "$work/emulator.out")
[ -n "$port" ] || { cat "$work/emulator.out"; exit 1; }

# A body of the size of a sealed notification (545 bytes).
printf '{"aps":{"alert":{"body":"New notification"},"mutable-content":1},"sp":"%s"}' "$(head -c 360 /dev/zero | base64 -w0 | head -c 472)" >"$work/payload.json"
tokens=()
for i in $(seq 1 1000); do tokens+=(--token "$(printf '%064x' "$i")"); done
send() {
    "$cli" send --endpoint "https://127.0.0.1:$port" --ca "$work/cert.pem" --auth-key "$work/AuthKey.p8" \
        --key-id RSSKEY0001 --team-id RSSTEAM001 --topic com.example.rss "${tokens[@]}" --count "$1" \
        --payload "$work/payload.json" 2>/dev/null
}
rss() { awk -v key="$1:" '$1 == key { printf "%.1f", $2 / 1024 }' "/proc/$emulator_pid/status"; }

started=$(rss VmRSS)
send 1 >/dev/null
warm=$(rss VmRSS)
begin=$(date +%s.%N)
send $(( count / 1000 )) | sed 's/^/  send: /'
end=$(date +%s.%N)
after=$(rss VmRSS)
peak=$(rss VmHWM)
kill -TERM "$emulator_pid"
wait "$emulator_pid" || true
emulator_pid=
sed 's/^/  emulator: /' "$work/emulator.out"
printf 'emulator RSS: %s MB at start, %s MB after 1,000 notifications, %s MB after %s more (peak %s MB); send took %.1f s\n' \
    "$started" "$warm" "$after" "$count" "$peak" "$(echo "$end - $begin" | bc)"
