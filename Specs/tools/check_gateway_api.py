#!/usr/bin/env python3
"""Checks Specs/gateway-api.yaml, the OpenAPI 3.1 contract of the SealedPush gateway.

1. The document is valid OpenAPI 3.1 (openapi-spec-validator; every $ref resolves).
2. House rules the validator cannot know: every operation that needs a key answers 401 and 403, and of the app
   routes only postReceipt (a sealed receipt authenticates its device) is keyless and lists neither; every error
   response (4xx, 5xx; but /healthz's 503, which is a Health) uses the Error schema; the send answers 202, 413, 422;
   the send, the update and the badge take Idempotency-Key.
3. The schemas accept requests the specs allow and refuse ones they forbid (JSON Schema 2020-12, from the
   documents Specs/keyring-v1.md §4, Specs/envelope-v1.md §4 and Specs/control-v1.md — not from any implementation).
4. With --live URL --key KEY (scripts/schemathesis.sh passes its running gateway): what no operation declares, so
   schemathesis cannot see it, over raw sockets — unknown paths, undeclared methods, refusals, oversized or too
   many headers, bad Content-Length, bad chunks, a chunked body far past the limit — each answered with the
   contract's Error object (validated against the schema, as application/json), refusals with the connection closed.

Usage: check_gateway_api.py [Specs/gateway-api.yaml] [--live http://127.0.0.1:PORT --key API_KEY]
Needs: pip install openapi-spec-validator (brings jsonschema and PyYAML).
Prints 'N passed, M failed' and exits non-zero on any failure.
"""
import json
import socket
import sys
import time
from urllib.parse import urlparse

import yaml
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

args = sys.argv[1:]
live = key = None
if "--live" in args:
    i = args.index("--live")
    live = args[i + 1]
    del args[i:i + 2]
if "--key" in args:
    i = args.index("--key")
    key = args[i + 1]
    del args[i:i + 2]
path = args[0] if args else "Specs/gateway-api.yaml"
passed = 0
failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {what}")


spec_dict, base_uri = read_from_filename(path)
try:
    validate(spec_dict)
    check(True, "OpenAPI 3.1 validation")
except Exception as error:  # the validator's own error types vary by version
    check(False, f"OpenAPI 3.1 validation: {error}")

with open(path, encoding="utf-8") as f:
    doc = yaml.safe_load(f)
check(doc.get("openapi", "").startswith("3.1"), "openapi version is 3.1.x")

# ---- 2. house rules
METHODS = {"get", "put", "post", "delete", "patch"}
ERROR_REF = "#/components/schemas/Error"
responses = doc["components"]["responses"]
parameters = doc["components"]["parameters"]


def resolve_response(response):
    ref = response.get("$ref")
    if ref:
        return responses[ref.rsplit("/", 1)[1]]
    return response


def resolve_parameter(parameter):
    ref = parameter.get("$ref")
    if ref:
        return parameters[ref.rsplit("/", 1)[1]]
    return parameter


operations = {}
keyless_app_operations = set()
for route, item in doc["paths"].items():
    for method, op in item.items():
        if method not in METHODS:
            continue
        name = f"{method.upper()} {route}"
        operations[op.get("operationId")] = op
        needs_key = op.get("security", doc.get("security")) != []
        codes = set(op["responses"].keys())
        if needs_key:
            check({"401", "403"} <= codes, f"{name} answers 401 and 403")
        elif route.startswith("/v1/"):
            keyless_app_operations.add(op.get("operationId"))
            check(not {"401", "403"} & codes, f"{name} is keyless and answers neither 401 nor 403")
        for code, response in op["responses"].items():
            if code[0] in "45" and route != "/healthz":  # the probe's 503 reports Health, as its 200 does
                body = resolve_response(response).get("content", {})
                schema = body.get("application/json", {}).get("schema", {})
                check(schema.get("$ref") == ERROR_REF, f"{name} {code} uses the Error schema")

check(keyless_app_operations == {"postReceipt"},
      f"of the app routes exactly postReceipt is keyless (got {sorted(keyless_app_operations)})")
