#!/usr/bin/env python3
"""Independent check of Specs/vectors/control-v1.json, written from Specs/control-v1.md (and the envelope spec).

Content cases: the rules of control-v1 sections 1 and 2 (notification-id, control and what may travel beside it)
decide accept or refuse, and an accepted case's canonical form (envelope spec 4.1, with notification-id and control
after content-ref) must equal the vector's. Receipts (section 4): each positive receipt is rebuilt byte for byte
from its inputs with this file's own HPKE (mode_auth, the device as sender, the receipt info) and its record read
back; each negative runs the backend's checks in the spec's order and must give the vector's error code.

Usage: verify_control_vectors.py Specs/vectors/control-v1.json
Prints 'N passed, M failed' and exits non-zero on any failure.
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verify_envelope_vectors import (  # noqa: E402  (the envelope spec's primitives, shared)
    SpecError, auth_open, auth_seal, canonical_value, check_content, json_string, key_id, raw_public, strict_json)

ORDER = ["title", "subtitle", "body", "badge", "sound", "thread-id", "category", "interruption-level",
         "relevance-score", "target-content-id", "data", "attachments", "content-ref", "notification-id", "control"]
SHOWN = ORDER[:13]  # everything a remove or badge message may not carry (badge aside, see check_control)


def canonical(content):
    known = [n for n in ORDER if n in content]
    others = sorted((n for n in content if n not in ORDER), key=lambda name: name.encode("utf-8"))
    return "{" + ",".join(json_string(n) + ":" + canonical_value(content[n]) for n in known + others) + "}"


def notification_id_ok(value):
    return isinstance(value, str) and 1 <= len(value.encode("utf-8")) <= 64 and all(ord(c) >= 0x20 for c in value)


def is_integer(value, low, high):
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value == int(value) and low <= value <= high


def check_control(content):
    """Sections 1 and 2; raises SpecError('malformedContent')."""
    def bad():
        raise SpecError("malformedContent")

    check_content(content)
    if "notification-id" in content and not notification_id_ok(content["notification-id"]):
        bad()
    if "control" not in content:
        return None
    control = content["control"]
    if not isinstance(control, dict) or not isinstance(control.get("action"), str):
        bad()
    action = control["action"]
    allowed = {"remove": {"ids", "thread-id"}, "update": {"id"}, "badge": {"count"}}.get(action)
    if allowed is None or any(name != "action" and name not in allowed for name in control):
        bad()
    if action == "remove":
        ids = control.get("ids")
        thread = control.get("thread-id")
        if ids is None and thread is None:
            bad()
        if ids is not None and (not isinstance(ids, list) or not 1 <= len(ids) <= 64
                                or not all(notification_id_ok(i) for i in ids) or len(set(ids)) != len(ids)):
            bad()
        if thread is not None and (not isinstance(thread, str) or not 1 <= len(thread.encode("utf-8")) <= 255):
            bad()
    elif action == "update":
        if not notification_id_ok(control.get("id")):
            bad()
        if "notification-id" in content and content["notification-id"] != control["id"]:
            bad()
    else:
        if not is_integer(control.get("count"), 0, 2_147_483_647):
            bad()
    if action in ("remove", "badge") and any(name in content for name in SHOWN if name != "badge"):
        bad()
    return action


RECEIPT_LENGTH = 82 + 256 + 16


def receipt_info(topic):
    return b"SealedPush receipt v1\x00" + topic.encode()


def read_record(padded):
    if len(padded) != 256:
        raise SpecError("malformedContent")
    length = struct.unpack(">H", padded[:2])[0]
    if 2 + length > len(padded) or any(padded[2 + length:]):
        raise SpecError("malformedContent")
    record = strict_json(padded[2:2 + length], "malformedContent")
    if not isinstance(record, dict) or set(record) - {"message-id", "outcome", "reason", "attachments", "device-time"}:
        raise SpecError("malformedContent")
    mid = record.get("message-id")
    if not isinstance(mid, str) or len(mid) != 32 or any(c not in "0123456789abcdef" for c in mid):
        raise SpecError("malformedContent")
    outcome = record.get("outcome")
    if outcome not in ("decrypted", "duplicate", "fallback"):
        raise SpecError("malformedContent")
    reason = record.get("reason")
    if outcome == "fallback":
        if not isinstance(reason, str) or not 1 <= len(reason) <= 32 or not all(0x21 <= ord(c) < 0x7f for c in reason):
            raise SpecError("malformedContent")
    elif "reason" in record:
        raise SpecError("malformedContent")
    attachments = record.get("attachments")
    if (not isinstance(attachments, dict) or set(attachments) != {"delivered", "failed"}
            or not all(is_integer(attachments[k], 0, 8) for k in attachments)):
        raise SpecError("malformedContent")
    if not is_integer(record.get("device-time"), 0, 2 ** 53 - 1):
        raise SpecError("malformedContent")
    return record


def open_receipt(receipt, server_sk, device_pk, topic, now):
    """The backend's checks of section 4, in order."""
    if len(receipt) != RECEIPT_LENGTH:
        raise SpecError("malformedEnvelope")
    header = receipt[:82]
    if header[0] != 1:
        raise SpecError("unsupportedVersion")
    if header[1] != 1:
        raise SpecError("unsupportedSuite")
    issued, expires = struct.unpack(">QQ", header[34:50])
    if issued > expires or expires - issued > 604_800:
        raise SpecError("malformedEnvelope")
    if header[2:10] != key_id(raw_public(server_sk)):
        raise SpecError("unknownRecipientKey")
    if device_pk is None or header[10:18] != key_id(device_pk):
        raise SpecError("unknownSenderKey")
    if not now < expires:
        raise SpecError("expired")
    if issued > now + 600:
        raise SpecError("notYetValid")
    try:
        padded = auth_open(server_sk, device_pk, header[50:82], receipt_info(topic), header, receipt[82:])
    except Exception:
        raise SpecError("authenticationFailure")
    return read_record(padded)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "Specs/vectors/control-v1.json"
    with open(path) as handle:
        vectors = json.load(handle)
    results = []

    for case in vectors["contentCases"]:
        name = "content/" + case["name"]
        try:
            content = strict_json(case["json"].encode("utf-8"), "malformedContent")
            action = check_control(content)
            got = canonical(content)
            ok = case.get("canonical") == got and case.get("action") == action
            results.append((name, ok, "" if ok else f"accepted as {got!r} ({action}), vector says {case.get('canonical')!r}"))
        except SpecError as error:
            ok = case.get("canonical") is None
            results.append((name, ok, "" if ok else f"refused with {error.code}, vector accepts it"))

    for vector in vectors["receipts"]:
        name = "receipt/" + vector["name"]
        try:
            h = bytes.fromhex
            device_sk, server_sk = h(vector["devicePrivateKey"]), h(vector["serverPrivateKey"])
            ok = raw_public(device_sk) == h(vector["devicePublicKey"]) and raw_public(server_sk) == h(vector["serverPublicKey"])
            header = (bytes([1, 1]) + key_id(h(vector["serverPublicKey"])) + key_id(h(vector["devicePublicKey"]))
                      + h(vector["receiptId"]) + struct.pack(">QQ", vector["issuedAt"], vector["expiresAt"]))
            record = vector["recordJSON"].encode()
            padded = struct.pack(">H", len(record)) + record + b"\x00" * (254 - len(record))
            ok = ok and padded.hex() == vector["paddedPlaintext"]
            enc, ciphertext = auth_seal(h(vector["serverPublicKey"]), device_sk, h(vector["ephemeralPrivateKey"]),
                                        receipt_info(vector["topic"]), header + raw_public(h(vector["ephemeralPrivateKey"])),
                                        padded)
            rebuilt = header + enc + ciphertext
            ok = ok and rebuilt.hex() == vector["receipt"]
            read = open_receipt(rebuilt, server_sk, h(vector["devicePublicKey"]), vector["topic"], vector["now"])
            ok = ok and canonical_value(read) == vector["recordJSON"]
            results.append((name, ok, "" if ok else "rebuilt receipt or record differs"))
        except SpecError as error:
            results.append((name, False, f"refused with {error.code}"))

    first = vectors["receipts"][0]
    server_sk = bytes.fromhex(first["serverPrivateKey"])
    for vector in vectors["receiptNegatives"]:
        name = "receipt-negative/" + vector["name"]
        device_pk = bytes.fromhex(vector["devicePublicKey"]) if vector.get("devicePublicKey") else None
        try:
            open_receipt(bytes.fromhex(vector["receipt"]), server_sk, device_pk, vector["topic"], vector["now"])
            results.append((name, False, "opened"))
        except SpecError as error:
            ok = error.code == vector["expectedError"]
            results.append((name, ok, "" if ok else f"{error.code}, vector says {vector['expectedError']}"))

    failed = [r for r in results if not r[1]]
    for name, _, detail in failed:
        print(f"FAIL {name}: {detail}")
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
