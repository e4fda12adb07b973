package org.sealedpush;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 while recording (keyring-v1 §5.4): a child process ({@link ReplayCrashChild}) records fresh ids with a
 * small journal limit (J = 16, so compactions happen often) and a small capacity (200, so eviction happens), and is
 * killed with SIGKILL at random moments until 1,000 checks were acknowledged. Afterwards the file must parse, a
 * fresh id must open, and every acknowledged id must be refused (in the set, or evicted and refused by rule 4): a
 * check that returned had its record on stable storage, and no crash can lose it or corrupt the file.
 */
final class ReplayCrashTests {
    @TempDir
    Path dir;

    private static String location(Class<?> c) throws Exception {
        return Paths.get(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }

    @Test
    void noAcknowledgedIdOpensAgainAfterKillNineAtRandomMoments() throws Exception {
        // Under the JUnit console launcher java.class.path is the launcher's jar only: add where the classes are.
        String cp = String.join(File.pathSeparator, System.getProperty("java.class.path"), location(ReplayGuard.class),
            location(ReplayCrashChild.class));
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        long seed = System.nanoTime();
        Random random = new Random(seed);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(50);
        List<byte[]> ids = new ArrayList<>();
        List<Long> seqs = new ArrayList<>();
        int runs = 0;
        int killed = 0;
        while (ids.size() < 1000) {
            if (System.nanoTime() > deadline) {
                fail("only " + ids.size() + " checks acknowledged in 50 s (" + runs + " runs, seed " + seed + ")");
            }
            runs++;
            Path err = dir.resolve("child-" + runs + ".err");
            Process p = new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-cp", cp,
                ReplayCrashChild.class.getName(), dir.toString(), Long.toString(runs * 100_000L))
                .redirectError(err.toFile()).start();
            List<String> lines = Collections.synchronizedList(new ArrayList<>());
            Object first = new Object();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        lines.add(line);
                        synchronized (first) {
                            first.notifyAll();
                        }
                    }
                } catch (java.io.IOException ignored) {
                    // the child died
                }
                synchronized (first) {
                    first.notifyAll();
                }
            });
            reader.start();
            // Kill it 0-30 ms after its first acknowledgement, somewhere in the check loop.
            synchronized (first) {
                long wait = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (lines.isEmpty() && p.isAlive() && System.nanoTime() < wait) {
                    first.wait(100);
                }
            }
            Thread.sleep(random.nextInt(31));
            if (p.isAlive()) {
                p.destroyForcibly();
                killed++;
            }
            p.waitFor();
            reader.join(10_000);
            synchronized (lines) {
                for (String line : lines) {
                    String[] f = line.split(" ");
                    if (f.length == 3 && f[0].equals("ok") && f[1].length() == 32) {
                        ids.add(TestSupport.hex(f[1]));
                        seqs.add(Long.parseLong(f[2]));
                    } else {
                        fail("child run " + runs + " (seed " + seed + "): " + line + "\n" + new String(Files.readAllBytes(err), StandardCharsets.UTF_8));
                    }
                }
            }
        }
        System.out.println("replay crash test: " + ids.size() + " acknowledged checks, " + runs + " runs, " + killed + " killed (seed " + seed + ")");
        assertTrue(killed > 5, "the child was killed " + killed + " times");
        ReplayGuard g = ReplayCrashChild.guard(dir);
        ReplayGuard.State s = g.inspect();
        assertTrue(s.entries.size() <= ReplayCrashChild.CAPACITY + ReplayCrashChild.JOURNAL_LIMIT, "entries " + s.entries.size());
        Set<String> distinct = new LinkedHashSet<>();
        for (int i = 0; i < ids.size(); i++) {
            assertTrue(distinct.add(TestSupport.hex(ids.get(i))), "an id acknowledged twice");
            try {
                g.check(ids.get(i), ReplayCrashChild.T0 + seqs.get(i), ReplayCrashChild.EXPIRES, new byte[16], ReplayCrashChild.NOW);
                fail("acknowledged id " + i + " (seq " + seqs.get(i) + ", seed " + seed + ") opened again");
            } catch (SealedPushException e) {
                assertEquals(ErrorCode.REPLAYED, e.code(), e.getMessage());
            }
        }
        byte[] fresh = new byte[16];
        random.nextBytes(fresh);
        assertEquals(ReplayGuard.Outcome.FRESH, g.check(fresh, ReplayCrashChild.T0 + (runs + 1) * 100_000L, ReplayCrashChild.EXPIRES,
            new byte[16], ReplayCrashChild.NOW));
    }
}