send = doc["paths"]["/v1/apps/{appId}/notifications"]["post"]
check({"202", "413", "422"} <= set(send["responses"]), "send answers 202, 413 and 422")
for operation_id in ["sendNotification", "updateNotification", "setBadge"]:
    op = operations.get(operation_id, {})
    check(any(resolve_parameter(p).get("name") == "Idempotency-Key" and resolve_parameter(p).get("in") == "header"
              for p in op.get("parameters", [])), f"{operation_id} takes an Idempotency-Key header")
    check("Location" in op.get("responses", {}).get("202", {}).get("headers", {}),
          f"{operation_id} answers 202 with Location")
check({"200", "404", "429"} <= set(operations.get("withdrawNotification", {}).get("responses", {})),
      "withdrawNotification answers 200, 404 and 429")
check("409" in operations.get("updateNotification", {}).get("responses", {}), "updateNotification answers 409")
receipt_op = operations.get("postReceipt", {})
check(set(receipt_op.get("responses", {})) == {"204", "400", "413", "422", "429", "503"},
      "postReceipt answers 204, 400, 413, 422, 429 and 503")
check(list(receipt_op.get("requestBody", {}).get("content", {})) == ["application/octet-stream"],
      "postReceipt takes application/octet-stream")
states = doc["components"]["schemas"]["DeliveryState"]["enum"]
check(states == ["queued", "sent", "failed", "expired", "unregistered", "withdrawn"],
      "delivery states as issue 12 names them, and withdrawn")


# ---- 3. schemas against examples written from the specs
def validator(schema_name):
    schema = dict(doc)
    schema["$ref"] = f"#/components/schemas/{schema_name}"
    return Draft202012Validator(schema)


def accepts(schema_name, instance, what):
    errors = list(validator(schema_name).iter_errors(instance))
    check(not errors, f"{schema_name} accepts {what}: {[e.message for e in errors]}")


def refuses(schema_name, instance, what):
    check(not validator(schema_name).is_valid(instance), f"{schema_name} refuses {what}")


# keyring-v1.md §4's example record, with a public key of the right shape.
registration = {
    "version": 1,
    "publicKey": "SPK1:" + "A" * 42 + "E",
    "keyId": "95ce4e591b52bda9",
    "createdAt": "2027-01-15T08:00:00Z",
    "expiresAt": "2027-07-14T08:00:00Z",
}
device = {"apnsToken": "ab" * 32, "environment": "sandbox", "registration": registration}
accepts("DeviceRequest", device, "a registration as keyring-v1 §4 shows it")
accepts("DeviceRequest", {**device, "registration": {k: v for k, v in registration.items() if k != "expiresAt"}},
        "a registration without expiresAt")
refuses("DeviceRequest", {**device, "registration": {**registration, "version": 2}}, "version 2")
refuses("DeviceRequest", {**device, "registration": {**registration, "keyId": "95CE4E591B52BDA9"}},
        "an uppercase key id")
refuses("DeviceRequest", {**device, "registration": {**registration, "publicKey": "SPK2:" + "A" * 43}},
        "another key prefix")
refuses("DeviceRequest", {**device, "environment": "development"}, "an unknown environment")
refuses("DeviceRequest", {**device, "apnsToken": "ab" * 31 + "a"}, "an odd-length token")
refuses("DeviceRequest", {**device, "apnsToken": "zz" * 32}, "a token that is not hex")
refuses("DeviceRequest", {k: v for k, v in device.items() if k != "registration"}, "no registration")

send_ok = {
    "devices": ["phone-1", "tablet-2"],
    "content": {"title": "Hi", "body": "Lunch?", "badge": 3, "interruption-level": "time-sensitive",
                "data": None, "x-unknown": {"kept": True}},
    "ttl": 3600, "priority": 10, "collapseId": "chat-42",
    "placeholder": {"title": "Message", "body": "New message"},
}
accepts("SendRequest", send_ok, "a send with envelope-v1 §4 content")
accepts("SendRequest", {"devices": ["d"], "content": {}}, "the smallest send (defaults)")
accepts("SendRequest", {**send_ok, "placeholder": {"locKey": "NEW_MESSAGE", "locArgs": ["x"]}},
        "a localized placeholder")
