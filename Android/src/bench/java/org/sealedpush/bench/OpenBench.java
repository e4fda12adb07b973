package org.sealedpush.bench;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.sealedpush.Base64Url;
import org.sealedpush.BlobDecryptor;
import org.sealedpush.BlobWriter;
import org.sealedpush.Content;
import org.sealedpush.DeviceKeys;
import org.sealedpush.EnvelopeOpener;
import org.sealedpush.KeyRing;
import org.sealedpush.RawDeviceKey;
import org.sealedpush.SealedPushException;
import org.sealedpush.X25519;

/**
 * Issue 19 §4 "Figures" for the Java opener, measured in one run after JIT warm-up (no JMH: nothing is fetched):
 * open (FCM data map / APNs body → content) against the JDK primitives alone (2 X25519 + 5 HMAC-SHA256 + 1
 * ChaCha20-Poly1305), blob decryption against one JDK ChaCha20-Poly1305 call over the same bytes, and the heap needed
 * to open and decrypt a 50 MB video (in child JVMs, {@link HeapProbe}), and the persisted replay guard's check on a
 * full state against an empty one ({@link ReplayBench}). Prints one Markdown table.
 *
 * <p>Timing: wall clock ({@code System.nanoTime}), benchmarks of a section interleaved round by round so drift hits
 * all alike; each figure is the median over the rounds of (batch time / batch size).
 *
 * <p>Options: {@code --quick} (shorter warm-up and fewer rounds), {@code --skip-heap}, {@code --only SECTION} (open,
 * blob, replay or heap).
 */
public final class OpenBench {
    static final String TOPIC = "com.example.chat";
    /** The Swift benchmark's fixture: a typical chat notification, 171 bytes of canonical JSON, the 256-byte bucket. */
    static final String CONTENT = "{\"title\":\"Alice\",\"body\":\"Lunch at 12:30? I booked the place by the river \u2014 "
        + "bring the slides \uD83D\uDCCE\",\"badge\":3,\"sound\":\"default\",\"thread-id\":\"chat-42\",\"category\":\"MESSAGE\"}";
    static final int BLOB_SIZE = 16 * 1024 * 1024;

    private final long warmupNanos;
    private final int rounds;
    private final List<String[]> rows = new ArrayList<>();

    private OpenBench(boolean quick) {
        this.warmupNanos = (quick ? 2L : 8L) * 1_000_000_000L;
        this.rounds = quick ? 7 : 15;
    }

    /** One measured operation: runs {@code n} times, returns something derived from the results (kept live). */
    interface Op {
        long run(int n) throws Exception;
    }

    static final class Bench {
        final String name;
        final Op op;
        int batch = 1;
        final List<Double> perOp = new ArrayList<>();

        Bench(String name, Op op) {
            this.name = name;
            this.op = op;
        }

        double median() {
            List<Double> s = new ArrayList<>(perOp);
            Collections.sort(s);
            int n = s.size();
            return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
        }
    }

    static long sink;

    /**
     * Warms every benchmark up (round-robin until {@code warmupNanos} passed), sizes each batch to about
     * {@code batchNanos}, then runs {@code rounds} interleaved rounds. Returns the medians in ns per operation.
     */
    private Map<String, Double> measure(List<Bench> benches, long batchNanos) throws Exception {
        long start = System.nanoTime();
        while (System.nanoTime() - start < warmupNanos) {
            for (Bench b : benches) {
                long t0 = System.nanoTime();
                sink += b.op.run(b.batch);
                long dt = System.nanoTime() - t0;
                if (dt < batchNanos / 4 && b.batch < (1 << 24)) {
                    b.batch *= 2;
                }
            }
        }
        for (Bench b : benches) {
            long t0 = System.nanoTime();
            sink += b.op.run(b.batch);
            double each = (double) (System.nanoTime() - t0) / b.batch;
            b.batch = (int) Math.max(1, Math.min(1 << 24, batchNanos / Math.max(1.0, each)));
        }
        for (int r = 0; r < rounds; r++) {
            for (Bench b : benches) {
                long t0 = System.nanoTime();
                sink += b.op.run(b.batch);
                b.perOp.add((double) (System.nanoTime() - t0) / b.batch);
            }
        }
        Map<String, Double> out = new java.util.LinkedHashMap<>();
        for (Bench b : benches) {
            out.put(b.name, b.median());
        }
        return out;
    }

