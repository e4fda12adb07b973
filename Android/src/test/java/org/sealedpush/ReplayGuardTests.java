package org.sealedpush;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The replay guard and duplicate rule of Specs/keyring-v1.md §5 and §5.5, file format version 4. Files are built
 * here byte by byte from the spec's tables (with this class's own CRC-32), never with the guard's writer.
 */
final class ReplayGuardTests {
    @TempDir
    Path dir;

    static final long T = 1_800_000_000L;
    static final long TWO_53 = 1L << 53;
    static final long DAY = 86_400L;

    static byte[] id(int n) {
        byte[] b = new byte[16];
        b[15] = (byte) n;
        b[14] = (byte) (n >> 8);
        b[13] = (byte) (n >> 16);
        b[0] = 0x10;
        return b;
    }

    static byte[] digest(int n) {
        byte[] b = new byte[16];
        b[0] = (byte) (n + 1);
        return b;
    }

    static final byte[] NONE = new byte[16];

    private Object result(ReplayGuard g, int id, long issued, long expires, int digest, long now) {
        return result(g, id(id), issued, expires, digest(digest), now);
    }

    private static Object result(ReplayGuard g, byte[] id, long issued, long expires, byte[] digest, long now) {
        try {
            return g.check(id, issued, expires, digest, now);
        } catch (SealedPushException e) {
            return e.code();
        }
    }

    private Path file() {
        return dir.resolve("replay-v1.bin");
    }

    private byte[] bytes() throws Exception {
        return Files.readAllBytes(file());
    }

    // ---- The spec's layout, built independently of the guard ----

    /** CRC-32, bit by bit (reflected 0xEDB88320, init and final XOR 0xFFFFFFFF): not the JDK's CRC32. */
    static int crc(byte[] b, int off, int len) {
        int c = 0xffffffff;
        for (int i = off; i < off + len; i++) {
            c ^= b[i] & 0xff;
            for (int k = 0; k < 8; k++) {
                c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
            }
        }
        return ~c;
    }

    static byte[] header(int version, long w, long p, long l, long a, int n) {
        return ByteBuffer.allocate(41).put(new byte[] {'S', 'P', 'R', 'G', (byte) version}).putLong(w).putLong(p).putLong(l)
            .putLong(a).putInt(n).array();
    }

    static byte[] entry(byte[] id, long issued, long expires, long accepted, byte[] digest) {
        return ByteBuffer.allocate(56).put(id).putLong(issued).putLong(expires).putLong(accepted).put(digest).array();
    }

    /** A record with a correct check (bytes 4–7: CRC-32 of the 64 bytes with that field zero, big-endian). */
    static byte[] sealed(byte[] r) {
        r[4] = r[5] = r[6] = r[7] = 0;
        ByteBuffer.wrap(r).putInt(4, crc(r, 0, 64));
        return r;
    }

    static byte[] add(byte[] id, long issued, long expires, long accepted, byte[] digest) {
        return sealed(ByteBuffer.allocate(64).put((byte) 1).put(new byte[7]).put(id).putLong(issued).putLong(expires)
            .putLong(accepted).put(digest).array());
    }

    static byte[] close(byte[] id) {
        return sealed(ByteBuffer.allocate(64).put((byte) 2).put(new byte[7]).put(id).array());
    }

