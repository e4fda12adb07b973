package org.sealedpush.bench;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.DigestInputStream;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.sealedpush.AttachmentDescriptor;
import org.sealedpush.Base64Url;
import org.sealedpush.BlobDecryptor;
import org.sealedpush.BlobReference;
import org.sealedpush.BlobWriter;
import org.sealedpush.Content;
import org.sealedpush.DeviceKeys;
import org.sealedpush.EnvelopeOpener;
import org.sealedpush.Json;
import org.sealedpush.OpenedEnvelope;
import org.sealedpush.RawDeviceKey;
import org.sealedpush.SealedPushException;
import org.sealedpush.X25519;

/**
 * The heap figure: a notification carrying a 50,000,000-byte video attachment (blob-v1 §6.3's video cap), opened from
 * its FCM data map and its blob decrypted from a file into a file, as a download would be (16 KiB reads, as
 * {@code BlobFetcher} reads), in a child JVM. The parent ({@link OpenBench}) writes the
 * files with {@link #prepare} and starts children with {@link #runChild}. Child modes:
 * <ul>
 * <li>{@code sample}: after a warm-up (the same open and a 1,000-byte blob under the same key, so every class is
 * loaded) and two full GCs, the live heap is the baseline; then the open and the streamed decryption, with a full GC
 * and a heap reading at every chunk handed to the output (the moment the chunk buffer, the read buffer and a chunk's
 * plaintext are all live). Prints the peak above the baseline. Run under {@code -XX:+UseParallelGC}: after
 * {@code System.gc()} the Serial collector's reported heap use kept growing by one chunk per chunk for the first
 * few chunks although nothing holds them (a full {@code jmap -histo:live} of that JVM showed 474 KB of byte arrays in
 * all), so its readings overstate the live set.</li>
 * <li>{@code plain}: the same without sampling, to show it completes under a small {@code -Xmx}.</li>
 * <li>{@code whole}: the naive way for contrast: the ciphertext read whole into memory, then decrypted.</li>
 * </ul>
 * Every mode checks the output file's length and SHA-256 before printing {@code ok}.
 */
final class HeapProbe {
    static final long VIDEO_SIZE = 50_000_000L;
    private static final int WARM_SIZE = 1000;
    private static final int READ = 16_384;

    private HeapProbe() {
    }

    /** What the parent passes to its children. */
    static final class Setup {
        final String plaintextSha256;

        Setup(String plaintextSha256) {
            this.plaintextSha256 = plaintextSha256;
        }
    }

    /** A child's outcome. */
    static final class Result {
        final boolean ok;
        final long peakAboveBaseline;
        final long afterOpen;
        final long allocatedPerChunk;
        final String output;

        Result(boolean ok, long peakAboveBaseline, long afterOpen, long allocatedPerChunk, String output) {
            this.ok = ok;
            this.peakAboveBaseline = peakAboveBaseline;
            this.afterOpen = afterOpen;
            this.allocatedPerChunk = allocatedPerChunk;
            this.output = output;
        }
    }

    /** Pseudo-random plaintext of a given length (fast; the cipher does not care). */
    private static final class Generated extends InputStream {
        private final Random random = new Random(19);
        private long left;

        Generated(long length) {
            this.left = length;
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (left == 0) {
                return -1;
            }
            int n = (int) Math.min(len, left);
            byte[] tmp = new byte[n];
            random.nextBytes(tmp);
            System.arraycopy(tmp, 0, b, off, n);
            left -= n;
            return n;
        }
    }

