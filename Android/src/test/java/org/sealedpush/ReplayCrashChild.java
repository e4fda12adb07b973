package org.sealedpush;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.SecureRandom;

/**
 * The child process of {@link ReplayCrashTests}: records fresh message ids in a loop, forever, and acknowledges each
 * on stdout ({@code ok <id hex> <seq>}, one write, flushed) right after its check returned. The parent kills it with
 * SIGKILL at random moments. Ids are random; {@code issuedAt = T0 + seq} grows with {@code seq}, which starts at the
 * argument (each run gets a range of its own), so an evicted id never shadows a fresh one.
 *
 * <p>Arguments: the key ring directory, the first seq. Exit status 2 and {@code error <code> <message>} if a check
 * fails: after a crash every check of a fresh id must still succeed.
 */
final class ReplayCrashChild {
    static final long T0 = 1_800_000_000L;
    static final long NOW = T0 + 1_000_000_000L;
    static final long EXPIRES = NOW + 3600;
    static final int CAPACITY = 200;
    static final int JOURNAL_LIMIT = 16;

    private ReplayCrashChild() {
    }

    static ReplayGuard guard(Path dir) throws SealedPushException {
        return new ReplayGuard(dir, CAPACITY, 0, JOURNAL_LIMIT);
    }

    public static void main(String[] args) throws Exception {
        Path dir = Paths.get(args[0]);
        long seq = Long.parseLong(args[1]);
        ReplayGuard g = guard(dir);
        SecureRandom random = new SecureRandom();
        PrintStream out = System.out;
        while (true) {
            byte[] id = new byte[16];
            random.nextBytes(id);
            try {
                ReplayGuard.Outcome o = g.check(id, T0 + seq, EXPIRES, new byte[16], NOW);
                if (o != ReplayGuard.Outcome.FRESH) {
                    throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "a fresh id gave " + o);
                }
            } catch (SealedPushException e) {
                out.write(("error " + e.code() + " " + e.getMessage() + "\n").getBytes(StandardCharsets.UTF_8));
                out.flush();
                System.exit(2);
            }
            out.write(("ok " + TestSupport.hex(id) + " " + seq + "\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            seq++;
        }
    }
}
