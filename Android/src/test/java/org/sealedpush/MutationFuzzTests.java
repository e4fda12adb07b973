package org.sealedpush;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A bounded random-mutation test of the parsers (envelope body, binary envelope, content, blob stream, descriptors,
 * key ring, replay state): no exception but {@link SealedPushException}, never a hang. The count is the system
 * property {@code sealedpush.fuzz.count} (default 1,000,000); the seed {@code sealedpush.fuzz.seed} (default random,
 * printed so a failure can be replayed).
 */
final class MutationFuzzTests {
    private static final OutputStream SINK = new OutputStream() {
        @Override
        public void write(int b) {
        }

        @Override
        public void write(byte[] b, int off, int len) {
        }
    };

    private static final String SPECIAL = "{}[]\",:0123456789eE.-+\\u tfn";

    static byte[] mutate(Random r, byte[] in) {
        byte[] b = in;
        int edits = 1 + r.nextInt(4);
        for (int e = 0; e < edits; e++) {
            int op = r.nextInt(7);
            if (b.length == 0) {
                op = 3;
            }
            switch (op) {
                case 0: // flip a bit
                    b = b.clone();
                    b[r.nextInt(b.length)] ^= (byte) (1 << r.nextInt(8));
                    break;
                case 1: // random byte
                    b = b.clone();
                    b[r.nextInt(b.length)] = (byte) r.nextInt(256);
                    break;
                case 2: { // truncate
                    b = java.util.Arrays.copyOf(b, r.nextInt(b.length));
                    break;
                }
                case 3: { // insert random bytes
                    int at = b.length == 0 ? 0 : r.nextInt(b.length + 1);
                    int n = 1 + r.nextInt(8);
                    byte[] x = new byte[b.length + n];
                    System.arraycopy(b, 0, x, 0, at);
                    for (int i = 0; i < n; i++) {
                        x[at + i] = r.nextBoolean() ? (byte) r.nextInt(256) : (byte) SPECIAL.charAt(r.nextInt(SPECIAL.length()));
                    }
                    System.arraycopy(b, at, x, at + n, b.length - at);
                    b = x;
                    break;
                }
                case 4: { // delete a range
                    int at = r.nextInt(b.length);
                    int n = Math.min(b.length - at, 1 + r.nextInt(16));
                    byte[] x = new byte[b.length - n];
                    System.arraycopy(b, 0, x, 0, at);
                    System.arraycopy(b, at + n, x, at, b.length - at - n);
                    b = x;
                    break;
                }
                case 5: { // duplicate a range
                    int at = r.nextInt(b.length);
                    int n = Math.min(b.length - at, 1 + r.nextInt(64));
                    byte[] x = new byte[b.length + n];
                    System.arraycopy(b, 0, x, 0, at + n);
                    System.arraycopy(b, at, x, at + n, b.length - at);
                    b = x;
                    break;
                }
                default: { // interesting values at an offset
                    b = b.clone();
                    int at = r.nextInt(b.length);
                    byte[] v = {0, (byte) 0xff, 0x7f, (byte) 0x80, 1};
                    for (int i = at; i < Math.min(b.length, at + 8); i++) {
                        b[i] = v[r.nextInt(v.length)];
                    }
                }
            }
        }
        return b;
    }

