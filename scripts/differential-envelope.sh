#!/usr/bin/env bash
# Differential test of opening (Specs/envelope-v1.md §8 steps 1–12): the Swift client's opener
# (`sealed-push-vectors envelope-verdicts`, swift-crypto) and the Java library's (`org.sealedpush.tools.EnvelopeVerdicts`,
# the platform's crypto), written independently from the spec, open the same COUNT APNs bodies with the keys and topic
# of Specs/vectors/envelope-v1.json; any disagreement — one opens and the other refuses, different error codes (the
# first failing step), or another message id or content — is a defect in one of them, printed with its input.
#
#   bash scripts/differential-envelope.sh [COUNT] [SEED]     defaults: 50000 bodies, a random seed (printed)
#
# Inputs: the vectors' positive and negative bodies, mutated: the envelope's bytes (header fields — version, suite,
# key ids, times set around the receiver's clock — ciphertext and tag, length) re-encoded into the body, the body's
# own bytes and base64url text, and the receiver's `now` moved across the expiry and skew bounds. Needs the debug
# build (`swift build`) and the Java jars (`bash Android/build.sh build`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/differential.sh
differential_setup differential-envelope 50000 "$@"
vectors=Specs/vectors/envelope-v1.json

python3 - "$seed" "$count" "$work/in.txt" "$vectors" <<'PY'
import base64, json, random, sys
seed, count, out_path, vectors_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
rng = random.Random(seed)
vectors = json.load(open(vectors_path))
topic = vectors["topic"]
cases = [(v["payload"], v["now"]) for v in vectors["positive"]]
cases += [(v["payload"], v["now"]) for v in vectors["negative"] if v.get("topic", topic) == topic]

def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

def mutate_envelope(env, now):
    env = bytearray(env)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(8)
        if op == 0 and env:
            env[rng.randrange(len(env))] ^= 1 << rng.randrange(8)
        elif op == 1 and len(env) > 1:
            env[rng.randrange(2)] = rng.choice([0, 1, 2, 255])
        elif op == 2 and len(env) >= 50:
            # a time: issuedAt (34) or expiresAt (42), near the receiver's clock and the bounds
            at = rng.choice([34, 42])
            value = max(0, now + rng.choice([-1, 0, 1, 599, 600, 601, -2419200, 2419200, 2419201, 86400]))
            env[at:at + 8] = value.to_bytes(8, "big")
        elif op == 3 and len(env) >= 18:
            i = rng.choice([2, 10]) + rng.randrange(8)
            env[i] ^= 1 << rng.randrange(8)
        elif op == 4:
            del env[rng.randrange(len(env) + 1):]
        elif op == 5:
            env += bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))
        elif op == 6 and len(env) > 82:
            env[rng.randrange(82, len(env))] = rng.randrange(256)
        elif op == 7 and len(env) >= 82:
            env[50 + rng.randrange(32)] = rng.randrange(256)  # enc
    return bytes(env)

def mutate_bytes(data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(3)
        if op == 0 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif op == 1 and data:
            del data[rng.randrange(len(data))]
        else:
            data.insert(rng.randrange(len(data) + 1), rng.choice(b'{}[]",:\\ =-_Aa0'))
    return bytes(data)

lines = []
while len(lines) < count:
    payload, now = rng.choice(cases)
    r = rng.random()
    body = payload.encode()
    try:
        parsed = json.loads(payload)
    except ValueError:
        parsed = None
    if r < 0.6 and isinstance(parsed, dict) and isinstance(parsed.get("sp"), str):
        try:
            env = unb64(parsed["sp"])
            parsed["sp"] = b64(mutate_envelope(env, now))
            body = json.dumps(parsed, separators=(",", ":")).encode()
        except ValueError:
            body = mutate_bytes(body)
    elif r < 0.85:
        body = mutate_bytes(body)
    if rng.random() < 0.25:
        now = max(0, now + rng.choice([-601, -600, 1, 86399, 86400, 86401, 2419200]))
    lines.append(f"{now} {body.hex()}")
open(out_path, "w").write("\n".join(lines) + "\n")
PY

# The keys and topic the vectors were sealed for.
read -r topic device_private server_public < <(python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
print(v["topic"], v["devicePrivateKey"], v["serverPublicKey"])' "$vectors")
"$swift_tool" envelope-verdicts "$topic" "$device_private" "$server_public" "$work/in.txt" "$work/swift.txt"
java -cp "$jars" org.sealedpush.tools.EnvelopeVerdicts "$topic" "$device_private" "$server_public" "$work/in.txt" \
    "$work/java.txt"

differential_compare differential-envelope
