package org.sealedpush;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/** A blob reference ({@code Specs/blob-v1.md} §6.1): URL, blob key and plaintext size. */
public final class BlobReference {
    private final String url;
    private final byte[] key;
    private final long size;

    private BlobReference(String url, byte[] key, long size) {
        this.url = url;
        this.key = key;
        this.size = size;
    }

    /**
     * Validates a reference: {@code malformedAttachment} for any rule of §6.1 broken, {@code blobTooLarge} for a size
     * over {@code cap} (checked last, once the rest is valid).
     */
    public static BlobReference parse(Map<String, Object> m, long cap) throws SealedPushException {
        Object u = m.get("url");
        if (!(u instanceof String) || !validUrl((String) u)) {
            throw bad("url must be 1 to 2048 printable ASCII bytes starting with https:// or http:// and a host");
        }
        Object k = m.get("key");
        byte[] key = k instanceof String ? Base64Url.decodeCanonical((String) k) : null;
        if (key == null || key.length != 32) {
            throw bad("key must be canonical unpadded base64url of 32 bytes");
        }
        Object s = m.get("size");
        if (!(s instanceof Double)) {
            throw bad("size must be a number");
        }
        double d = (Double) s;
        if (d != Math.rint(d) || d < 0) {
            throw bad("size must be a non-negative integer");
        }
        if (d > BlobDecryptor.MAX_SIZE || d > cap) {
            throw new SealedPushException(ErrorCode.BLOB_TOO_LARGE, "size " + (long) d + " is over the cap " + Math.min(cap, BlobDecryptor.MAX_SIZE));
        }
        return new BlobReference((String) u, key, (long) d);
    }

    static boolean validUrl(String url) {
        byte[] b = url.getBytes(StandardCharsets.UTF_8);
        if (b.length < 1 || b.length > 2048) {
            return false;
        }
        for (byte x : b) {
            if (x < 0x21 || x > 0x7E) {
                return false;
            }
        }
        String lower = url.toLowerCase(java.util.Locale.ROOT);
        int rest;
        if (lower.startsWith("https://")) {
            rest = 8;
        } else if (lower.startsWith("http://")) {
            rest = 7;
        } else {
            return false;
        }
        if (url.length() <= rest) {
            return false;
        }
        char c = url.charAt(rest);
        return c != '/' && c != '?' && c != '#';
    }

    static SealedPushException bad(String what) {
        return new SealedPushException(ErrorCode.MALFORMED_ATTACHMENT, what);
    }

    public String url() {
        return url;
    }

    /** A copy of the 32-byte blob key. */
    public byte[] key() {
        return key.clone();
    }

    public long size() {
        return size;
    }
}
