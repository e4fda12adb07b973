#!/usr/bin/env bash
# Property-based fuzzing of the gateway's HTTP API from its contract alone: schemathesis (PyPI) reads
# Specs/gateway-api.yaml, generates valid and invalid requests for every operation, and runs every check it has
# (no 5xx, responses and headers as the contract declares, 405 for undeclared methods, …) against the real
# `sealed-push-gateway serve` process on loopback (a fresh SQLite gateway from `init` with a blob store, delivery off).
#
#   bash scripts/schemathesis.sh [MAX_EXAMPLES]     # default 60 per operation; exits non-zero on any failure
#
# Settings and the few deliberate exceptions, each with its reason, are in Specs/tools/schemathesis.toml. Needs the
# debug build of sealed-push-gateway and sealed-push (built when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
examples="${1:-60}"
python3 -c "import schemathesis" 2>/dev/null || python3 -m pip install -q "schemathesis>=4.32,<5"
bin=$(swift build --show-bin-path)
[ -x "$bin/sealed-push-gateway" ] && [ -x "$bin/sealed-push" ] ||
    swift build --product sealed-push-gateway --product sealed-push >&2
work=$(mktemp -d)
pid=""
cleanup() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

"$bin/sealed-push-gateway" init --dir "$work/gw" --app-id chat --topic com.example.chat >"$work/init.out"
key=$(sed -n 's/^API key.*: //p' "$work/init.out")
# A blob store, so uploaded attachments are encrypted for real; no host may be fetched from (generated URLs would
# send the gateway to random hosts), so URL attachments meet the allow-list refusal.
python3 - "$work/gw/gateway.json" <<'PY'
import json, sys
path = sys.argv[1]
config = json.load(open(path))
config["overflow"] = {"blobDirectory": "blobs", "urlPrefix": "https://blobs.example.com/", "fetchAllowedHosts": []}
json.dump(config, open(path, "w"))
PY
SEALEDPUSH_GATEWAY_LISTEN=127.0.0.1:0 SEALEDPUSH_GATEWAY_DELIVERY=off SEALEDPUSH_GATEWAY_LOG_LEVEL=warning \
    "$bin/sealed-push-gateway" serve --config "$work/gw/gateway.json" >"$work/serve.out" 2>"$work/serve.log" &
pid=$!
port=""
for _ in $(seq 600); do
    port=$(sed -n 's/^listening on port //p' "$work/serve.out")
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/serve.log" >&2; echo "schemathesis.sh: the gateway exited" >&2; exit 1; }
    sleep 0.1
done
[ -n "$port" ] || { echo "schemathesis.sh: the gateway did not report its port in 60 s" >&2; exit 1; }

# One real device, so sends to `phone` reach the sealing path (schemathesis also tries ids that do not exist).
"$bin/sealed-push" device init --keyring "$work/phone" >"$work/registration.json"
token=$(printf 'ab%.0s' $(seq 32))
curl -sf -o /dev/null -X PUT "http://127.0.0.1:$port/v1/apps/chat/devices/phone" -H "Authorization: Bearer $key" \
    -H 'Content-Type: application/json' \
    -d '{"apnsToken":"'"$token"'","environment":"sandbox","registration":'"$(cat "$work/registration.json")"'}'

status=0
schemathesis --config-file Specs/tools/schemathesis.toml run Specs/gateway-api.yaml \
    --url "http://127.0.0.1:$port" -H "Authorization: Bearer $key" --checks all --max-examples "$examples" \
    --seed 20261124 --request-timeout 30 || status=$?
# What schemathesis cannot see (undeclared paths, broken HTTP, refusals mid-body): raw sockets, every error an Error.
python3 Specs/tools/check_gateway_api.py Specs/gateway-api.yaml --live "http://127.0.0.1:$port" --key "$key" || status=$?
kill -0 "$pid" 2>/dev/null || { echo "schemathesis.sh: the gateway died during the run" >&2; status=1; }
if grep -q "Fatal error\|Crash" "$work/serve.log"; then
    echo "schemathesis.sh: the gateway logged a crash" >&2
    status=1
fi
exit $status
