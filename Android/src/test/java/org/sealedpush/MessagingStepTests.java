package org.sealedpush;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The messaging step against real loopback blob servers: good, slow, hostile and dead. */
final class MessagingStepTests {
    @TempDir
    Path dir;

    private static final String TOPIC = "com.example.android";
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Attachment files and partial files: {@code <32 hex>.<ext>}, {@code .<32 hex>.partial}. */
    private static final Pattern ATTACHMENT_FILE = Pattern.compile("\\.?[0-9a-f]{32}\\.[a-z0-9]+");
    private TestSealer sealer;
    private KeyRing ring;
    private HttpServer http;
    private final Map<String, byte[]> blobs = new ConcurrentHashMap<>();
    private final List<ServerSocket> sockets = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        sealer = new TestSealer(TOPIC);
        ring = KeyRing.create(now());
        http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        http.createContext("/", ex -> {
            byte[] b = blobs.get(ex.getRequestURI().getPath().substring(1));
            if (b == null) {
                ex.sendResponseHeaders(404, -1);
            } else {
                ex.sendResponseHeaders(200, b.length == 0 ? -1 : b.length);
                try (OutputStream o = ex.getResponseBody()) {
                    o.write(b);
                }
            }
            ex.close();
        });
        http.start();
    }

    @AfterEach
    void tearDown() throws Exception {
        http.stop(0);
        for (ServerSocket s : sockets) {
            s.close();
        }
        for (Thread t : threads) {
            t.interrupt();
        }
    }

    static long now() {
        return System.currentTimeMillis() / 1000;
    }

    private String base() {
        return "http://127.0.0.1:" + http.getAddress().getPort() + "/";
    }

    /** Encrypts {@code plain} as a blob served at {@code name}; returns its reference members as JSON. */
    private String serve(String name, byte[] plain) throws Exception {
        byte[] key = new byte[32];
        byte[] salt = new byte[16];
        RANDOM.nextBytes(key);
        RANDOM.nextBytes(salt);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BlobWriter.write(key, salt, plain.length, new ByteArrayInputStream(plain), out);
        blobs.put(name, out.toByteArray());
        return "\"url\":\"" + base() + name + "\",\"key\":\"" + Base64Url.encode(key) + "\",\"size\":" + plain.length;
    }

    private SealedPushMessagingStep step(long deadlineMillis, DeviceKeys keys) throws Exception {
        EnvelopeOpener opener = new EnvelopeOpener(TOPIC, keys, Collections.singletonList(sealer.serverPublic));
        return new SealedPushMessagingStep(opener, new ReplayGuard(dir, 1024, 600), dir, deadlineMillis, MessagingStepTests::now);
    }

    private Map<String, String> message(String contentJson) throws Exception {
        return Collections.singletonMap("sp", sealer.seal(contentJson, ring.current().publicKey(), now(), 3600));
    }

    private List<Path> files() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            List<Path> out = new ArrayList<>();
            s.filter(p -> ATTACHMENT_FILE.matcher(p.getFileName().toString()).matches()).forEach(out::add);
            return out;
        }
    }

    @Test
    void textAndAttachmentsArriveAsFilesThatAppearOnlyOnceVerified() throws Exception {
        byte[] image = new byte[150_000];
        RANDOM.nextBytes(image);
        String a1 = serve("img", image);
        String a2 = serve("one", new byte[] {42});
        StepResult r = step(8_000, ring).process(message("{\"title\":\"Hi\",\"body\":\"text\",\"attachments\":[{" + a1
            + ",\"type\":\"image/JPEG\",\"name\":\"p.jpg\"},{" + a2 + ",\"type\":\"audio/mpeg\"},{\"url\":\"x\"}]}"));
        assertEquals(StepResult.Kind.NOTIFICATION, r.kind());
        assertEquals("text", r.content().body());
        assertEquals(2, r.attachments().size());
        assertArrayEquals(image, Files.readAllBytes(r.attachments().get(0).file()));
        assertTrue(r.attachments().get(0).file().toString().endsWith(".jpg"));
        assertEquals("p.jpg", r.attachments().get(0).name());
        assertArrayEquals(new byte[] {42}, Files.readAllBytes(r.attachments().get(1).file()));
        assertTrue(r.attachments().get(1).file().toString().endsWith(".mp3"));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(r.attachments().get(0).file())));
        assertEquals(1, r.skipped().size());
        assertEquals(ErrorCode.MALFORMED_ATTACHMENT, r.skipped().get(0).reason());
        assertEquals(2, files().size());
    }

    @Test
    void duplicatesAndReplays() throws Exception {
        SealedPushMessagingStep s = step(8_000, ring);
        Map<String, String> m = message("{\"body\":\"once\"}");
        StepResult first = s.process(m);
        assertEquals(StepResult.Kind.NOTIFICATION, first.kind());
        StepResult again = s.process(m);
        assertEquals(StepResult.Kind.NOTIFICATION, again.kind());
        assertTrue(again.isDuplicate());
        assertEquals("once", again.content().body());
        // Another envelope with the same message id: replayed.
        byte[] env = Base64Url.decodeCanonical(m.get("sp"));
        byte[] id = java.util.Arrays.copyOfRange(env, 18, 34);
        String other = Base64Url.encode(sealer.seal("{\"body\":\"other\"}", ring.current().publicKey(), now(), 3600, id));
        StepResult replay = s.process(Collections.singletonMap("sp", other));
        assertEquals(StepResult.Kind.PLACEHOLDER, replay.kind());
        assertEquals(ErrorCode.REPLAYED, replay.reason());
    }

    @Test
    void badMessagesGiveThePlaceholderWithTheReason() throws Exception {
        SealedPushMessagingStep s = step(8_000, ring);
        assertEquals(ErrorCode.MALFORMED_PAYLOAD, s.process(Collections.<String, String>emptyMap()).reason());
        assertEquals(ErrorCode.BAD_ENCODING, s.process(Collections.singletonMap("sp", "a=")).reason());
        KeyRing other = KeyRing.create(now());
        String sp = sealer.seal("{\"body\":\"x\"}", other.current().publicKey(), now(), 3600);
        assertEquals(ErrorCode.UNKNOWN_RECIPIENT_KEY, s.process(Collections.singletonMap("sp", sp)).reason());
    }

    @Test
    void contentByReferenceReplacesThePreview() throws Exception {
        String full = "{\"title\":\"Full\",\"body\":\"the whole text\",\"attachments\":[{"
            + serve("att", new byte[] {1, 2, 3}) + ",\"type\":\"image/png\"}]}";
        String ref = serve("content", full.getBytes(StandardCharsets.UTF_8));
        StepResult r = step(8_000, ring).process(message("{\"title\":\"Full\",\"body\":\"the…\",\"content-ref\":{" + ref + "}}"));
        assertEquals("the whole text", r.content().body());
        assertEquals(1, r.attachments().size());
        // A dead reference: the preview is shown, with the reason.
        StepResult p = step(8_000, ring).process(message("{\"body\":\"preview\",\"content-ref\":{\"url\":\"" + base()
            + "missing\",\"key\":\"" + Base64Url.encode(new byte[32]) + "\",\"size\":10}}"));
        assertEquals("preview", p.content().body());
        assertEquals(ErrorCode.BLOB_UNAVAILABLE, p.skipped().get(0).reason());
    }

    /** A raw server: {@code behaviour} gets each accepted socket. */
    private String rawServer(SocketBehaviour behaviour) throws IOException {
        ServerSocket ss = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
        sockets.add(ss);
        Thread t = new Thread(() -> {
            while (!ss.isClosed()) {
                try {
                    Socket s = ss.accept();
                    Thread h = new Thread(() -> {
                        try (Socket c = s) {
                            readRequest(c);
                            behaviour.serve(c);
                        } catch (Exception ignored) {
                            // the client hung up
                        }
                    });
                    h.setDaemon(true);
                    h.start();
                } catch (IOException e) {
                    return;
                }
            }
        });
        t.setDaemon(true);
        t.start();
        threads.add(t);
        return "http://127.0.0.1:" + ss.getLocalPort() + "/";
    }

    /** Reads the request head, so closing the socket afterwards does not reset it. */
    static void readRequest(Socket s) throws IOException {
        java.io.InputStream in = s.getInputStream();
        int state = 0;
        while (state < 4) {
            int b = in.read();
            if (b < 0) {
                return;
            }
            state = (b == (state % 2 == 0 ? '\r' : '\n')) ? state + 1 : (b == '\r' ? 1 : 0);
        }
    }

    interface SocketBehaviour {
        void serve(Socket s) throws Exception;
    }

    private String descriptor(String url, byte[] key, int size, String type) {
        return "{\"url\":\"" + url + "\",\"key\":\"" + Base64Url.encode(key) + "\",\"size\":" + size + ",\"type\":\"" + type + "\"}";
    }

    private void assertTextWithSkipped(StepResult r, ErrorCode reason, long elapsedMillis, long deadline) throws IOException {
        assertEquals(StepResult.Kind.NOTIFICATION, r.kind());
        assertEquals("text", r.content().body());
        assertEquals(0, r.attachments().size());
        assertEquals(reason, r.skipped().get(0).reason());
        assertTrue(elapsedMillis < deadline + 1_000, "took " + elapsedMillis + " ms");
        assertEquals(0, files().size(), "no partial file stays");
    }

    @Test
    void slowHostileAndDeadServersNeverHoldTheStepPastItsDeadline() throws Exception {
        byte[] plain = new byte[200_000];
        RANDOM.nextBytes(plain);
        byte[] key = new byte[32];
        byte[] salt = new byte[16];
        RANDOM.nextBytes(key);
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        BlobWriter.write(key, salt, plain.length, new ByteArrayInputStream(plain), o);
        byte[] blob = o.toByteArray();
        String headers = "HTTP/1.1 200 OK\r\nContent-Length: " + blob.length + "\r\nConnection: close\r\n\r\n";
        long deadline = 1_500;
        String trickle = rawServer(s -> {
            OutputStream out = s.getOutputStream();
            out.write(headers.getBytes(StandardCharsets.US_ASCII));
            for (byte b : blob) {
                out.write(b);
                out.flush();
                Thread.sleep(50);
            }
        });
        String silent = rawServer(s -> Thread.sleep(60_000));
        String slowHeaders = rawServer(s -> {
            OutputStream out = s.getOutputStream();
            for (byte b : headers.getBytes(StandardCharsets.US_ASCII)) {
                out.write(b);
                out.flush();
                Thread.sleep(200);
            }
        });
        String tooLong = rawServer(s -> {
            OutputStream out = s.getOutputStream();
            out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + (blob.length + 5) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(blob);
            out.write(new byte[5]);
            out.flush();
        });
        String cutShort = rawServer(s -> {
            OutputStream out = s.getOutputStream();
            out.write(headers.getBytes(StandardCharsets.US_ASCII));
            out.write(blob, 0, blob.length - 100);
            out.flush();
            s.setSoLinger(true, 0); // reset
        });
        ServerSocket closed = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        String dead = "http://127.0.0.1:" + closed.getLocalPort() + "/";
        closed.close();
        Object[][] cases = {
            {trickle, ErrorCode.DEADLINE_EXCEEDED}, {silent, ErrorCode.DEADLINE_EXCEEDED},
            {slowHeaders, ErrorCode.DEADLINE_EXCEEDED}, {tooLong, ErrorCode.BLOB_TRAILING_DATA},
            {cutShort, null}, {dead, ErrorCode.BLOB_UNAVAILABLE},
        };
        for (Object[] c : cases) {
            SealedPushMessagingStep s = step(deadline, ring);
            long t0 = System.nanoTime();
            StepResult r = s.process(message("{\"body\":\"text\",\"attachments\":["
                + descriptor(c[0] + "b", key, plain.length, "image/gif") + "]}"));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            if (c[1] == null) {
                ErrorCode why = r.skipped().get(0).reason();
                assertTrue(why == ErrorCode.BLOB_TRUNCATED || why == ErrorCode.BLOB_UNAVAILABLE, "cut short: " + why);
                assertTextWithSkipped(r, why, ms, deadline);
            } else {
                assertTextWithSkipped(r, (ErrorCode) c[1], ms, deadline);
            }
            s.shutdown();
        }
    }

    @Test
    void aKeyStoreThatHangsStillYieldsExactlyOnePlaceholderInTime() throws Exception {
        DeviceKeys hanging = keyId -> {
            try {
                Thread.sleep(30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return ring.find(keyId);
        };
        long t0 = System.nanoTime();
        StepResult r = step(700, hanging).process(message("{\"body\":\"text\"}"));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(StepResult.Kind.PLACEHOLDER, r.kind());
        assertEquals(ErrorCode.DEADLINE_EXCEEDED, r.reason());
        assertTrue(ms < 1_700, "took " + ms + " ms");
    }

    private List<Path> partialFiles() throws IOException {
        List<Path> out = new ArrayList<>();
        for (Path p : files()) {
            if (p.getFileName().toString().endsWith(".partial")) {
                out.add(p);
            }
        }
        return out;
    }

    @Test
    void atMostEightAttachmentsAreFetchedAndTheNinthIsSkippedAsMalformed() throws Exception {
        StringBuilder list = new StringBuilder();
        for (int i = 0; i < 9; i++) {
            list.append(i == 0 ? "" : ",").append("{").append(serve("a" + i, new byte[] {(byte) i})).append(",\"type\":\"image/png\"}");
        }
        StepResult r = step(8_000, ring).process(message("{\"body\":\"text\",\"attachments\":[" + list + "]}"));
        assertEquals(StepResult.Kind.NOTIFICATION, r.kind());
        assertEquals(8, r.attachments().size());
        for (int i = 0; i < 8; i++) {
            assertArrayEquals(new byte[] {(byte) i}, Files.readAllBytes(r.attachments().get(i).file()), "attachment " + i);
        }
        assertEquals(1, r.skipped().size());
        assertEquals(8, r.skipped().get(0).index());
        assertEquals(ErrorCode.MALFORMED_ATTACHMENT, r.skipped().get(0).reason());
        assertEquals(8, files().size());
    }

    @Test
    void aDeclaredSizeShorterThanTheServedBlobFailsOnTheChunkNotAsTrailingData() throws Exception {
        byte[] plain = new byte[100];
        RANDOM.nextBytes(plain);
        String ref = serve("short", plain).replace("\"size\":100", "\"size\":99");
        // The server sends 100 bytes of plaintext's blob with an honest Content-Length; the reader must feed the bytes
        // up to the declared size first (blob-v1 §5, over-long streams): the chunk ending there does not verify.
        StepResult r = step(8_000, ring).process(message("{\"body\":\"text\",\"attachments\":[{" + ref + ",\"type\":\"image/png\"}]}"));
        assertEquals(ErrorCode.BLOB_AUTHENTICATION_FAILURE, r.skipped().get(0).reason());
        assertEquals(0, files().size());
    }

    @Test
    void aStalledServerDoesNotSpendTheTimeOfTheNextAttachment() throws Exception {
        byte[] image = new byte[70_000];
        RANDOM.nextBytes(image);
        String good = serve("good", image);
        String stalled = rawServer(s -> Thread.sleep(60_000));
        byte[] key = new byte[32];
        RANDOM.nextBytes(key);
        long deadline = 4_000;
        SealedPushMessagingStep s = step(deadline, ring);
        Map<String, String> m = message("{\"body\":\"text\",\"attachments\":[" + descriptor(stalled + "x", key, 1_000, "image/gif")
            + ",{" + good + ",\"type\":\"image/jpeg\"}]}");
        // While the stalled download holds its partial file, a clean-up (another message's start) must leave it, and
        // must not drop its lock either (closing any descriptor of a file drops the process's POSIX locks on it):
        // another process still finds it locked.
        String[] probe = {"not run"};
        Thread sweeper = new Thread(() -> {
            try {
                Thread.sleep(1_500);
                BlobFetcher.removeAbandonedPartialFiles(dir);
                List<Path> partials = partialFiles();
                probe[0] = partials.size() == 1 ? probeLock(partials.get(0)) : partials.size() + " partial files";
            } catch (Exception e) {
                probe[0] = e.toString();
            }
        });
        int[] livePartials = {-1};
        Thread watcher = new Thread(() -> {
            try {
                Thread.sleep(2_000);
                livePartials[0] = partialFiles().size();
            } catch (Exception ignored) {
                // reported as -1
            }
        });
        long t0 = System.nanoTime();
        sweeper.start();
        watcher.start();
        StepResult r = s.process(m);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        sweeper.join();
        watcher.join();
        s.shutdown();
        assertEquals(StepResult.Kind.NOTIFICATION, r.kind(), "reason " + r.reason());
        assertEquals(1, r.attachments().size(), "the good server's file arrives");
        assertArrayEquals(image, Files.readAllBytes(r.attachments().get(0).file()));
        assertEquals(1, r.skipped().size());
        assertEquals(0, r.skipped().get(0).index());
        assertEquals(ErrorCode.DEADLINE_EXCEEDED, r.skipped().get(0).reason());
        assertTrue(ms < deadline + 750, "took " + ms + " ms");
        assertEquals(1, livePartials[0], "the live partial file survived a clean-up");
        assertEquals("held", probe[0], "the live partial file's lock survived a clean-up");
        assertEquals(1, files().size(), "only the good file stays");
    }

    private static String javaBinary() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static String testClasses() throws Exception {
        return Paths.get(PartialFileHolder.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }

    /** Asks a second JVM whether the file is locked: "held" or "free". */
    private static String probeLock(Path file) throws Exception {
        Process p = new ProcessBuilder(javaBinary(), "-cp", testClasses(), PartialFileHolder.class.getName(), "--probe",
            file.toString()).redirectErrorStream(true).start();
        try (java.io.BufferedReader out = new java.io.BufferedReader(
            new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII))) {
            String line = out.readLine();
            p.waitFor(10, TimeUnit.SECONDS);
            return line;
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void partialFilesOfAKilledProcessAreDeletedAtTheNextStepButNotWhileLocked() throws Exception {
        Path live = dir.resolve("." + "0123456789abcdef0123456789abcdef" + ".partial");
        Path young = dir.resolve("." + "fedcba9876543210fedcba9876543210" + ".partial");
        Path other = dir.resolve("notes.partial");
        Files.write(other, new byte[] {1});
        Files.setLastModifiedTime(other, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() - 60_000));
        Process holder = new ProcessBuilder(javaBinary(), "-cp", testClasses(), PartialFileHolder.class.getName(), live.toString())
            .redirectErrorStream(true).start();
        try {
            java.io.BufferedReader out = new java.io.BufferedReader(
                new java.io.InputStreamReader(holder.getInputStream(), StandardCharsets.US_ASCII));
            assertEquals("locked", out.readLine());
            Files.setLastModifiedTime(live, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() - 60_000));
            assertEquals(0, BlobFetcher.removeAbandonedPartialFiles(dir));
            StepResult r = step(8_000, ring).process(message("{\"body\":\"text\"}"));
            assertEquals(StepResult.Kind.NOTIFICATION, r.kind());
            assertTrue(Files.exists(live), "another process's locked partial file stays");
        } finally {
            holder.destroyForcibly(); // SIGKILL: no clean-up of its own
            assertTrue(holder.waitFor(10, TimeUnit.SECONDS));
        }
        assertTrue(Files.exists(live), "the killed process left its partial file");
        SealedPushMessagingStep next = step(8_000, ring);
        Map<String, String> again = message("{\"body\":\"again\"}");
        Files.write(young, new byte[] {2}); // right before the step: well under 1 s old when it looks
        StepResult r = next.process(again);
        assertEquals("again", r.content().body());
        assertFalse(Files.exists(live), "an abandoned partial file is deleted at the step's start");
        assertTrue(Files.exists(young), "a partial file younger than 1 s stays (it may be about to be locked)");
        assertTrue(Files.exists(other), "only .<32 hex>.partial names are touched");
    }

    @Test
    void aRedirectIsNotFollowed() throws Exception {
        // blob-v1 §8: any status other than 200 is blobUnavailable; the Java fetcher never follows a Location, even to
        // a server that holds the blob (README, notes on the spec).
        String good = serve("target", new byte[] {7});
        String target = base() + "target";
        String redirect = rawServer(s -> {
            OutputStream out = s.getOutputStream();
            out.write(("HTTP/1.1 302 Found\r\nLocation: " + target + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
            out.flush();
        });
        String moved = good.replace(target, redirect + "target");
        StepResult r = step(8_000, ring).process(message("{\"body\":\"text\",\"attachments\":[{" + moved + ",\"type\":\"image/png\"}]}"));
        assertEquals(StepResult.Kind.NOTIFICATION, r.kind());
        assertEquals(0, r.attachments().size());
        assertEquals(ErrorCode.BLOB_UNAVAILABLE, r.skipped().get(0).reason());
        assertEquals(0, files().size());
    }
}
