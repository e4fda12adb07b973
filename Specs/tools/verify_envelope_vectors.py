#!/usr/bin/env python3
"""Independent check of Specs/vectors/envelope-v1.json, written from Specs/envelope-v1.md alone.

This is a third implementation of SealedPush envelope v1 (besides the libsodium sealer and the swift-crypto
opener), in Python on the `cryptography` package's X25519 and ChaCha20-Poly1305 and the standard library's HMAC.
It first checks its own HPKE against the RFC 9180 vectors (mode_auth), then, for every positive vector, rebuilds
the envelope and the APNs body byte for byte from the vector's inputs and opens it; for every negative vector it
runs the receiver steps of spec section 8 and compares the error code.

Usage: verify_envelope_vectors.py Specs/vectors/envelope-v1.json [Specs/vectors/rfc9180-x25519-chacha20poly1305.json]
Prints 'N passed, M failed' and exits non-zero on any failure.
"""
import hashlib
import hmac
import json
import math
import os
import re
import struct
import sys

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives import serialization

# ---- spec section 2: HPKE (RFC 9180) mode_auth, DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305
KEM_SUITE = b"KEM" + struct.pack(">H", 0x0020)
HPKE_SUITE = b"HPKE" + struct.pack(">HHH", 0x0020, 0x0001, 0x0003)


def extract(salt, ikm):
    return hmac.new(salt if salt else b"\x00" * 32, ikm, hashlib.sha256).digest()


def expand(prk, info, length):
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
        counter += 1
    return out[:length]


def labeled_extract(suite, salt, label, ikm):
    return extract(salt, b"HPKE-v1" + suite + label + ikm)


def labeled_expand(suite, prk, label, info, length):
    return expand(prk, struct.pack(">H", length) + b"HPKE-v1" + suite + label + info, length)


def raw_public(sk):
    return X25519PrivateKey.from_private_bytes(sk).public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def dh(sk, pk):
    value = X25519PrivateKey.from_private_bytes(sk).exchange(X25519PublicKey.from_public_bytes(pk))
    if value == b"\x00" * 32:  # RFC 9180 section 7.1.4
        raise ValueError("all-zero DH")
    return value


def shared_secret(dh_value, kem_context):
    prk = labeled_extract(KEM_SUITE, b"", b"eae_prk", dh_value)
    return labeled_expand(KEM_SUITE, prk, b"shared_secret", kem_context, 32)


def key_schedule(mode, secret_in, info):
    psk_id_hash = labeled_extract(HPKE_SUITE, b"", b"psk_id_hash", b"")
    info_hash = labeled_extract(HPKE_SUITE, b"", b"info_hash", info)
    context = bytes([mode]) + psk_id_hash + info_hash
    secret = labeled_extract(HPKE_SUITE, secret_in, b"secret", b"")
    key = labeled_expand(HPKE_SUITE, secret, b"key", context, 32)
    nonce = labeled_expand(HPKE_SUITE, secret, b"base_nonce", context, 12)
    return key, nonce


def auth_seal(pk_r, sk_s, sk_e, info, aad, plaintext):
    enc = raw_public(sk_e)
    ss = shared_secret(dh(sk_e, pk_r) + dh(sk_s, pk_r), enc + pk_r + raw_public(sk_s))
    key, nonce = key_schedule(0x02, ss, info)
    return enc, ChaCha20Poly1305(key).encrypt(nonce, plaintext, aad)


def auth_open(sk_r, pk_s, enc, info, aad, ciphertext):
    ss = shared_secret(dh(sk_r, enc) + dh(sk_r, pk_s), enc + raw_public(sk_r) + pk_s)
    key, nonce = key_schedule(0x02, ss, info)
    return ChaCha20Poly1305(key).decrypt(nonce, ciphertext, aad)


# ---- spec sections 2.1, 2.2, 3, 5, 6, 7
def key_id(pk):
    return hashlib.sha256(b"SealedPush key id v1\x00" + pk).digest()[:8]


