#!/usr/bin/env bash
# Differential test of content parsing (Specs/envelope-v1.md §4, Specs/control-v1.md §1–§2): the Swift library
# (`sealed-push-vectors content-verdicts`) and the Java library (`org.sealedpush.tools.ContentVerdicts`), written
# independently from the specs, judge the same COUNT inputs; any disagreement — one accepts and the other refuses,
# different error codes, different canonical JSON, or another verdict on an attachment descriptor (Specs/blob-v1.md
# §6.2: skipped with which code, or its url, key, size, type, name and thumbnail) — is a defect in one of them,
# printed with its input.
#
#   bash scripts/differential-content.sh [COUNT] [SEED]      defaults: 200000 inputs, a random seed (printed)
#
# Inputs: three quarters are the vectors' contents (envelope-v1 positives, control-v1 content cases, blob-v1
# attachment descriptors in a content) mutated a few
# times each (bytes changed, dropped or inserted; spec tokens, numbers and escapes spliced in; tails of other seeds),
# one quarter are `data` arrays of numbers in many spellings (random IEEE 754 bit patterns, long integers, exponents)
# for the canonical number form. Needs the debug build (`swift build`) and the Java jars (`bash Android/build.sh build`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/differential.sh
differential_setup differential-content 200000 "$@"

python3 - "$seed" "$count" "$work/in.txt" <<'PY'
import json, random, struct, sys
seed, count, out_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = random.Random(seed)
envelope = json.load(open("Specs/vectors/envelope-v1.json"))
control = json.load(open("Specs/vectors/control-v1.json"))
blob = json.load(open("Specs/vectors/blob-v1.json"))
seeds = [v["contentJSON"].encode() for v in envelope["positive"]] + [c["json"].encode() for c in control["contentCases"]]
seeds += [('{"body":"x","attachments":' + d["attachments"] + "}").encode() for d in blob["descriptors"]]
tokens = [t.encode() for t in [
    '"control"', '"notification-id"', '"ids"', '"action"', '"remove"', '"update"', '"badge"', '"count"', '"thread-id"',
    '"id"', '"content-ref"', '"url"', '"title"', '"body"', '"data"', '"attachments"', '"relevance-score"',
    '"interruption-level"', '"passive"', 'null', 'true', '{}', '[]', '1e400', '9007199254740993', '9007199254740991',
    '-0', '0.1', '1.0', '1e0', '1.5', '-1', '2147483647', '2147483648', '5e-324', '1.7976931348623157e308',
    '0.30000000000000004', '1e21', '1e22', '1e-7', '100000000000000000000', '"\\u00e9"', '"e\\u0301"', '"\\ud800"',
    '"\\ud83d\\ude00"', '"\\u0000"', '"a\\tb"', '"\\/"', '"url"', '"key"', '"size"', '"type"', '"name"',
    '"thumbnail"', '"image/jpeg"', '"video/mp4"', '"audio/mpeg"', '"https://"', '"http://"', '"https://a"',
    '"https://blobs.example.com:443/x"', '"https://[::1]/x"', '"https://user@host/x"', '"https://h/x?q#f"',
    '"BRAbJjE8R1JdaHN-iZSfqrXAy9bh7PcCDRgjLjlET1o"', '10000000', '10000001', '65536', '0']]
alphabet = b'{}[],:"\\0123456789.eE+-tfn a\xc3\xa9'

def mutate(data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(7)
        if op == 0 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif op == 1 and data:
            del data[rng.randrange(len(data))]
        elif op == 2:
            data.insert(rng.randrange(len(data) + 1), rng.choice(alphabet))
        elif op in (3, 4):
            i = rng.randrange(len(data) + 1)
            data[i:i] = rng.choice(tokens)
        elif op == 5 and data:
            i = rng.randrange(len(data))
            data[i:min(len(data), i + rng.randint(1, 8))] = rng.choice(tokens)
        elif op == 6:
            other = rng.choice(seeds)
            data[rng.randrange(len(data) + 1):] = other[rng.randrange(len(other) + 1):]
    return bytes(data)

def number():
    r = rng.random()
    if r < 0.4:
        x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if x != x or x in (float("inf"), float("-inf")):
            x = 1.5
        return rng.choice([repr(x), "%.17g" % x, "%.15e" % x, "%.3e" % x])
    if r < 0.6:
        return str(rng.randint(-2**54, 2**54))
    if r < 0.8:
        return "%d.%de%d" % (rng.randint(0, 999), rng.randint(0, 999), rng.randint(-330, 310))
    return "%d.%d" % (rng.randint(-10**6, 10**6), rng.randint(0, 10**9))

lines = []
while len(lines) < count:
    if rng.random() < 0.75:
        data = mutate(rng.choice(seeds))
    else:
        data = ('{"data":[' + ",".join(number() for _ in range(5)) + '],"relevance-score":'
                + rng.choice(["0", "1", "0.5", "1.0000000000000002", "0.9999999999999999", "1e-320", "-0.0"]) + "}").encode()
    if data:
        lines.append(data.hex())
open(out_path, "w").write("\n".join(lines) + "\n")
PY

"$swift_tool" content-verdicts "$work/in.txt" "$work/swift.txt"
java -cp "$jars" org.sealedpush.tools.ContentVerdicts "$work/in.txt" "$work/java.txt"

differential_compare differential-content
