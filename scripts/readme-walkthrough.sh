#!/usr/bin/env bash
# Runs the README's walk-throughs exactly as written, so they cannot drift from what works: the ```sh blocks
# between `<!-- walkthrough:begin -->` and `<!-- walkthrough:end -->` in README.md (the CLI's, the gateway's two, the
# notification lifecycle's and the operator's round), in order, as one bash script (errexit and pipefail on, from
# the repository root, as a reader pastes them). It fails on any failing command, and unless the device opened the
# notification the walk-throughs seal and send ("Lunch at 1?"), the CLI opened the device's receipt, the gateway took
# the phone's receipt (the notification's status shows it) and withdrew the notification, a revoked API key got 401
# over HTTPS and the backup passed its integrity check.
#
#   bash scripts/readme-walkthrough.sh
#
# Uses the README's fixed ports (8080 for the gateway, 8443 for the emulator; refused when taken), /tmp/cli-try and
# /tmp/gw-try, and Debian's openssl command (the operator's certificates).
# Whatever the walk-through leaves running on failure (its emulator and gateway) is stopped: it runs in its own
# process group, which is killed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
pgid=""
cleanup() {
    if [ -n "$pgid" ]; then kill -TERM -- "-$pgid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

awk '/<!-- walkthrough:begin -->/ { on = 1; next }
     /<!-- walkthrough:end -->/ { on = 0; next }
     on && /^```/ { block = !block; next }
     on && block' README.md >"$work/walkthrough.sh"
blocks=$(awk '/<!-- walkthrough:begin -->/ { on = 1 } /<!-- walkthrough:end -->/ { on = 0 } on && /^```sh/' README.md | wc -l)
[ "$blocks" -ge 5 ] || { echo "readme-walkthrough.sh: README.md has $blocks walk-through blocks, not the 5 expected" >&2; exit 1; }
for port in 8080 8443; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        echo "readme-walkthrough.sh: port $port is taken; the walk-through needs it" >&2
        exit 1
    fi
done

echo "==> the README's walk-through: $blocks blocks, $(wc -l <"$work/walkthrough.sh") lines"
status=0
setsid timeout 900 bash -euo pipefail "$work/walkthrough.sh" >"$work/out" 2>&1 &
pgid=$!
wait "$pgid" || status=$?
expected=('Lunch at 1?' '"receipt-id":' '"receipt":{' '"withdrawnJobs":' 'revoked key: 401' 'integrity ok')
missing=""
for text in "${expected[@]}"; do grep -qF "$text" "$work/out" || missing="$missing '$text'"; done
if [ "$status" -ne 0 ] || [ -n "$missing" ]; then
    cat "$work/out" >&2
    echo "readme-walkthrough.sh: the README's walk-through failed (exit $status; missing from its output:${missing:- nothing})" >&2
    exit 1
fi

grep -E '"state":"sent"|Lunch at 1\?|^sealedpush_gateway_sent|"receipt-id"|"receipt":\{|"withdrawnJobs"|revoked key|^backup:' \
    "$work/out" | cut -c1-160
echo "==> the README's walk-through passed"
