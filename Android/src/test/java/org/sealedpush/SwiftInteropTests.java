package org.sealedpush;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Both directions with the Swift side through the sealed-push CLI (system property sealedpush.cli, set from
 * SEALEDPUSH_CLI by Android/build.sh): content sealed by Swift to a Java-made key ring registration opens in Java to
 * the same canonical content; blobs encrypted by Swift decrypt in Java byte for byte.
 */
final class SwiftInteropTests {
    @TempDir
    Path dir;

    private static final String TOPIC = "com.example.sealedpush.android";
    private Path cli;

    @BeforeEach
    void needCli() {
        cli = TestSupport.cli();
        if (TestSupport.ci() && cli == null) {
            throw new AssertionError("CI: SEALEDPUSH_CLI must name the sealed-push binary");
        }
        assumeTrue(cli != null, "SEALEDPUSH_CLI not set: the Swift interop tests are skipped");
    }

    private String run(String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(cli.toString());
        cmd.addAll(Arrays.asList(args));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.PIPE).start();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread t = new Thread(() -> copy(p.getErrorStream(), err));
        t.start();
        byte[] out = readAll(p.getInputStream());
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("sealed-push timed out: " + cmd);
        }
        t.join();
        if (p.exitValue() != 0) {
            throw new AssertionError("sealed-push " + String.join(" ", args) + " failed: " + err.toString("UTF-8"));
        }
        return new String(out, StandardCharsets.UTF_8).trim();
    }

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        copy(in, o);
        return o.toByteArray();
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        byte[] b = new byte[8192];
        try {
            int n;
            while ((n = in.read(b)) > 0) {
                out.write(b, 0, n);
            }
        } catch (IOException ignored) {
            // process ended
        }
    }

    private static final String ALPHABET = "abcXYZ 019\"\\/\n\t\r\b\f\u0001\u001f\u007f\u00e9e\u0301\u4e2d\ud83d\ude00\u2028<>&'";

    static String randomString(Random r, int max) {
        StringBuilder sb = new StringBuilder();
        int n = r.nextInt(max + 1);
        for (int i = 0; i < n; i++) {
            int k = r.nextInt(ALPHABET.length());
            char c = ALPHABET.charAt(k);
            if (Character.isHighSurrogate(c)) {
                sb.append(c).append(ALPHABET.charAt(k + 1));
            } else if (!Character.isLowSurrogate(c)) {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    static double randomNumber(Random r) {
        switch (r.nextInt(6)) {
            case 0: return r.nextInt(2001) - 1000;
            case 1: return (r.nextBoolean() ? 1 : -1) * (double) (r.nextLong() & ((1L << 53) - 1));
            case 2: return r.nextDouble();
            case 3: return (r.nextDouble() - 0.5) * Math.pow(10, r.nextInt(40) - 20);
            case 4: return Double.longBitsToDouble(r.nextLong() & 0x7fefffffffffffffL) * (r.nextBoolean() ? 1 : -1);
            default: return r.nextInt(100) / 8.0;
        }
    }

    static Object randomValue(Random r, int depth) {
        int k = r.nextInt(depth > 3 ? 4 : 6);
        switch (k) {
            case 0: return randomString(r, 12);
            case 1: return randomNumber(r);
            case 2: return r.nextBoolean();
            case 3: return Json.NULL;
            case 4: {
                List<Object> l = new ArrayList<>();
                int n = r.nextInt(4);
                for (int i = 0; i < n; i++) {
                    l.add(randomValue(r, depth + 1));
                }
                return l;
            }
            default: {
                Map<String, Object> m = new LinkedHashMap<>();
                int n = r.nextInt(4);
                for (int i = 0; i < n; i++) {
                    m.put(randomString(r, 6), randomValue(r, depth + 1));
                }
                return m;
            }
        }
    }

    static Map<String, Object> randomContent(Random r) {
        Map<String, Object> c = new LinkedHashMap<>();
        if (r.nextBoolean()) {
            c.put("data", randomValue(r, 1));
        }
        if (r.nextInt(3) == 0) {
            c.put("x-" + randomString(r, 4), randomValue(r, 1));
        }
        c.put("body", randomString(r, 60));
        if (r.nextBoolean()) {
            c.put("title", randomString(r, 20));
        }
        if (r.nextInt(3) == 0) {
            c.put("subtitle", randomString(r, 10));
        }
        if (r.nextInt(3) == 0) {
            c.put("badge", (double) r.nextInt(Integer.MAX_VALUE));
        }
        if (r.nextInt(3) == 0) {
            c.put("sound", "default");
        }
        if (r.nextInt(3) == 0) {
            c.put("thread-id", randomString(r, 8));
        }
        if (r.nextInt(3) == 0) {
            c.put("category", randomString(r, 8));
        }
        if (r.nextInt(3) == 0) {
            c.put("interruption-level", new String[] {"passive", "active", "time-sensitive", "critical"}[r.nextInt(4)]);
        }
        if (r.nextInt(3) == 0) {
            c.put("relevance-score", r.nextDouble());
        }
        if (r.nextInt(4) == 0) {
            c.put("target-content-id", randomString(r, 8));
        }
        return c;
    }

    @Test
    void notificationsSealedBySwiftToAJavaRegistrationOpenToTheSameContent() throws Exception {
        int count = Integer.getInteger("sealedpush.interop.count", 500);
        long seed = Long.getLong("sealedpush.interop.seed", new Random().nextLong());
        Random r = new Random(seed);
        String serverPublic = run("keygen", "--out", dir.resolve("server.key").toString());
        Path ringDir = Files.createDirectory(dir.resolve("ring"));
        FileKeyRingStore store = new FileKeyRingStore(ringDir, false);
        store.create(System.currentTimeMillis() / 1000 - 100);
        store.rotate(System.currentTimeMillis() / 1000 - 50); // seal to the current key; the retired one stays
        @SuppressWarnings("unchecked")
        Map<String, Object> registration = (Map<String, Object>) Json.parse(
            store.registration(null, "token").toJson().getBytes(StandardCharsets.UTF_8), 4);
        String devicePublic = (String) registration.get("publicKey");
        EnvelopeOpener opener = new EnvelopeOpener(TOPIC, new FileKeyRingStore(ringDir, true),
            Collections.singletonList(X25519.parsePublicKeyText(serverPublic)));
        ExecutorService pool = Executors.newFixedThreadPool(3);
        List<Future<?>> jobs = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int i = 0; i < count; i++) {
            Map<String, Object> content = randomContent(r);
            String expected = Json.canonicalContent(content);
            // Feed Swift a non-canonical rendering (unknown member order, whitespace) half of the time.
            String given = r.nextBoolean() ? expected : " " + Json.canonical(content).replace(",", " ,\n ") + "\n";
            Path file = dir.resolve("content-" + i + ".json");
            Files.write(file, given.getBytes(StandardCharsets.UTF_8));
            jobs.add(pool.submit(() -> {
                String body = run("seal", "--server-key", dir.resolve("server.key").toString(), "--device-public",
                    devicePublic, "--topic", TOPIC, "--content", file.toString());
                OpenedEnvelope o = opener.openBody(body.getBytes(StandardCharsets.UTF_8), System.currentTimeMillis() / 1000);
                assertEquals(expected, o.content().canonicalJson(), "seed " + seed + " content " + given);
                return null;
            }));
        }
        for (Future<?> f : jobs) {
            f.get();
        }
        pool.shutdown();
        System.out.println("swift interop: " + count + " notifications sealed by Swift opened in Java in "
            + (System.nanoTime() - t0) / 1_000_000 + " ms (seed " + seed + ")");
    }

    @Test
    @SuppressWarnings("unchecked")
    void blobsEncryptedBySwiftDecryptInJavaByteForByte() throws Exception {
        String serverPublic = run("keygen", "--out", dir.resolve("server.key").toString());
        KeyRing ring = KeyRing.create(System.currentTimeMillis() / 1000);
        EnvelopeOpener opener = new EnvelopeOpener(TOPIC, ring, Collections.singletonList(X25519.parsePublicKeyText(serverPublic)));
        int[] sizes = {0, 1, 65_535, 65_536, 65_537, 131_071, 131_072, 131_073, 12_000_000};
        Random r = new Random(7);
        Path blobDir = dir.resolve("blobs");
        String prefix = "http://127.0.0.1:9/";
        int checked = 0;
        for (int start = 0; start < sizes.length; start += 5) {
            List<String> args = new ArrayList<>(Arrays.asList("seal", "--server-key", dir.resolve("server.key").toString(),
                "--device-public", X25519.publicKeyText(ring.current().publicKey()), "--topic", TOPIC, "--body", "files",
                "--blob-dir", blobDir.toString(), "--blob-url", prefix));
            List<byte[]> plains = new ArrayList<>();
            for (int i = start; i < Math.min(sizes.length, start + 5); i++) {
                byte[] p = new byte[sizes[i]];
                r.nextBytes(p);
                plains.add(p);
                Path f = dir.resolve("file-" + i + ".mp4");
                Files.write(f, p);
                args.addAll(Arrays.asList("--attach", f.toString(), "--attach-type", "video/mp4"));
            }
            String body = run(args.toArray(new String[0]));
            OpenedEnvelope o = opener.openBody(body.getBytes(StandardCharsets.UTF_8), System.currentTimeMillis() / 1000);
            List<Object> descriptors = o.content().attachments();
            assertEquals(plains.size(), descriptors.size());
            for (int k = 0; k < plains.size(); k++) {
                AttachmentDescriptor d = AttachmentDescriptor.parse((Map<String, Object>) descriptors.get(k));
                assertEquals(plains.get(k).length, d.blob().size());
                assertTrue(d.blob().url().startsWith(prefix));
                byte[] blob = Files.readAllBytes(blobDir.resolve(d.blob().url().substring(prefix.length())));
                assertEquals(BlobDecryptor.ciphertextSize(plains.get(k).length), blob.length);
                for (int[] split : new int[][] {{blob.length + 1}, {1 + r.nextInt(100_000), 1 + r.nextInt(7)}}) {
                    if (split[0] == 1 && blob.length > 1_000_000) {
                        continue;
                    }
                    assertArrayEquals(plains.get(k), BlobVectorTests.decrypt(d.blob().key(), d.blob().size(), d.type().cap(), blob, split),
                        "size " + plains.get(k).length);
                }
                checked++;
            }
        }
        assertEquals(sizes.length, checked);
    }

    @Test
    void oneKeyRingDirectoryIsSharedWithSwiftBothWays() throws Exception {
        long now = System.currentTimeMillis() / 1000;
        String serverPublic = run("keygen", "--out", dir.resolve("server.key").toString());
        Path ringDir = Files.createDirectory(dir.resolve("ring"), java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
            java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
        FileKeyRingStore store = new FileKeyRingStore(ringDir, false);
        store.create(now - 100);
        // Swift rotates the ring Java wrote; Java reads Swift's ring and seals to... Swift seals to the new key.
        run("device", "rotate", "--keyring", ringDir.toString(), "--now", Long.toString(now - 50));
        KeyRing ring = store.read();
        assertEquals(2, ring.keys().size());
        assertEquals(now - 50, ring.keys().get(0).retiredAt());
        String body = run("seal", "--server-key", dir.resolve("server.key").toString(), "--device-public",
            X25519.publicKeyText(ring.current().publicKey()), "--topic", TOPIC, "--body", "shared");
        Path payload = dir.resolve("payload.json");
        Files.write(payload, body.getBytes(StandardCharsets.UTF_8));
        // Swift opens it with the ring (and records it in replay-v1.bin) ...
        String printed = run("open", "--keyring", ringDir.toString(), "--server-public", serverPublic, "--topic", TOPIC,
            "--payload", payload.toString(), "--now", Long.toString(now));
        assertTrue(printed.contains("shared"), printed);
        // ... Java reads Swift's replay state (file format version 4, keyring-v1 §5: Swift's record is an `add` in
        // the journal, or its snapshot): the very same envelope is a duplicate (same digest) ...
        EnvelopeOpener opener = new EnvelopeOpener(TOPIC, new FileKeyRingStore(ringDir, true),
            Collections.singletonList(X25519.parsePublicKeyText(serverPublic)));
        OpenedEnvelope o = opener.openBody(body.getBytes(StandardCharsets.UTF_8), now);
        ReplayGuard guard = new ReplayGuard(ringDir, ReplayGuard.DEFAULT_CAPACITY, 600);
        ReplayGuard.State swiftState = guard.inspect(); // reads without migrating or writing
        assertEquals(4, swiftState.version, "Swift writes replay state version 4");
        assertEquals(1, swiftState.entries.size());
        assertEquals(ReplayGuard.Outcome.DUPLICATE, guard.check(o, now + 1));
        // ... and a Java-recorded message is refused by Swift after the window.
        String second = run("seal", "--server-key", dir.resolve("server.key").toString(), "--device-public",
            X25519.publicKeyText(ring.current().publicKey()), "--topic", TOPIC, "--body", "zweite-nachricht");
        OpenedEnvelope o2 = opener.openBody(second.getBytes(StandardCharsets.UTF_8), now);
        assertEquals(ReplayGuard.Outcome.FRESH, guard.check(o2, now));
        // Java appended one 64-byte record to the journal Swift reads next.
        assertEquals(swiftState.journalRecords + 1, guard.inspect().journalRecords);
        Files.write(payload, second.getBytes(StandardCharsets.UTF_8));
        Process p = new ProcessBuilder(cli.toString(), "open", "--keyring", ringDir.toString(), "--server-public", serverPublic,
            "--topic", TOPIC, "--payload", payload.toString(), "--now", Long.toString(now + 700)).redirectErrorStream(true).start();
        String out = new String(readAll(p.getInputStream()), StandardCharsets.UTF_8);
        assertEquals(1, p.waitFor(), out);
        assertTrue(out.contains("replayed"), out);
        assertTrue(!out.contains("zweite-nachricht"), out);
        // ... and the first envelope, recorded by Swift and found by Java, is refused by Java after the window too.
        try {
            guard.check(o, now + 700);
            throw new AssertionError("the envelope Swift recorded opened again in Java");
        } catch (SealedPushException e) {
            assertEquals(ErrorCode.REPLAYED, e.code(), e.getMessage());
        }
    }
}
