package org.sealedpush;

import java.util.Arrays;

/** One key of a key ring ({@code Specs/keyring-v1.md} §2). Immutable; the private key is copied on access. */
public final class KeyRingEntry {
    private final byte[] publicKey;
    private final byte[] privateKey;
    private final long createdAt;
    private final long retiredAt;

    KeyRingEntry(byte[] publicKey, byte[] privateKey, long createdAt, long retiredAt) {
        this.publicKey = publicKey.clone();
        this.privateKey = privateKey.clone();
        this.createdAt = createdAt;
        this.retiredAt = retiredAt;
    }

    public byte[] publicKey() {
        return publicKey.clone();
    }

    byte[] privateKey() {
        return privateKey.clone();
    }

    /** The key id's text form (16 lowercase hex digits). */
    public String keyIdText() {
        return X25519.hex(X25519.keyId(publicKey));
    }

    public byte[] keyId() {
        return X25519.keyId(publicKey);
    }

    public long createdAt() {
        return createdAt;
    }

    /** The retirement time, or -1 for the current key. */
    public long retiredAt() {
        return retiredAt;
    }

    boolean isRetired() {
        return retiredAt >= 0;
    }

    KeyRingEntry retired(long at) {
        return new KeyRingEntry(publicKey, privateKey, createdAt, at);
    }

    boolean samePublicKey(byte[] keyId) {
        return Arrays.equals(keyId(), keyId);
    }
}
