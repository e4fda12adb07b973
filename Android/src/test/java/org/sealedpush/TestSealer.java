package org.sealedpush;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/** A test-only sender (envelope-v1 §9) to make envelopes for the step tests; interop is proven with the Swift CLI. */
final class TestSealer {
    private static final SecureRandom RANDOM = new SecureRandom();
    final byte[] serverPrivate;
    final byte[] serverPublic;
    final String topic;

    TestSealer(String topic) throws Exception {
        byte[][] kp = X25519.generate();
        this.serverPrivate = kp[0];
        this.serverPublic = kp[1];
        this.topic = topic;
    }

    String seal(String contentJson, byte[] devicePublic, long issuedAt, long ttl) throws Exception {
        byte[] messageId = new byte[16];
        RANDOM.nextBytes(messageId);
        return Base64Url.encode(seal(contentJson, devicePublic, issuedAt, ttl, messageId));
    }

    byte[] seal(String contentJson, byte[] devicePublic, long issuedAt, long ttl, byte[] messageId) throws Exception {
        byte[] content = contentJson.getBytes(StandardCharsets.UTF_8);
        int padded = 128;
        for (int b : new int[] {128, 256, 512, 1024, 1536, 2048, 2560, 2912}) {
            padded = b;
            if (b >= 2 + content.length) {
                break;
            }
        }
        byte[] pt = new byte[padded];
        pt[0] = (byte) (content.length >> 8);
        pt[1] = (byte) content.length;
        System.arraycopy(content, 0, pt, 2, content.length);
        byte[][] eph = X25519.generate();
        byte[] header = new byte[82];
        header[0] = 1;
        header[1] = 1;
        System.arraycopy(X25519.keyId(devicePublic), 0, header, 2, 8);
        System.arraycopy(X25519.keyId(serverPublic), 0, header, 10, 8);
        System.arraycopy(messageId, 0, header, 18, 16);
        long expiresAt = issuedAt + ttl;
        for (int i = 0; i < 8; i++) {
            header[34 + i] = (byte) (issuedAt >>> (56 - 8 * i));
            header[42 + i] = (byte) (expiresAt >>> (56 - 8 * i));
        }
        System.arraycopy(eph[1], 0, header, 50, 32);
        byte[] dh = Hpke.concat(X25519.dh(eph[0], devicePublic), X25519.dh(serverPrivate, devicePublic));
        byte[] shared = Hpke.kemSharedSecret(dh, Hpke.concat(eph[1], devicePublic, serverPublic));
        byte[] info = Hpke.concat("SealedPush envelope v1".getBytes(StandardCharsets.US_ASCII), new byte[1],
            topic.getBytes(StandardCharsets.UTF_8));
        byte[][] kn = Hpke.keySchedule(shared, info);
        Cipher c = Cipher.getInstance("ChaCha20-Poly1305");
        c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(kn[0], "ChaCha20"), new IvParameterSpec(kn[1]));
        c.updateAAD(header);
        byte[] ct = c.doFinal(pt);
        byte[] env = Arrays.copyOf(header, 82 + ct.length);
        System.arraycopy(ct, 0, env, 82, ct.length);
        return env;
    }
}
