# Shared by scripts/differential-*.sh: the Swift and Java verdict tools, arguments, a work directory, and the
# comparison of the two sides' verdict files. Source it from the repository root.
#
#   differential_setup NAME DEFAULT_COUNT "$@"   sets count, seed (random unless given), swift_tool, jars, work
#   differential_compare NAME                     compares $work/{in,swift,java}.txt; exits 1 on any disagreement

differential_setup() {
    local name=$1 default_count=$2
    shift 2
    count=${1:-$default_count}
    seed=${2:-$RANDOM$RANDOM}
    case "$count$seed" in *[!0-9]*) echo "$name: COUNT and SEED are numbers" >&2; exit 2 ;; esac
    swift_tool=${BINDIR:-.build/debug}/sealed-push-vectors
    jars=Android/build/sealedpush-android.jar:Android/build/sealedpush-android-tools.jar
    [ -x "$swift_tool" ] || { echo "$name: $swift_tool missing (swift build)" >&2; exit 2; }
    [ -f Android/build/sealedpush-android-tools.jar ] || bash Android/build.sh build >/dev/null
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
}

differential_compare() {
    python3 - "$1" "$work" "$seed" <<'PY'
import collections, sys
name, work, seed = sys.argv[1:4]
inputs = open(f"{work}/in.txt").read().split("\n")[:-1]
swift = open(f"{work}/swift.txt").read().split("\n")[:-1]
java = open(f"{work}/java.txt").read().split("\n")[:-1]
if not (len(inputs) == len(swift) == len(java)):
    sys.exit(f"{name}: {len(inputs)} inputs but {len(swift)} Swift and {len(java)} Java verdicts")
differ = [i for i in range(len(inputs)) if swift[i] != java[i]]
kinds = collections.Counter("OK" if v.startswith("OK") else v.split(" ")[-1] for v in swift)
parts = collections.Counter(p.split(":")[0] + (":" + p.split(":")[1] if p.startswith("err:") else "")
                            for v in swift for p in v.split(" ") if p.startswith(("ok:", "err:")))
summary = ", ".join(f"{k} {n}" for k, n in kinds.most_common())
if parts:
    summary += "; parts: " + ", ".join(f"{k} {n}" for k, n in parts.most_common())
print(f"{name}: {len(inputs)} inputs (seed {seed}); {summary}; disagreements: {len(differ)}")
for i in differ[:10]:
    shown = inputs[i].rpartition(" ")
    data = bytes.fromhex(shown[2])[:200]
    print(f"  input {shown[0] + ' ' if shown[0] else ''}{data!r}\n    Swift {swift[i][:160]}\n    Java  {java[i][:160]}")
sys.exit(1 if differ else 0)
PY
}
