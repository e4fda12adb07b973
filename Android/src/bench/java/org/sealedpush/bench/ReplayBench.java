package org.sealedpush.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.sealedpush.EnvelopeOpener;
import org.sealedpush.OpenedEnvelope;
import org.sealedpush.RawDeviceKey;
import org.sealedpush.ReplayGuard;
import org.sealedpush.X25519;

/**
 * What the persisted replay guard adds to a notification, as the Swift benchmark measures it: wall time per
 * {@link ReplayGuard#check} (lock, read, validate, look up, append a record, {@code FileChannel.force}; a compaction
 * every 1,024 records) on an empty state and on a full one (16,384 ids, a 917,545-byte snapshot written here byte by
 * byte from {@code Specs/keyring-v1.md} §5, version 4), the mean over 2,048 consecutive checks of fresh ids with the
 * clock advancing one second per check (the two compactions paid in their share), and the bytes written per recorded
 * id (file-size deltas: +64 is an appended record, any other change a new snapshot of that size).
 *
 * <p>Only the public API: the checks take real {@link OpenedEnvelope}s, sealed by {@link BenchSealer} and opened
 * before the timing. The JIT is warmed up by the same 2 × 2,048 checks in other directories first. The Swift
 * benchmark runs the empty series, then the full one; here the two series (each consecutive in its own directory)
 * are interleaved check by check, so drift in the disk's flush latency cancels out of the ratio.
 */
final class ReplayBench {
    static final int CHECKS = 2 * ReplayGuard.DEFAULT_JOURNAL_LIMIT;
    static final int CAPACITY = ReplayGuard.DEFAULT_CAPACITY;
    private static final String FILE = "replay-v1.bin";
    private static final SecureRandom RANDOM = new SecureRandom();

    /** Mean wall time per check (ns) and bytes written per check, on the empty and on the full state. */
    static final class Result {
        double emptyNanos;
        double fullNanos;
        double emptyBytes;
        double fullBytes;
        /** Ids in the snapshot after the full run (header's count). */
        long fullCount;
    }

    private ReplayBench() {
    }

    static Result run() throws Exception {
        long base = System.currentTimeMillis() / 1000;
        List<OpenedEnvelope> envelopes = envelopes(base, 2 * CHECKS);
        List<OpenedEnvelope> first = envelopes.subList(0, CHECKS);
        List<OpenedEnvelope> second = envelopes.subList(CHECKS, 2 * CHECKS);
        long fullAt = base + CHECKS;
        byte[] fullState = specFile(CAPACITY, fullAt);
        measureIn(first, second, fullState, base); // warm-up, discarded
        return measureIn(first, second, fullState, base);
    }

    /**
     * Two fresh directories, one per state: the empty one (reset) and the full one (the spec-built file). Each guard
     * gets its own 2,048 consecutive checks, exactly as if it ran alone, but the two sequences are interleaved check
     * by check (alternating which goes first), so a drift of the disk's flush latency during the run hits both alike.
     */
    private static Result measureIn(List<OpenedEnvelope> first, List<OpenedEnvelope> second, byte[] fullState, long base)
        throws Exception {
        Path emptyDir = Files.createTempDirectory("sealedpush-replay-bench-empty");
        Path fullDir = Files.createTempDirectory("sealedpush-replay-bench-full");
        try {
            ReplayGuard empty = new ReplayGuard(emptyDir, CAPACITY, ReplayGuard.DEFAULT_DUPLICATE_WINDOW);
            ReplayGuard full = new ReplayGuard(fullDir, CAPACITY, ReplayGuard.DEFAULT_DUPLICATE_WINDOW);
            empty.reset();
            Files.write(fullDir.resolve(FILE), fullState);
            Series e = new Series(empty, emptyDir.resolve(FILE), first, base + 1);
            Series f = new Series(full, fullDir.resolve(FILE), second, base + CHECKS + 1);
            for (int i = 0; i < CHECKS; i++) {
                if (i % 2 == 0) {
                    e.next();
                    f.next();
                } else {
                    f.next();
                    e.next();
                }
            }
            Result r = new Result();
            r.emptyNanos = (double) e.nanos / CHECKS;
            r.emptyBytes = (double) e.written / CHECKS;
            r.fullNanos = (double) f.nanos / CHECKS;
            r.fullBytes = (double) f.written / CHECKS;
            byte[] after = Files.readAllBytes(fullDir.resolve(FILE));
            r.fullCount = ByteBuffer.wrap(after).getInt(37) & 0xffffffffL;
            OpenBench.check(after.length == 41 + 56 * r.fullCount, "the last check compacted: no journal left");
            OpenBench.check(r.fullCount == CAPACITY, "the full state holds " + CAPACITY + " ids after its checks, not " + r.fullCount);
            OpenedEnvelope last = second.get(second.size() - 1);
            OpenBench.check(full.check(last, last.issuedAt() + 1) == ReplayGuard.Outcome.DUPLICATE, "an exact copy is a duplicate");
            return r;
        } finally {
            HeapProbe.deleteTree(emptyDir);
            HeapProbe.deleteTree(fullDir);
        }
    }

