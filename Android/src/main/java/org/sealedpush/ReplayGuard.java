package org.sealedpush;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The replay guard of {@code Specs/keyring-v1.md} §5 (file {@code replay-v1.bin}, format version 3) with the
 * duplicate rule of §5.5. Each check is one read-modify-write under the lock file {@code replay.lock}; the directory
 * is never created. Thread-safe (in-process lock per path plus the file lock).
 */
public final class ReplayGuard {
    /** The outcome of a check that did not refuse. */
    public enum Outcome {
        /** First acceptance: recorded. */
        FRESH,
        /** An exact copy of an envelope accepted within the duplicate window (§5.5): show it again or suppress. */
        DUPLICATE
    }

    /** Reference capacity, 16,384 ids. */
    public static final int DEFAULT_CAPACITY = 16_384;
    /** Default duplicate window, 600 s. */
    public static final long DEFAULT_DUPLICATE_WINDOW = 600;
    static final long SKEW = 600;
    static final long MAX_LIFETIME = 2_419_200L;
    private static final byte[] MAGIC = {'S', 'P', 'R', 'G'};
    private static final int ENTRY = 56;

    private final Path dir;
    private final int capacity;
    private final long duplicateWindow;

    /**
     * @param directory the key ring directory (must exist)
     * @param capacity the largest number of ids kept (at least 1)
     * @param duplicateWindow D of §5.5 in seconds, 0 ... 3600 (0 turns duplicates off)
     */
    public ReplayGuard(Path directory, int capacity, long duplicateWindow) throws SealedPushException {
        if (capacity < 1 || duplicateWindow < 0 || duplicateWindow > 3600) {
            throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "capacity must be >= 1 and the duplicate window 0 ... 3600 s");
        }
        this.dir = directory;
        this.capacity = capacity;
        this.duplicateWindow = duplicateWindow;
    }

    static final class Entry {
        final byte[] id;
        final long issuedAt;
        final long expiresAt;
        final long acceptedAt;
        byte[] digest;

        Entry(byte[] id, long issuedAt, long expiresAt, long acceptedAt, byte[] digest) {
            this.id = id;
            this.issuedAt = issuedAt;
            this.expiresAt = expiresAt;
            this.acceptedAt = acceptedAt;
            this.digest = digest;
        }
    }

    static final class State {
        long w;
        long p;
        long l;
        long a;
        List<Entry> entries = new ArrayList<>(); // sorted by id
        boolean migrated;
    }

    private static final Comparator<byte[]> UNSIGNED = (x, y) -> {
        for (int i = 0; i < x.length; i++) {
            int c = Integer.compare(x[i] & 0xff, y[i] & 0xff);
            if (c != 0) {
                return c;
            }
        }
        return 0;
    };

    private static int cmp(long a, long b) {
        return Long.compareUnsigned(a, b);
    }

    private static long umax(long a, long b) {
        return cmp(a, b) >= 0 ? a : b;
    }

    private static long umin(long a, long b) {
        return cmp(a, b) <= 0 ? a : b;
    }

    /** Checks and records an opened envelope at device time {@code now} (§5.1). */
    public Outcome check(OpenedEnvelope e, long now) throws SealedPushException {
        return check(e.messageId(), e.issuedAt(), e.expiresAt(), e.digest(), now);
    }

    Outcome check(byte[] id, long issuedAt, long expiresAt, byte[] d, long now) throws SealedPushException {
        if (cmp(now, expiresAt) >= 0) {
            throw new SealedPushException(ErrorCode.EXPIRED, "the envelope expired");
        }
        if (cmp(issuedAt, now + SKEW) > 0) {
            throw new SealedPushException(ErrorCode.NOT_YET_VALID, "the envelope was issued more than 600 s in the future");
        }
        AtomicFiles.checkDirectory(dir);
        try (AtomicFiles.Held lock = AtomicFiles.lock(dir.resolve("replay.lock"))) {
            State s = load(now);
            if (s.migrated) {
                save(s);
            }
            int at = find(s.entries, id);
            if (at >= 0) {
                Entry x = s.entries.get(at);
                boolean hasDigest = !X25519.isZero(x.digest);
                boolean same = hasDigest && MessageDigest.isEqual(x.digest, d);
                long t = umax(now, s.a);
                if (same && cmp(x.acceptedAt, now) <= 0 && cmp(t - x.acceptedAt, duplicateWindow) < 0) {
                    return Outcome.DUPLICATE;
                }
                if (same && cmp(t, x.acceptedAt) >= 0 && cmp(t - x.acceptedAt, duplicateWindow) >= 0) {
                    x.digest = new byte[16];
                    save(s);
                }
                throw new SealedPushException(ErrorCode.REPLAYED, "this message id was already accepted");
            }
            if (cmp(expiresAt, s.p) <= 0) {
                throw new SealedPushException(ErrorCode.REPLAYED, "the envelope expired by the sender's clock before pruned ids");
            }
            if (cmp(issuedAt, s.w) <= 0) {
                throw new SealedPushException(ErrorCode.REPLAYED, "the envelope was issued no later than an evicted id");
            }
            s.entries.add(-at - 1, new Entry(id.clone(), issuedAt, expiresAt, now, d.clone()));
            s.l = umax(s.l, issuedAt);
            s.a = umax(s.a, umin(now, s.l + SKEW));
            long b = umin(now, s.l);
            if (cmp(b, s.p) > 0) {
                s.entries.removeIf(x -> cmp(x.expiresAt, b) <= 0);
                s.p = b;
            }
            if (s.entries.size() > capacity) {
                List<Entry> byIssued = new ArrayList<>(s.entries);
                byIssued.sort((x, y) -> x.issuedAt != y.issuedAt ? cmp(x.issuedAt, y.issuedAt) : cmp(x.expiresAt, y.expiresAt));
                int drop = s.entries.size() - capacity;
                List<Entry> evicted = byIssued.subList(0, drop);
                for (Entry x : evicted) {
                    s.w = umax(s.w, x.issuedAt);
                }
                java.util.Set<Entry> gone = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
                gone.addAll(evicted);
                s.entries.removeIf(gone::contains);
            }
            if (s.w != 0 && cmp(s.w + MAX_LIFETIME, s.p) <= 0) {
                s.w = 0;
            }
            save(s);
            return Outcome.FRESH;
        }
    }

    /** Replaces the state with an empty one (an explicit reset by the app). */
    public void reset() throws SealedPushException {
        AtomicFiles.checkDirectory(dir);
        try (AtomicFiles.Held lock = AtomicFiles.lock(dir.resolve("replay.lock"))) {
            save(new State());
        }
    }

    private static int find(List<Entry> entries, byte[] id) {
        int lo = 0;
        int hi = entries.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int c = UNSIGNED.compare(entries.get(mid).id, id);
            if (c < 0) {
                lo = mid + 1;
            } else if (c > 0) {
                hi = mid - 1;
            } else {
                return mid;
            }
        }
        return -lo - 1;
    }

    private Path file() {
        return dir.resolve("replay-v1.bin");
    }

    private State load(long now) throws SealedPushException {
        if (!AtomicFiles.exists(file())) {
            return new State();
        }
        return decode(AtomicFiles.read(file(), 41L + (long) ENTRY * capacity + 1_048_576L), now);
    }

    static State decode(byte[] b, long now) throws SealedPushException {
        if (b.length < 5 || !Arrays.equals(Arrays.copyOf(b, 4), MAGIC)) {
            throw corrupt("bad magic");
        }
        ByteBuffer buf = ByteBuffer.wrap(b);
        buf.position(5);
        State s = new State();
        int version = b[4];
        int entrySize;
        int headerSize;
        if (version == 3) {
            headerSize = 41;
            entrySize = 56;
        } else if (version == 2) {
            headerSize = 33;
            entrySize = 32;
        } else if (version == 1) {
            headerSize = 17;
            entrySize = 24;
        } else {
            throw corrupt("unknown version " + version);
        }
        if (b.length < headerSize) {
            throw corrupt("short header");
        }
        long watermark = 0;
        if (version == 1) {
            watermark = buf.getLong();
        } else {
            s.w = buf.getLong();
            s.p = buf.getLong();
            s.l = buf.getLong();
            if (version == 3) {
                s.a = buf.getLong();
            }
        }
        long count = buf.getInt() & 0xffffffffL;
        if (b.length != headerSize + entrySize * count) {
            throw corrupt("length does not match the count");
        }
        byte[] previous = null;
        boolean sorted = true;
        for (long i = 0; i < count; i++) {
            byte[] id = new byte[16];
            buf.get(id);
            long issuedAt;
            long expiresAt;
            long acceptedAt = 0;
            byte[] digest = new byte[16];
            if (version == 1) {
                expiresAt = buf.getLong();
                issuedAt = umin(expiresAt, now);
            } else {
                issuedAt = buf.getLong();
                expiresAt = buf.getLong();
                if (version == 3) {
                    acceptedAt = buf.getLong();
                    buf.get(digest);
                }
            }
            if (cmp(issuedAt, expiresAt) > 0) {
                throw corrupt("an entry issued after it expires");
            }
            if (previous != null && UNSIGNED.compare(previous, id) >= 0) {
                sorted = false;
            }
            previous = id;
            s.entries.add(new Entry(id, issuedAt, expiresAt, acceptedAt, digest));
        }
        // Writers sort the entries by id; a reader takes them in any order (as the Swift reader does, keyring-v1
        // §5.4) and only a duplicated id is corrupt. The next write stores them sorted.
        if (!sorted) {
            s.entries.sort((x, y) -> UNSIGNED.compare(x.id, y.id));
            for (int i = 1; i < s.entries.size(); i++) {
                if (UNSIGNED.compare(s.entries.get(i - 1).id, s.entries.get(i).id) == 0) {
                    throw corrupt("a message id appears twice");
                }
            }
        }
        if (version == 1) {
            s.w = cmp(watermark, now) > 0 ? now : 0;
        }
        s.migrated = version != 3;
        return s;
    }

    static byte[] encode(State s) {
        ByteBuffer buf = ByteBuffer.allocate(41 + ENTRY * s.entries.size());
        buf.put(MAGIC).put((byte) 3).putLong(s.w).putLong(s.p).putLong(s.l).putLong(s.a).putInt(s.entries.size());
        for (Entry e : s.entries) {
            buf.put(e.id).putLong(e.issuedAt).putLong(e.expiresAt).putLong(e.acceptedAt).put(e.digest);
        }
        return buf.array();
    }

    private void save(State s) throws SealedPushException {
        s.migrated = false;
        AtomicFiles.write(file(), encode(s));
    }

    private static SealedPushException corrupt(String what) {
        return new SealedPushException(ErrorCode.KEY_STORE_CORRUPT, "replay state: " + what);
    }
}