    private void row(String figure, String ours, String comparison, String theirs, String ratio, String target, String verdict) {
        rows.add(new String[] {figure, ours, comparison, theirs, ratio, target, verdict});
    }

    private static String ns(double v) {
        return String.format(Locale.ROOT, "%.0f ns", v);
    }

    private static String x(double v) {
        return String.format(Locale.ROOT, "%.2f×", v);
    }

    /** A cost row: ratio = ours / theirs; PASS when at most {@code target} (null: no target). */
    private void costRow(String figure, double ours, String comparison, double theirs, Double target) {
        double ratio = ours / theirs;
        row(figure, ns(ours), comparison, ns(theirs), x(ratio) + " the cost",
            target == null ? "" : "≤ " + x(target), target == null ? "" : ratio <= target ? "PASS" : "FAIL");
    }

    // ---- open ----

    private void openSection() throws Exception {
        long now = System.currentTimeMillis() / 1000;
        byte[] content = Content.parse(CONTENT.getBytes(StandardCharsets.UTF_8)).canonicalJson().getBytes(StandardCharsets.UTF_8);
        BenchSealer sealer = new BenchSealer(TOPIC);
        byte[][] device = X25519.generate();
        RawDeviceKey deviceKey = new RawDeviceKey(device[0]);
        byte[] deviceKeyId = X25519.keyId(device[1]);
        // What a Keystore-backed store returns: the held agreement object for the one key id.
        DeviceKeys held = id -> Arrays.equals(id, deviceKeyId) ? deviceKey : null;
        List<byte[]> pinned = Collections.singletonList(sealer.serverPublic);
        EnvelopeOpener opener = new EnvelopeOpener(TOPIC, held, pinned);
        byte[] envelope = sealer.seal(content, device[1], now, 3600);
        byte[] body = BenchSealer.apnsBody(envelope);
        Map<String, String> data = Collections.singletonMap("sp", Base64Url.encode(envelope));
        String expected = new String(content, StandardCharsets.UTF_8);
        check(opener.openData(data, now).content().canonicalJson().equals(expected), "openData");
        check(opener.openBody(body, now).content().canonicalJson().equals(expected), "openBody");

        // The same open through an in-memory KeyRing (what FileKeyRingStore.find returns after reading its file).
        KeyRing ring = KeyRing.create(now);
        EnvelopeOpener ringOpener = new EnvelopeOpener(TOPIC, ring, pinned);
        byte[] ringEnvelope = sealer.seal(content, ring.current().publicKey(), now, 3600);
        Map<String, String> ringData = Collections.singletonMap("sp", Base64Url.encode(ringEnvelope));
        check(ringOpener.openData(ringData, now).content().canonicalJson().equals(expected), "KeyRing openData");

        OpenFloor floor = new OpenFloor(envelope, device[0], device[1], sealer.serverPublic, sealer.keyScheduleContext());
        check(Arrays.equals(floor.open(), BenchSealer.pad(content)), "the floor's decryption");

        List<Bench> benches = new ArrayList<>();
        benches.add(new Bench("data", n -> {
            long s = 0;
            for (int i = 0; i < n; i++) {
                s += opener.openData(data, now).issuedAt();
            }
            return s;
        }));
        benches.add(new Bench("body", n -> {
            long s = 0;
            for (int i = 0; i < n; i++) {
                s += opener.openBody(body, now).issuedAt();
            }
            return s;
        }));
        benches.add(new Bench("envelope", n -> {
            long s = 0;
            for (int i = 0; i < n; i++) {
                s += opener.openEnvelope(envelope, now).issuedAt();
            }
            return s;
        }));
        benches.add(new Bench("ring", n -> {
            long s = 0;
            for (int i = 0; i < n; i++) {
                s += ringOpener.openData(ringData, now).issuedAt();
            }
            return s;
        }));
        benches.add(new Bench("floor", n -> {
            long s = 0;
            for (int i = 0; i < n; i++) {
                s += floor.open()[0];
            }
            return s;
        }));
        benches.add(new Bench("x25519", n -> {
            long s = 0;
            for (int i = 0; i < n; i++) {
                s += floor.agreements();
            }
            return s;
        }));
        benches.add(new Bench("hmac", n -> {
            long s = 0;
            for (int i = 0; i < n; i++) {
                s += floor.hmacs();
            }
            return s;
        }));
        benches.add(new Bench("aead", n -> {
            long s = 0;
            for (int i = 0; i < n; i++) {
                s += floor.aead()[0];
            }
            return s;
        }));
        Map<String, Double> t = measure(benches, 50_000_000L);
        String floorName = "JDK primitives: 2 X25519 + 5 HMAC + 1 AEAD";
        costRow("Java open, FCM data → content (openData)", t.get("data"), floorName, t.get("floor"), 1.3);
        costRow("Java open, APNs body → content (openBody)", t.get("body"), floorName, t.get("floor"), 1.3);
        costRow("Java open, envelope → content (openEnvelope)", t.get("envelope"), floorName, t.get("floor"), null);
        costRow("Java open, FCM data → content, keys from an in-memory KeyRing", t.get("ring"), floorName, t.get("floor"), null);
        costRow("JDK 2 X25519 agreements (XDH, ephemeral key from bytes)", t.get("x25519"), floorName, t.get("floor"), null);
        costRow("JDK 5 HMAC-SHA256 (RFC 9180 labeled input lengths)", t.get("hmac"), floorName, t.get("floor"), null);
        costRow("JDK ChaCha20-Poly1305 decrypt, " + (envelope.length - 82) + " B + 82 B AAD", t.get("aead"), floorName,
            t.get("floor"), null);
    }