refuses("SendRequest", {**send_ok, "devices": []}, "no device")
accepts("SendRequest", {"users": ["alice", "bob"], "content": {}}, "a send to users")
accepts("SendRequest", {"users": ["alice"], "devices": ["kiosk"], "content": {}}, "users and devices together")
refuses("SendRequest", {"content": {}}, "neither devices nor users")
refuses("SendRequest", {"users": ["a", "a"], "content": {}}, "a repeated user")
refuses("SendRequest", {"users": ["a b"], "content": {}}, "a user id with a space")
accepts("DeviceRequest", {**device, "userId": "alice"}, "a device with its user")
refuses("DeviceRequest", {**device, "userId": ""}, "an empty user id")
refuses("SendRequest", {**send_ok, "devices": ["a", "a"]}, "a repeated device")
refuses("SendRequest", {**send_ok, "devices": [f"d{i}" for i in range(1001)]}, "1,001 devices")
refuses("SendRequest", {**send_ok, "ttl": 0}, "ttl 0 (envelope-v1 §9: 0 < ttl)")
refuses("SendRequest", {**send_ok, "ttl": 2419201}, "ttl over 28 days")
accepts("SendRequest", {**send_ok, "ttl": 2419200}, "ttl of exactly 28 days")
refuses("SendRequest", {**send_ok, "priority": 7}, "priority 7")
refuses("SendRequest", {**send_ok, "collapseId": "c" * 65}, "a 65-character collapse id")
refuses("SendRequest", {**send_ok, "content": {"badge": -1}}, "a negative badge")
refuses("SendRequest", {**send_ok, "content": {"badge": 2147483648}}, "a badge over 2^31-1")
refuses("SendRequest", {**send_ok, "content": {"relevance-score": 1.5}}, "relevance-score over 1")
refuses("SendRequest", {**send_ok, "content": {"interruption-level": "loud"}}, "an unknown interruption level")
refuses("SendRequest", {**send_ok, "content": {"attachments": ["x"]}}, "an attachment that is not an object")
refuses("SendRequest", {**send_ok, "content": "text"}, "content that is not an object")
refuses("SendRequest", {**send_ok, "placeholder": {"body": "b", "locKey": "K"}}, "a placeholder with body and locKey")
refuses("SendRequest", {**send_ok, "placeholder": {"sound": "x"}}, "a placeholder with neither body nor locKey")
refuses("SendRequest", {**send_ok, "surprise": 1}, "an unknown member at the top")

accepts("Error", {"code": "contentTooLarge", "message": "content is 3,120 bytes", "field": "content",
                  "needed": 3120, "limit": 2910}, "contentTooLarge with numbers")
refuses("Error", {"message": "no code"}, "an error without code")
accepts("Error", {"code": "notUpdatable", "message": "a control message has no content to replace"},
        "notUpdatable (an update of a removal or a badge)")
refuses("Error", {"code": "teapot", "message": "x"}, "an unknown code")
for name, example in responses["Unprocessable"]["content"]["application/json"]["examples"].items():
    accepts("Error", example["value"], f"the 422 example {name}")

accepts("NotificationStatus", {
    "id": "6f1c2a58-2f4e-4a53-9a0c-1f1f8f0e9a10", "createdAt": "2027-01-15T08:00:00Z",
    "expiresAt": "2027-01-16T08:00:00Z", "priority": 10,
    "devices": [
        {"deviceId": "a", "state": "sent", "apnsId": "9b1c2a58-2f4e-4a53-9a0c-1f1f8f0e9a10", "attempts": 1,
         "updatedAt": "2027-01-15T08:00:01Z"},
        {"deviceId": "b", "state": "failed", "reason": "BadDeviceToken", "attempts": 1,
         "updatedAt": "2027-01-15T08:00:01Z"},
    ]}, "one sent and one failed device")
refuses("DeviceDelivery", {"deviceId": "a", "state": "claimed", "attempts": 0, "updatedAt": "2027-01-15T08:00:01Z"},
        "the store's internal state 'claimed'")

# Specs/control-v1.md: the gateway names notifications and sends control messages from their own operations.
refuses("SendRequest", {**send_ok, "content": {"body": "x", "notification-id": "m-1"}}, "content with notification-id")
refuses("SendRequest", {**send_ok, "content": {"control": {"action": "badge", "count": 1}}}, "content with control")

accepts("BadgeRequest", {"devices": ["d1"], "count": 3}, "a badge for one device")
accepts("BadgeRequest", {"users": ["alice"], "devices": ["kiosk"], "count": 0, "ttl": 60, "priority": 5},
        "a cleared badge for users and devices")
