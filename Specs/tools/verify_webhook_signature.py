#!/usr/bin/env python3
"""Verifies one SealedPush gateway webhook event, written from Specs/gateway-api.yaml (`webhooks`, "Signature (v1)")
only, not from the gateway's code. Standard library only.

    verify_webhook_signature.py SECRET_FILE HEADERS_JSON BODY_FILE [--now UNIX_SECONDS] [--tolerance SECONDS]

SECRET_FILE is the gateway's `delivery.webhook.secretFile`; HEADERS_JSON a JSON object of the request's header fields
(names in any case); BODY_FILE the request body's exact bytes. Prints `OK <event> <delivery>` and exits 0 when the
signature holds and the timestamp is within the tolerance (default 300 s) of --now (default: this machine's clock);
otherwise prints `FAIL: <why>` and exits 1.
"""
import hashlib
import hmac
import json
import re
import sys
import time


def key_from_secret_file(data: bytes) -> bytes:
    """The HMAC key: the file's bytes without its final line-feed / carriage-return bytes, not decoded."""
    while data and data[-1:] in (b"\n", b"\r"):
        data = data[:-1]
    return data


def verify(key: bytes, headers: dict, body: bytes, now: float, tolerance: float) -> str:
    """Returns the event type and delivery id; raises ValueError saying why the event is refused."""
    lower = {name.lower(): value for name, value in headers.items()}
    timestamp = lower.get("sealedpush-timestamp")
    signature = lower.get("sealedpush-signature")
    if timestamp is None or signature is None:
        raise ValueError("SealedPush-Timestamp or SealedPush-Signature missing")
    if not re.fullmatch(r"[0-9]+", timestamp):
        raise ValueError("SealedPush-Timestamp is not decimal digits")
    match = re.fullmatch(r"v1=([0-9a-f]{64})", signature)
    if match is None:
        raise ValueError("SealedPush-Signature is not v1= and 64 lowercase hex digits")
    expected = hmac.new(key, timestamp.encode("ascii") + b"." + body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, match.group(1)):
        raise ValueError("signature mismatch")
    if abs(now - int(timestamp)) > tolerance:
        raise ValueError("timestamp %s is more than %d s from now (%d)" % (timestamp, tolerance, now))
    return "%s %s" % (lower.get("sealedpush-event", "?"), lower.get("sealedpush-delivery", "?"))


def main(argv):
    args = list(argv)
    now = time.time()
    tolerance = 300.0
    for flag in ("--now", "--tolerance"):
        if flag in args:
            i = args.index(flag)
            value = float(args[i + 1])
            del args[i:i + 2]
            if flag == "--now":
                now = value
            else:
                tolerance = value
    if len(args) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(args[0], "rb") as f:
        key = key_from_secret_file(f.read())
    with open(args[1], "r", encoding="utf-8") as f:
        headers = json.load(f)
    with open(args[2], "rb") as f:
        body = f.read()
    try:
        print("OK " + verify(key, headers, body, now, tolerance))
        return 0
    except ValueError as error:
        print("FAIL: %s" % error)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