    /** Writes the keys, the data message and the two blobs into {@code dir}. */
    static Setup prepare(Path dir) throws GeneralSecurityException, SealedPushException, IOException {
        SecureRandom random = new SecureRandom();
        byte[] blobKey = new byte[32];
        byte[] salt = new byte[16];
        random.nextBytes(blobKey);
        random.nextBytes(salt);
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        try (InputStream in = new DigestInputStream(new Generated(VIDEO_SIZE), sha);
            OutputStream out = new BufferedOutputStream(Files.newOutputStream(dir.resolve("video.blob")), 1 << 16)) {
            BlobWriter.write(blobKey, salt, VIDEO_SIZE, in, out);
        }
        try (InputStream in = new Generated(WARM_SIZE);
            OutputStream out = Files.newOutputStream(dir.resolve("warm.blob"))) {
            BlobWriter.write(blobKey, salt, WARM_SIZE, in, out);
        }
        String content = "{\"title\":\"Alice\",\"body\":\"The clip from Saturday\",\"attachments\":[{\"url\":"
            + "\"https://blobs.example.com/3f2a9c1e\",\"key\":\"" + Base64Url.encode(blobKey) + "\",\"size\":" + VIDEO_SIZE
            + ",\"type\":\"video/mp4\",\"name\":\"saturday.mp4\"}]}";
        byte[] canonical = Content.parse(content.getBytes(StandardCharsets.UTF_8)).canonicalJson()
            .getBytes(StandardCharsets.UTF_8);
        BenchSealer sealer = new BenchSealer(OpenBench.TOPIC);
        byte[][] device = X25519.generate();
        byte[] envelope = sealer.seal(canonical, device[1], System.currentTimeMillis() / 1000, 86_400);
        Files.write(dir.resolve("data.json"),
            ("{\"sp\":\"" + Base64Url.encode(envelope) + "\"}").getBytes(StandardCharsets.UTF_8));
        Files.write(dir.resolve("device.key"), X25519.privateKeyText(device[0]).getBytes(StandardCharsets.US_ASCII));
        Files.write(dir.resolve("server.pub"), X25519.publicKeyText(sealer.serverPublic).getBytes(StandardCharsets.US_ASCII));
        return new Setup(hex(sha.digest()));
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) {
            sb.append(String.format("%02x", x & 0xff));
        }
        return sb.toString();
    }

    /**
     * Runs this class in a child JVM with the collector option {@code gc} and {@code -Xmx<xmx>}; its last line is
     * {@code ok …} or the failure. ({@code -Dheapprobe.trace=true} on a child prints some of its heap readings.)
     */
    static Result runChild(Path dir, Setup setup, String mode, String gc, String xmx) throws IOException, InterruptedException {
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(Arrays.asList(java, gc, "-Xmx" + xmx,
            "-cp", System.getProperty("java.class.path"), HeapProbe.class.getName(), dir.toString(), mode,
            setup.plaintextSha256));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out;
        try (InputStream in = p.getInputStream()) {
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        }
        int status = p.waitFor();
        String[] lines = out.split("\n");
        String last = lines[lines.length - 1];
        if (status != 0 || !last.startsWith("ok ")) {
            return new Result(false, -1, -1, -1, out);
        }
        long[] v = new long[3];
        String[] f = last.split(" ");
        for (int i = 0; i < 3; i++) {
            v[i] = Long.parseLong(f[i + 1].substring(f[i + 1].indexOf('=') + 1));
        }
        return new Result(true, v[0], v[1], v[2], out);
    }

    static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            List<Path> all = new ArrayList<>();
            s.forEach(all::add);
            all.sort(Comparator.reverseOrder());
            for (Path q : all) {
                Files.deleteIfExists(q);
            }
        }
    }

    // ---- the child ----

    /** The live heap after a full collection. */
    private static long live(MemoryMXBean memory) {
        System.gc();
        return memory.getHeapMemoryUsage().getUsed();
    }

    /** Passes writes to a file; in sampling mode, a full GC and a heap reading at every write. */
    private static final class Sampling extends OutputStream {
        private final OutputStream out;
        private final MemoryMXBean memory;
        private final boolean sample;
        long peak;
        long writes;

        Sampling(OutputStream out, MemoryMXBean memory, boolean sample) {
            this.out = out;
            this.memory = memory;
            this.sample = sample;
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            writes++;
            if (sample) {
                long l = live(memory);
                if (Boolean.getBoolean("heapprobe.trace") && (writes < 5 || writes % 100 == 0)) {
                    System.out.println("trace write " + writes + " live " + l);
                }
                peak = Math.max(peak, l);
            }
        }

        @Override
        public void close() throws IOException {
            out.close();
        }
    }

    private static long allocated() {
        java.lang.management.ThreadMXBean t = ManagementFactory.getThreadMXBean();
        if (t instanceof com.sun.management.ThreadMXBean) {
            return ((com.sun.management.ThreadMXBean) t).getThreadAllocatedBytes(Thread.currentThread().getId());
        }
        return 0;
    }

    @SuppressWarnings("unchecked")
    private static BlobReference firstAttachment(OpenedEnvelope opened) throws SealedPushException {
        List<AttachmentDescriptor.Parsed> parsed = AttachmentDescriptor.parseAll(opened.content().attachments());
        AttachmentDescriptor d = parsed.get(0).descriptor();
        if (d == null) {
            throw parsed.get(0).error();
        }
        return d.blob();
    }

    /** Streams {@code in} through a decryptor into {@code out}, 16 KiB reads. */
    private static void stream(Path in, BlobDecryptor d) throws IOException, SealedPushException {
        byte[] buf = new byte[READ];
        try (InputStream s = Files.newInputStream(in)) {
            int n;
            while ((n = s.read(buf)) >= 0) {
                d.update(buf, 0, n);
            }
        }
        d.finish();
    }

    private static String sha256(Path file) throws IOException, GeneralSecurityException {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        byte[] buf = new byte[8192];
        try (InputStream s = Files.newInputStream(file)) {
            int n;
            while ((n = s.read(buf)) >= 0) {
                md.update(buf, 0, n);
            }
        }
        return hex(md.digest());
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws Exception {
        Path dir = Paths.get(args[0]);
        String mode = args[1];
        String expectedSha = args[2];
        try {
            byte[] sk = X25519.parsePrivateKeyText(new String(Files.readAllBytes(dir.resolve("device.key")), StandardCharsets.US_ASCII));
            RawDeviceKey key = new RawDeviceKey(sk);
            byte[] keyId = X25519.keyId(key.publicKey());
            DeviceKeys keys = id -> Arrays.equals(id, keyId) ? key : null;
            byte[] server = X25519.parsePublicKeyText(new String(Files.readAllBytes(dir.resolve("server.pub")), StandardCharsets.US_ASCII));
            EnvelopeOpener opener = new EnvelopeOpener(OpenBench.TOPIC, keys, Collections.singletonList(server));
            Map<String, String> data = (Map<String, String>) (Map<String, ?>) Json.parse(Files.readAllBytes(dir.resolve("data.json")), 4);
            long now = System.currentTimeMillis() / 1000;
            MemoryMXBean memory = ManagementFactory.getMemoryMXBean();

            // Warm-up: every class of the measured path loaded and initialised.
            BlobReference warmRef = firstAttachment(opener.openData(data, now));
            try (OutputStream out = new Sampling(Files.newOutputStream(dir.resolve("warm.out")), memory, false)) {
                stream(dir.resolve("warm.blob"), new BlobDecryptor(warmRef.key(), WARM_SIZE, VIDEO_SIZE, out));
            }
            warmRef = null;
            live(memory);
            long baseline = live(memory);
            long alloc0 = allocated();
            if (Boolean.getBoolean("heapprobe.trace")) {
                System.out.println("trace baseline " + baseline);
            }

            BlobReference ref = firstAttachment(opener.openData(data, now));
            long afterOpen = mode.equals("sample") ? live(memory) - baseline : 0;
            Path outFile = dir.resolve("video-" + mode + ".out");
            long writes;
            long peak;
            try (Sampling out = new Sampling(Files.newOutputStream(outFile), memory, mode.equals("sample"))) {
                BlobDecryptor d = new BlobDecryptor(ref.key(), ref.size(), VIDEO_SIZE, out);
                if (mode.equals("whole")) {
                    byte[] all = Files.readAllBytes(dir.resolve("video.blob"));
                    d.update(all, 0, all.length);
                    d.finish();
                } else {
                    stream(dir.resolve("video.blob"), d);
                }
                writes = out.writes;
                peak = out.peak;
            }
            long allocPerChunk = writes == 0 ? 0 : (allocated() - alloc0) / writes;
            ref = null;
            if (Files.size(outFile) != VIDEO_SIZE || !sha256(outFile).equals(expectedSha)) {
                System.out.println("wrong plaintext");
                System.exit(1);
            }
            Files.delete(outFile);
            System.out.println("ok peak=" + Math.max(0, peak - baseline) + " afterOpen=" + afterOpen + " allocPerChunk="
                + allocPerChunk + " baseline=" + baseline + " chunks=" + writes);
        } catch (OutOfMemoryError e) {
            System.out.println("OutOfMemoryError");
            System.exit(3);
        }
    }
}