    // ---- blob ----

    /** Counts what it is given and touches one byte of each write; keeps nothing. */
    static final class CountingSink extends OutputStream {
        long count;
        int touched;

        @Override
        public void write(int b) {
            count++;
            touched ^= b;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            count += len;
            if (len > 0) {
                touched ^= b[off];
            }
        }
    }

    private static void decryptBlob(byte[] key, long size, byte[] blob, OutputStream out) throws SealedPushException, IOException {
        BlobDecryptor d = new BlobDecryptor(key, size, BlobDecryptor.MAX_SIZE, out);
        for (int off = 0; off < blob.length; off += 65_536) {
            d.update(blob, off, Math.min(65_536, blob.length - off));
        }
        d.finish();
    }

    private void blobSection() throws Exception {
        SecureRandom random = new SecureRandom();
        byte[] plain = new byte[BLOB_SIZE];
        random.nextBytes(plain);
        byte[] key = new byte[32];
        byte[] salt = new byte[16];
        random.nextBytes(key);
        random.nextBytes(salt);
        ByteArrayOutputStream written = new ByteArrayOutputStream((int) BlobDecryptor.ciphertextSize(BLOB_SIZE));
        BlobWriter.write(key, salt, BLOB_SIZE, new ByteArrayInputStream(plain), written);
        byte[] blob = written.toByteArray();
        ByteArrayOutputStream check = new ByteArrayOutputStream(BLOB_SIZE);
        decryptBlob(key, BLOB_SIZE, blob, check);
        check(Arrays.equals(check.toByteArray(), plain), "the blob's plaintext");
        check = null;

        byte[] oneKey = new byte[32];
        byte[] oneNonce = new byte[12];
        random.nextBytes(oneKey);
        random.nextBytes(oneNonce);
        Cipher enc = Cipher.getInstance("ChaCha20-Poly1305");
        enc.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(oneKey, "ChaCha20"), new IvParameterSpec(oneNonce));
        byte[] oneCall = enc.doFinal(plain);
        Cipher dec = Cipher.getInstance("ChaCha20-Poly1305");
        dec.init(Cipher.DECRYPT_MODE, new SecretKeySpec(oneKey, "ChaCha20"), new IvParameterSpec(oneNonce));
        check(Arrays.equals(dec.doFinal(oneCall), plain), "the one-call decryption");
        plain = null;