refuses("BadgeRequest", {"devices": ["d1"], "count": -1}, "count -1")
refuses("BadgeRequest", {"devices": ["d1"], "count": 2147483648}, "count 2147483648")
refuses("BadgeRequest", {"count": 3}, "no recipients")
refuses("BadgeRequest", {"devices": ["d1"], "count": 3, "content": {}}, "an unknown member")
refuses("BadgeRequest", {"devices": ["d1"]}, "no count")

accepts("UpdateRequest", {"content": {"body": "x"}}, "new content only")
accepts("UpdateRequest", {"content": {"body": "x"}, "ttl": 3600, "priority": 5,
                          "placeholder": {"body": "New message"}}, "new content with ttl, priority, placeholder")
refuses("UpdateRequest", {"content": {"body": "x"}, "devices": ["d"]}, "recipients")
refuses("UpdateRequest", {"content": {"body": "x"}, "collapseId": "c"}, "a collapse id")
refuses("UpdateRequest", {}, "no content")
refuses("UpdateRequest", {"content": {"body": "x", "control": {"action": "update", "id": "x"}}}, "content with control")

withdrawn = {"id": "6f1c2a58-2f4e-4a53-9a0c-1f1f8f0e9a10", "withdrawnJobs": 2, "reachedDevices": 1,
             "removalId": "7a2d3b69-3f5e-4b64-8b1d-2e2e9f1fab21"}
accepts("Withdrawn", withdrawn, "a withdrawal that reached a device")
accepts("Withdrawn", {**{k: v for k, v in withdrawn.items() if k != "removalId"}, "reachedDevices": 0},
        "a withdrawal that reached none (no removalId)")
refuses("Withdrawn", {**withdrawn, "withdrawnJobs": -1}, "negative withdrawnJobs")
refuses("Withdrawn", {k: v for k, v in withdrawn.items() if k != "reachedDevices"}, "no reachedDevices")

receipt = {"outcome": "decrypted", "attachmentsDelivered": 1, "attachmentsFailed": 0,
           "deviceTime": "2027-01-15T08:00:03Z", "receivedAt": "2027-01-15T08:00:04Z", "count": 1}
accepts("Receipt", receipt, "a decrypted receipt")
accepts("Receipt", {**receipt, "outcome": "fallback", "reason": "timedOut", "count": 2}, "a fallback with its reason")
refuses("Receipt", {**receipt, "outcome": "shown"}, "outcome 'shown'")
refuses("Receipt", {**receipt, "reason": "timedOut"}, "a reason beside decrypted (control-v1 §4)")
refuses("Receipt", {**receipt, "attachmentsFailed": 9}, "9 failed attachments (at most 8)")
refuses("Receipt", {**receipt, "count": 0}, "count 0")
accepts("NotificationStatus", {
    "id": "6f1c2a58-2f4e-4a53-9a0c-1f1f8f0e9a10", "createdAt": "2027-01-15T08:00:00Z",
    "expiresAt": "2027-01-16T08:00:00Z", "priority": 10, "withdrawnAt": "2027-01-15T08:05:00Z",
    "devices": [
        {"deviceId": "a", "state": "sent", "apnsId": "9b1c2a58-2f4e-4a53-9a0c-1f1f8f0e9a10", "attempts": 1,
         "updatedAt": "2027-01-15T08:00:01Z", "receipt": receipt},
        {"deviceId": "b", "state": "withdrawn", "reason": "Withdrawn", "attempts": 0,
         "updatedAt": "2027-01-15T08:05:00Z"},
    ]}, "a withdrawn notification, one device with a receipt")



# ---- 4. the live gateway: errors no operation declares (raw sockets: exactly these bytes, nothing fixed up)
def raw_exchange(url, data, send_more=None, timeout=20):
    """Sends data (then send_more() chunks while the server takes them); returns (status, headers, body, sent, closed)."""
    target = urlparse(url)
    sock = socket.create_connection((target.hostname, target.port), timeout=timeout)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
    received = b""
    sent = 0
    try:
        sock.sendall(data)
        if send_more:
            for chunk in send_more():
                sock.sendall(chunk)
                sent += len(chunk)
                sock.setblocking(False)
                try:
                    while True:
                        more = sock.recv(65536)
                        if not more:
                            break
                        received += more
                except (BlockingIOError, InterruptedError):
                    pass
                sock.setblocking(True)
                sock.settimeout(timeout)
    except (BrokenPipeError, ConnectionResetError, socket.timeout, OSError):
        pass
    closed = False
    deadline = time.monotonic() + timeout
    try:
        sock.setblocking(True)
        sock.settimeout(timeout)
        while time.monotonic() < deadline:
            more = sock.recv(65536)
            if not more:
                closed = True
                break
            received += more
    except (ConnectionResetError, OSError):
        closed = True
    sock.close()
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split(" ")[1])
    except (IndexError, ValueError):
        status = 0
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "content-length" in headers and headers["content-length"].isdigit():
        body = body[:int(headers["content-length"])]
    return status, headers, body, sent, closed


