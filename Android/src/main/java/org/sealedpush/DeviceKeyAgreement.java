package org.sealedpush;

import java.security.GeneralSecurityException;

/**
 * One device private key, seen only through the X25519 operation. The two Diffie-Hellman operations of HPKE
 * {@code AuthDecap} ({@code DH(skR, pkE)} and {@code DH(skR, pkS)}) are the only uses of the private key, so an
 * implementation backed by the Android Keystore never lets the key leave it.
 */
public interface DeviceKeyAgreement {
    /** The device public key (32 bytes, as on the wire). */
    byte[] publicKey();

    /**
     * {@code X25519(sk, peerPublicKey)}. Throws for any failure, an all-zero result included; the opener maps every
     * failure to {@code authenticationFailure}.
     */
    byte[] agree(byte[] peerPublicKey) throws GeneralSecurityException;
}