    /** One guard's consecutive checks: each envelope at its issuedAt, the wall time and the bytes each wrote. */
    private static final class Series {
        final ReplayGuard guard;
        final Path file;
        final List<OpenedEnvelope> envelopes;
        long clock;
        int index;
        long size;
        long nanos;
        long written;

        Series(ReplayGuard guard, Path file, List<OpenedEnvelope> envelopes, long firstClock) throws IOException {
            this.guard = guard;
            this.file = file;
            this.envelopes = envelopes;
            this.clock = firstClock;
            this.size = size(file);
        }

        void next() throws Exception {
            OpenedEnvelope e = envelopes.get(index++);
            OpenBench.check(e.issuedAt() == clock, "the clock advances one second per check");
            long t0 = System.nanoTime();
            ReplayGuard.Outcome o = guard.check(e, clock);
            nanos += System.nanoTime() - t0;
            OpenBench.check(o == ReplayGuard.Outcome.FRESH, "a fresh id is FRESH");
            long now = size(file);
            written += now == size + 64 ? 64 : now; // +64: an appended record; else a new snapshot of that size
            size = now;
            clock++;
        }
    }

    private static long size(Path f) throws IOException {
        return Files.exists(f, LinkOption.NOFOLLOW_LINKS) ? Files.size(f) : 0;
    }

    /** {@code n} envelopes issued at base + 1, base + 2, … (ttl 1 h), each opened at its issuedAt. */
    private static List<OpenedEnvelope> envelopes(long base, int n) throws Exception {
        BenchSealer sealer = new BenchSealer(OpenBench.TOPIC);
        byte[][] device = X25519.generate();
        byte[] deviceKeyId = X25519.keyId(device[1]);
        RawDeviceKey key = new RawDeviceKey(device[0]);
        EnvelopeOpener opener = new EnvelopeOpener(OpenBench.TOPIC, id -> Arrays.equals(id, deviceKeyId) ? key : null,
            Collections.singletonList(sealer.serverPublic));
        byte[] content = "{\"title\":\"t\"}".getBytes(StandardCharsets.UTF_8);
        List<OpenedEnvelope> out = new ArrayList<>(n);
        for (int i = 1; i <= n; i++) {
            out.add(opener.openEnvelope(sealer.seal(content, device[1], base + i, 3600), base + i));
        }
        return out;
    }

    /**
     * A version 4 replay state (keyring-v1 §5) of {@code count} random ids issued (and accepted) in the minute before
     * {@code now} and expiring a day after it, sorted by id, no journal: "SPRG", 0x04, W = 0, P = 0, L = now,
     * A = now, count, then per entry id || issuedAt || expiresAt || acceptedAt || digest (the id reversed), all
     * big-endian.
     */
    static byte[] specFile(int count, long now) {
        byte[][] ids = new byte[count][];
        for (int i = 0; i < count; i++) {
            ids[i] = new byte[16];
            RANDOM.nextBytes(ids[i]);
        }
        Arrays.sort(ids, Arrays::compareUnsigned);
        for (int i = 1; i < count; i++) {
            OpenBench.check(Arrays.compareUnsigned(ids[i - 1], ids[i]) < 0, "random ids are distinct");
        }
        byte[] out = new byte[41 + 56 * count];
        int o = 0;
        for (byte m : "SPRG".getBytes(StandardCharsets.US_ASCII)) {
            out[o++] = m;
        }
        out[o++] = 4;
        o = be(out, o, 0, 8); // W
        o = be(out, o, 0, 8); // P
        o = be(out, o, now, 8); // L
        o = be(out, o, now, 8); // A
        o = be(out, o, count, 4);
        for (int i = 0; i < count; i++) {
            long issued = now - 60 + (long) i * 60 / count;
            System.arraycopy(ids[i], 0, out, o, 16);
            o += 16;
            o = be(out, o, issued, 8);
            o = be(out, o, now + 86_400, 8);
            o = be(out, o, issued, 8);
            for (int k = 0; k < 16; k++) {
                out[o++] = ids[i][15 - k];
            }
        }
        OpenBench.check(o == out.length, "the state file's length");
        return out;
    }

    /** Writes the low {@code size} bytes of {@code v} big-endian at {@code o}; returns the offset after them. */
    private static int be(byte[] b, int o, long v, int size) {
        for (int i = 0; i < size; i++) {
            b[o + i] = (byte) (v >>> (8 * (size - 1 - i)));
        }
        return o + size;
    }
}
