# Shared by the gateway scripts (gateway-bench.sh, gateway-load.sh, gateway-soak.sh, receipt-load.sh), sourced, not
# run: a work directory removed at exit with the gateway and emulator it started, a wait for a line in a log, the
# database for STORE, and the CPU time of processes.
#
#   rig_name=gateway-load; source scripts/lib/gateway-rig.sh; rig_database "$store"
#
# Sets work, emulator_pid, gateway_pid (the scripts fill in the pids), after rig_binaries S and G, and after
# rig_database, database.

work=$(mktemp -d "/tmp/sealed-push-$rig_name.XXXXXX")
emulator_pid=
gateway_pid=
database_name=
rig_cleanup() {
    [ -n "$gateway_pid" ] && kill "$gateway_pid" 2>/dev/null && wait "$gateway_pid" 2>/dev/null || true
    [ -n "$emulator_pid" ] && kill "$emulator_pid" 2>/dev/null && wait "$emulator_pid" 2>/dev/null || true
    if [ -n "$database_name" ]; then
        psql -q "$SEALEDPUSH_TEST_POSTGRES_URL" -c "DROP DATABASE IF EXISTS $database_name" >/dev/null 2>&1 || true
    fi
    rm -rf "$work"
}
trap rig_cleanup EXIT

wait_for() {  # FILE PATTERN: waits up to 30 s for PATTERN in FILE, else prints FILE and exits
    for _ in $(seq 1 300); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
    echo "$rig_name: no '$2' in $1:" >&2; cat "$1" >&2; exit 1
}

rig_process_cpu() {  # PID...: their utime + stime in seconds (/proc/PID/stat, 100 Hz)
    local pid files=()
    for pid in "$@"; do files+=("/proc/$pid/stat"); done
    awk '{ t += $14 + $15 } END { printf "%.2f", t / 100 }' "${files[@]}"
}

rig_database() {  # STORE: sqlite (a file in the work directory) or postgres (a new database, dropped at exit)
    case "$1" in
    sqlite) database="sqlite:gateway.sqlite" ;;
    postgres)
        : "${SEALEDPUSH_TEST_POSTGRES_URL:?set it (eval \"\$(bash scripts/postgres-test.sh start)\")}"
        database_name="${rig_name//-/_}_$$"
        psql -q "$SEALEDPUSH_TEST_POSTGRES_URL" -c "CREATE DATABASE $database_name" >/dev/null
        database="${SEALEDPUSH_TEST_POSTGRES_URL%/*}/$database_name"
        ;;
    *) echo "$rig_name: STORE is sqlite or postgres" >&2; exit 2 ;;
    esac
}

rig_binaries() {  # [DIR]: sealed-push (S) and sealed-push-gateway (G) from DIR, else $BINDIR, else a release build
    local dir=${1:-${BINDIR:-}}
    if [ -z "$dir" ]; then
        swift build -c release --product sealed-push >&2
        swift build -c release --product sealed-push-gateway >&2
        dir=$(swift build -c release --show-bin-path)
    fi
    S=$(cd "$dir" && pwd)/sealed-push
    G=$(cd "$dir" && pwd)/sealed-push-gateway
    [ -x "$S" ] && [ -x "$G" ] || { echo "$rig_name: $S and $G must be built" >&2; exit 2; }
}

rig_register_apns_devices() {  # API KEY PREFIX COUNT: devices PREFIX-1 … PREFIX-COUNT (sandbox APNs tokens 1 … COUNT),
    # all with one key ring made in ./phone (its registration in registration.json), registered 8 at a time.
    "$S" device init --keyring phone >registration.json
    seq 1 "$4" | xargs -P 8 -I{} sh -c '
        curl -sS --fail-with-body -o /dev/null -X PUT "$1/devices/$3-$4" -H "Authorization: Bearer $2" \
            -H "Content-Type: application/json" \
            -d "{\"apnsToken\":\"$(printf %064x "$4")\",\"environment\":\"sandbox\",\"registration\":$5}"
    ' _ "$1" "$2" "$3" {} "$(cat registration.json)"
}

rig_emulator_prefix=()  # a command the emulators run under (gateway-bench.sh pins them: taskset -c 0)

