package org.sealedpush;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.interfaces.XECPrivateKey;
import java.security.interfaces.XECPublicKey;
import java.security.spec.NamedParameterSpec;
import java.security.spec.XECPrivateKeySpec;
import java.security.spec.XECPublicKeySpec;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * X25519 (RFC 7748) through the platform's {@code XDH} provider, with the key formats of
 * {@code Specs/envelope-v1.md} §2.2 and §7. Raw keys are 32 bytes as on the wire (little-endian u-coordinate).
 */
public final class X25519 {
    private static final BigInteger P = BigInteger.ONE.shiftLeft(255).subtract(BigInteger.valueOf(19));
    private static final byte[] BASE_POINT = new byte[32];
    private static final byte[] KEY_ID_LABEL = "SealedPush key id v1".getBytes(StandardCharsets.US_ASCII);

    static {
        BASE_POINT[0] = 9;
    }

    private X25519() {
    }

    /**
     * Checks once that the platform offers what SealedPush needs (XDH with X25519, ChaCha20-Poly1305, HmacSHA256);
     * fails with {@link ErrorCode#UNSUPPORTED_PLATFORM} otherwise (Android below API 33), never falling back.
     */
    public static void checkPlatform() throws SealedPushException {
        try {
            KeyFactory.getInstance("XDH");
            javax.crypto.KeyAgreement.getInstance("XDH");
            javax.crypto.Cipher.getInstance("ChaCha20-Poly1305");
            javax.crypto.Mac.getInstance("HmacSHA256");
            MessageDigest.getInstance("SHA-256");
            KeyPairGenerator.getInstance("X25519");
        } catch (GeneralSecurityException | NoClassDefFoundError e) {
            throw new SealedPushException(ErrorCode.UNSUPPORTED_PLATFORM,
                "this platform lacks X25519 (XDH), ChaCha20-Poly1305 or HmacSHA256; Android needs API level 33 or later", e);
        }
    }

    /** X25519(scalar, u); throws {@link GeneralSecurityException} for an all-zero result (a low-order point). */
    public static byte[] dh(byte[] privateKey, byte[] publicKey) throws GeneralSecurityException {
        javax.crypto.KeyAgreement ka = javax.crypto.KeyAgreement.getInstance("XDH");
        ka.init(privateKey(privateKey));
        ka.doPhase(publicKey(publicKey), true);
        byte[] shared = ka.generateSecret();
        if (isZero(shared)) {
            throw new GeneralSecurityException("all-zero X25519 result");
        }
        return shared;
    }

    /** The public key {@code X25519(sk, 9)} of a 32-byte private key. */
    public static byte[] publicKeyOf(byte[] privateKey) throws GeneralSecurityException {
        return dh(privateKey, BASE_POINT);
    }

    /** A fresh key pair from the platform's generator: {@code [privateKey, publicKey]}. */
    public static byte[][] generate() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("X25519");
        KeyPair kp = g.generateKeyPair();
        byte[] sk = ((XECPrivateKey) kp.getPrivate()).getScalar()
            .orElseThrow(() -> new GeneralSecurityException("private key scalar not available"));
        byte[] pk = encodeU(((XECPublicKey) kp.getPublic()).getU());
        return new byte[][] {sk, pk};
    }

    static PrivateKey privateKey(byte[] raw) throws GeneralSecurityException {
        return KeyFactory.getInstance("XDH").generatePrivate(new XECPrivateKeySpec(NamedParameterSpec.X25519, raw.clone()));
    }

    static PublicKey publicKey(byte[] raw) throws GeneralSecurityException {
        if (raw.length != 32) {
            throw new GeneralSecurityException("X25519 public key must be 32 bytes");
        }
        byte[] be = new byte[32];
        for (int i = 0; i < 32; i++) {
            be[i] = raw[31 - i];
        }
        be[0] &= 0x7f; // RFC 7748 §5: mask the most significant bit
        BigInteger u = new BigInteger(1, be).mod(P);
        return KeyFactory.getInstance("XDH").generatePublic(new XECPublicKeySpec(NamedParameterSpec.X25519, u));
    }

    static byte[] encodeU(BigInteger u) {
        byte[] be = u.toByteArray();
        byte[] le = new byte[32];
        for (int i = 0; i < 32 && i < be.length; i++) {
            le[i] = be[be.length - 1 - i];
        }
        return le;
    }

    /** True when {@code pk}, read little-endian, is below 2^255 − 19 (envelope spec §7). */
    public static boolean isCanonical(byte[] pk) {
        if (pk.length != 32) {
            return false;
        }
        byte[] be = new byte[32];
        for (int i = 0; i < 32; i++) {
            be[i] = pk[31 - i];
        }
        return new BigInteger(1, be).compareTo(P) < 0;
    }

    /** {@code SHA-256("SealedPush key id v1" || 0x00 || pk)[0..8)} (envelope spec §2.2). */
    public static byte[] keyId(byte[] publicKey) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update(KEY_ID_LABEL);
            md.update((byte) 0);
            md.update(publicKey);
            return Arrays.copyOf(md.digest(), 8);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }

    /** Parses {@code SPK1:} + 43 base64url characters of a canonical key; {@code invalidKey} otherwise. */
    public static byte[] parsePublicKeyText(String text) throws SealedPushException {
        if (text == null || text.length() != 48 || !text.startsWith("SPK1:")) {
            throw new SealedPushException(ErrorCode.INVALID_KEY, "a public key is SPK1: followed by 43 base64url characters");
        }
        byte[] raw = Base64Url.decodeCanonical(text.substring(5));
        if (raw == null || raw.length != 32) {
            throw new SealedPushException(ErrorCode.INVALID_KEY, "the public key is not canonical base64url of 32 bytes");
        }
        if (!isCanonical(raw)) {
            throw new SealedPushException(ErrorCode.INVALID_KEY, "the public key is not canonical (not below 2^255 - 19)");
        }
        return raw;
    }

    /** {@code SPK1:} + b64url(pk). */
    public static String publicKeyText(byte[] pk) {
        return "SPK1:" + Base64Url.encode(pk);
    }

    /** Parses {@code SPSK1:} + 43 base64url characters, with or without one final newline. */
    public static byte[] parsePrivateKeyText(String text) throws SealedPushException {
        String t = text != null && text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
        if (t == null || t.length() != 49 || !t.startsWith("SPSK1:")) {
            throw new SealedPushException(ErrorCode.INVALID_KEY, "a private key is SPSK1: followed by 43 base64url characters");
        }
        byte[] raw = Base64Url.decodeCanonical(t.substring(6));
        if (raw == null || raw.length != 32) {
            throw new SealedPushException(ErrorCode.INVALID_KEY, "the private key is not canonical base64url of 32 bytes");
        }
        return raw;
    }

    /** {@code SPSK1:} + b64url(sk), without a newline. */
    public static String privateKeyText(byte[] sk) {
        return "SPSK1:" + Base64Url.encode(sk);
    }

    /** 16 lowercase hex digits. */
    public static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) {
            sb.append(Character.forDigit((x >> 4) & 15, 16)).append(Character.forDigit(x & 15, 16));
        }
        return sb.toString();
    }

    static boolean isZero(byte[] b) {
        int acc = 0;
        for (byte x : b) {
            acc |= x;
        }
        return acc == 0;
    }
}
