#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ (release, -sanitize=fuzzer,address, scratch path .build-fuzz) and runs each
# for SECONDS, then prints executions and findings per target.
#
#   scripts/fuzz.sh SECONDS [TARGET ...]      e.g. scripts/fuzz.sh 5 (CI smoke), scripts/fuzz.sh 600 FuzzContent
#
# Corpora: seeds in Fuzz/Corpus/<Target> (committed) plus, when Specs/vectors/envelope-v1.json exists, seeds made
# from its positive and negative payloads (and from control-v1.json's content cases and receipts); new inputs go to .fuzz-corpus/<Target> (not committed). Findings (crash-,
# timeout-, oom-, leak- files) go to fuzz-out/<Target>/. After a finding the target restarts for the remaining time,
# so one run can report several. Exit status: 0 when every target ran and found nothing, 1 otherwise (a finding, or a
# target that could not start), 2 on a build failure.
#
# With TARGETs, only those products are built (the Core targets build in a minute; FuzzClientOpen adds swift-crypto;
# no target needs NIO: FuzzEmulatorRequest fuzzes the emulator's NIO-free rules module, SealedPushAPNsEmulatorRules).
# Environment: FUZZ_NO_BUILD=1 skips the build; FUZZ_SCRATCH (default .build-fuzz) is the build directory; FUZZ_NICE
# (default 10) the nice level; FUZZ_ARGS extra libFuzzer flags; FUZZ_TIMEOUT (default 10) the per-input hang limit in
# seconds.
set -euo pipefail

seconds=${1:?usage: scripts/fuzz.sh SECONDS [TARGET ...]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scratch=${FUZZ_SCRATCH:-.build-fuzz}
nice_level=${FUZZ_NICE:-10}

all_targets=$(grep -o 'name: "Fuzz[A-Za-z0-9]*"' Fuzz/Package.swift | sed 's/name: "\(.*\)"/\1/' | grep -v '^FuzzSupport$')
targets=${*:-$all_targets}

if [[ -z "${FUZZ_NO_BUILD:-}" ]]; then
    mkdir -p "$scratch"
    start=$(date +%s)
    # With explicit targets only their products are built (the Core targets need no swift-crypto or NIO).
    products=()
    if [[ $# -gt 0 ]]; then for target in $targets; do products+=(--product "$target"); done; fi
    build() {
        nice -n "$nice_level" swift build -c release --package-path Fuzz --scratch-path "$scratch" "$@" \
            -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -enable-testing
    }
    if [[ ${#products[@]} -gt 0 ]]; then
        for ((i = 0; i < ${#products[@]}; i += 2)); do
            build "${products[i]}" "${products[i + 1]}" >>"$scratch/fuzz-build.log" 2>&1 || { failed=1; break; }
        done
    else
        build >"$scratch/fuzz-build.log" 2>&1 || failed=1
    fi
    if [[ -n "${failed:-}" ]]; then
        tail -40 "$scratch/fuzz-build.log"
        echo "fuzz build failed (full log: $scratch/fuzz-build.log)" >&2
        exit 2
    fi
    echo "fuzz build: $(( $(date +%s) - start )) s"
fi
bin=$(swift build -c release --package-path Fuzz --scratch-path "$scratch" --show-bin-path 2>/dev/null)
[[ -n "$bin" ]] || bin=$scratch/release

# Per-target limits: the largest input worth trying (a little over each format's limit).
max_len() {
    case $1 in
        FuzzEnvelope) echo 4300 ;;
        FuzzAPNsPayload|FuzzClientOpen) echo 4200 ;;
        FuzzContent) echo 3100 ;;
        FuzzKeyText) echo 128 ;;
        FuzzRegistration) echo 600 ;;
        FuzzKeyRing) echo 2048 ;;
        FuzzEmulatorRequest) echo 6000 ;;
        FuzzBlob) echo 1200 ;;
        FuzzReceipt) echo 400 ;;
        *) echo 4096 ;;
    esac
}

# Seeds from the spec vectors (optional: needs python3 and the vector file).
vector_seeds=.fuzz-corpus/vector-seeds
if [[ -f Specs/vectors/envelope-v1.json ]] && command -v python3 >/dev/null; then
    python3 - "$vector_seeds" <<'PY'
import base64, json, os, sys
out = sys.argv[1]
vectors = json.load(open("Specs/vectors/envelope-v1.json"))
def put(target, name, data):
    os.makedirs(os.path.join(out, target), exist_ok=True)
    open(os.path.join(out, target, name), "wb").write(data if isinstance(data, bytes) else data.encode())
for i, v in enumerate(vectors.get("positive", [])):
    for target in ("FuzzAPNsPayload", "FuzzClientOpen", "FuzzJSON"):
        put(target, f"positive-{i}", v["payload"])
    put("FuzzEnvelope", f"positive-{i}", bytes.fromhex(v["envelope"]))
    put("FuzzContent", f"positive-{i}", v["contentJSON"])
    put("FuzzContent", f"padded-{i}", bytes.fromhex(v["paddedPlaintext"]))
