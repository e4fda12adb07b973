package org.sealedpush;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.zip.CRC32;

/**
 * The replay guard of {@code Specs/keyring-v1.md} §5 with the duplicate rule of §5.5. The state is
 * {@code replay-v1.bin}, file format version 4: a snapshot of entries sorted by message id, followed by a journal of
 * 64-byte CRC-checked records, one appended (and forced to disk) per recorded id or closed duplicate window. Once the
 * journal holds {@code J} records (reference 1,024) the guard compacts: prunes (§5.2), evicts (§5.3) and writes a new
 * snapshot atomically. Versions 1–3 are migrated to a version 4 snapshot on first read.
 *
 * <p>Each check holds the in-process lock and the file lock on {@code replay.lock} from its read to its last write,
 * reads the file once, validates all of it (§5.4.2) and looks the id up by binary search in the snapshot bytes plus a
 * map of the journal's records; it never builds the whole set except to compact. The directory is never created.
 * Thread-safe.
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
    /** Reference journal limit {@code J} of §5.4.3: compact once the journal holds 1,024 records. */
    public static final int DEFAULT_JOURNAL_LIMIT = 1_024;
    /** A writer MUST compact by 8,192 records (§5.4.3). */
    static final int MAX_JOURNAL_LIMIT = 8_192;
    /** The largest capacity accepted (keeps the file's size limit well inside one Java array). */
    static final int MAX_CAPACITY = 10_000_000;
    static final long SKEW = 600;
    static final long MAX_LIFETIME = 2_419_200L;
    /** The stride {@code S} of §5.1.1: one envelope moves {@code L} and {@code A} by at most a day. */
    static final long STRIDE = 86_400L;
    /** Every time in the file is below 2^53. */
    static final long TIME_LIMIT = 1L << 53;
    static final int HEADER = 41;
    static final int ENTRY = 56;
    static final int RECORD = 64;
    static final int KIND_ADD = 1;
    static final int KIND_CLOSE = 2;
    static final String FILE_NAME = "replay-v1.bin";
    static final String LOCK_NAME = "replay.lock";
    private static final byte[] MAGIC = {'S', 'P', 'R', 'G'};
    private static final long ONE_MIB = 1_048_576L;

    private final Path dir;
    private final int capacity;
    private final long duplicateWindow;
    private final int journalLimit;
    /** The file's bytes during a check (reused; touched only under the lock of this guard's directory). */
    private ByteBuffer buffer;

    /**
     * @param directory the key ring directory (must exist)
     * @param capacity the largest number of ids kept after a compaction (1 ... 10,000,000)
     * @param duplicateWindow D of §5.5 in seconds, 0 ... 3600 (0 turns duplicates off)
     */
    public ReplayGuard(Path directory, int capacity, long duplicateWindow) throws SealedPushException {
        this(directory, capacity, duplicateWindow, DEFAULT_JOURNAL_LIMIT);
    }

    /**
     * As {@link #ReplayGuard(Path, int, long)} with the journal limit {@code J} of §5.4.3 (1 ... 8,192): the guard
     * compacts once the journal holds that many records. Tests use small limits to compact often.
     */
    ReplayGuard(Path directory, int capacity, long duplicateWindow, int journalLimit) throws SealedPushException {
        if (capacity < 1 || capacity > MAX_CAPACITY) {
            throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "capacity must be 1 ... " + MAX_CAPACITY + " ids, not " + capacity);
        }
        if (duplicateWindow < 0 || duplicateWindow > 3600) {
            throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "the duplicate window must be 0 ... 3600 s, not " + duplicateWindow);
        }
        if (journalLimit < 1 || journalLimit > MAX_JOURNAL_LIMIT) {
            throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "the journal limit must be 1 ... " + MAX_JOURNAL_LIMIT + " records, not " + journalLimit);
        }
        this.dir = directory;
        this.capacity = capacity;
        this.duplicateWindow = duplicateWindow;
        this.journalLimit = journalLimit;
    }

    /** One id of the set. */
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

    /** The whole state {@code (W, P, L, A, entries)}, as compaction and inspection see it. */
    static final class State {
        long w;
        long p;
        long l;
        long a;
        /** Sorted by id. */
        List<Entry> entries = new ArrayList<>();
        /** The file's format version (4 for an empty state). */
        int version = 4;
        /** Entries in the snapshot part of the file (before the journal). */
        int snapshotEntries;
        /** Good journal records (a torn tail not counted). */
        int journalRecords;
    }

    /** A message id as a map key. */
    private static final class Key {
        final long hi;
        final long lo;

        Key(long hi, long lo) {
            this.hi = hi;
            this.lo = lo;
        }

        static Key of(byte[] id) {
            ByteBuffer b = ByteBuffer.wrap(id);
            return new Key(b.getLong(0), b.getLong(8));
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key && ((Key) o).hi == hi && ((Key) o).lo == lo;
        }

        @Override
        public int hashCode() {
            return Long.hashCode(hi * 31 + lo);
        }
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

    private static final Comparator<Entry> BY_ID = (x, y) -> UNSIGNED.compare(x.id, y.id);

    /** Eviction order of §5.3: smallest issuedAt, then smallest expiresAt, then smallest id. */
    private static final Comparator<Entry> EVICTION = (x, y) -> x.issuedAt != y.issuedAt ? cmp(x.issuedAt, y.issuedAt)
        : x.expiresAt != y.expiresAt ? cmp(x.expiresAt, y.expiresAt) : UNSIGNED.compare(x.id, y.id);

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
        if (id == null || id.length != 16 || d == null || d.length != 16) {
            throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "a message id and an envelope digest are 16 bytes each");
        }
        // Rule 1.
        if (cmp(now, expiresAt) >= 0) {
            throw new SealedPushException(ErrorCode.EXPIRED, "the envelope expired");
        }
        if (cmp(issuedAt, now) > 0 && cmp(issuedAt - now, SKEW) > 0) {
            throw new SealedPushException(ErrorCode.NOT_YET_VALID, "the envelope was issued more than 600 s in the future");
        }
        if (cmp(now, TIME_LIMIT - SKEW - MAX_LIFETIME) >= 0) {
            throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "the device clock reads " + Long.toUnsignedString(now)
                + ", at or past 2^53 - 600 - 2,419,200 = " + (TIME_LIMIT - SKEW - MAX_LIFETIME) + ": the replay state cannot hold such times");
        }
        if (cmp(issuedAt, expiresAt) > 0 || cmp(expiresAt, now + SKEW + MAX_LIFETIME) > 0) {
            throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "issuedAt must not be after expiresAt, and expiresAt at most "
                + "now + 600 + 2,419,200 (envelope-v1 §3): such an envelope cannot have been opened");
        }
        AtomicFiles.checkDirectory(dir);
        try (AtomicFiles.Held lock = AtomicFiles.lock(dir.resolve(LOCK_NAME)); Stored st = load(now)) {
            View v = st.view;
            Key key = Key.of(id);
            Entry x = v.lookup(key);
            if (x != null) {
                // Rule 2 and the duplicate rule of §5.5.
                boolean hasDigest = !X25519.isZero(x.digest);
                boolean same = hasDigest && MessageDigest.isEqual(x.digest, d);
                long t = umax(now, v.a);
                if (same && cmp(x.acceptedAt, now) <= 0 && cmp(t - x.acceptedAt, duplicateWindow) < 0) {
                    return Outcome.DUPLICATE;
                }
                if (same && cmp(t, x.acceptedAt) >= 0 && cmp(t - x.acceptedAt, duplicateWindow) >= 0) {
                    st.append(closeRecord(id));
                    v.applyClose(key);
                    compactIfDue(v, now);
                }
                throw new SealedPushException(ErrorCode.REPLAYED, "this message id was already accepted");
            }
            if (cmp(expiresAt, v.p) <= 0) {
                throw new SealedPushException(ErrorCode.REPLAYED, "the envelope expired by the sender's clock before pruned ids");
            }
            if (v.w != 0 && cmp(issuedAt, v.w) <= 0) { // rule 4: W = 0 means nothing was evicted
                throw new SealedPushException(ErrorCode.REPLAYED, "the envelope was issued no later than an evicted id");
            }
            Entry fresh = new Entry(id.clone(), issuedAt, expiresAt, now, d.clone());
            st.append(addRecord(fresh));
            v.applyAdd(key, fresh);
            compactIfDue(v, now);
            return Outcome.FRESH;
        }
    }

    /** Replaces the state with an empty one (an explicit reset by the app, §5.4.2). */
    public void reset() throws SealedPushException {
        AtomicFiles.checkDirectory(dir);
        try (AtomicFiles.Held lock = AtomicFiles.lock(dir.resolve(LOCK_NAME))) {
            AtomicFiles.write(file(), encode(new State()));
        }
    }

    /**
     * Reads and validates the state without writing anything (no migration, no truncation of a torn tail): the
     * header values, the entries after the journal, and how many are in the snapshot and the journal. An empty state
     * when there is no file. For diagnostics and tests.
     */
    State inspect() throws SealedPushException {
        AtomicFiles.checkDirectory(dir);
        try (AtomicFiles.Held lock = AtomicFiles.lock(dir.resolve(LOCK_NAME))) {
            if (!AtomicFiles.exists(file())) {
                return new State();
            }
            return decode(AtomicFiles.read(file(), maxLength()), System.currentTimeMillis() / 1000);
        }
    }

    private Path file() {
        return dir.resolve(FILE_NAME);
    }

    /** §5.4: a reader refuses a file larger than {@code 41 + 56 * (capacity + 1) + 1 MiB}. */
    long maxLength() {
        return HEADER + (long) ENTRY * (capacity + 1L) + ONE_MIB;
    }

    /**
     * Compacts once the journal holds {@code J} records. The record that reached {@code J} is already on stable
     * storage, so a compaction that fails does not fail the check (§5.4.3): the record stands, the next writer
     * compacts.
     */
    private void compactIfDue(View v, long now) {
        if (v.records >= journalLimit) {
            try {
                State s = v.toState();
                compact(s, now, capacity);
                AtomicFiles.write(file(), encode(s));
            } catch (SealedPushException e) {
                // Nothing to undo: the file still holds the snapshot and the whole journal.
            }
        }
    }

    /** Prune (§5.2), evict (§5.3) and reset W, in place; the entries stay sorted by id. */
    static void compact(State s, long now, int capacity) {
        long b = umin(now, s.l);
        List<Entry> kept = new ArrayList<>(s.entries.size());
        for (Entry e : s.entries) {
            if (cmp(e.expiresAt, b) <= 0) {
                s.p = umax(s.p, e.expiresAt);
            } else {
                kept.add(e);
            }
        }
        if (kept.size() > capacity) {
            List<Entry> order = new ArrayList<>(kept);
            order.sort(EVICTION);
            int drop = kept.size() - capacity;
            for (int i = 0; i < drop; i++) {
                s.w = umax(s.w, order.get(i).issuedAt);
            }
            kept = new ArrayList<>(order.subList(drop, order.size()));
            kept.sort(BY_ID);
        }
        s.entries = kept;
        if (cmp(s.w + MAX_LIFETIME, s.p) <= 0) {
            s.w = 0;
        }
    }

    /** The open state file of one check: its validated view and, when the file exists, its channel. */
    private final class Stored implements AutoCloseable {
        final View view;
        final FileChannel channel;
        long length;

        Stored(View view, FileChannel channel, long length) {
            this.view = view;
            this.channel = channel;
            this.length = length;
        }

        /** Appends one record after the last good one (a torn tail is truncated first) and forces it to disk. */
        void append(byte[] record) throws SealedPushException {
            if (channel == null) {
                // No file yet: create it, header and record at once, atomically.
                byte[] created = Arrays.copyOf(encode(new State()), HEADER + RECORD);
                System.arraycopy(record, 0, created, HEADER, RECORD);
                AtomicFiles.write(file(), created);
                view.goodEnd = HEADER + RECORD;
                view.records++;
                length = view.goodEnd;
                return;
            }
            try {
                if (length > view.goodEnd) {
                    channel.truncate(view.goodEnd);
                }
                ByteBuffer b = ByteBuffer.wrap(record);
                long at = view.goodEnd;
                while (b.hasRemaining()) {
                    at += channel.write(b, at);
                }
                channel.force(true);
            } catch (IOException e) {
                throw new SealedPushException(ErrorCode.IO, "cannot append a record to " + file() + " at offset " + view.goodEnd
                    + ": " + e.getClass().getSimpleName(), e);
            }
            view.goodEnd += RECORD;
            view.records++;
            length = view.goodEnd;
        }

        @Override
        public void close() {
            if (channel != null) {
                try {
                    channel.close();
                } catch (IOException ignored) {
                    // every write was forced before; nothing is lost
                }
            }
        }
    }

    private static Set<OpenOption> readWrite() {
        return new HashSet<>(Arrays.asList(StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS));
    }

    /**
     * Opens and validates the state file; an older version is migrated (compacted and written as a version 4
     * snapshot) and read again. A file without room for one more record is compacted first.
     */
    private Stored load(long now) throws SealedPushException {
        Path f = file();
        long max = maxLength();
        for (int attempt = 0; ; attempt++) {
            BasicFileAttributes attrs;
            try {
                attrs = Files.readAttributes(f, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            } catch (NoSuchFileException e) {
                return new Stored(View.empty(), null, 0);
            } catch (AccessDeniedException e) {
                throw new SealedPushException(ErrorCode.KEYS_UNAVAILABLE, f + " is unreadable");
            } catch (IOException e) {
                throw new SealedPushException(ErrorCode.KEYS_UNAVAILABLE, f + " cannot be read", e);
            }
            if (!attrs.isRegularFile()) {
                throw new SealedPushException(ErrorCode.KEY_STORE_CORRUPT, f + " is not a regular file (a link, FIFO, socket, device or directory)");
            }
            if (attrs.size() > max) {
                throw tooLarge(f, attrs.size(), max);
            }
            FileChannel ch;
            try {
                ch = FileChannel.open(f, readWrite());
            } catch (NoSuchFileException | AccessDeniedException e) {
                throw new SealedPushException(ErrorCode.KEYS_UNAVAILABLE, f + " cannot be opened for reading and writing");
            } catch (IOException e) {
                if (e.getMessage() != null && e.getMessage().contains("ELOOP")) {
                    throw new SealedPushException(ErrorCode.KEY_STORE_CORRUPT, f + " became a symbolic link");
                }
                throw new SealedPushException(ErrorCode.KEYS_UNAVAILABLE, f + " cannot be opened", e);
            }
            boolean keep = false;
            try {
                ByteBuffer b = readAll(f, ch, max);
                int version = version(b);
                if (version == 4) {
                    View v = View.parse(b);
                    if (v.goodEnd + RECORD > max && attempt == 0) {
                        // No room for one more record (a journal written with a larger J): compact, then read again.
                        State s = v.toState();
                        compact(s, now, capacity);
                        AtomicFiles.write(f, encode(s));
                        continue;
                    }
                    keep = true;
                    return new Stored(v, ch, b.limit());
                }
                byte[] older = new byte[b.limit()];
                copy(b, 0, older);
                State s = decodeOlder(older, version, now);
                compact(s, now, capacity);
                AtomicFiles.write(f, encode(s));
            } finally {
                if (!keep) {
                    try {
                        ch.close();
                    } catch (IOException ignored) {
                        // read only so far
                    }
                }
            }
            if (attempt > 2) {
                throw new SealedPushException(ErrorCode.IO, f + " changed while it was migrated");
            }
        }
    }

    /**
     * Reads the whole file into this guard's reused direct buffer (one copy from the page cache, no garbage for a
     * 1 MB state per check); only used under the lock, so one check at a time per guard.
     */
    private ByteBuffer readAll(Path f, FileChannel ch, long max) throws SealedPushException {
        try {
            long size = ch.size();
            if (size > max) {
                throw tooLarge(f, size, max);
            }
            ByteBuffer buf = buffer;
            if (buf == null || buf.capacity() < size) {
                buf = ByteBuffer.allocateDirect((int) Math.min(max, Math.max(size + size / 4, 4096)));
                buffer = buf;
            }
            buf.clear().limit((int) size);
            while (buf.hasRemaining()) {
                if (ch.read(buf, buf.position()) < 0) {
                    throw new SealedPushException(ErrorCode.IO, f + " shrank while it was read under the lock");
                }
            }
            buf.flip();
            return buf;
        } catch (IOException e) {
            throw new SealedPushException(ErrorCode.KEYS_UNAVAILABLE, f + " cannot be read", e);
        }
    }

    private static SealedPushException tooLarge(Path f, long size, long max) {
        return new SealedPushException(ErrorCode.KEY_STORE_CORRUPT, f + " is " + size + " bytes, larger than the limit of "
            + max + " bytes (41 + 56 * (capacity + 1) + 1 MiB, keyring-v1 §5.4)");
    }

    private static int version(ByteBuffer b) throws SealedPushException {
        if (b.limit() < 5 || b.get(0) != MAGIC[0] || b.get(1) != MAGIC[1] || b.get(2) != MAGIC[2] || b.get(3) != MAGIC[3]) {
            throw corrupt("bad magic (not \"SPRG\")");
        }
        int version = b.get(4) & 0xff;
        if (version < 1 || version > 4) {
            throw corrupt("unknown version " + version + " (this reader knows 1 ... 4)");
        }
        return version;
    }

    /** Parses a whole file of any version into the state, as a reader sees it (nothing is written). */
    static State decode(byte[] b, long now) throws SealedPushException {
        int version = version(ByteBuffer.wrap(b));
        if (version == 4) {
            return View.parse(ByteBuffer.wrap(b)).toState();
        }
        return decodeOlder(b, version, now);
    }

    /** A version 4 snapshot of {@code s} with no journal. */
    static byte[] encode(State s) {
        List<Entry> entries = s.entries;
        for (int i = 1; i < entries.size(); i++) {
            if (BY_ID.compare(entries.get(i - 1), entries.get(i)) >= 0) {
                entries = new ArrayList<>(entries);
                entries.sort(BY_ID);
                break;
            }
        }
        ByteBuffer buf = ByteBuffer.allocate(HEADER + ENTRY * entries.size());
        buf.put(MAGIC).put((byte) 4).putLong(s.w).putLong(s.p).putLong(s.l).putLong(s.a).putInt(entries.size());
        for (Entry e : entries) {
            buf.put(e.id).putLong(e.issuedAt).putLong(e.expiresAt).putLong(e.acceptedAt).put(e.digest);
        }
        return buf.array();
    }

    /** CRC-32 (zlib, PNG, Ethernet) of {@code len} bytes at {@code off}. */
    static int crc32(byte[] b, int off, int len) {
        CRC32 c = new CRC32();
        c.update(b, off, len);
        return (int) c.getValue();
    }

    /** The {@code check} of the record at {@code off}: CRC-32 of its 64 bytes with bytes 4–7 taken as zero. */
    static int recordCheck(byte[] b, int off) {
        return recordCheck(ByteBuffer.wrap(b), off, new byte[RECORD], new CRC32());
    }

    private static int recordCheck(ByteBuffer b, int off, byte[] scratch, CRC32 crc) {
        copy(b, off, scratch);
        scratch[4] = 0;
        scratch[5] = 0;
        scratch[6] = 0;
        scratch[7] = 0;
        crc.reset();
        crc.update(scratch, 0, RECORD);
        return (int) crc.getValue();
    }

    /** {@code dst.length} bytes from absolute position {@code off} (ByteBuffer.get(int, byte[]) is Java 13). */
    private static void copy(ByteBuffer b, int off, byte[] dst) {
        ByteBuffer d = b.duplicate();
        d.position(off);
        d.get(dst);
    }

    private static byte[] sealRecord(ByteBuffer r) {
        byte[] b = r.array();
        ByteBuffer.wrap(b).putInt(4, recordCheck(b, 0));
        return b;
    }

    static byte[] addRecord(Entry e) {
        ByteBuffer r = ByteBuffer.allocate(RECORD);
        r.put((byte) KIND_ADD).position(8);
        r.put(e.id).putLong(e.issuedAt).putLong(e.expiresAt).putLong(e.acceptedAt).put(e.digest);
        return sealRecord(r);
    }

    static byte[] closeRecord(byte[] id) {
        ByteBuffer r = ByteBuffer.allocate(RECORD);
        r.put((byte) KIND_CLOSE).position(8);
        r.put(id);
        return sealRecord(r);
    }

    /**
     * A validated version 4 file: the header, the snapshot left in place (binary search over its bytes), and the
     * journal's effect as a small map of added entries plus the set of snapshot ids whose digest was closed.
     */
    static final class View {
        /** The file's bytes, position 0, limit its length; big-endian. */
        private final ByteBuffer b;
        long w;
        long p;
        long l;
        long a;
        int n;
        int records;
        /** End of the last good record (or of the snapshot): where the next record goes. */
        long goodEnd;
        private final HashMap<Key, Entry> added = new HashMap<>();
        private final HashSet<Key> closed = new HashSet<>();

        private View(ByteBuffer b) {
            this.b = b;
        }

        static View empty() {
            View v = new View(ByteBuffer.allocate(0));
            v.goodEnd = HEADER;
            return v;
        }

        /** Validates a version 4 file per §5.4.2 (magic and version already checked). */
        static View parse(ByteBuffer b) throws SealedPushException {
            int length = b.limit();
            if (length < HEADER) {
                throw corrupt("the file is " + length + " bytes, shorter than the 41-byte header");
            }
            View v = new View(b);
            byte[] scratch = new byte[RECORD];
            CRC32 crc = new CRC32();
            v.w = time(b.getLong(5), "W (evictedIssuedAt) in the header");
            v.p = time(b.getLong(13), "P (prunedThrough) in the header");
            v.l = time(b.getLong(21), "L (latestIssuedAt) in the header");
            v.a = time(b.getLong(29), "A (latestAcceptedAt) in the header");
            long n = b.getInt(37) & 0xffffffffL;
            long snapshotEnd = HEADER + ENTRY * n;
            if (length < snapshotEnd) {
                throw corrupt("the header counts " + n + " entries (" + snapshotEnd + " bytes) but the file is " + length + " bytes");
            }
            v.n = (int) n;
            long prevHi = 0;
            long prevLo = 0;
            for (int i = 0; i < v.n; i++) {
                int off = HEADER + ENTRY * i;
                checkEntryTimes(b, off, "snapshot entry", i);
                long hi = b.getLong(off);
                long lo = b.getLong(off + 8);
                if (i > 0) {
                    int c = compareIds(prevHi, prevLo, hi, lo);
                    if (c >= 0) {
                        throw corrupt(where("snapshot entry", i, off) + " is " + (c == 0 ? "the same id as" : "not after")
                            + " the entry before it: entries must be strictly ascending by message id");
                    }
                }
                prevHi = hi;
                prevLo = lo;
            }
            long journal = length - snapshotEnd;
            int complete = (int) (journal / RECORD);
            v.goodEnd = snapshotEnd;
            for (int j = 0; j < complete; j++) {
                int off = (int) snapshotEnd + RECORD * j;
                int stored = b.getInt(off + 4);
                int computed = recordCheck(b, off, scratch, crc);
                if (stored != computed) {
                    if (j == complete - 1) {
                        break; // the last complete record of an append cut short: ignored (§5.4.2)
                    }
                    throw corrupt(where("journal record", j, off) + ": check " + hex32(stored) + " does not match the CRC-32 " + hex32(computed)
                        + " of its bytes, and it is not the last record");
                }
                v.applyRecord(off, j);
                v.goodEnd = off + RECORD;
            }
            return v;
        }

        private void applyRecord(int off, int j) throws SealedPushException {
            int kind = b.get(off) & 0xff;
            if (b.get(off + 1) != 0 || b.get(off + 2) != 0 || b.get(off + 3) != 0) {
                throw corrupt(where("journal record", j, off) + ": reserved bytes 1-3 are not zero");
            }
            Key key = new Key(b.getLong(off + 8), b.getLong(off + 16));
            if (kind == KIND_ADD) {
                checkEntryTimes(b, off + 8, "journal record", j);
                if (lookup(key) != null) {
                    throw corrupt(where("journal record", j, off) + ": adds a message id that is already in the set");
                }
                byte[] id = new byte[16];
                byte[] digest = new byte[16];
                copy(b, off + 8, id);
                copy(b, off + 48, digest);
                applyAdd(key, new Entry(id, b.getLong(off + 24), b.getLong(off + 32), b.getLong(off + 40), digest));
            } else if (kind == KIND_CLOSE) {
                for (int i = 24; i < RECORD; i++) {
                    if (b.get(off + i) != 0) {
                        throw corrupt(where("journal record", j, off) + ": a close record with non-zero unused byte " + i);
                    }
                }
                Entry e = lookup(key);
                if (e == null) {
                    throw corrupt(where("journal record", j, off) + ": closes a message id that is not in the set");
                }
                if (X25519.isZero(e.digest)) {
                    throw corrupt(where("journal record", j, off) + ": closes an entry that has no digest (never recorded with one, or closed already)");
                }
                applyClose(key);
            } else {
                throw corrupt(where("journal record", j, off) + ": unknown kind " + kind + " (1 add, 2 close)");
            }
            records++;
        }

        /** §5.1.1: puts the entry in the set and moves L and A by at most the stride past the previous A. */
        void applyAdd(Key key, Entry e) {
            long bound = a != 0 ? a + STRIDE : -1L; // -1: 2^64 - 1 unsigned, no anchor yet
            long newL = umax(l, umin(e.issuedAt, bound));
            long newA = umax(a, umin(umin(e.acceptedAt, newL + SKEW), bound));
            l = newL;
            a = newA;
            added.put(key, e);
        }

        void applyClose(Key key) {
            Entry e = added.get(key);
            if (e != null) {
                e.digest = new byte[16];
            } else {
                closed.add(key);
            }
        }

        /** The entry with this id (a copy for a snapshot entry, its digest none if closed), or null. */
        Entry lookup(Key key) {
            Entry e = added.get(key);
            if (e != null) {
                return e;
            }
            int i = find(key);
            return i < 0 ? null : snapshotEntry(i, closed.contains(key));
        }

        private int find(Key key) {
            int lo = 0;
            int hi = n - 1;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                int off = HEADER + ENTRY * mid;
                int c = compareIds(b.getLong(off), b.getLong(off + 8), key.hi, key.lo);
                if (c < 0) {
                    lo = mid + 1;
                } else if (c > 0) {
                    hi = mid - 1;
                } else {
                    return mid;
                }
            }
            return -1;
        }

        private Entry snapshotEntry(int i, boolean isClosed) {
            int off = HEADER + ENTRY * i;
            byte[] id = new byte[16];
            byte[] digest = new byte[16];
            copy(b, off, id);
            if (!isClosed) {
                copy(b, off + 40, digest);
            }
            return new Entry(id, b.getLong(off + 16), b.getLong(off + 24), b.getLong(off + 32), digest);
        }

        /** The whole state: the snapshot's entries (closes applied) and the journal's, sorted by id. */
        State toState() {
            State s = new State();
            s.w = w;
            s.p = p;
            s.l = l;
            s.a = a;
            s.snapshotEntries = n;
            s.journalRecords = records;
            List<Entry> all = new ArrayList<>(n + added.size());
            for (int i = 0; i < n; i++) {
                int off = HEADER + ENTRY * i;
                all.add(snapshotEntry(i, closed.contains(new Key(b.getLong(off), b.getLong(off + 8)))));
            }
            all.addAll(added.values());
            all.sort(BY_ID);
            s.entries = all;
            return s;
        }
    }

    private static int compareIds(long hi1, long lo1, long hi2, long lo2) {
        int c = Long.compareUnsigned(hi1, hi2);
        return c != 0 ? c : Long.compareUnsigned(lo1, lo2);
    }

    private static long time(long t, String what) throws SealedPushException {
        if (cmp(t, TIME_LIMIT) >= 0) {
            throw corrupt(what + " is " + Long.toUnsignedString(t) + ", at or above 2^53");
        }
        return t;
    }

    /** "snapshot entry 3 (offset 209)": built only for an error message. */
    private static String where(String what, int index, int off) {
        return what + " " + index + " (offset " + off + ")";
    }

    /**
     * The issuedAt, expiresAt and acceptedAt after the id at {@code idOff} (entry or record {@code index}): below
     * 2^53, issuedAt <= expiresAt.
     */
    private static void checkEntryTimes(ByteBuffer b, int idOff, String what, int index) throws SealedPushException {
        long issuedAt = b.getLong(idOff + 16);
        long expiresAt = b.getLong(idOff + 24);
        long acceptedAt = b.getLong(idOff + 32);
        if ((issuedAt | expiresAt | acceptedAt) < 0 || issuedAt >= TIME_LIMIT || expiresAt >= TIME_LIMIT || acceptedAt >= TIME_LIMIT
            || issuedAt > expiresAt) {
            int off = what.startsWith("journal") ? idOff - 8 : idOff;
            String where = where(what, index, off);
            time(issuedAt, where + ": issuedAt");
            time(expiresAt, where + ": expiresAt");
            time(acceptedAt, where + ": acceptedAt");
            throw corrupt(where + ": issuedAt " + issuedAt + " is after expiresAt " + expiresAt);
        }
    }

    /** Versions 1–3 (§5.4.4), with the snapshot rules of §5.4.2. */
    private static State decodeOlder(byte[] b, int version, long now) throws SealedPushException {
        ByteBuffer buf = ByteBuffer.wrap(b);
        int headerSize = version == 3 ? 41 : version == 2 ? 33 : 17;
        int entrySize = version == 3 ? 56 : version == 2 ? 32 : 24;
        if (b.length < headerSize) {
            throw corrupt("version " + version + ": the file is " + b.length + " bytes, shorter than its " + headerSize + "-byte header");
        }
        State s = new State();
        s.version = version;
        buf.position(5);
        long watermark = 0;
        if (version == 1) {
            watermark = buf.getLong(); // any uint64: it is only compared with now (§5.4.4)
        } else {
            s.w = time(buf.getLong(), "version " + version + ": W in the header");
            s.p = time(buf.getLong(), "version " + version + ": P in the header");
            s.l = time(buf.getLong(), "version " + version + ": L in the header");
            if (version == 3) {
                s.a = time(buf.getLong(), "version 3: A in the header");
            }
        }
        long count = buf.getInt() & 0xffffffffL;
        if (b.length != headerSize + entrySize * count) {
            throw corrupt("version " + version + ": the file is " + b.length + " bytes, not " + (headerSize + entrySize * count)
                + " as its count of " + count + " entries says");
        }
        List<Entry> entries = new ArrayList<>((int) count);
        boolean sorted = true;
        for (int i = 0; i < count; i++) {
            String where = "version " + version + ": entry " + i + " (offset " + (headerSize + entrySize * i) + ")";
            byte[] id = new byte[16];
            buf.get(id);
            long issuedAt;
            long expiresAt;
            long acceptedAt = 0;
            byte[] digest = new byte[16];
            if (version == 1) {
                expiresAt = time(buf.getLong(), where + ": expiresAt");
                issuedAt = umin(expiresAt, now);
            } else {
                issuedAt = time(buf.getLong(), where + ": issuedAt");
                expiresAt = time(buf.getLong(), where + ": expiresAt");
                if (version == 3) {
                    acceptedAt = time(buf.getLong(), where + ": acceptedAt");
                    buf.get(digest);
                }
            }
            if (issuedAt > expiresAt) {
                throw corrupt(where + ": issuedAt " + issuedAt + " is after expiresAt " + expiresAt);
            }
            Entry e = new Entry(id, issuedAt, expiresAt, acceptedAt, digest);
            if (!entries.isEmpty() && BY_ID.compare(entries.get(entries.size() - 1), e) >= 0) {
                if (version == 3) {
                    throw corrupt(where + ": not after the entry before it; version 3 entries are strictly ascending by message id");
                }
                sorted = false;
            }
            entries.add(e);
        }
        if (!sorted) {
            entries.sort(BY_ID);
        }
        for (int i = 1; i < entries.size(); i++) {
            if (BY_ID.compare(entries.get(i - 1), entries.get(i)) == 0) {
                throw corrupt("version " + version + ": a message id appears twice");
            }
        }
        if (version == 1) {
            s.w = cmp(watermark, now) > 0 ? now : 0;
        }
        s.entries = entries;
        s.snapshotEntries = entries.size();
        return s;
    }

    private static String hex32(int v) {
        return String.format("0x%08x", v);
    }

    private static SealedPushException corrupt(String what) {
        return new SealedPushException(ErrorCode.KEY_STORE_CORRUPT, "replay state " + FILE_NAME + ": " + what);
    }
}
