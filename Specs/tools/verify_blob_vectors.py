#!/usr/bin/env python3
"""Independent check of Specs/vectors/blob-v1.json, written from Specs/blob-v1.md alone.

A third implementation of SealedPush blob v1 (besides the libsodium encryptor and the swift-crypto reader), on the
`cryptography` package's ChaCha20-Poly1305 and the standard library's HMAC for HKDF-SHA256. For every positive
vector it derives the payload key, rebuilds the blob byte for byte from the key, salt and plaintext rule, and
reads it back with the reading procedure of section 5, fed in several splits; for every negative vector it applies
the edits of section 9 to the base blob and checks that the reader fails with the expected code (in every split)
without releasing plaintext.

Usage: verify_blob_vectors.py Specs/vectors/blob-v1.json
Prints 'N passed, M failed' and exits non-zero on any failure.
"""
import hashlib
import hmac
import json
import random
import sys

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

# ---- section 2: parameters
MAGIC = bytes([0x53, 0x50, 0x42, 0x4C])
VERSION = 0x01
NSALT = 16
NH = 4 + 1 + NSALT
C = 65536
NT = 16
INFO = b"SealedPush blob v1 payload"
MAX_SIZE = 2 ** 32


class BlobError(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def hkdf_sha256(salt, ikm, info, length):  # RFC 5869
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
        counter += 1
    return out[:length]


def payload_key(blob_key, salt):
    return hkdf_sha256(salt, blob_key, INFO, 32)


def nonce(index, last):
    return index.to_bytes(11, "big") + (b"\x01" if last else b"\x00")


def chunk_count(size):
    return max(1, -(-size // C))


def ciphertext_size(size):
    return NH + size + NT * chunk_count(size)


def plaintext(size):
    return bytes(i % 251 for i in range(size))


def seal_chunk(key, index, last, data):
    return ChaCha20Poly1305(key).encrypt(nonce(index, last), data, b"")


def encrypt(blob_key, salt, data):
    key = payload_key(blob_key, salt)
    n = chunk_count(len(data))
    out = MAGIC + bytes([VERSION]) + salt
    for i in range(n):
        out += seal_chunk(key, i, i == n - 1, data[i * C:(i + 1) * C])
    return out


class Reader:
    """Section 5, byte-order exact: fed pieces of any size, it fails at the same point whatever the split."""

    def __init__(self, blob_key, size, max_size=MAX_SIZE):
        if size > min(max_size, MAX_SIZE):
            raise BlobError("blobTooLarge")
        self.blob_key, self.size = blob_key, size
        self.n, self.length = chunk_count(size), ciphertext_size(size)
        self.pos, self.header, self.buffer, self.index = 0, b"", bytearray(), 0
        self.key, self.released = None, bytearray()

    def chunk_length(self, i):
        return (C if i < self.n - 1 else self.size - (self.n - 1) * C) + NT

    def feed(self, data):
        data = memoryview(bytes(data))
        while len(data):
            if self.pos >= self.length:
                raise BlobError("blobTrailingData")
            if self.pos < NH:
                byte = data[0]
                if self.pos < 4 and byte != MAGIC[self.pos]:
                    raise BlobError("malformedBlob")
                if self.pos == 4 and byte != VERSION:
                    raise BlobError("unsupportedBlobVersion")
                self.header += bytes([byte])
                self.pos += 1
                data = data[1:]
                if self.pos == NH:
                    self.key = payload_key(self.blob_key, self.header[5:])
                continue
            # Bytes up to the end of the current chunk: none of them can trigger a header or trailing check.
            take = min(len(data), self.chunk_length(self.index) - len(self.buffer))
            self.buffer += data[:take]
            self.pos += take
            data = data[take:]
            if len(self.buffer) == self.chunk_length(self.index):
                last = self.index == self.n - 1
                try:
                    self.released += ChaCha20Poly1305(self.key).decrypt(nonce(self.index, last), bytes(self.buffer), b"")
                except InvalidTag:
                    raise BlobError("blobAuthenticationFailure")
                self.buffer, self.index = bytearray(), self.index + 1

    def finish(self):
        if self.pos < self.length:
            raise BlobError("blobTruncated")
        return bytes(self.released)


def read(blob, blob_key, size, max_size, split):
    reader = Reader(blob_key, size, max_size)
    offset = 0
    for piece in split:
        reader.feed(blob[offset:offset + piece])
        offset += piece
    reader.feed(blob[offset:])
    return reader.finish()


def splits(length, seed):
    """Whole; one byte at a time; random pieces; pieces of exactly one sealed chunk (section 5: the same result)."""
    rng = random.Random(seed)
    result = [[]]
    result.append([1] * length)
    pieces, left = [], length
    while left > 0:
        take = min(left, rng.choice([1, 2, 7, 16, 17, 100, 4096, C - 1, C + 15, C + 17, 3 * C]))
        pieces.append(take)
        left -= take
    result.append(pieces)
    result.append([NH] + [C + NT] * (length // (C + NT) + 1))
    return result


def apply_edits(blob, edits, base):
    blob = bytearray(blob)
    key = payload_key(bytes.fromhex(base["key"]), bytes.fromhex(base["salt"]))
    data = plaintext(base["size"])
    n = chunk_count(base["size"])
    for edit in edits:
        op = edit["op"]
        if op == "truncate":
            del blob[edit["length"]:]
        elif op == "delete":
            del blob[edit["offset"]:edit["offset"] + edit["length"]]
        elif op == "xor":
            blob[edit["offset"]] ^= edit["mask"]
        elif op == "append":
            blob += bytes.fromhex(edit["hex"])
        elif op == "appendCopy":
            blob += blob[edit["offset"]:edit["offset"] + edit["length"]]
        elif op == "swap":
            a, b, length = edit["offset"], edit["other"], edit["length"]
            first, second = blob[a:a + length], blob[b:b + length]
            blob[a:a + length], blob[b:b + length] = second, first
        elif op == "reseal":
            i = edit["chunk"]
            part = data[i * C:(i + 1) * C] if i < n - 1 else data[i * C:]
            start = NH + i * (C + NT)
            blob[start:start + len(part) + NT] = seal_chunk(key, i, edit["last"], part)
        else:
            raise ValueError("unknown edit " + op)
    return bytes(blob)


# ---- section 6: descriptors
MAX_ATTACHMENTS = 8
CAPS = {"image": 10_000_000, "audio": 5_000_000, "video": 50_000_000}
KINDS = {
    "image/jpeg": "image", "image/png": "image", "image/gif": "image",
    "audio/mpeg": "audio", "audio/mp4": "audio", "audio/x-m4a": "audio", "audio/m4a": "audio",
    "audio/wav": "audio", "audio/x-wav": "audio", "audio/wave": "audio", "audio/aiff": "audio", "audio/x-aiff": "audio",
    "video/mp4": "video", "video/x-m4v": "video", "video/quicktime": "video", "video/mpeg": "video",
    "video/x-msvideo": "video", "video/avi": "video",
}
B64URL = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def valid_url(url):
    b = url.encode()
    if not (1 <= len(b) <= 2048) or any(c < 0x21 or c > 0x7E for c in b):
        return False
    low = url[:8].lower()
    n = 8 if low.startswith("https://") else 7 if low.startswith("http://") else 0
    return n > 0 and len(b) > n and url[n] not in "/?#"


def valid_key(text):
    import base64
    if not isinstance(text, str) or len(text) != 43 or not set(text.encode()) <= B64URL:
        return False
    raw = base64.urlsafe_b64decode(text + "=")
    return len(raw) == 32 and base64.urlsafe_b64encode(raw).decode().rstrip("=") == text


def parse_descriptor(d):
    """One element of `attachments` (6.2): 'ok' or the code it is skipped with. malformedAttachment wins."""
    if not isinstance(d, dict) or not isinstance(d.get("url"), str):
        return "malformedContent"
    kind = KINDS.get(d.get("type").lower()) if isinstance(d.get("type"), str) else None
    if kind is None:
        return "malformedAttachment"
    if "name" in d and (not isinstance(d["name"], str) or not (1 <= len(d["name"].encode()) <= 255)):
        return "malformedAttachment"
    size = d.get("size")
    if isinstance(size, bool) or not isinstance(size, (int, float)):
        return "malformedAttachment"
    if isinstance(size, float) and (size != size or size in (float("inf"), float("-inf")) or size != int(size)):
        return "malformedAttachment"
    if size < 0 or not valid_key(d.get("key")) or not valid_url(d["url"]):
        return "malformedAttachment"
    if size > MAX_SIZE or size > CAPS[kind]:
        return "blobTooLarge"
    return "ok"


def parse_attachments(text):
    elements = json.loads(text)
    return [parse_descriptor(e) if i < MAX_ATTACHMENTS else "malformedAttachment" for i, e in enumerate(elements)]


def main():
    vectors = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "Specs/vectors/blob-v1.json"))
    passed, failed = 0, 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL:", what)

    check(vectors["chunkSize"] == C and vectors["info"] == INFO.decode(), "parameters")
    # The size formula's worked examples (section 3).
    check([ciphertext_size(s) for s in (0, 1, C, C + 1)] == [37, 38, 65573, 65590], "size formula examples")
    blobs = {}
    for v in vectors["positive"]:
        blob_key, salt, size = bytes.fromhex(v["key"]), bytes.fromhex(v["salt"]), v["size"]
        check(payload_key(blob_key, salt).hex() == v["payloadKey"], v["name"] + ": payload key")
        blob = encrypt(blob_key, salt, plaintext(size))
        blobs[v["name"]] = blob
        check(len(blob) == v["ciphertextSize"] == ciphertext_size(size), v["name"] + ": ciphertext size")
        check(hashlib.sha256(blob).hexdigest() == v["ciphertextSHA256"], v["name"] + ": ciphertext SHA-256")
        if "ciphertext" in v:
            check(blob.hex() == v["ciphertext"], v["name"] + ": ciphertext bytes")
        for split in splits(len(blob), v["name"]):
            try:
                check(read(blob, blob_key, size, MAX_SIZE, split) == plaintext(size), v["name"] + ": plaintext")
            except BlobError as error:
                check(False, v["name"] + ": read failed with " + error.code)
    bases = {v["name"]: v for v in vectors["positive"]}
    for v in vectors["negative"]:
        base = bases[v["base"]]
        blob = apply_edits(blobs[v["base"]], v["edits"], base)
        for split in splits(len(blob), v["name"]):
            try:
                read(blob, bytes.fromhex(v["key"]), v["size"], v.get("maxSize", MAX_SIZE), split)
                check(False, v["name"] + ": read succeeded, expected " + v["expectedError"])
            except BlobError as error:
                check(error.code == v["expectedError"], v["name"] + ": got " + error.code + ", expected " + v["expectedError"])
    for v in vectors.get("descriptors", []):
        got = parse_attachments(v["attachments"])
        check(got == v["expected"], v["name"] + ": got " + str(got) + ", expected " + str(v["expected"]))
    check(len(vectors.get("descriptors", [])) > 0, "descriptor cases present")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