        Path file = Files.createTempFile("sealedpush-bench", ".out");
        try {
            List<Bench> benches = new ArrayList<>();
            benches.add(new Bench("blob", n -> {
                long s = 0;
                for (int i = 0; i < n; i++) {
                    CountingSink out = new CountingSink();
                    decryptBlob(key, BLOB_SIZE, blob, out);
                    s += out.count + out.touched;
                }
                return s;
            }));
            benches.add(new Bench("file", n -> {
                long s = 0;
                for (int i = 0; i < n; i++) {
                    try (OutputStream out = Files.newOutputStream(file)) {
                        decryptBlob(key, BLOB_SIZE, blob, out);
                    }
                    s += Files.size(file);
                }
                return s;
            }));
            benches.add(new Bench("one", n -> {
                long s = 0;
                for (int i = 0; i < n; i++) {
                    Cipher c = Cipher.getInstance("ChaCha20-Poly1305");
                    c.init(Cipher.DECRYPT_MODE, new SecretKeySpec(oneKey, "ChaCha20"), new IvParameterSpec(oneNonce));
                    byte[] p = c.doFinal(oneCall);
                    s += p.length + p[0];
                }
                return s;
            }));
            Map<String, Double> t = measure(benches, 100_000_000L);
            double ours = BLOB_SIZE / t.get("blob") * 1000;
            double file1 = BLOB_SIZE / t.get("file") * 1000;
            double theirs = BLOB_SIZE / t.get("one") * 1000;
            String mib = (BLOB_SIZE >> 20) + " MiB";
            String comparison = "JDK ChaCha20-Poly1305, one doFinal over " + mib;
            row("blob decrypt (BlobDecryptor, 64 KiB pieces), " + mib, mbs(ours), comparison, mbs(theirs),
                x(ours / theirs) + " the rate", "≥ 0.90×", ours / theirs >= 0.9 ? "PASS" : "FAIL");
            row("blob decrypt into a file (Files.newOutputStream), " + mib, mbs(file1), comparison, mbs(theirs),
                x(file1 / theirs) + " the rate", "", "");
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static String mbs(double v) {
        return String.format(Locale.ROOT, "%.1f MB/s", v);
    }

    // ---- replay ----

    private static String us(double nanos) {
        return String.format(Locale.ROOT, "%.1f µs", nanos / 1000);
    }

    /** {@link ReplayBench}: the persisted guard's check on an empty and a full state, and the bytes it writes. */
    private void replaySection() throws Exception {
        ReplayBench.Result r = ReplayBench.run();
        int n = ReplayBench.CHECKS;
        row("replay check, file guard, empty (wall, with force; mean of " + n + ")", us(r.emptyNanos), "", "", "", "", "");
        double ratio = r.fullNanos / r.emptyNanos;
        row("replay check, file guard, full: " + r.fullCount + " ids (wall, with force; mean of " + n + ")", us(r.fullNanos),
            "file guard, empty", us(r.emptyNanos), x(ratio) + " the cost", "≤ 2.00×", ratio <= 2 ? "PASS" : "MISS");
        double bytes = r.fullBytes / 4096;
        row("replay state bytes written per recorded id, full (amortised over " + n + ")",
            String.format(Locale.ROOT, "%.0f B", r.fullBytes), "issue 19 bound: 4 KiB", "4096 B", x(bytes) + " the cost",
            "≤ 1.00×", bytes <= 1 ? "PASS" : "MISS");
    }

    // ---- heap ----

    private void heapSection() throws Exception {
        Path dir = Files.createTempDirectory("sealedpush-heap");
        try {
            HeapProbe.Setup setup = HeapProbe.prepare(dir);
            HeapProbe.Result sampled = HeapProbe.runChild(dir, setup, "sample", "-XX:+UseParallelGC", "16m");
            check(sampled.ok, "the sampling child: " + sampled.output);
            double chunks = (double) sampled.peakAboveBaseline / BlobDecryptor.CHUNK;
            row("heap to open + decrypt a 50 MB video, file → file (peak live heap above a warmed-up JVM, ParallelGC, full GC at every chunk)",
                String.format(Locale.ROOT, "%.0f KiB = %.2f chunks", sampled.peakAboveBaseline / 1024.0, chunks),
                "4 chunks of 64 KiB", "256 KiB", x(chunks / 4) + " the cost", "≤ 1.00×", chunks <= 4 ? "PASS" : "FAIL");
            row("  of which live after the open, before the blob", String.format(Locale.ROOT, "%.0f KiB",
                sampled.afterOpen / 1024.0), "allocated per chunk (garbage)", String.format(Locale.ROOT, "%.0f KiB",
                sampled.allocatedPerChunk / 1024.0), "", "", "");
            String smallest = null;
            HeapProbe.Result last = null;
            for (String xmx : new String[] {"2m", "4m", "8m"}) {
                last = HeapProbe.runChild(dir, setup, "plain", "-XX:+UseSerialGC", xmx);
                if (last.ok) {
                    smallest = xmx;
                    break;
                }
            }
            String whole = smallest == null ? "failed up to -Xmx8m" : "ok with -Xmx" + smallest;
            HeapProbe.Result naive = HeapProbe.runChild(dir, setup, "whole", "-XX:+UseSerialGC", smallest == null ? "8m" : smallest);
            row("open + decrypt the 50 MB video in a child JVM, -XX:+UseSerialGC, smallest -Xmx of 2m/4m/8m", whole,
                "the same -Xmx, ciphertext read whole into memory", naive.ok ? "ok" : "OutOfMemoryError", "", "",
                smallest != null && !naive.ok ? "PASS" : "FAIL");
            if (smallest == null) {
                System.err.println("heap child output: " + last.output);
            }
        } finally {
            HeapProbe.deleteTree(dir);
        }
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("benchmark self-check failed: " + what);
        }
    }

