#!/usr/bin/env python3
"""Independent check of Specs/vectors/fcm-v1.json, written from Specs/fcm-v1.md and Specs/envelope-v1.md alone.

It reuses this directory's Python implementation of envelope v1 (verify_envelope_vectors.py: HPKE on the
`cryptography` package, strict JSON, the receiver steps) and adds the FCM profile: for every positive vector it
rebuilds the envelope for the application id, the data map, the data size (fcm-v1 section 3) and the exact HTTP v1
request body (section 2) from the vector's inputs, and opens it as an Android receiver would (section 4); every
negative vector must fail with its error code; every budget vector's size and verdict are recomputed.

Usage: verify_fcm_vectors.py [Specs/vectors/fcm-v1.json]
Prints 'N passed, M failed' and exits non-zero on any failure.
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import verify_envelope_vectors as ev  # noqa: E402

MAX_DATA = 4051
PER_EXTRA_MEMBER = 6
LONGEST_TEXT = (4 * (82 + 16 + 4096) + 2) // 3


def data_size(data):
    """Section 3: key and value bytes of every member, plus 6 for every member after the first."""
    total = sum(len(k.encode()) + len(v.encode()) for k, v in data.items())
    return total + PER_EXTRA_MEMBER * max(0, len(data) - 1)


def request_body(token, envelope_text, priority, ttl, collapse_key):
    """Section 2, member for member."""
    body = '{"message":{"token":' + ev.json_string(token) + ',"data":{"sp":' + ev.json_string(envelope_text)
    body += '},"android":{"priority":' + ev.json_string(priority) + ',"ttl":' + ev.json_string(ttl)
    if collapse_key is not None:
        body += ',"collapse_key":' + ev.json_string(collapse_key)
    return body + "}}}"


def receive_fcm(data, device_sk, server_pk, topic, now):
    """Section 4: the map as RemoteMessage.getData() returns it, then envelope spec section 8 from step 4."""
    if "sp" not in data:
        raise ev.SpecError("malformedPayload")
    text = data["sp"]
    if len(text.encode()) > LONGEST_TEXT:
        raise ev.SpecError("malformedEnvelope")
    ev.b64url_decode(text)  # step 3, before anything else reads the envelope
    parsed = json.dumps({"sp": text}).encode()
    return ev.receive(parsed, device_sk, server_pk, topic, now, parsed_body=True)


def check(path, results):
    with open(path) as handle:
        doc = json.load(handle)
    h = bytes.fromhex
    server_sk, device_sk = h(doc["serverPrivateKey"]), h(doc["devicePrivateKey"])
    server_pk, device_pk = ev.raw_public(server_sk), ev.raw_public(device_sk)
    results.append(("server key id", ev.key_id(server_pk).hex() == doc["serverKeyId"], ""))
    results.append(("device key id", ev.key_id(device_pk).hex() == doc["deviceKeyId"], ""))
    topic = doc["topic"]
    for vector in doc["positive"]:
        checks = []
        content_json = vector["contentJSON"].encode()
        checks.append(("content", ev.strict_json(content_json, "x") == vector["content"]))
        padded = ev.pad(content_json)
        header = (bytes([1, 1]) + ev.key_id(device_pk) + ev.key_id(server_pk) + h(vector["messageId"])
                  + struct.pack(">QQ", vector["issuedAt"], vector["expiresAt"]))
        esk = h(vector["ephemeralPrivateKey"])
        enc, ct = ev.auth_seal(device_pk, server_sk, esk, ev.hpke_info(topic), header + ev.raw_public(esk), padded)
        envelope = header + enc + ct
        checks.append(("envelope", envelope.hex() == vector["envelope"]))
        text = ev.b64url_encode(envelope)
        checks.append(("data", vector["data"] == {"sp": text}))
        size = data_size({"sp": text})
        formula = 2 + (4 * (82 + 16 + len(padded)) + 2) // 3
        checks.append(("dataSize", size == vector["dataSize"] == formula and size <= MAX_DATA))
        ttl = vector["ttl"]
        checks.append(("ttl format", ttl.endswith("s") and ttl[:-1].isdigit() and (ttl == "0s" or ttl[0] != "0")
                       and int(ttl[:-1]) <= 2_419_200 and int(ttl[:-1]) <= vector["expiresAt"] - vector["issuedAt"]))
        checks.append(("priority", vector["priority"] in ("high", "normal")))
        body = request_body(vector["token"], text, vector["priority"], ttl, vector.get("collapseKey"))
        checks.append(("body", body == vector["body"]))
        parsed_body = json.loads(vector["body"])
        checks.append(("no notification", "notification" not in parsed_body["message"]
                       and set(parsed_body["message"]) == {"token", "data", "android"}
                       and "notification" not in parsed_body["message"]["android"]))
        try:
            _, opened = receive_fcm(vector["data"], device_sk, server_pk, topic, vector["now"])
            checks.append(("open", opened == vector["content"]))
        except ev.SpecError as error:
            checks.append(("open: " + error.code, False))
        failed = [label for label, ok in checks if not ok]
        results.append(("positive/" + vector["name"], not failed, ", ".join(failed)))
    for vector in doc["negative"]:
        name = "negative/" + vector["name"]
        try:
            receive_fcm(vector["data"], device_sk, server_pk, vector["topic"], vector["now"])
            results.append((name, False, "opened; expected " + vector["expectedError"]))
        except ev.SpecError as error:
            ok = error.code == vector["expectedError"]
            results.append((name, ok, "" if ok else "got %s, expected %s" % (error.code, vector["expectedError"])))
    for vector in doc["budget"]:
        size = data_size(vector["data"])
        ok = size == vector["dataSize"] and (size <= MAX_DATA) == vector["fits"]
        results.append(("budget/" + vector["name"], ok, "size %d, fits %s" % (size, size <= MAX_DATA)))
    for vector in doc["senderBudget"]:
        length = vector["paddedPlaintextLength"]
        ok = length in ev.BUCKETS and vector["dataSize"] == 2 + (4 * (82 + 16 + length) + 2) // 3 <= MAX_DATA
        results.append(("senderBudget/%d" % length, ok, ""))
    results.append(("senderBudget covers every bucket",
                    sorted(v["paddedPlaintextLength"] for v in doc["senderBudget"]) == ev.BUCKETS, ""))


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "Specs/vectors/fcm-v1.json"
    results = []
    check(path, results)
    failed = [r for r in results if not r[1]]
    for name, ok, detail in failed:
        print("FAIL %s %s" % (name, detail))
    print("verify_fcm_vectors: %d passed, %d failed" % (len(results) - len(failed), len(failed)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