def hpke_info(topic):
    return b"SealedPush envelope v1\x00" + topic.encode()


B64_RE = re.compile(r"^[A-Za-z0-9_-]*$")


def b64url_decode(text):
    if not B64_RE.match(text) or len(text) % 4 == 1:
        raise SpecError("badEncoding")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    bits, acc, out = 0, 0, bytearray()
    for char in text:
        acc = (acc << 6) | alphabet.index(char)
        bits += 6
        if bits >= 8:
            bits -= 8
            out.append((acc >> bits) & 0xFF)
            acc &= (1 << bits) - 1
    if acc != 0:
        raise SpecError("badEncoding")
    return bytes(out)


def b64url_encode(data):
    import base64
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def public_key_text_decode(text):
    assert text.startswith("SPK1:") and len(text) == 48, text
    return b64url_decode(text[5:])


BUCKETS = [128, 256, 512, 1024, 1536, 2048, 2560, 2912]


def pad(content):
    need = 2 + len(content)
    bucket = next(b for b in BUCKETS if b >= need)
    return struct.pack(">H", len(content)) + content + b"\x00" * (bucket - need)


def json_string(text):
    out = ['"']
    short = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    for char in text:
        if char in short:
            out.append(short[char])
        elif ord(char) < 0x20:
            out.append("\\u%04x" % ord(char))
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def aps_prefix(placeholder):
    if "locKey" in placeholder:
        alert = '{"loc-key":' + json_string(placeholder["locKey"])
        if placeholder.get("locArgs"):
            alert += ',"loc-args":[' + ",".join(json_string(a) for a in placeholder["locArgs"]) + "]"
        alert += "}"
    else:
        alert = "{"
        if "title" in placeholder:
            alert += '"title":' + json_string(placeholder["title"]) + ","
        alert += '"body":' + json_string(placeholder["body"]) + "}"
    sound = ',"sound":' + json_string(placeholder["sound"]) if "sound" in placeholder else ""
    return ('{"aps":{"alert":' + alert + sound + ',"mutable-content":1},"sp":"').encode()