    @Test
    @SuppressWarnings("unchecked")
    void parsersThrowOnlyTheLibrarysException() throws Exception {
        long count = Long.getLong("sealedpush.fuzz.count", 1_000_000L);
        long seed = Long.getLong("sealedpush.fuzz.seed", new Random().nextLong());
        Random r = new Random(seed);
        Map<String, Object> ev = TestSupport.vectors("envelope-v1.json");
        byte[] server = X25519.parsePublicKeyText((String) ev.get("serverPublicKey"));
        EnvelopeOpener opener = new EnvelopeOpener((String) ev.get("topic"),
            TestSupport.keys(TestSupport.hex((String) ev.get("devicePrivateKey"))), Collections.singletonList(server));
        List<byte[]> bodies = new ArrayList<>();
        List<byte[]> envelopes = new ArrayList<>();
        List<byte[]> contents = new ArrayList<>();
        long now = 0;
        for (Map<String, Object> p : TestSupport.list(ev, "positive")) {
            bodies.add(((String) p.get("payload")).getBytes(StandardCharsets.UTF_8));
            envelopes.add(TestSupport.hex((String) p.get("envelope")));
            contents.add(((String) p.get("contentJSON")).getBytes(StandardCharsets.UTF_8));
            now = TestSupport.num(p, "now");
        }
        for (Map<String, Object> n : TestSupport.list(ev, "negative")) {
            bodies.add(((String) n.get("payload")).getBytes(StandardCharsets.UTF_8));
        }
        byte[] blobKey = new byte[32];
        byte[] plain = new byte[70_000];
        r.nextBytes(blobKey);
        r.nextBytes(plain);
        List<byte[]> blobs = new ArrayList<>();
        List<Integer> sizes = new ArrayList<>();
        for (int size : new int[] {0, 1, 100, 65_536, 70_000}) {
            ByteArrayOutputStream o = new ByteArrayOutputStream();
            BlobWriter.write(blobKey, new byte[16], size, new ByteArrayInputStream(plain), o);
            blobs.add(o.toByteArray());
            sizes.add(size);
        }
        byte[] descriptor = ("{\"url\":\"https://b.example/x\",\"key\":\"" + Base64Url.encode(blobKey)
            + "\",\"size\":100,\"type\":\"image/png\",\"name\":\"n\",\"thumbnail\":{\"url\":\"http://h/\",\"key\":\""
            + Base64Url.encode(blobKey) + "\",\"size\":1,\"type\":\"image/gif\"}}").getBytes(StandardCharsets.UTF_8);
        byte[] ring = KeyRing.create(100).rotate(200).encode();
        ReplayGuard.State st = new ReplayGuard.State();
        st.entries.add(new ReplayGuard.Entry(new byte[16], 1, 2, 3, new byte[16]));
        byte[] replay = ReplayGuard.encode(st);
        long[] perTarget = new long[7];
        long t0 = System.nanoTime();
        for (long i = 0; i < count; i++) {
            int target = (int) (i % 7);
            byte[] input = null;
            try {
                switch (target) {
                    case 0:
                        input = mutate(r, bodies.get(r.nextInt(bodies.size())));
                        opener.openBody(input, now);
                        break;
                    case 1:
                        input = mutate(r, envelopes.get(r.nextInt(envelopes.size())));
                        opener.openEnvelope(input, now);
                        break;
                    case 2:
                        input = mutate(r, contents.get(r.nextInt(contents.size())));
                        Content c = Content.parse(input);
                        c.canonicalJson();
                        break;
                    case 3: {
                        int k = r.nextInt(blobs.size());
                        input = mutate(r, blobs.get(k));
                        long size = r.nextInt(8) == 0 ? r.nextInt(140_000) : sizes.get(k);
                        BlobDecryptor d = new BlobDecryptor(blobKey, size, BlobDecryptor.MAX_SIZE, SINK);
                        int pos = 0;
                        while (pos < input.length) {
                            int n = Math.min(input.length - pos, 1 + r.nextInt(70_000));
                            d.update(input, pos, n);
                            pos += n;
                        }
                        d.finish();
                        break;
                    }
                    case 4: {
                        input = mutate(r, descriptor);
                        Object v = Json.parse(input, 32);
                        if (v instanceof Map) {
                            AttachmentDescriptor.parse((Map<String, Object>) v);
                        }
                        break;
                    }
                    case 5:
                        input = mutate(r, ring);
                        KeyRing.decode(input);
                        break;
                    default:
                        input = mutate(r, replay);
                        ReplayGuard.decode(input, now);
                }
            } catch (SealedPushException | Json.ParseException expected) {
                perTarget[target]++;
            } catch (Throwable t) {
                throw new AssertionError("target " + target + " seed " + seed + " input " + (input == null ? "(mutation)" : TestSupport.hex(input)), t);
            }
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("mutation fuzz: " + count + " inputs in " + ms + " ms (seed " + seed + "), refused per target "
            + java.util.Arrays.toString(perTarget));
        assertTrue(perTarget[0] > 0 || count < 7);
    }
}