    private void print() {
        System.out.println("| figure | ours | comparison | theirs | ratio | target | |");
        System.out.println("|---|---:|---|---:|---:|---:|---|");
        for (String[] r : rows) {
            System.out.println("| " + String.join(" | ", r) + " |");
        }
    }

    public static void main(String[] args) throws Exception {
        boolean quick = false;
        boolean heap = true;
        String only = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--quick")) {
                quick = true;
            } else if (a.equals("--skip-heap")) {
                heap = false;
            } else if (a.equals("--only") && i + 1 < args.length
                && Arrays.asList("open", "blob", "replay", "heap").contains(args[i + 1])) {
                only = args[++i];
            } else {
                System.err.println("usage: OpenBench [--quick] [--skip-heap] [--only open|blob|replay|heap]");
                System.exit(2);
            }
        }
        OpenBench b = new OpenBench(quick);
        System.err.println("java " + System.getProperty("java.runtime.version") + ", " + System.getProperty("java.vm.name")
            + ", " + Runtime.getRuntime().availableProcessors() + " CPUs, max heap "
            + Runtime.getRuntime().maxMemory() / (1024 * 1024) + " MiB");
        if (only == null || only.equals("open")) {
            System.err.println("==> open (warm-up " + b.warmupNanos / 1_000_000_000L + " s, " + b.rounds + " rounds)");
            b.openSection();
        }
        if (only == null || only.equals("blob")) {
            System.err.println("==> blob");
            b.blobSection();
        }
        if (only == null || only.equals("replay")) {
            System.err.println("==> replay (file guard, " + ReplayBench.CHECKS + " checks per state, after as many to warm up)");
            b.replaySection();
        }
        if (only == null ? heap : only.equals("heap")) {
            System.err.println("==> heap (child JVMs)");
            b.heapSection();
        }
        b.print();
        if (sink == 42) {
            System.err.println("");
        }
    }
}