# ---- spec section 8: receiver processing
class SpecError(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


MAX_EXACT_INTEGER = 2 ** 53 - 1


def strict_json(data, code):
    """RFC 8259 with the spec's rules: names compared by code points (Python str equality), no duplicates, no
    lone surrogates (raw bytes fail UTF-8 decoding; escaped ones are caught here), no byte order mark, numbers as
    IEEE 754 doubles that must not overflow, integer literals within +-(2^53 - 1), nesting at most 32 levels."""
    def text_ok(text):
        if any(0xD800 <= ord(char) <= 0xDFFF for char in text):
            raise SpecError(code)
        return text

    def pairs(items):
        keys = [k for k, _ in items]
        if len(keys) != len(set(keys)):
            raise SpecError(code)
        return dict(items)

    def bad_constant(_):
        raise SpecError(code)

    def parse_int(text):
        value = int(text)
        if abs(value) > MAX_EXACT_INTEGER:
            raise SpecError(code)
        return value

    def parse_float(text):
        value = float(text)
        if math.isinf(value):
            raise SpecError(code)
        return value

    def strings_ok(value):
        if isinstance(value, str):
            text_ok(value)
        elif isinstance(value, list):
            for child in value:
                strings_ok(child)
        elif isinstance(value, dict):
            for name, child in value.items():
                text_ok(name)
                strings_ok(child)

    def depth(value, level):
        if isinstance(value, (list, dict)):
            if level > 32:
                raise SpecError(code)
            for child in (value.values() if isinstance(value, dict) else value):
                depth(child, level + 1)

    try:
        value = json.loads(data.decode("utf-8"), object_pairs_hook=pairs, parse_constant=bad_constant,
                           parse_int=parse_int, parse_float=parse_float)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise SpecError(code)
    strings_ok(value)
    depth(value, 1)
    return value


# ---- spec section 4.1: canonical form
KNOWN_MEMBERS = ["title", "subtitle", "body", "badge", "sound", "thread-id", "category", "interruption-level",
                 "relevance-score", "target-content-id", "data", "attachments", "content-ref",
                 # control-v1 section 1 places these after content-ref (their own rules: verify_control_vectors.py)
                 "notification-id", "control"]


def shortest_digits(value):
    """Shortest round-trip digits of a positive double and its decimal exponent E (value = d.ddd x 10^E)."""
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    shift = int(exponent) if exponent else 0
    integer, _, fraction = mantissa.partition(".")
    digits = integer + fraction
    exp = len(integer) - 1 + shift
    while digits.startswith("0"):
        digits = digits[1:]
        exp -= 1
    return digits.rstrip("0"), exp


def canonical_number(value):
    if isinstance(value, int):
        return str(value)
    if value == 0:
        return "0"
    integral = value == math.trunc(value)
    if integral and abs(value) < 2 ** 53:
        return str(int(value))
    digits, exp = shortest_digits(abs(value))
    sign = "-" if value < 0 else ""
    if integral or exp < -4:
        text = sign + digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return text + "e" + ("-" if exp < 0 else "+") + "%02d" % abs(exp)
    if exp < 0:
        return sign + "0." + "0" * (-exp - 1) + digits
    return sign + digits[:exp + 1] + "." + digits[exp + 1:]


def canonical_value(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return canonical_number(value)
    if isinstance(value, str):
        return json_string(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical_value(v) for v in value) + "]"
    names = sorted(value, key=lambda name: name.encode("utf-8"))
    return "{" + ",".join(json_string(n) + ":" + canonical_value(value[n]) for n in names) + "}"


def canonical_content(content):
    known = [n for n in KNOWN_MEMBERS if n in content]
    others = sorted((n for n in content if n not in KNOWN_MEMBERS), key=lambda name: name.encode("utf-8"))
    return "{" + ",".join(json_string(n) + ":" + canonical_value(content[n]) for n in known + others) + "}"


def check_public_key_text(text):
    """Spec section 7: SPK1: + 43 canonical base64url characters of a canonical u-coordinate (< 2^255 - 19)."""
    if not text.startswith("SPK1:") or len(text) != 48:
        raise SpecError("invalidKey")
    try:
        raw = b64url_decode(text[5:])
    except SpecError:
        raise SpecError("invalidKey")
    if int.from_bytes(raw, "little") >= 2 ** 255 - 19:
        raise SpecError("invalidKey")
    return raw


def receive(body, device_sk, server_pk, topic, now, parsed_body=False):
    if len(body) > 4096 and not parsed_body:
        raise SpecError("payloadTooLarge")
    document = strict_json(body, "malformedPayload")
    if not isinstance(document, dict) or not isinstance(document.get("sp"), str):
        raise SpecError("malformedPayload")
    # Step 3a: a body handed over parsed may carry any length; an over-long text fails before any decoding.
    if parsed_body and len(document["sp"].encode("utf-8")) > (4 * (82 + 16 + 4096) + 2) // 3:
        raise SpecError("malformedEnvelope")
    envelope = b64url_decode(document["sp"])
    if len(envelope) < 82 + 16 + 128:
        raise SpecError("truncated")
    if len(envelope) > 82 + 16 + 4096:
        raise SpecError("malformedEnvelope")
    header = envelope[:82]
    if header[0] != 1:
        raise SpecError("unsupportedVersion")
    if header[1] != 1:
        raise SpecError("unsupportedSuite")
    issued, expires = struct.unpack(">QQ", header[34:50])
    if issued > expires or expires - issued > 2_419_200:
        raise SpecError("malformedEnvelope")
    if header[2:10] != key_id(raw_public(device_sk)):
        raise SpecError("unknownRecipientKey")
    if header[10:18] != key_id(server_pk):
        raise SpecError("unknownSenderKey")
    if not now < expires:
        raise SpecError("expired")
    if issued > now + 600:  # step 10a: not-before with 10 minutes of clock skew
        raise SpecError("notYetValid")
    try:
        padded = auth_open(device_sk, server_pk, header[50:82], hpke_info(topic), header, envelope[82:])
    except Exception:
        raise SpecError("authenticationFailure")
    length = struct.unpack(">H", padded[:2])[0]
    if 2 + length > len(padded) or any(padded[2 + length:]):
        raise SpecError("malformedContent")
    content = strict_json(padded[2:2 + length], "malformedContent")
    check_content(content)
    return header, content


def check_content(content):
    """Spec section 4: known members must have their type and range; unknown members are ignored."""
    def bad():
        raise SpecError("malformedContent")

    if not isinstance(content, dict):
        bad()
    for name in ("title", "subtitle", "body", "sound", "thread-id", "category", "target-content-id"):
        if name in content and not isinstance(content[name], str):
            bad()
    badge = content.get("badge")
    if "badge" in content and (isinstance(badge, bool) or not isinstance(badge, (int, float))
                              or badge != int(badge) or not 0 <= badge <= 2_147_483_647):
        bad()
    if "interruption-level" in content and content["interruption-level"] not in (
            "passive", "active", "time-sensitive", "critical"):
        bad()
    score = content.get("relevance-score")
    if "relevance-score" in content and (isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1):
        bad()
    attachments = content.get("attachments")
    if "attachments" in content and (not isinstance(attachments, list) or not all(
            isinstance(a, dict) and isinstance(a.get("url"), str) for a in attachments)):
        bad()
    # Section 4.3: every receiver checks that content-ref, when present, is an object with a url string.
    reference = content.get("content-ref")
    if "content-ref" in content and not (isinstance(reference, dict) and isinstance(reference.get("url"), str)):
        bad()


# ---- checks
def check_rfc9180(path, results):
    with open(path) as handle:
        vectors = json.load(handle)["vectors"]
    for vector in vectors:
        if vector["mode"] != 2:
            continue
        h = bytes.fromhex
        sk_e, pk_r, sk_s = h(vector["skEm"]), h(vector["pkRm"]), h(vector["skSm"])
        ss = shared_secret(dh(sk_e, pk_r) + dh(sk_s, pk_r), raw_public(sk_e) + pk_r + raw_public(sk_s))
        key, nonce = key_schedule(2, ss, h(vector["info"]))
        ok = ss == h(vector["shared_secret"]) and key == h(vector["key"]) and nonce == h(vector["base_nonce"])
        first = vector["encryptions"][0]
        ok = ok and ChaCha20Poly1305(key).encrypt(nonce, h(first["pt"]), h(first["aad"])) == h(first["ct"])
        results.append(("rfc9180 mode_auth key schedule and first encryption", ok, ""))


def check_envelopes(path, results):
    with open(path) as handle:
        doc = json.load(handle)
    h = bytes.fromhex
    server_sk, device_sk = h(doc["serverPrivateKey"]), h(doc["devicePrivateKey"])
    server_pk, device_pk = raw_public(server_sk), raw_public(device_sk)
    results.append(("server public key text", public_key_text_decode(doc["serverPublicKey"]) == server_pk, ""))
    results.append(("device public key text", public_key_text_decode(doc["devicePublicKey"]) == device_pk, ""))
    results.append(("server key id", key_id(server_pk).hex() == doc["serverKeyId"], ""))
    results.append(("device key id", key_id(device_pk).hex() == doc["deviceKeyId"], ""))
    topic = doc["topic"]
    for vector in doc["positive"]:
        name = "positive/" + vector["name"]
        content_json = vector["contentJSON"].encode()
        checks = []
        checks.append(("content", strict_json(content_json, "x") == vector["content"]))
        checks.append(("canonical", canonical_content(strict_json(content_json, "x")) == vector["contentJSON"]))
        padded = pad(content_json)
        checks.append(("padding", padded.hex() == vector["paddedPlaintext"]))
        header = (bytes([1, 1]) + key_id(device_pk) + key_id(server_pk) + h(vector["messageId"])
                  + struct.pack(">QQ", vector["issuedAt"], vector["expiresAt"]))
        enc, ct = auth_seal(device_pk, server_sk, h(vector["ephemeralPrivateKey"]), hpke_info(topic),
                            header + raw_public(h(vector["ephemeralPrivateKey"])), padded)
        envelope = header + enc + ct
        checks.append(("envelope", envelope.hex() == vector["envelope"]))
        prefix = aps_prefix(vector["placeholder"])
        body = prefix + b64url_encode(envelope).encode() + b'"}'
        checks.append(("payload", body == vector["payload"].encode()))
        formula = len(prefix) + (4 * (82 + 16 + len(padded)) + 2) // 3 + 2
        checks.append(("budget", len(body) == formula and len(body) <= 4096))
        try:
            _, opened = receive(vector["payload"].encode(), device_sk, server_pk, topic, vector["now"])
            checks.append(("open", opened == vector["content"]))
        except SpecError as error:
            checks.append(("open: " + error.code, False))
        failed = [label for label, ok in checks if not ok]
        results.append((name, not failed, ", ".join(failed)))
    for vector in doc["negative"]:
        name = "negative/" + vector["name"]
        try:
            receive(vector["payload"].encode(), device_sk, server_pk, vector.get("topic", topic), vector["now"],
                    parsed_body=vector.get("parsedBody", False))
            results.append((name, False, "opened; expected " + vector["expectedError"]))
        except SpecError as error:
            ok = error.code == vector["expectedError"]
            results.append((name, ok, "" if ok else "got %s, expected %s" % (error.code, vector["expectedError"])))


def check_extras(path, results):
    """Accepted bodies, canonical numbers and invalid public key texts (spec section 11)."""
    with open(path) as handle:
        doc = json.load(handle)
    h = bytes.fromhex
    server_pk, device_sk = raw_public(h(doc["serverPrivateKey"])), h(doc["devicePrivateKey"])
    for vector in doc.get("accepted", []):
        name = "accepted/" + vector["name"]
        try:
            _, content = receive(vector["payload"].encode(), device_sk, server_pk, doc["topic"], vector["now"])
            got = canonical_content(content)
            results.append((name, got == vector["contentJSON"], "" if got == vector["contentJSON"] else got))
        except SpecError as error:
            results.append((name, False, "failed with " + error.code))
    for vector in doc.get("canonicalNumbers", []):
        value = struct.unpack(">d", h(vector["bits"]))[0]
        got = canonical_number(value)
        results.append(("number/" + vector["bits"], got == vector["text"], "got %s, expected %s" % (got, vector["text"])))
    for vector in doc.get("invalidPublicKeys", []):
        try:
            check_public_key_text(vector["text"])
            results.append(("invalid-key/" + vector["name"], False, "accepted"))
        except SpecError as error:
            results.append(("invalid-key/" + vector["name"], error.code == "invalidKey", error.code))
    results.append(("valid device key text", check_public_key_text(doc["devicePublicKey"]) == raw_public(device_sk), ""))


def main():
    envelope_path = sys.argv[1] if len(sys.argv) > 1 else "Specs/vectors/envelope-v1.json"
    rfc_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(envelope_path), "rfc9180-x25519-chacha20poly1305.json")
    results = []
    check_rfc9180(rfc_path, results)
    check_envelopes(envelope_path, results)
    check_extras(envelope_path, results)
    failed = [r for r in results if not r[1]]
    for name, ok, detail in failed:
        print("FAIL %s %s" % (name, detail))
    print("verify_envelope_vectors: %d passed, %d failed" % (len(results) - len(failed), len(failed)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
