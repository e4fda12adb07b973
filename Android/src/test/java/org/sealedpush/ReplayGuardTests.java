package org.sealedpush;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The replay guard and duplicate rule of Specs/keyring-v1.md §5 and §5.5. */
final class ReplayGuardTests {
    @TempDir
    Path dir;

    static final long T = 1_800_000_000L;

    static byte[] id(int n) {
        byte[] b = new byte[16];
        b[15] = (byte) n;
        b[14] = (byte) (n >> 8);
        b[0] = 0x10;
        return b;
    }

    static byte[] digest(int n) {
        byte[] b = new byte[16];
        b[0] = (byte) (n + 1);
        return b;
    }

    private Object result(ReplayGuard g, int id, long issued, long expires, int digest, long now) {
        try {
            return g.check(id(id), issued, expires, digest(digest), now);
        } catch (SealedPushException e) {
            return e.code();
        }
    }

    @Test
    void freshThenReplayedAndDuplicates() throws Exception {
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 1, T, T + 3600, 1, T));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("replay-v1.bin"))));
        byte[] before = Files.readAllBytes(dir.resolve("replay-v1.bin"));
        // Exact copy inside the window: duplicate, nothing written.
        assertEquals(ReplayGuard.Outcome.DUPLICATE, result(g, 1, T, T + 3600, 1, T + 599));
        assertArrayEquals(before, Files.readAllBytes(dir.resolve("replay-v1.bin")));
        // A different envelope reusing the id: replayed.
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 3600, 2, T + 10));
        // Clock before the first acceptance: replayed.
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 3600, 1, T - 1));
        // After the window: replayed, and the entry is closed for good (clock set back afterwards still refuses).
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 3600, 1, T + 600));
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 3600, 1, T + 10));
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
        ReplayGuard g = new ReplayGuard(dir, 16, 0);
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 1, T, T + 3600, 1, T));           // A, ttl 1 h
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 2, T + 1, T + 8000, 2, T + 7200)); // B, clock 2 h ahead
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 3600, 1, T + 2));              // A again, real time
    }

    @Test
    void evictionRefusesOnlyWhatWasIssuedNoLaterThanTheEvicted() throws Exception {
        ReplayGuard g = new ReplayGuard(dir, 4, 600);
        for (int i = 0; i < 5; i++) {
            assertEquals(ReplayGuard.Outcome.FRESH, result(g, i, T + i, T + 86_400, i, T + 10));
        }
        // id 0 (issued T) was evicted: W = T. A never-seen id issued at T is refused, one issued later opens.
        assertEquals(ErrorCode.REPLAYED, result(g, 100, T, T + 86_400, 100, T + 10));
        assertEquals(ErrorCode.REPLAYED, result(g, 0, T, T + 86_400, 0, T + 10));
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 101, T + 1, T + 86_400, 101, T + 10));
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(dir.resolve("replay-v1.bin")));
        b.position(5);
        assertEquals(T + 1, b.getLong()); // W raised to the largest evicted issuedAt (id 1 evicted now)
        assertEquals(4, b.getInt(37));
    }

    @Test
    void corruptStateIsRefusedAndLeftUntouched() throws Exception {
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 1, T, T + 3600, 1, T));
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 2, T, T + 3600, 2, T));
        byte[] good = Files.readAllBytes(dir.resolve("replay-v1.bin"));
        byte[][] bad = new byte[4][];
        bad[0] = good.clone();
        bad[0][0] = 'X';
        bad[1] = java.util.Arrays.copyOf(good, good.length - 1);
        bad[2] = good.clone(); // entry 1 takes entry 0's id: a duplicated id
        System.arraycopy(good, 41, bad[2], 97, 16);
        bad[3] = good.clone(); // issuedAt > expiresAt in entry 0
        bad[3][41 + 16] = (byte) 0xff;
        for (byte[] b : bad) {
            Files.write(dir.resolve("replay-v1.bin"), b);
            assertEquals(ErrorCode.KEY_STORE_CORRUPT, result(g, 3, T, T + 3600, 3, T));
            assertArrayEquals(b, Files.readAllBytes(dir.resolve("replay-v1.bin")));
        }
        g.reset();
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 1, T, T + 3600, 1, T));
    }

    @Test
    void entriesOutOfOrderAreReadAndWrittenBackSorted() throws Exception {
        // keyring-v1 §5.4 lists what is corrupt; order is not on the list (the Swift reader takes any order).
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 1, T, T + 3600, 1, T));
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 2, T, T + 3600, 2, T));
        byte[] good = Files.readAllBytes(dir.resolve("replay-v1.bin"));
        byte[] swapped = good.clone();
        System.arraycopy(good, 41, swapped, 97, 56);
        System.arraycopy(good, 97, swapped, 41, 56);
        Files.write(dir.resolve("replay-v1.bin"), swapped);
        assertEquals(ReplayGuard.Outcome.DUPLICATE, result(g, 2, T, T + 3600, 2, T + 1));
        assertEquals(ReplayGuard.Outcome.DUPLICATE, result(g, 1, T, T + 3600, 1, T + 1));
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 3600, 9, T + 1));
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 3, T, T + 3600, 3, T + 1));
        byte[] after = Files.readAllBytes(dir.resolve("replay-v1.bin"));
        assertEquals(41 + 3 * 56, after.length);
        assertArrayEquals(id(1), java.util.Arrays.copyOfRange(after, 41, 57));
        assertArrayEquals(id(2), java.util.Arrays.copyOfRange(after, 97, 113));
        assertArrayEquals(id(3), java.util.Arrays.copyOfRange(after, 153, 169));
    }

    @Test
    void version2IsMigratedAndItsIdsStayRefused() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(33 + 32);
        b.put(new byte[] {'S', 'P', 'R', 'G', 2}).putLong(0).putLong(0).putLong(T).putInt(1);
        b.put(id(1)).putLong(T).putLong(T + 3600);
        Files.write(dir.resolve("replay-v1.bin"), b.array());
        ReplayGuard g = new ReplayGuard(dir, 16, 600);
        assertEquals(ErrorCode.REPLAYED, result(g, 1, T, T + 3600, 1, T + 1));
        byte[] now = Files.readAllBytes(dir.resolve("replay-v1.bin"));
        assertEquals(3, now[4]);
        assertEquals(41 + 56, now.length);
        assertEquals(ReplayGuard.Outcome.FRESH, result(g, 2, T, T + 3600, 2, T + 1));
    }

    @Test
    void missingDirectoryIsUnavailableAndNotCreated() throws Exception {
        ReplayGuard g = new ReplayGuard(dir.resolve("missing"), 16, 600);
        assertEquals(ErrorCode.KEYS_UNAVAILABLE, result(g, 1, T, T + 3600, 1, T));
        assertEquals(false, Files.exists(dir.resolve("missing")));
    }
}