def request(method, target, headers=(), body=b"", close=True):
    text = f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    if close:
        text += "Connection: close\r\n"
    for header in headers:
        text += header + "\r\n"
    return (text + "\r\n").encode("latin-1") + body


def expect_error(what, status, code, got):
    got_status, headers, body, _, _ = got
    check(got_status == status, f"live: {what} answers {status} (got {got_status})")
    check(headers.get("content-type", "").startswith("application/json"), f"live: {what} is application/json")
    try:
        error = json.loads(body)
    except ValueError:
        check(False, f"live: {what} has a JSON body (got {body[:80]!r})")
        return
    errors = list(validator("Error").iter_errors(error))
    check(not errors, f"live: {what} is an Error object: {[e.message for e in errors]}")
    check(error.get("code") == code, f"live: {what} has code {code} (got {error.get('code')})")


if live:
    auth = f"Authorization: Bearer {key}"
    cases = [
        ("GET /admin", request("GET", "/admin"), 404, "notFound"),
        ("GET /v1/apps", request("GET", "/v1/apps"), 404, "notFound"),
        ("GET /", request("GET", "/"), 404, "notFound"),
        ("PATCH a device", request("PATCH", "/v1/apps/chat/devices/phone", [auth]), 405, "methodNotAllowed"),
        ("a device without a key", request("GET", "/v1/apps/chat/devices/phone"), 401, "unauthorized"),
        ("a key of no app", request("GET", "/v1/apps/chat/devices/phone", ["Authorization: Bearer sp_nope"]),
         401, "unauthorized"),
        ("a declared body over maxBodyBytes",
         request("POST", "/v1/apps/chat/notifications", [auth, "Content-Length: 100000000"]), 413, "requestTooLarge"),
        ("a header over 80 KiB", request("GET", "/healthz", ["X-Big: " + "a" * 90000]), 400, "malformedRequest"),
        ("1,001 headers", request("GET", "/healthz", [f"X-H{i}: v" for i in range(1001)]), 400, "malformedRequest"),
        ("Content-Length: abc", request("POST", "/v1/apps/chat/notifications", [auth, "Content-Length: abc"]),
         400, "malformedRequest"),
        ("two Content-Lengths",
         request("POST", "/v1/apps/chat/notifications", [auth, "Content-Length: 2", "Content-Length: 3"], b"{}"),
         400, "malformedRequest"),
        ("a bad chunk size",
         request("POST", "/v1/apps/chat/notifications", [auth, "Transfer-Encoding: chunked"], b"zz\r\n{}\r\n0\r\n\r\n"),
         400, "malformedRequest"),
        ("not HTTP", b"HELLO\r\n\r\n", 400, "malformedRequest"),
    ]
    for what, data, status, code in cases:
        expect_error(what, status, code, raw_exchange(live, data))

    # A chunked body far past maxBodyBytes (64 MiB offered): answered, then the connection closes after a bounded
    # read instead of the whole body being read and discarded.
    def chunks():
        chunk = b"10000\r\n" + b" " * 0x10000 + b"\r\n"
        for _ in range(1024):
            yield chunk

    for what, headers, status, code in [
        ("a chunked body past the limit", [auth], 413, "requestTooLarge"),
        ("a chunked body without a key", [], 401, "unauthorized"),
    ]:
        head = request("POST", "/v1/apps/chat/notifications",
                       headers + ["Content-Type: application/json", "Transfer-Encoding: chunked"], close=False)
        got = raw_exchange(live, head, send_more=chunks)
        expect_error(what, status, code, got)
        check(got[4], f"live: {what}: the connection is closed")
        check(got[3] < 16 << 20, f"live: {what}: the server took {got[3]} of 67,108,864 bytes (under 16 MiB)")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
