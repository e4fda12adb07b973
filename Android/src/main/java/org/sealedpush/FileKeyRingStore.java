package org.sealedpush;

import java.nio.file.Path;

/**
 * A key ring in a directory ({@code Specs/keyring-v1.md} §2): {@code keyring.json} (0600, atomic writes, no links)
 * and {@code keyring.lock}. A read-only store (a messaging service that only opens) never creates or writes a file.
 */
public final class FileKeyRingStore implements KeyRingStore {
    private final Path dir;
    private final boolean readOnly;

    public FileKeyRingStore(Path directory, boolean readOnly) {
        this.dir = directory;
        this.readOnly = readOnly;
    }

    private Path file() {
        return dir.resolve("keyring.json");
    }

    /** Reads and validates the ring: {@code keysUnavailable} when missing, {@code keyStoreCorrupt} when invalid. */
    public KeyRing read() throws SealedPushException {
        return KeyRing.decode(AtomicFiles.read(file(), KeyRing.MAX_FILE_SIZE));
    }

    @Override
    public DeviceKeyAgreement find(byte[] keyId) throws SealedPushException {
        return read().find(keyId);
    }

    private interface Change {
        KeyRing apply(KeyRing ring) throws SealedPushException;
    }

    private KeyRing change(Change c) throws SealedPushException {
        if (readOnly) {
            throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "the key ring store is read-only");
        }
        try (AtomicFiles.Held lock = AtomicFiles.lock(dir.resolve("keyring.lock"))) {
            KeyRing next = c.apply(read());
            byte[] data = next.encode();
            if (data.length > KeyRing.MAX_FILE_SIZE) {
                throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "the key ring would exceed 1 MiB");
            }
            AtomicFiles.write(file(), data);
            java.util.Arrays.fill(data, (byte) 0);
            return next;
        }
    }

    @Override
    public KeyRing create(long now) throws SealedPushException {
        if (readOnly) {
            throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "the key ring store is read-only");
        }
        AtomicFiles.checkDirectory(dir);
        try (AtomicFiles.Held lock = AtomicFiles.lock(dir.resolve("keyring.lock"))) {
            if (AtomicFiles.exists(file())) {
                throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "a key ring exists in " + dir);
            }
            KeyRing ring = KeyRing.create(now);
            AtomicFiles.write(file(), ring.encode());
            return ring;
        }
    }

    @Override
    public KeyRing rotate(long now) throws SealedPushException {
        return change(r -> r.rotate(now));
    }

    @Override
    public KeyRing prune(long now, long graceWindow) throws SealedPushException {
        return change(r -> r.prune(now, graceWindow));
    }

    @Override
    public DeviceRegistration registration(Long keyLifetime, String fcmToken) throws SealedPushException {
        return read().registration(keyLifetime, fcmToken);
    }
}
