package org.sealedpush;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Opens SealedPush envelopes as {@code Specs/envelope-v1.md} §8 prescribes, checks in the spec's order, stopping at
 * the first failure with the spec's error code. Replay protection (step 13) is the {@link ReplayGuard}'s job.
 * Immutable and thread-safe.
 */
public final class EnvelopeOpener {
    static final int HEADER = 82;
    static final int MIN_ENVELOPE = 82 + 16 + 128;
    static final int MAX_ENVELOPE = 82 + 16 + 4096;
    static final long MAX_LIFETIME = 2_419_200L;
    static final long SKEW = 600;
    private static final byte[] INFO_LABEL = "SealedPush envelope v1".getBytes(StandardCharsets.US_ASCII);

    private final byte[] info;
    private final DeviceKeys deviceKeys;
    private final List<byte[]> serverKeys;

    /**
     * @param topic the app's topic (1 to 255 bytes of UTF-8 without NUL); {@code invalidTopic} otherwise
     * @param deviceKeys where device keys are looked up
     * @param pinnedServerKeys the pinned server identity public keys (32 bytes each, canonical)
     */
    public EnvelopeOpener(String topic, DeviceKeys deviceKeys, List<byte[]> pinnedServerKeys) throws SealedPushException {
        X25519.checkPlatform();
        byte[] t = topic == null ? new byte[0] : topic.getBytes(StandardCharsets.UTF_8);
        if (t.length < 1 || t.length > 255 || topic.indexOf('\0') >= 0 || !validUtf16(topic)) {
            throw new SealedPushException(ErrorCode.INVALID_TOPIC, "the topic must be 1 to 255 bytes of UTF-8 without NUL");
        }
        this.info = new byte[INFO_LABEL.length + 1 + t.length];
        System.arraycopy(INFO_LABEL, 0, info, 0, INFO_LABEL.length);
        System.arraycopy(t, 0, info, INFO_LABEL.length + 1, t.length);
        this.deviceKeys = deviceKeys;
        List<byte[]> keys = new ArrayList<>();
        for (byte[] k : pinnedServerKeys) {
            if (!X25519.isCanonical(k)) {
                throw new SealedPushException(ErrorCode.INVALID_KEY, "a pinned server key is not a canonical X25519 key");
            }
            keys.add(k.clone());
        }
        this.serverKeys = Collections.unmodifiableList(keys);
    }

