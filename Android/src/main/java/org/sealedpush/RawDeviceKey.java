package org.sealedpush;

import java.security.GeneralSecurityException;
import java.util.Arrays;

/** A {@link DeviceKeyAgreement} over a raw 32-byte private key held in memory (file key rings, tests). */
public final class RawDeviceKey implements DeviceKeyAgreement {
    private final byte[] privateKey;
    private final byte[] publicKey;

    /** Wraps a copy of {@code privateKey} and computes its public key. */
    public RawDeviceKey(byte[] privateKey) throws SealedPushException {
        if (privateKey == null || privateKey.length != 32) {
            throw new SealedPushException(ErrorCode.INVALID_KEY, "a private key is 32 bytes");
        }
        this.privateKey = privateKey.clone();
        try {
            this.publicKey = X25519.publicKeyOf(this.privateKey);
        } catch (GeneralSecurityException e) {
            throw new SealedPushException(ErrorCode.INVALID_KEY, "the private key has no usable public key", e);
        }
    }

    /**
     * Wraps a copy of {@code privateKey} with its already verified {@code publicKey} (a key ring entry, whose pair was
     * checked when the ring was read): no third X25519 per open.
     */
    RawDeviceKey(byte[] privateKey, byte[] publicKey) throws SealedPushException {
        if (privateKey == null || privateKey.length != 32 || publicKey == null || publicKey.length != 32) {
            throw new SealedPushException(ErrorCode.INVALID_KEY, "a key pair is two 32-byte keys");
        }
        this.privateKey = privateKey.clone();
        this.publicKey = publicKey.clone();
    }

    @Override
    public byte[] publicKey() {
        return publicKey.clone();
    }

    @Override
    public byte[] agree(byte[] peerPublicKey) throws GeneralSecurityException {
        return X25519.dh(privateKey, peerPublicKey);
    }

    /** Overwrites the private key with zeros; the object is unusable afterwards. */
    public void wipe() {
        Arrays.fill(privateKey, (byte) 0);
    }
}
