package org.sealedpush;

/** The device keys a receiver holds, looked up by key id (envelope spec §8 steps 8 and 8a). */
public interface DeviceKeys {
    /**
     * The key with this 8-byte id, or {@code null} when none is held. Throws {@code keysUnavailable} or
     * {@code keyStoreCorrupt} when the keys cannot be read (step 8).
     */
    DeviceKeyAgreement find(byte[] keyId) throws SealedPushException;
}
