#!/usr/bin/env python3
"""Checks Specs/gateway-api.yaml, the OpenAPI 3.1 contract of the SealedPush gateway.

1. The document is valid OpenAPI 3.1 (openapi-spec-validator; every $ref resolves).
2. House rules the validator cannot know: every operation that needs a key answers 401 and 403; every error
   response (4xx, 5xx; but /healthz's 503, which is a Health) uses the Error schema; the send takes Idempotency-Key and answers 202, 413, 422.
3. The schemas accept requests the specs allow and refuse ones they forbid (JSON Schema 2020-12, from the
   documents Specs/keyring-v1.md §4 and Specs/envelope-v1.md §4 — not from any implementation).

Usage: check_gateway_api.py [Specs/gateway-api.yaml]
Needs: pip install openapi-spec-validator (brings jsonschema and PyYAML).
Prints 'N passed, M failed' and exits non-zero on any failure.
"""
import sys

import yaml
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

path = sys.argv[1] if len(sys.argv) > 1 else "Specs/gateway-api.yaml"
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


def resolve_response(response):
    ref = response.get("$ref")
    if ref:
        return responses[ref.rsplit("/", 1)[1]]
    return response


for route, item in doc["paths"].items():
    for method, op in item.items():
        if method not in METHODS:
            continue
        name = f"{method.upper()} {route}"
        needs_key = op.get("security", doc.get("security")) != []
        codes = set(op["responses"].keys())
        if needs_key:
            check({"401", "403"} <= codes, f"{name} answers 401 and 403")
        for code, response in op["responses"].items():
            if code[0] in "45" and route != "/healthz":  # the probe's 503 reports Health, as its 200 does
                body = resolve_response(response).get("content", {})
                schema = body.get("application/json", {}).get("schema", {})
                check(schema.get("$ref") == ERROR_REF, f"{name} {code} uses the Error schema")

send = doc["paths"]["/v1/apps/{appId}/notifications"]["post"]
check({"202", "413", "422"} <= set(send["responses"]), "send answers 202, 413 and 422")
check(any(p.get("name") == "Idempotency-Key" and p.get("in") == "header" for p in send.get("parameters", [])),
      "send takes an Idempotency-Key header")
states = doc["components"]["schemas"]["DeliveryState"]["enum"]
check(states == ["queued", "sent", "failed", "expired", "unregistered"], "delivery states as issue 12 names them")


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

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
