package org.sealedpush.bench;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.spec.NamedParameterSpec;
import java.security.spec.XECPrivateKeySpec;
import java.security.spec.XECPublicKeySpec;
import javax.crypto.Cipher;
import javax.crypto.KeyAgreement;
import javax.crypto.Mac;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The JDK primitive floor of one open: the work an HPKE mode_auth {@code Open} cannot skip, done directly through the
 * JCA on the same envelope. Two X25519 agreements ({@code KeyAgreement "XDH"}; the ephemeral key arrives as 32 bytes,
 * so turning it into a {@code PublicKey} is part of the work, while the device private key and the pinned server key
 * are held as key objects), 5 HMAC-SHA256 calls with the exact labeled input lengths of RFC 9180 (eae_prk,
 * shared_secret, secret, key, base_nonce; the topic's psk_id_hash and info_hash are constants, precomputed as a
 * receiver can; HMACs sharing a key are keyed once), and one ChaCha20-Poly1305 decryption of the envelope's
 * ciphertext with its 82-byte header as associated data. JCA objects are obtained once and re-initialised per call, except the
 * {@code Cipher} (see {@link #aead}).
 * No JSON, base64, padding, content or header checks.
 */
final class OpenFloor {
    private static final BigInteger P = BigInteger.ONE.shiftLeft(255).subtract(BigInteger.valueOf(19));

    private final KeyFactory keyFactory;
    private final KeyAgreement agreement;
    private final PrivateKey deviceKey;
    private final PublicKey serverKey;
    private final Mac zeroKeyed;
    private final Mac mac;
    private final byte[] envelope;
    private final byte[] enc;
    private final byte[] header;
    private final byte[] dh = new byte[64];
    private final byte[] eaeInput;
    private final byte[] sharedSecretInfo;
    private final byte[] secretInput;
    private final byte[] keyInfo;
    private final byte[] nonceInfo;
    private byte[] key;
    private byte[] nonce;

    OpenFloor(byte[] envelope, byte[] devicePrivate, byte[] devicePublic, byte[] serverPublic, byte[] keyScheduleContext)
        throws GeneralSecurityException {
        this.envelope = envelope.clone();
        this.enc = java.util.Arrays.copyOfRange(envelope, 50, 82);
        this.header = java.util.Arrays.copyOfRange(envelope, 0, 82);
        keyFactory = KeyFactory.getInstance("XDH");
        agreement = KeyAgreement.getInstance("XDH");
        deviceKey = keyFactory.generatePrivate(new XECPrivateKeySpec(NamedParameterSpec.X25519, devicePrivate.clone()));
        serverKey = publicKey(keyFactory, serverPublic);
        zeroKeyed = Mac.getInstance("HmacSHA256");
        zeroKeyed.init(new SecretKeySpec(new byte[32], "HmacSHA256"));
        mac = Mac.getInstance("HmacSHA256");
        eaeInput = BenchSealer.labeledIkm(BenchSealer.KEM_SUITE, "eae_prk", new byte[64]);
        sharedSecretInfo = BenchSealer.labeledInfoBlock(BenchSealer.KEM_SUITE, "shared_secret",
            BenchSealer.concat(enc, devicePublic, serverPublic), 32);
        secretInput = BenchSealer.labeledIkm(BenchSealer.HPKE_SUITE, "secret", new byte[0]);
        keyInfo = BenchSealer.labeledInfoBlock(BenchSealer.HPKE_SUITE, "key", keyScheduleContext, 32);
        nonceInfo = BenchSealer.labeledInfoBlock(BenchSealer.HPKE_SUITE, "base_nonce", keyScheduleContext, 12);
    }

    /** A raw 32-byte u-coordinate as a JCA key (RFC 7748 §5: the top bit masked, reduced mod p). */
    static PublicKey publicKey(KeyFactory kf, byte[] raw) throws GeneralSecurityException {
        byte[] be = new byte[32];
        for (int i = 0; i < 32; i++) {
            be[i] = raw[31 - i];
        }
        be[0] &= 0x7f;
        return kf.generatePublic(new XECPublicKeySpec(NamedParameterSpec.X25519, new BigInteger(1, be).mod(P)));
    }

    /** The two agreements: DH(skR, pkE) and DH(skR, pkS) into {@code dh}. */
    int agreements() throws GeneralSecurityException {
        agreement.init(deviceKey);
        agreement.doPhase(publicKey(keyFactory, enc), true);
        agreement.generateSecret(dh, 0);
        agreement.init(deviceKey);
        agreement.doPhase(serverKey, true);
        agreement.generateSecret(dh, 32);
        return dh[0] ^ dh[63];
    }

    /** The 5 HMAC-SHA256 calls of ExtractAndExpand and the key schedule, leaving {@code key} and {@code nonce}. */
    int hmacs() throws GeneralSecurityException {
        System.arraycopy(dh, 0, eaeInput, eaeInput.length - 64, 64);
        byte[] prk = zeroKeyed.doFinal(eaeInput);
        mac.init(new SecretKeySpec(prk, "HmacSHA256"));
        byte[] shared = mac.doFinal(sharedSecretInfo);
        mac.init(new SecretKeySpec(shared, "HmacSHA256"));
        byte[] secret = mac.doFinal(secretInput);
        mac.init(new SecretKeySpec(secret, "HmacSHA256"));
        key = mac.doFinal(keyInfo);
        nonce = mac.doFinal(nonceInfo);
        return key[0] ^ nonce[0];
    }

    /** One ChaCha20-Poly1305 decryption of the envelope's ciphertext under {@code key} and {@code nonce}. */
    byte[] aead() throws GeneralSecurityException {
        // A fresh Cipher per call: the JDK's ChaCha20 refuses to be re-initialised with the key and nonce it last had
        // (each real envelope has its own key, but the floor opens one envelope again and again).
        Cipher cipher = Cipher.getInstance("ChaCha20-Poly1305");
        cipher.init(Cipher.DECRYPT_MODE, new SecretKeySpec(key, "ChaCha20"), new IvParameterSpec(nonce, 0, 12));
        cipher.updateAAD(header);
        return cipher.doFinal(envelope, 82, envelope.length - 82);
    }

    /** The whole floor: agreements, HMACs, AEAD; returns the padded plaintext. */
    byte[] open() throws GeneralSecurityException {
        agreements();
        hmacs();
        return aead();
    }
}