for i, v in enumerate(vectors.get("negative", [])):
    for target in ("FuzzAPNsPayload", "FuzzClientOpen"):
        put(target, f"negative-{i}", v["payload"])
    try:
        sp = json.loads(v["payload"])["sp"]
        put("FuzzEnvelope", f"negative-{i}", base64.urlsafe_b64decode(sp + "=" * (-len(sp) % 4)))
    except Exception:
        pass
if os.path.exists("Specs/vectors/control-v1.json"):
    control = json.load(open("Specs/vectors/control-v1.json"))
    for i, v in enumerate(control.get("contentCases", [])):
        put("FuzzContent", f"control-{i}", v["json"])
    for i, v in enumerate(control.get("receipts", [])):
        put("FuzzReceipt", f"receipt-{i}", bytes.fromhex(v["receipt"]))
        put("FuzzReceipt", f"record-{i}", v["recordJSON"])
        put("FuzzReceipt", f"padded-{i}", bytes.fromhex(v["paddedPlaintext"]))
    for i, v in enumerate(control.get("receiptNegatives", [])):
        put("FuzzReceipt", f"refused-{i}", bytes.fromhex(v["receipt"]))
for name in ("serverPublicKey", "devicePublicKey"):
    put("FuzzKeyText", name, vectors[name])
for name in ("serverPrivateKey", "devicePrivateKey"):
    raw = bytes.fromhex(vectors[name])
    put("FuzzKeyText", name, "SPSK1:" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode() + "\n")
PY
fi

status=0
total_execs=0
total_findings=0
mkdir -p fuzz-out
printf '%-22s %8s %14s %10s %8s %9s\n' target seconds executions exec/s corpus findings
for target in $targets; do
    corpus=.fuzz-corpus/$target
    artifacts=fuzz-out/$target
    mkdir -p "$corpus" "$artifacts"
    dirs=("$corpus")
    [[ -d Fuzz/Corpus/$target ]] && dirs+=("Fuzz/Corpus/$target")
    [[ -d $vector_seeds/$target ]] && dirs+=("$vector_seeds/$target")
    dict=()
    case $target in FuzzEnvelope|FuzzKeyText) ;; *) dict=(-dict=Fuzz/fuzz.dict) ;; esac
    log=fuzz-out/$target.log
    : >"$log"
    marker=fuzz-out/.start-$target
    touch "$marker"
    execs=0
    start=$(date +%s)
    restarts=0
    while :; do
        left=$(( seconds - ($(date +%s) - start) ))
        (( left > 0 )) || break
        # shellcheck disable=SC2086
        nice -n "$nice_level" "$bin/$target" -max_total_time="$left" -print_final_stats=1 \
            -max_len="$(max_len "$target")" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
            -artifact_prefix="$artifacts/" "${dict[@]}" ${FUZZ_ARGS:-} "${dirs[@]}" >>"$log" 2>&1 || true
        run=$(grep -a 'stat::number_of_executed_units' "$log" | tail -1 | awk '{print $2}')
        if [[ -z "$run" ]]; then
            echo "  $target did not run (see $log):" >&2
            tail -3 "$log" | sed 's/^/    /' >&2
            status=1
            break
        fi
        execs=$(( execs + run ))
        sed -i 's/stat::number_of_executed_units/stat::counted_executed_units/' "$log"
        restarts=$(( restarts + 1 ))
        (( restarts < 50 )) || break
    done
    elapsed=$(( $(date +%s) - start ))
    # A timeout on a busy shared machine may be the scheduler's, not the target's: re-run each new timeout input
    # once, un-niced; if it finishes within the limit it is filed under unreproduced/ and not counted.
    while IFS= read -r slow; do
        [[ -n "$slow" ]] || continue
        if "$bin/$target" -timeout="${FUZZ_TIMEOUT:-10}" -runs=1 "$slow" >/dev/null 2>&1; then
            mkdir -p "$artifacts/unreproduced"
            mv "$slow" "$artifacts/unreproduced/"
            echo "  $target: $(basename "$slow") did not reproduce (moved to $artifacts/unreproduced/)" >&2
        fi
    done < <(find "$artifacts" -maxdepth 1 -type f -name 'timeout-*' -newer "$marker")
    new_findings=$(find "$artifacts" -maxdepth 1 -type f -newer "$marker")
    findings=$(printf '%s' "$new_findings" | grep -c . || true)
    units=$(find "$corpus" -type f | wc -l)
    rate=$(( execs / (elapsed > 0 ? elapsed : 1) ))
    printf '%-22s %8d %14d %10d %8d %9d\n' "$target" "$elapsed" "$execs" "$rate" "$units" "$findings"
    printf '%s\t%s\t%d\t%d\t%d\n' "$(date -u +%FT%TZ)" "$target" "$elapsed" "$execs" "$findings" >>fuzz-out/history.tsv
    total_execs=$(( total_execs + execs ))
    total_findings=$(( total_findings + findings ))
    if (( findings > 0 )); then
        status=1
        printf '%s\n' "$new_findings" | head -5 | sed 's/^/  finding: /'
        grep -a -m3 -E 'FUZZ INVARIANT FAILED|ERROR: AddressSanitizer|ERROR: libFuzzer|Fatal error' "$log" \
            | sed 's/^/  /' || true
    fi
done
printf '%-22s %8s %14d %10s %8s %9d\n' total - "$total_execs" - - "$total_findings"
exit $status