    private static boolean validUtf16(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
                    return false;
                }
                i++;
            } else if (Character.isLowSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    /** Opens a raw APNs-style JSON body (from step 1). */
    public OpenedEnvelope openBody(byte[] body, long now) throws SealedPushException {
        if (body.length > 4096) {
            throw new SealedPushException(ErrorCode.PAYLOAD_TOO_LARGE,
                "the body is " + body.length + " bytes, over the 4096-byte limit");
        }
        Object parsed;
        try {
            parsed = Json.parse(body, 32);
        } catch (Json.ParseException e) {
            throw new SealedPushException(ErrorCode.MALFORMED_PAYLOAD, "the body is not valid JSON: " + e.getMessage());
        }
        if (!(parsed instanceof Map)) {
            throw new SealedPushException(ErrorCode.MALFORMED_PAYLOAD, "the body is not a JSON object");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> map = (Map<String, Object>) parsed;
        return openParsed(map, now);
    }

    /**
     * Opens a body already parsed (step 2 on): its top-level member {@code sp} must be a string (else
     * {@code malformedPayload}), at most 5,592 bytes of UTF-8 (else {@code malformedEnvelope}, before any decoding:
     * {@code Specs/fcm-v1.md} §4 step 3a, the rule for a body handed over parsed), then envelope spec steps 3 to 12.
     */
    public OpenedEnvelope openParsed(Map<String, ?> body, long now) throws SealedPushException {
        Object sp = body.get("sp");
        if (!(sp instanceof String)) {
            throw new SealedPushException(ErrorCode.MALFORMED_PAYLOAD, "the body has no sp string member");
        }
        checkTextLength((String) sp);
        return openEnvelopeText((String) sp, now);
    }

    /**
     * The longest envelope's base64url text, {@code b64len(82 + 16 + 4096)} = floor((4 * 4194 + 2) / 3) = 5,592
     * ({@code Specs/fcm-v1.md} §4 step 3a).
     */
    static final int MAX_ENVELOPE_TEXT = (4 * MAX_ENVELOPE + 2) / 3;

    /**
     * Opens an FCM data message ({@code RemoteMessage.getData()}) as {@code Specs/fcm-v1.md} §4 says: {@code sp}
     * present (else {@code malformedPayload}), its length at most 5,592 (else {@code malformedEnvelope}, before any
     * decoding), then envelope spec steps 3 to 12. Other members are ignored.
     */
    public OpenedEnvelope openData(Map<String, String> data, long now) throws SealedPushException {
        String sp = data == null ? null : data.get("sp");
        if (sp == null) {
            throw new SealedPushException(ErrorCode.MALFORMED_PAYLOAD, "the data message has no sp member");
        }
        checkTextLength(sp);
        return openEnvelopeText(sp, now);
    }

    /** {@code Specs/fcm-v1.md} §4 step 3a: an envelope text longer than the longest envelope's is refused undecoded. */
    private static void checkTextLength(String sp) throws SealedPushException {
        long bytes = utf8Length(sp);
        if (bytes > MAX_ENVELOPE_TEXT) {
            throw new SealedPushException(ErrorCode.MALFORMED_ENVELOPE,
                "sp is " + bytes + " bytes of UTF-8, longer than the longest envelope's " + MAX_ENVELOPE_TEXT);
        }
    }

    /**
     * The length of {@code text} in UTF-8 bytes, as {@code Specs/fcm-v1.md} §4 step 3a counts it (without encoding
     * it: the text may be long). An unpaired surrogate counts as the 3 bytes of its replacement character.
     */
    static long utf8Length(String text) {
        long bytes = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x80) {
                bytes += 1;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                bytes += 4;
                i++;
            } else {
                bytes += 3;
            }
        }
        return bytes;
    }

    /** Opens the base64url text of an envelope (step 3 on). */
    public OpenedEnvelope openEnvelopeText(String sp, long now) throws SealedPushException {
        byte[] envelope = Base64Url.decodeCanonical(sp);
        if (envelope == null) {
            throw new SealedPushException(ErrorCode.BAD_ENCODING, "sp is not canonical unpadded base64url");
        }
        return openEnvelope(envelope, now);
    }

    /** Opens a binary envelope (step 4 on). */
    public OpenedEnvelope openEnvelope(byte[] env, long now) throws SealedPushException {
        if (env.length < MIN_ENVELOPE) {
            throw new SealedPushException(ErrorCode.TRUNCATED, "the envelope is " + env.length + " bytes, under " + MIN_ENVELOPE);
        }
        if (env.length > MAX_ENVELOPE) {
            throw new SealedPushException(ErrorCode.MALFORMED_ENVELOPE,
                "the envelope is " + env.length + " bytes, over the " + MAX_ENVELOPE + "-byte limit");
        }
        if (env[0] != 1) {
            throw new SealedPushException(ErrorCode.UNSUPPORTED_VERSION, "envelope version " + (env[0] & 0xff));
        }
        if (env[1] != 1) {
            throw new SealedPushException(ErrorCode.UNSUPPORTED_SUITE, "envelope suite " + (env[1] & 0xff));
        }
        long issuedAt = readU64(env, 34);
        long expiresAt = readU64(env, 42);
        if (Long.compareUnsigned(issuedAt, expiresAt) > 0 || Long.compareUnsigned(expiresAt - issuedAt, MAX_LIFETIME) > 0) {
            throw new SealedPushException(ErrorCode.MALFORMED_ENVELOPE, "issuedAt after expiresAt, or a lifetime over 28 days");
        }
        byte[] recipientKeyId = Arrays.copyOfRange(env, 2, 10);
        DeviceKeyAgreement device = deviceKeys.find(recipientKeyId);
        if (device == null) {
            throw new SealedPushException(ErrorCode.UNKNOWN_RECIPIENT_KEY,
                "no device key with id " + X25519.hex(recipientKeyId));
        }
        byte[] senderKeyId = Arrays.copyOfRange(env, 10, 18);
        byte[] pkS = null;
        for (byte[] k : serverKeys) {
            if (MessageDigest.isEqual(X25519.keyId(k), senderKeyId)) {
                pkS = k;
                break;
            }
        }
        if (pkS == null) {
            throw new SealedPushException(ErrorCode.UNKNOWN_SENDER_KEY, "no pinned server key with id " + X25519.hex(senderKeyId));
        }
        if (Long.compareUnsigned(now, expiresAt) >= 0) {
            throw new SealedPushException(ErrorCode.EXPIRED, "the envelope expired");
        }
        if (Long.compareUnsigned(issuedAt, now + SKEW) > 0) {
            throw new SealedPushException(ErrorCode.NOT_YET_VALID, "the envelope was issued more than 600 s in the future");
        }
        byte[] header = Arrays.copyOfRange(env, 0, HEADER);
        byte[] enc = Arrays.copyOfRange(env, 50, 82);
        byte[] padded;
        try {
            padded = Hpke.openAuth(enc, device, pkS, info, header, env, HEADER, env.length - HEADER);
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new SealedPushException(ErrorCode.AUTHENTICATION_FAILURE, "the envelope did not authenticate");
        }
        try {
            int len = ((padded[0] & 0xff) << 8) | (padded[1] & 0xff);
            if (2 + len > padded.length) {
                throw new SealedPushException(ErrorCode.MALFORMED_CONTENT, "the content length exceeds the padded plaintext");
            }
            int acc = 0;
            for (int i = 2 + len; i < padded.length; i++) {
                acc |= padded[i];
            }
            if (acc != 0) {
                throw new SealedPushException(ErrorCode.MALFORMED_CONTENT, "padding bytes are not zero");
            }
            Content content = Content.parse(Arrays.copyOfRange(padded, 2, 2 + len));
            byte[] digest;
            try {
                digest = Arrays.copyOf(MessageDigest.getInstance("SHA-256").digest(env), 16);
            } catch (GeneralSecurityException e) {
                throw new SealedPushException(ErrorCode.UNSUPPORTED_PLATFORM, "SHA-256 unavailable", e);
            }
            return new OpenedEnvelope(content, Arrays.copyOfRange(env, 18, 34), issuedAt, expiresAt, recipientKeyId, digest);
        } finally {
            Arrays.fill(padded, (byte) 0);
        }
    }

    static long readU64(byte[] b, int o) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[o + i] & 0xff);
        }
        return v;
    }
}
