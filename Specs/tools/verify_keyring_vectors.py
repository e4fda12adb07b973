#!/usr/bin/env python3
"""Checks Specs/vectors/keyring-v1.json against Specs/keyring-v1.md section 2 alone: a third reader of key ring
files, written from the spec (with the envelope checker's strict JSON rules and key id, which the spec refers to).
Each accepted file must read as the keys the vector lists; each rejected file must be keyStoreCorrupt.

    python3 Specs/tools/verify_keyring_vectors.py Specs/vectors/keyring-v1.json
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import verify_envelope_vectors as ev  # noqa: E402

FORMAT = "SealedPush keyring v1"
MAX_TIME = 2 ** 53 - 1
PRIVATE_RE = re.compile(r"\ASPSK1:[A-Za-z0-9_-]{43}\Z")
HEX16_RE = re.compile(r"\A[0-9a-f]{16}\Z")


def corrupt():
    raise ev.SpecError("keyStoreCorrupt")


def integer(value):
    """An integer here is a JSON number whose value is whole, 0 ... 2^53 - 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        corrupt()
    if isinstance(value, float) and not value.is_integer():
        corrupt()
    if not 0 <= value <= MAX_TIME:
        corrupt()
    return int(value)


def read(text):
    """The keys of a key ring file as [(keyId, createdAt, retiredAt or None)], or SpecError keyStoreCorrupt."""
    root = ev.strict_json(text.encode("utf-8"), "keyStoreCorrupt")
    if not isinstance(root, dict) or not isinstance(root.get("format"), str) or not isinstance(root.get("keys"), list):
        corrupt()
    if root["format"] != FORMAT or not root["keys"]:
        corrupt()
    keys, seen = [], set()
    for index, entry in enumerate(root["keys"]):
        if not isinstance(entry, dict):
            corrupt()
        for name in ("keyId", "publicKey", "privateKey"):
            if not isinstance(entry.get(name), str):
                corrupt()
        if "createdAt" not in entry:
            corrupt()
        created = integer(entry["createdAt"])
        last = index == len(root["keys"]) - 1
        retired = entry.get("retiredAt")
        if last:
            if retired is not None:
                corrupt()
        else:
            if retired is None:
                corrupt()
            retired = integer(retired)
        if not PRIVATE_RE.match(entry["privateKey"]):
            corrupt()
        try:
            private = ev.b64url_decode(entry["privateKey"][6:])
        except ev.SpecError:
            corrupt()
        public = ev.raw_public(private)
        # Texts compare as exact strings (code points; no normalization).
        if entry["publicKey"] != "SPK1:" + ev.b64url_encode(public):
            corrupt()
        if not HEX16_RE.match(entry["keyId"]) or entry["keyId"] != ev.key_id(public).hex():
            corrupt()
        if entry["keyId"] in seen:
            corrupt()
        seen.add(entry["keyId"])
        keys.append((entry["keyId"], created, retired))
    return keys


def check(path, results):
    with open(path) as handle:
        doc = json.load(handle)
    for vector in doc["accepted"]:
        name = "accepted/" + vector["name"]
        expected = [(k["keyId"], k["createdAt"], k.get("retiredAt")) for k in vector["keys"]]
        try:
            got = read(vector["file"])
            results.append((name, got == expected, "" if got == expected else "read %r, expected %r" % (got, expected)))
        except ev.SpecError as error:
            results.append((name, False, "refused: " + error.code))
    for vector in doc["rejected"]:
        name = "rejected/" + vector["name"]
        try:
            read(vector["file"])
            results.append((name, False, "accepted; expected " + vector["expectedError"]))
        except ev.SpecError as error:
            results.append((name, error.code == vector["expectedError"], error.code))
    results.append(("rejected vectors cover the section 2 rules", len(doc["rejected"]) >= 15, ""))


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "Specs/vectors/keyring-v1.json"
    results = []
    check(path, results)
    failed = [r for r in results if not r[1]]
    for name, ok, detail in failed:
        print("FAIL %s %s" % (name, detail))
    print("verify_keyring_vectors: %d passed, %d failed" % (len(results) - len(failed), len(failed)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