    static byte[] cat(byte[]... parts) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            o.write(p, 0, p.length);
        }
        return o.toByteArray();
    }

    static byte[] with(byte[] b, int at, byte value) {
        byte[] c = b.clone();
        c[at] = value;
        return c;
    }

    static byte[] withLong(byte[] b, int at, long value) {
        byte[] c = b.clone();
        ByteBuffer.wrap(c).putLong(at, value);
        return c;
    }

    static byte[] badCheck(byte[] record) {
        byte[] r = record.clone();
        r[5] ^= 0x40;
        return r;
    }

    // Base file: snapshot id1 (digest d1, accepted T) and id2 (no digest); journal: add id3 (d3), close id1, add id4 (d4).
    static final byte[] SNAP1 = entry(id(1), T, T + 7200, T, digest(1));
    static final byte[] SNAP2 = entry(id(2), T, T + 7200, T, NONE);
    static final byte[] ADD3 = add(id(3), T + 5, T + 7200, T + 5, digest(3));
    static final byte[] CLOSE1 = close(id(1));
    static final byte[] ADD4 = add(id(4), T + 10, T + 7200, T + 10, digest(4));
    static final byte[] HEAD = header(4, 0, 0, T, T, 2);

    static byte[] base() {
        return cat(HEAD, SNAP1, SNAP2, ADD3, CLOSE1, ADD4);
    }

    // ---- CRC-32 ----

    @Test
    void crc32OfTheCheckStringThroughTheGuardsCodePath() throws Exception {
        byte[] check = "123456789".getBytes(StandardCharsets.US_ASCII);
        assertEquals(0xCBF43926, ReplayGuard.crc32(check, 0, check.length));
        assertEquals(0xCBF43926, crc(check, 0, check.length));
        // The record check of a hand-built record: bytes 4-7 are taken as zero whatever they hold.
        byte[] r = ADD3.clone();
        assertEquals(ByteBuffer.wrap(r).getInt(4), ReplayGuard.recordCheck(r, 0));
        r[4] = (byte) 0xAA;
        assertEquals(ByteBuffer.wrap(ADD3).getInt(4), ReplayGuard.recordCheck(r, 0));
        // And what the guard appends checks out with this class's CRC-32.
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 9, T, T + 3600, 9, T));
        byte[] f = bytes();
        assertEquals(41 + 64, f.length);
        assertArrayEquals(cat(header(4, 0, 0, 0, 0, 0), add(id(9), T, T + 3600, T, digest(9))), f);
    }

    // ---- The rules (5.1-5.5) ----

    @Test
    void freshThenReplayedAndDuplicates() throws Exception {
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 1, T, T + 3600, 1, T));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file())));
        byte[] before = bytes();
        // Exact copy inside the window: duplicate, nothing written.
        assertEquals(ReplayGuard.Outcome.DUPLICATE, result(g, 1, T, T + 3600, 1, T + 599));
        assertArrayEquals(before, bytes());
        // A different envelope reusing the id: replayed, nothing written.
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 3600, 2, T + 10));
        // Clock before the first acceptance: replayed.
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 3600, 1, T - 1));
        assertArrayEquals(before, bytes());
        // After the window: replayed, and the entry is closed for good (one close record appended) ...
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 3600, 1, T + 600));
        assertArrayEquals(cat(before, close(id(1))), bytes());
        // ... so a clock set back afterwards still refuses, and writes nothing more.
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 3600, 1, T + 10));
        assertEquals(41 + 2 * 64, bytes().length);
        // Expiry applies to duplicates too.
        assertEquals(ErrorCode.EXPIRED, result(g, 1, T, T + 3600, 1, T + 3600));
        assertEquals(ErrorCode.NOT_YET_VALID, result(g, 2, T + 601, T + 3600, 1, T));
    }

    @Test
    void windowZeroTurnsDuplicatesOff() throws Exception {
        ReplayGuard g = new ReplayGuard(dir, 16, 0);
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 1, T, T + 3600, 1, T));
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 3600, 1, T));
    }

    @Test
    void laterAcceptanceKeepsAClockSetBackFromReopeningTheWindow() throws Exception {
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 1, T, T + 7200, 1, T));
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 2, T + 1000, T + 7200, 2, T + 1000));
        // The device clock is set back to T + 10: A = T + 1000 makes T - acceptedAt >= D.
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 7200, 1, T + 10));
    }

    @Test
    void aClockAheadCannotPruneWhatRealTimeHasNotPassed() throws Exception {
        // J = 1: every record is followed by a compaction, so pruning runs at each check.
        ReplayGuard g = new ReplayGuard(dir, 16, 0, 1);
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 1, T, T + 3600, 1, T));           // A, ttl 1 h
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 2, T + 1, T + 8000, 2, T + 7200)); // B, clock 2 h ahead
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 3600, 1, T + 2));              // A again, real time
    }

    @Test
    void rule1RefusesAClockTheStateCannotHold() throws Exception {
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        long limit = TWO_53 - 600 - 2_419_200;
        assertEquals(ErrorCode.INVALID_ARGUMENT, result(g, 1, limit, limit + 3600, 1, limit));
        assertEquals(ErrorCode.INVALID_ARGUMENT, result(g, 1, limit + 5, limit + 3600, 1, limit + 10));
        assertTrue(!Files.exists(file()));
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 1, limit - 1, limit + 3600, 1, limit - 1));
        // An envelope no opener accepts (issued after it expires, or living longer than 28 days) is not recorded.
        assertEquals(ErrorCode.INVALID_ARGUMENT, result(g, 2, T + 10, T + 5, 2, T));
        assertEquals(ErrorCode.INVALID_ARGUMENT, result(g, 2, T, T + 600 + 2_419_201, 2, T));
    }

    @Test
    void rule4RefusesNothingWhileNothingWasEvicted() throws Exception {
        // §5.1 rule 4: "W > 0 and issuedAt <= W: replayed ... W = 0 means nothing was evicted". An empty state has
        // W = 0, so an envelope issued at 0 (a 1970 clock: expiresAt 86,400, device time 100) passes rules 1-4.
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 1, 0, 86_400, 1, 100));
        assertEquals(0, ByteBuffer.wrap(bytes()).getLong(5)); // W in the header stays 0
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 2, 0, 86_400, 2, 100));
        assertEquals(ReplayGuard.Outcome.DUPLICATE, result(g, 1, 0, 86_400, 1, 100));
    }

    @Test
    void evictionRefusesOnlyWhatWasIssuedNoLaterThanTheEvicted() throws Exception {
        ReplayGuard g = new ReplayGuard(dir, 4, 600, 1);
        for (int i = 0; i < 5; i++) {
            assertEquals(ReplayGuard.Outcome.FRESH, result(g, i, T + i, T + 86_400, i, T + 10));
        }
        // id 0 (issued T) was evicted: W = T. A never-seen id issued at T is refused, one issued later opens.
        assertEquals(ErrorCode.REPLAYED, result(g, 100, T, T + 86_400, 100, T + 10));
        assertEquals(ErrorCode.REPLAYED, result(g, 0, T, T + 86_400, 0, T + 10));
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 101, T + 1, T + 86_400, 101, T + 10));
        ByteBuffer b = ByteBuffer.wrap(bytes());
        assertEquals(T + 1, b.getLong(5)); // W raised to the largest evicted issuedAt (id 1 evicted now)
        assertEquals(4, b.getInt(37));
        assertEquals(41 + 4 * 56, b.capacity());
    }

    @Test
    void prunedThroughIsTheLargestExpiresAtDropped() throws Exception {
        ReplayGuard g = new ReplayGuard(dir, 16, 0, 1);
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 1, T, T + 100, 1, T));
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 2, T, T + 200, 2, T));
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 3, T, T + 5000, 3, T));
        // At T + 1000 (L = T + 1000) compaction prunes ids 1 and 2: P = T + 200, not B = T + 1000 (version 3).
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 4, T + 1000, T + 3000, 4, T + 1000));
        ReplayGuard.State s = g.inspect();
        assertEquals(T + 200, s.p);
        assertEquals(2, s.entries.size());
        // The clock goes back to T + 250: a never-seen id expiring at T + 300 opens (version 3 refused it) ...
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 5, T + 240, T + 300, 5, T + 250));
        // ... and the pruned ids, or anything expiring by P, stay refused.
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 100, 1, T + 50));
        assertEquals(ErrorCode.REPLAYED, result(g, 2, T, T + 200, 2, T + 50));
        assertEquals(ErrorCode.REPLAYED, result(g, 6, T + 100, T + 150, 6, T + 120));
        assertEquals(T + 200, g.inspect().p);
    }

    @Test
    void theStrideKeepsOneEnvelopeFromYearsAheadFromLockingTheStateOut() throws Exception {
        long fiveYears = 5 * 365 * DAY;
        // J = 1: compaction (pruning) after every record, the harshest case.
        ReplayGuard g = new ReplayGuard(dir, 16, 600, 1);
        // A state with A = T0 = T, holding an id that expires in 10 days.
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 1, T, T + 10 * DAY, 1, T));
        assertEquals(T, g.inspect().a);
        // One authentic envelope issued five years ahead, opened while the device clock is equally wrong.
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 2, T + fiveYears, T + fiveYears + 3600, 2, T + fiveYears));
        ReplayGuard.State s = g.inspect();
        // The stride: L and A moved by at most a day. Without it, L = A = T0 + 5 years, the compaction at that
        // check used B = min(now, L) = T0 + 5 years, pruned id 1 and set P = T0 + 10 days, and the normal message
        // below (expiresAt T0 + 2 h <= P) was refused as replayed; version 3 (P = B) refused it for five years.
        assertTrue(s.l <= T + DAY, "L = " + s.l);
        assertTrue(s.a <= T + DAY, "A = " + s.a);
        assertEquals(T + DAY, s.l);
        assertEquals(T + DAY, s.a);
        assertEquals(0, s.p);
        assertEquals(2, s.entries.size());
        // The clock is fixed: back at T0 + 1 h, a normal message opens.
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 3, T + 3600, T + 7200, 3, T + 3600));
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 10 * DAY, 9, T + 3600));
        s = g.inspect();
        assertTrue(s.p <= T + DAY, "P = " + s.p);
        assertTrue(s.l <= T + DAY && s.a <= T + DAY);
        // Later normal messages keep opening; the five-years-ahead id stays refused.
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 4, T + 7000, T + 9000, 4, T + 7000));
        assertEquals(ErrorCode.REPLAYED, result(g, 2, T + fiveYears, T + fiveYears + 3600, 9, T + fiveYears));
    }

    @Test
    void theStrideIsAppliedWhenTheJournalIsRead() throws Exception {
        // A = 0 (nothing accepted): no bound; then each add moves L and A at most a day past the previous A.
        byte[] f = cat(header(4, 0, 0, 0, 0, 0),
            add(id(1), T, T + 3600, T, NONE),                                   // L = T, A = T
            add(id(2), T + 10 * DAY, T + 10 * DAY + 60, T + 10 * DAY, NONE),    // L = A = T + 1 day
            add(id(3), T + 100, T + 3600, T + 200, NONE));                      // unchanged (below)
        Files.write(file(), f);
        ReplayGuard.State s = new ReplayGuard(dir, 16, 600).inspect();
        assertEquals(T + DAY, s.l);
        assertEquals(T + DAY, s.a);
        assertEquals(3, s.journalRecords);
        assertEquals(0, s.snapshotEntries);
        // L + 600 bounds A: an acceptance far ahead of the sender's clock moves A to L + 600 only.
        Files.write(file(), cat(header(4, 0, 0, T, T, 0), add(id(1), T + 10, T + 3600, T + 5000, NONE)));
        s = new ReplayGuard(dir, 16, 600).inspect();
        assertEquals(T + 10, s.l);
        assertEquals(T + 610, s.a);
    }

    // ---- Reading hand-built version 4 files (5.4) ----

    @Test
    void aHandBuiltSnapshotAndJournalAreRead() throws Exception {
        Files.write(file(), base());
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        ReplayGuard.State s = g.inspect();
        assertEquals(2, s.snapshotEntries);
        assertEquals(3, s.journalRecords);
        assertEquals(4, s.entries.size());
        assertEquals(T + 10, s.l);
        assertEquals(T + 10, s.a);
        // id1 was closed by the journal: an exact copy inside its window is replayed, not a duplicate.
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 7200, 1, T + 20));
        // id2 has no digest: replayed.
        assertEquals(ErrorCode.REPLAYED, result(g, 2, T, T + 7200, 2, T + 20));
        // id3 and id4 came from the journal with digests: exact copies are duplicates, others replayed.
        assertEquals(ReplayGuard.Outcome.DUPLICATE, result(g, 3, T + 5, T + 7200, 3, T + 20));
        assertEquals(ReplayGuard.Outcome.DUPLICATE, result(g, 4, T + 10, T + 7200, 4, T + 20));
        assertEquals(ErrorCode.REPLAYED, result(g, 3, T + 5, T + 7200, 4, T + 20));
        assertArrayEquals(base(), bytes());
        // A new id: exactly one record appended.
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 5, T + 20, T + 7200, 5, T + 20));
        assertArrayEquals(cat(base(), add(id(5), T + 20, T + 7200, T + 20, digest(5))), bytes());
        // id3's window passes (T = max(now, A) - acceptedAt >= 600): replayed and closed by a record.
        assertEquals(ErrorCode.REPLAYED, result(g, 3, T + 5, T + 7200, 3, T + 605));
        assertArrayEquals(cat(base(), add(id(5), T + 20, T + 7200, T + 20, digest(5)), close(id(3))), bytes());
        assertEquals(ErrorCode.REPLAYED, result(g, 3, T + 5, T + 7200, 3, T + 30));
    }

    @Test
    void everythingAWriterNeverWritesIsRefusedAndLeftUntouched() throws Exception {
        byte[] b = base();
        int e0 = 41;
        int e1 = 41 + 56;
        int r0 = 41 + 112;
        int r2 = r0 + 128;
        Map<String, byte[]> bad = new LinkedHashMap<>();
        bad.put("bad magic", with(b, 0, (byte) 'X'));
        bad.put("version 5", with(b, 4, (byte) 5));
        bad.put("version 0", with(b, 4, (byte) 0));
        bad.put("shorter than the header", Arrays.copyOf(b, 40));
        bad.put("only the magic", Arrays.copyOf(b, 5));
        bad.put("empty file", new byte[0]);
        bad.put("count beyond the length", cat(header(4, 0, 0, T, T, 10), SNAP1, SNAP2, ADD3, CLOSE1, ADD4));
        bad.put("snapshot cut short", cat(header(4, 0, 0, T, T, 2), SNAP1, Arrays.copyOf(SNAP2, 30)));
        for (int field = 0; field < 4; field++) {
            bad.put("header time " + field + " = 2^53", withLong(b, 5 + 8 * field, TWO_53));
            bad.put("header time " + field + " = 2^64 - 1", withLong(b, 5 + 8 * field, -1L));
        }
        bad.put("entry expiresAt = 2^53", withLong(b, e0 + 24, TWO_53));
        bad.put("entry issuedAt = expiresAt = 2^53", withLong(withLong(b, e0 + 16, TWO_53), e0 + 24, TWO_53));
        bad.put("entry acceptedAt = 2^53", withLong(b, e1 + 32, TWO_53));
        bad.put("entry issued after it expires", withLong(b, e1 + 16, T + 7201));
        bad.put("snapshot unsorted", cat(HEAD, SNAP2, SNAP1, ADD3, CLOSE1, ADD4));
        bad.put("snapshot id twice", cat(HEAD, SNAP1, entry(id(1), T, T + 7200, T, NONE), ADD3, ADD4));
        bad.put("bad check, first of three records", cat(HEAD, SNAP1, SNAP2, badCheck(ADD3), CLOSE1, ADD4));
        bad.put("bad check, middle record", cat(HEAD, SNAP1, SNAP2, ADD3, badCheck(CLOSE1), ADD4));
        bad.put("bad check, not last, torn tail after", cat(HEAD, SNAP1, SNAP2, badCheck(ADD3), ADD4, new byte[10]));
        bad.put("kind 0", cat(HEAD, SNAP1, SNAP2, ADD3, sealed(with(CLOSE1, 0, (byte) 0))));
        bad.put("kind 3 (last record, correct check)", cat(HEAD, SNAP1, SNAP2, ADD3, sealed(with(CLOSE1, 0, (byte) 3))));
        bad.put("kind 0x81", cat(HEAD, SNAP1, SNAP2, sealed(with(ADD3, 0, (byte) 0x81))));
        for (int i = 1; i <= 3; i++) {
            bad.put("reserved byte " + i + " of an add", cat(HEAD, SNAP1, SNAP2, sealed(with(ADD3, i, (byte) 1))));
        }
        for (int i : new int[] {24, 40, 63}) {
            bad.put("unused byte " + i + " of a close", cat(HEAD, SNAP1, SNAP2, ADD3, sealed(with(CLOSE1, i, (byte) 1))));
        }
        bad.put("add of an id in the snapshot", cat(HEAD, SNAP1, SNAP2, add(id(2), T, T + 60, T, NONE)));
        bad.put("add of an id added before", cat(HEAD, SNAP1, SNAP2, ADD3, add(id(3), T, T + 60, T, NONE)));
        bad.put("add with issuedAt > expiresAt", cat(HEAD, SNAP1, SNAP2, add(id(5), T + 61, T + 60, T, NONE)));
        bad.put("add with issuedAt = 2^53", cat(HEAD, SNAP1, SNAP2, add(id(5), TWO_53, TWO_53, T, NONE)));
        bad.put("add with expiresAt = 2^53", cat(HEAD, SNAP1, SNAP2, add(id(5), T, TWO_53, T, NONE)));
        bad.put("add with acceptedAt = 2^53", cat(HEAD, SNAP1, SNAP2, add(id(5), T, T + 60, TWO_53, NONE)));
        bad.put("close of an absent id", cat(HEAD, SNAP1, SNAP2, close(id(9))));
        bad.put("close of an entry without digest", cat(HEAD, SNAP1, SNAP2, close(id(2))));
        bad.put("close of a journal entry without digest", cat(HEAD, SNAP1, SNAP2, add(id(5), T, T + 60, T, NONE), close(id(5))));
        bad.put("close twice", cat(HEAD, SNAP1, SNAP2, CLOSE1, close(id(1))));
        bad.put("close of a journal entry twice", cat(HEAD, SNAP1, SNAP2, ADD3, close(id(3)), close(id(3))));
        bad.put("larger than 41 + 56 * (capacity + 1) + 1 MiB", cat(b, new byte[41 + 56 * 17 + 1_048_576 + 1 - b.length]));
        // Older versions: the snapshot rules too (5.4.4).
        byte[] v3 = cat(header(3, 0, 0, T, T, 2), SNAP1, SNAP2);
        bad.put("v3 unsorted", cat(header(3, 0, 0, T, T, 2), SNAP2, SNAP1));
        bad.put("v3 id twice", cat(header(3, 0, 0, T, T, 2), SNAP1, SNAP1));
        bad.put("v3 header time 2^53", withLong(v3, 21, TWO_53));
        bad.put("v3 acceptedAt 2^53", withLong(v3, e0 + 32, TWO_53));
        bad.put("v3 with a journal record", cat(v3, ADD3));
        bad.put("v3 one byte short", Arrays.copyOf(v3, v3.length - 1));
        bad.put("v3 issued after it expires", withLong(v3, e0 + 16, T + 7201));
        bad.put("v2 id twice", v2(0, 0, T, new int[] {1, 1}, T, T + 60));
        bad.put("v2 expiresAt 2^53", v2(0, 0, T, new int[] {1}, T, TWO_53));
        bad.put("v2 issued after it expires", v2(0, 0, T, new int[] {1}, T + 61, T + 60));
        bad.put("v2 L 2^53", v2(0, 0, TWO_53, new int[] {1}, T, T + 60));
        bad.put("v1 id twice", v1(0, new int[] {2, 2}, T + 60));
        bad.put("v1 expiresAt 2^53", v1(0, new int[] {2}, TWO_53));
        bad.put("v1 trailing byte", cat(v1(0, new int[] {2}, T + 60), new byte[1]));
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        for (Map.Entry<String, byte[]> c : bad.entrySet()) {
            Files.write(file(), c.getValue());
            assertEquals(ErrorCode.KEY_STORE_CORRUPT, result(g, 7, T + 30, T + 3600, 7, T + 30), c.getKey());
            assertArrayEquals(c.getValue(), bytes(), c.getKey() + ": the file must be left untouched");
            assertEquals(ErrorCode.KEY_STORE_CORRUPT, result(g, 1, T, T + 7200, 1, T + 30), c.getKey());
            assertArrayEquals(c.getValue(), bytes(), c.getKey() + ": the file must be left untouched");
        }
        // The error names what and where.
        Files.write(file(), cat(HEAD, SNAP1, SNAP2, ADD3, badCheck(CLOSE1), ADD4));
        SealedPushException e = assertThrows(SealedPushException.class, () -> g.check(id(7), T + 30, T + 3600, digest(7), T + 30));
        assertTrue(e.getMessage().contains("journal record 1 (offset 217)"), e.getMessage());
        g.reset();
        assertArrayEquals(header(4, 0, 0, 0, 0, 0), bytes());
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 1, T, T + 3600, 1, T));
    }

    @Test
    void aTornTailIsIgnoredAndTruncatedByTheNextAppend() throws Exception {
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        byte[] b = base();
        byte[] add7 = add(id(7), T + 30, T + 3600, T + 30, digest(7));
        byte[] add8 = add(id(8), T + 40, T + 3600, T + 40, digest(8));
        List<byte[]> torn = new ArrayList<>();
        torn.add(cat(b, Arrays.copyOf(add8, 30)));                       // a partial record
        torn.add(cat(b, badCheck(add8)));                                // a last complete record with a bad check
        torn.add(cat(b, new byte[64]));                                  // zeros (length extended, data lost)
        torn.add(cat(b, badCheck(add8), Arrays.copyOf(add8, 63)));       // both
        torn.add(cat(b, badCheck(sealed(with(add8, 0, (byte) 9)))));      // bad check: its kind is not looked at
        for (byte[] t : torn) {
            Files.write(file(), t);
            // Refusals and duplicates write nothing: the torn tail stays.
            assertEquals(ErrorCode.REPLAYED, result(g, 2, T, T + 7200, 2, T + 30));
            assertEquals(ReplayGuard.Outcome.DUPLICATE, result(g, 4, T + 10, T + 7200, 4, T + 30));
            assertArrayEquals(t, bytes());
            assertEquals(3, g.inspect().journalRecords);
            // The id of the damaged record was never acknowledged: it opens, and the next append truncates first.
            assertEquals(ReplayGuard.Outcome.FRESH, result(g, 8, T + 40, T + 3600, 8, T + 40));
            assertArrayEquals(cat(b, add8), bytes());
            assertEquals(ReplayGuard.Outcome.FRESH, result(g, 7, T + 30, T + 3600, 7, T + 40));
            assertArrayEquals(cat(b, add8, add(id(7), T + 30, T + 3600, T + 40, digest(7))), bytes());
        }
        // A torn tail on a snapshot with no journal at all.
        Files.write(file(), cat(HEAD, SNAP1, SNAP2, Arrays.copyOf(add7, 12)));
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 7, T + 30, T + 3600, 7, T + 30));
        assertArrayEquals(cat(HEAD, SNAP1, SNAP2, add7), bytes());
    }

    // ---- Older versions (5.4.4) ----

    static byte[] v2(long w, long p, long l, int[] ids, long issued, long expires) {
        ByteBuffer b = ByteBuffer.allocate(33 + 32 * ids.length);
        b.put(new byte[] {'S', 'P', 'R', 'G', 2}).putLong(w).putLong(p).putLong(l).putInt(ids.length);
        for (int i : ids) {
            b.put(id(i)).putLong(issued).putLong(expires);
        }
        return b.array();
    }

    static byte[] v1(long watermark, int[] ids, long expires) {
        ByteBuffer b = ByteBuffer.allocate(17 + 24 * ids.length);
        b.put(new byte[] {'S', 'P', 'R', 'G', 1}).putLong(watermark).putInt(ids.length);
        for (int i : ids) {
            b.put(id(i)).putLong(expires);
        }
        return b.array();
    }

    @Test
    void version3IsMigratedToAVersion4Snapshot() throws Exception {
        byte[] v3 = cat(header(3, 5, 6, T, T, 2), SNAP1, SNAP2);
        Files.write(file(), v3);
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        assertEquals(ReplayGuard.Outcome.DUPLICATE, result(g, 1, T, T + 7200, 1, T + 1));
        // The same state as a version 4 snapshot, written before the check (which wrote nothing itself).
        assertArrayEquals(with(v3, 4, (byte) 4), bytes());
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 3, T, T + 7200, 3, T + 1));
        assertArrayEquals(cat(with(v3, 4, (byte) 4), add(id(3), T, T + 7200, T + 1, digest(3))), bytes());
    }

    @Test
    void version2IsMigratedSortedAndItsIdsStayRefused() throws Exception {
        Files.write(file(), v2(0, 0, T, new int[] {2, 1}, T, T + 3600));
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 3600, 1, T + 1));
        assertArrayEquals(cat(header(4, 0, 0, T, 0, 2), entry(id(1), T, T + 3600, 0, NONE), entry(id(2), T, T + 3600, 0, NONE)),
            bytes());
        assertEquals(ErrorCode.REPLAYED, result(g, 2, T, T + 3600, 1, T + 1));
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 3, T, T + 3600, 3, T + 1));
        assertEquals(41 + 2 * 56 + 64, bytes().length);
    }

    @Test
    void version1IsMigratedWithIssuedAtBoundedByNow() throws Exception {
        // Watermark above now: W = now; entries issuedAt = min(expiresAt, now); P = L = A = 0.
        Files.write(file(), v1(T + 1_000_000, new int[] {2, 1}, T + 3600));
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 3600, 1, T + 1));
        assertArrayEquals(cat(header(4, T + 1, 0, 0, 0, 2), entry(id(1), T + 1, T + 3600, 0, NONE),
            entry(id(2), T + 1, T + 3600, 0, NONE)), bytes());
        assertEquals(ErrorCode.REPLAYED, result(g, 5, T + 1, T + 3600, 5, T + 1));   // issued no later than W
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 5, T + 2, T + 3600, 5, T + 2));
        // Watermark at or below now: W = 0.
        Files.write(file(), v1(T, new int[] {1}, T + 3600));
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 3600, 1, T + 1));
        assertArrayEquals(cat(header(4, 0, 0, 0, 0, 1), entry(id(1), T + 1, T + 3600, 0, NONE)), bytes());
    }

    @Test
    void aVersion1WatermarkOfAnyValueIsMigrated() throws Exception {
        // §5.4.4: a version 1 watermark is a uint64 of "any value: it is only compared with now", and W = now when it
        // is above now. "SPRG" 01, watermark, count 0: 17 bytes, no check field in version 1.
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        for (long watermark : new long[] {TWO_53, 1L << 63, -1L /* 2^64 - 1 */}) {
            String name = "watermark " + Long.toUnsignedString(watermark);
            byte[] v1 = v1(watermark, new int[0], 0);
            assertEquals(17, v1.length);
            Files.write(file(), v1);
            // Migrated to W = now = T before the check, which rule 4 then refuses: issued at T <= W.
            assertEquals(ErrorCode.REPLAYED, result(g, 5, T, T + 3600, 5, T), name);
            assertArrayEquals(header(4, T, 0, 0, 0, 0), bytes(), name);
            // Later: an envelope issued at or before W stays refused, one issued after it opens.
            assertEquals(ErrorCode.REPLAYED, result(g, 6, T, T + 3600, 6, T + 100), name);
            assertEquals(ReplayGuard.Outcome.FRESH, result(g, 7, T + 1, T + 3600, 7, T + 100), name);
        }
    }

    // ---- Compaction and what it costs (5.4.3) ----

    /** A full state: {@code n} ids issued before T, expiring in 10 days, written as a hand-built snapshot. */
    private void fill(int n) throws Exception {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        o.write(header(4, 0, 0, T - 1, T - 1, n));
        for (int i = 0; i < n; i++) {
            byte[] id = id(i);
            id[0] = 0x20;
            o.write(entry(id, T - 200_000 + i, T + 10 * DAY, T - 200_000 + i, NONE));
        }
        Files.write(file(), o.toByteArray());
    }

    private Object fresh(ReplayGuard g, int n) {
        byte[] id = id(n);
        id[0] = 0x30;
        return result(g, id, T + n, T + 3600 + n, digest(n), T + n);
    }

    @Test
    void atCapacityEachIdWritesOneRecordPlusAShareOfASnapshot() throws Exception {
        int capacity = ReplayGuard.DEFAULT_CAPACITY;
        fill(capacity);
        long snapshot = 41 + 56L * capacity;
        assertEquals(snapshot, Files.size(file()));
        ReplayGuard g = new ReplayGuard(dir, capacity, 600);
        long written = 0;
        int compactions = 0;
        int messages = 3 * 1024;
        Object key = Files.readAttributes(file(), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
        long length = snapshot;
        for (int i = 1; i <= messages; i++) {
            assertEquals(ReplayGuard.Outcome.FRESH, fresh(g, i));
            BasicFileAttributes a = Files.readAttributes(file(), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (a.fileKey().equals(key)) {
                assertEquals(length + 64, a.size(), "check " + i + " appends one record");
                written += 64;
            } else {
                // Replaced by a new snapshot: the record went to the old file, then the whole snapshot was written.
                compactions++;
                written += 64 + a.size();
                assertEquals(0, i % 1024, "compaction at " + i);
                assertEquals(snapshot, a.size(), "the file shrinks back to 41 + 56n");
                key = a.fileKey();
            }
            length = a.size();
            if (i % 1024 != 0) {
                assertEquals(snapshot + 64L * (i % 1024), length);
            }
        }
        assertEquals(3, compactions);
        long perMessage = written / messages;
        assertTrue(perMessage <= 4096, "written per message: " + perMessage + " bytes");
        // 64 + 917,545 / 1,024 = 960 bytes, as §5.4.3 says.
        assertEquals(960, perMessage);
        ReplayGuard.State s = g.inspect();
        assertEquals(capacity, s.entries.size());
        // The evicted were the oldest pre-filled ids: W is the 3,072nd issuedAt of them.
        assertEquals(T - 200_000 + messages - 1, s.w);
        assertEquals(ErrorCode.REPLAYED, fresh(g, 1));
        byte[] old = id(5);
        old[0] = 0x20;
        assertEquals(ErrorCode.REPLAYED, result(g, old, T - 200_000 + 5, T + 10 * DAY, NONE, T + messages));
    }

    @Test
    void missingDirectoryIsUnavailableAndNotCreated() throws Exception {
        ReplayGuard g = new ReplayGuard(dir.resolve("missing"), 16, 600);
        assertEquals(ErrorCode.KEYS_UNAVAILABLE, result(g, 1, T, T + 3600, 1, T));
        assertEquals(false, Files.exists(dir.resolve("missing")));
    }

    @Test
    void aLinkInPlaceOfTheFileIsRefused() throws Exception {
        Files.write(dir.resolve("elsewhere"), base());
        Files.createSymbolicLink(file(), dir.resolve("elsewhere"));
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        assertEquals(ErrorCode.KEY_STORE_CORRUPT, result(g, 7, T + 30, T + 3600, 7, T + 30));
        assertArrayEquals(base(), Files.readAllBytes(dir.resolve("elsewhere")));
    }
}
