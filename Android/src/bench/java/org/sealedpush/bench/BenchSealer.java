package org.sealedpush.bench;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.sealedpush.Base64Url;
import org.sealedpush.X25519;

/**
 * A benchmark-only sender ({@code Specs/envelope-v1.md} §9, RFC 9180 mode_auth) built from the JDK primitives, so the
 * benchmark can make its own envelopes without the test sources. Not library code; no zeroing, no checks beyond what
 * the benchmark needs. Also the one place that knows the labeled HKDF inputs, which the primitive floor reuses.
 */
final class BenchSealer {
    static final byte[] VERSION_LABEL = ascii("HPKE-v1");
    static final byte[] KEM_SUITE = {'K', 'E', 'M', 0x00, 0x20};
    static final byte[] HPKE_SUITE = {'H', 'P', 'K', 'E', 0x00, 0x20, 0x00, 0x01, 0x00, 0x03};
    static final byte MODE_AUTH = 0x02;
    private static final int[] BUCKETS = {128, 256, 512, 1024, 1536, 2048, 2560, 2912};
    private static final SecureRandom RANDOM = new SecureRandom();

    final byte[] serverPrivate;
    final byte[] serverPublic;
    final byte[] info;

    BenchSealer(String topic) throws GeneralSecurityException {
        byte[][] kp = X25519.generate();
        this.serverPrivate = kp[0];
        this.serverPublic = kp[1];
        this.info = concat(ascii("SealedPush envelope v1"), new byte[1], topic.getBytes(StandardCharsets.UTF_8));
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int o = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, o, p.length);
            o += p.length;
        }
        return out;
    }

    static byte[] hmac(byte[] key, byte[] message) throws GeneralSecurityException {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key.length == 0 ? new byte[32] : key, "HmacSHA256"));
        return mac.doFinal(message);
    }

    /** RFC 9180 LabeledExtract's HMAC input: {@code "HPKE-v1" || suite || label || ikm}. */
    static byte[] labeledIkm(byte[] suite, String label, byte[] ikm) {
        return concat(VERSION_LABEL, suite, ascii(label), ikm);
    }

    /** RFC 9180 LabeledExpand's single-block HMAC input: {@code I2OSP(L,2) || "HPKE-v1" || suite || label || info || 0x01}. */
    static byte[] labeledInfoBlock(byte[] suite, String label, byte[] info, int length) {
        return concat(new byte[] {(byte) (length >> 8), (byte) length}, VERSION_LABEL, suite, ascii(label), info,
            new byte[] {1});
    }

    /** The key schedule context {@code mode || psk_id_hash || info_hash} (constant for a topic). */
    byte[] keyScheduleContext() throws GeneralSecurityException {
        byte[] pskIdHash = hmac(new byte[0], labeledIkm(HPKE_SUITE, "psk_id_hash", new byte[0]));
        byte[] infoHash = hmac(new byte[0], labeledIkm(HPKE_SUITE, "info_hash", info));
        return concat(new byte[] {MODE_AUTH}, pskIdHash, infoHash);
    }

    /** {@code uint16(len) || content || zeros} to the smallest bucket (envelope-v1 §5). */
    static byte[] pad(byte[] content) {
        int padded = BUCKETS[BUCKETS.length - 1];
        for (int b : BUCKETS) {
            if (b >= 2 + content.length) {
                padded = b;
                break;
            }
        }
        byte[] pt = new byte[padded];
        pt[0] = (byte) (content.length >> 8);
        pt[1] = (byte) content.length;
        System.arraycopy(content, 0, pt, 2, content.length);
        return pt;
    }

    /** A binary envelope of {@code content} (canonical JSON, UTF-8) for the device key {@code devicePublic}. */
    byte[] seal(byte[] content, byte[] devicePublic, long issuedAt, long ttl) throws GeneralSecurityException {
        byte[] pt = pad(content);
        byte[][] eph = X25519.generate();
        byte[] header = new byte[82];
        header[0] = 1;
        header[1] = 1;
        System.arraycopy(X25519.keyId(devicePublic), 0, header, 2, 8);
        System.arraycopy(X25519.keyId(serverPublic), 0, header, 10, 8);
        byte[] messageId = new byte[16];
        RANDOM.nextBytes(messageId);
        System.arraycopy(messageId, 0, header, 18, 16);
        long expiresAt = issuedAt + ttl;
        for (int i = 0; i < 8; i++) {
            header[34 + i] = (byte) (issuedAt >>> (56 - 8 * i));
            header[42 + i] = (byte) (expiresAt >>> (56 - 8 * i));
        }
        System.arraycopy(eph[1], 0, header, 50, 32);
        byte[] dh = concat(X25519.dh(eph[0], devicePublic), X25519.dh(serverPrivate, devicePublic));
        byte[] prk = hmac(new byte[0], labeledIkm(KEM_SUITE, "eae_prk", dh));
        byte[] kemContext = concat(eph[1], devicePublic, serverPublic);
        byte[] shared = hmac(prk, labeledInfoBlock(KEM_SUITE, "shared_secret", kemContext, 32));
        byte[] secret = hmac(shared, labeledIkm(HPKE_SUITE, "secret", new byte[0]));
        byte[] context = keyScheduleContext();
        byte[] key = hmac(secret, labeledInfoBlock(HPKE_SUITE, "key", context, 32));
        byte[] nonce = Arrays.copyOf(hmac(secret, labeledInfoBlock(HPKE_SUITE, "base_nonce", context, 12)), 12);
        Cipher c = Cipher.getInstance("ChaCha20-Poly1305");
        c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "ChaCha20"), new IvParameterSpec(nonce));
        c.updateAAD(header);
        byte[] ct = c.doFinal(pt);
        return concat(header, ct);
    }

    /** The APNs body a sender emits (envelope-v1 §6) with the default placeholder. */
    static byte[] apnsBody(byte[] envelope) {
        return ("{\"aps\":{\"alert\":{\"body\":\"New notification\"},\"mutable-content\":1},\"sp\":\""
            + Base64Url.encode(envelope) + "\"}").getBytes(StandardCharsets.UTF_8);
    }
}
