package org.sealedpush;

/**
 * Where a key ring lives. Implementations: {@link FileKeyRingStore} (atomic files, tested here) and the Android
 * Keystore store in {@code Android/src/android} (written against Android's documented API, not compiled here).
 */
public interface KeyRingStore extends DeviceKeys {
    /** Creates a ring with one key; {@code invalidArgument} if one exists. */
    KeyRing create(long now) throws SealedPushException;

    /** Rotates: a new current key, the previous one retired at {@code now}. Returns the new ring. */
    KeyRing rotate(long now) throws SealedPushException;

    /** Prunes retired keys past the grace window. Returns the new ring. */
    KeyRing prune(long now, long graceWindow) throws SealedPushException;

    /** The registration record of the current key ({@code Specs/keyring-v1.md} §4). */
    DeviceRegistration registration(Long keyLifetime, String fcmToken) throws SealedPushException;
}
