package org.sealedpush;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The receiver half of RFC 9180 HPKE, mode_auth, DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305, for one
 * single-shot {@code Open} (sequence number 0), built from HmacSHA256 and the platform's AEAD.
 */
final class Hpke {
    private static final byte[] KEM_SUITE = {'K', 'E', 'M', 0x00, 0x20};
    private static final byte[] HPKE_SUITE = {'H', 'P', 'K', 'E', 0x00, 0x20, 0x00, 0x01, 0x00, 0x03};
    private static final byte[] VERSION_LABEL = "HPKE-v1".getBytes(StandardCharsets.US_ASCII);
    static final byte MODE_AUTH = 0x02;

    private Hpke() {
    }

    static byte[] extract(byte[] salt, byte[] ikm) throws GeneralSecurityException {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(salt.length == 0 ? new byte[32] : salt, "HmacSHA256"));
        return mac.doFinal(ikm);
    }

    static byte[] expand(byte[] prk, byte[] info, int length) throws GeneralSecurityException {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(prk, "HmacSHA256"));
        byte[] out = new byte[length];
        byte[] t = new byte[0];
        int done = 0;
        for (int i = 1; done < length; i++) {
            mac.update(t);
            mac.update(info);
            mac.update((byte) i);
            t = mac.doFinal();
            int n = Math.min(t.length, length - done);
            System.arraycopy(t, 0, out, done, n);
            done += n;
        }
        return out;
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

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] labeledExtract(byte[] suite, byte[] salt, String label, byte[] ikm) throws GeneralSecurityException {
        return extract(salt, concat(VERSION_LABEL, suite, ascii(label), ikm));
    }

    private static byte[] labeledExpand(byte[] suite, byte[] prk, String label, byte[] info, int length)
        throws GeneralSecurityException {
        byte[] len = {(byte) (length >> 8), (byte) length};
        return expand(prk, concat(len, VERSION_LABEL, suite, ascii(label), info), length);
    }

    /**
     * {@code AuthDecap(enc, skR, pkS)}: the two DH operations go through {@code recipient}. Returns the shared secret.
     */
    static byte[] authDecap(byte[] enc, DeviceKeyAgreement recipient, byte[] pkS) throws GeneralSecurityException {
        byte[] dh1 = recipient.agree(enc);
        byte[] dh2 = recipient.agree(pkS);
        if (X25519.isZero(dh1) || X25519.isZero(dh2)) {
            throw new GeneralSecurityException("all-zero DH");
        }
        byte[] dh = concat(dh1, dh2);
        byte[] shared = kemSharedSecret(dh, concat(enc, recipient.publicKey(), pkS));
        Arrays.fill(dh1, (byte) 0);
        Arrays.fill(dh2, (byte) 0);
        Arrays.fill(dh, (byte) 0);
        return shared;
    }

    /** DHKEM's {@code ExtractAndExpand(dh, kemContext)}. */
    static byte[] kemSharedSecret(byte[] dh, byte[] kemContext) throws GeneralSecurityException {
        byte[] prk = labeledExtract(KEM_SUITE, new byte[0], "eae_prk", dh);
        byte[] shared = labeledExpand(KEM_SUITE, prk, "shared_secret", kemContext, 32);
        Arrays.fill(prk, (byte) 0);
        return shared;
    }

    /** The key schedule for mode_auth without PSK: {@code [key, baseNonce]}. */
    static byte[][] keySchedule(byte[] sharedSecret, byte[] info) throws GeneralSecurityException {
        byte[] pskIdHash = labeledExtract(HPKE_SUITE, new byte[0], "psk_id_hash", new byte[0]);
        byte[] infoHash = labeledExtract(HPKE_SUITE, new byte[0], "info_hash", info);
        byte[] context = concat(new byte[] {MODE_AUTH}, pskIdHash, infoHash);
        byte[] secret = labeledExtract(HPKE_SUITE, sharedSecret, "secret", new byte[0]);
        byte[] key = labeledExpand(HPKE_SUITE, secret, "key", context, 32);
        byte[] nonce = labeledExpand(HPKE_SUITE, secret, "base_nonce", context, 12);
        Arrays.fill(secret, (byte) 0);
        return new byte[][] {key, nonce};
    }

    /** {@code SetupAuthR} + {@code Open(aad, ct)} with sequence number 0. */
    static byte[] openAuth(byte[] enc, DeviceKeyAgreement recipient, byte[] pkS, byte[] info, byte[] aad, byte[] ct,
        int ctOffset, int ctLength) throws GeneralSecurityException {
        byte[] shared = authDecap(enc, recipient, pkS);
        byte[][] kn = keySchedule(shared, info);
        Arrays.fill(shared, (byte) 0);
        try {
            return aeadOpen(kn[0], kn[1], aad, ct, ctOffset, ctLength);
        } finally {
            Arrays.fill(kn[0], (byte) 0);
        }
    }

    static byte[] aeadOpen(byte[] key, byte[] nonce, byte[] aad, byte[] ct, int off, int len) throws GeneralSecurityException {
        Cipher c = Cipher.getInstance("ChaCha20-Poly1305");
        c.init(Cipher.DECRYPT_MODE, new SecretKeySpec(key, "ChaCha20"), new IvParameterSpec(nonce));
        if (aad != null && aad.length > 0) {
            c.updateAAD(aad);
        }
        return c.doFinal(ct, off, len);
    }
}