rig_start_apns_emulator() {  # KEY_ID TEAM_ID [OPTION...]: `sealed-push emulator` for ./AuthKey.p8 on a free loopback
    # port, recording nothing by default (--keep-total 0), and the gateway's APNs sandbox URL and trust set to it.
    "${rig_emulator_prefix[@]}" "$S" emulator --auth-key AuthKey.p8 --key-id "$1" --team-id "$2" --cert-out emulator.pem \
        --keep-total 0 "${@:3}" >emulator.out 2>&1 &
    emulator_pid=$!
    wait_for emulator.out "listening on"
    emulator_port=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' emulator.out | head -1)
    export SEALEDPUSH_GATEWAY_APNS_SANDBOX_URL="https://127.0.0.1:$emulator_port"
    export SEALEDPUSH_GATEWAY_APNS_TRUST_ROOTS="$work/emulator.pem"
}

rig_start_fcm_emulator() {  # APP [OPTION...]: `sealed-push fcm-emulator` (project APP) on a free loopback port, its
    # service account (account.json) given to app APP of gw/gateway.json (Android application id com.example.APP),
    # and the gateway's FCM URL and trust set to it.
    "${rig_emulator_prefix[@]}" "$S" fcm-emulator --port 0 --cert-out emulator.pem --service-account-out account.json \
        --project "$1" --keep-total 0 "${@:2}" >emulator.out 2>&1 &
    emulator_pid=$!
    wait_for emulator.out "listening on"
    emulator_port=$(sed -n 's/^FCM emulator listening on 127.0.0.1:\([0-9]*\).*/\1/p' emulator.out)
    "$G" app set-fcm --config gw/gateway.json --app-id "$1" --service-account account.json \
        --android-app-id "com.example.$1" >/dev/null
    export SEALEDPUSH_GATEWAY_FCM_URL="https://127.0.0.1:$emulator_port"
    export SEALEDPUSH_GATEWAY_FCM_TRUST="$work/emulator.pem"
}

rig_fcm_token() {  # PREFIX N: the FCM registration token of device PREFIX-N (shaped like a real one)
    printf '%s%dTok3n:APA91bHk2-Rz8yWcQx7LmV0sNtP4aJ6fUo1iE5rB9dG3hK8wX2cY7vZ0qT6uM4nS1pL9jF3gD8k' "$1" "$2"
}

rig_register_fcm_devices() {  # API KEY PREFIX COUNT: Android devices PREFIX-1 … PREFIX-COUNT (FCM tokens
    # `rig_fcm_token PREFIX N`), all with one key ring made in ./phone (its registration in registration.json),
    # registered 8 at a time. The app needs FCM credentials (`sealed-push-gateway app set-fcm`) first.
    "$S" device init --keyring phone >registration.json
    export -f rig_fcm_token
    seq 1 "$4" | xargs -P 8 -I{} bash -c '
        curl -sS --fail-with-body -o /dev/null -X PUT "$1/devices/$3-$4" -H "Authorization: Bearer $2" \
            -H "Content-Type: application/json" \
            -d "{\"platform\":\"fcm\",\"fcmToken\":\"$(rig_fcm_token "$3" "$4")\",\"registration\":$5}"
    ' _ "$1" "$2" "$3" {} "$(cat registration.json)"
}

rig_lift_receipt_limit() {  # CONFIG: the devices of a rig share one key ring, so the per-device-key receipt limit
    # (1/s by default) would be one limit for all of them: lifted; and every receipt comes from one client (loopback),
    # whose refused receipts (replays, once the load has walked them all) are limited per client: lifted too.
    python3 - "$1" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["rateLimits"] = {"receiptsPerSecondPerDevice": 1000000, "receiptBurstPerDevice": 1000000000,
                        "refusedReceiptsPerSecondPerClient": 1000000, "refusedReceiptBurstPerClient": 1000000000}
json.dump(config, open(sys.argv[1], "w"))
PY
}

rig_seal_receipts() {  # STORE TOPIC: a `decrypted` receipt about every job in the store (ids.txt: their message ids),
    # sealed by the key ring in ./phone to the identity `init` printed (init.out), into receipts.bin (354 bytes each).
    if [ "$1" = sqlite ]; then
        python3 -c 'import sqlite3,sys; [print(r[0]) for r in sqlite3.connect(sys.argv[1]).execute("SELECT message_id FROM job_messages")]' \
            gw/gateway.sqlite >ids.txt
    else
        psql -At "$database" -c "SELECT message_id FROM job_messages" >ids.txt
    fi
    local server_public
    server_public=$(sed -n 's/.*devices pin \(SPK1:[^)]*\)).*/\1/p' init.out)
    "$S" seal-receipts --keyring phone --server-public "$server_public" --topic "$2" \
        --message-ids ids.txt --out receipts.bin 2>seal.err
}
