package org.sealedpush;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * Every vector of Specs/vectors/blob-v1.json: the blobs (each negative also fed through 1-byte, chunk-sized and random
 * splits) and the {@code descriptors} cases of §6.2.
 */
final class BlobVectorTests {
    private final Map<String, Object> v;
    private final Map<String, Map<String, Object>> positives = new HashMap<>();

    BlobVectorTests() throws Exception {
        v = TestSupport.vectors("blob-v1.json");
        for (Map<String, Object> p : TestSupport.list(v, "positive")) {
            positives.put((String) p.get("name"), p);
        }
    }

    static byte[] plaintext(int size) {
        byte[] b = new byte[size];
        for (int i = 0; i < size; i++) {
            b[i] = (byte) (i % 251);
        }
        return b;
    }

    static byte[] encrypt(byte[] key, byte[] salt, byte[] plain) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BlobWriter.write(key, salt, plain.length, new ByteArrayInputStream(plain), out);
        return out.toByteArray();
    }

    /** Decrypts with the given split sizes (cycled); returns the plaintext. */
    static byte[] decrypt(byte[] key, long size, long cap, byte[] blob, int[] splits) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BlobDecryptor d = new BlobDecryptor(key, size, cap, out);
        int pos = 0;
        int k = 0;
        while (pos < blob.length) {
            int n = Math.min(splits[k++ % splits.length], blob.length - pos);
            d.update(blob, pos, n);
            pos += n;
        }
        d.finish();
        return out.toByteArray();
    }

    @Test
    void positivesWriteAndReadByteForByte() throws Exception {
        assertEquals(7, positives.size());
        for (Map<String, Object> p : positives.values()) {
            String name = (String) p.get("name");
            int size = (int) TestSupport.num(p, "size");
            byte[] key = TestSupport.hex((String) p.get("key"));
            byte[] blob = encrypt(key, TestSupport.hex((String) p.get("salt")), plaintext(size));
            assertEquals(TestSupport.num(p, "ciphertextSize"), blob.length, name);
            assertEquals(BlobDecryptor.ciphertextSize(size), blob.length, name);
            assertEquals(p.get("ciphertextSHA256"), TestSupport.hex(MessageDigest.getInstance("SHA-256").digest(blob)), name);
            if (p.containsKey("ciphertext")) {
                assertEquals(p.get("ciphertext"), TestSupport.hex(blob), name);
            }
            for (int[] split : new int[][] {{blob.length + 1}, {1}, {BlobDecryptor.CHUNK}, {7, 65_551, 3}}) {
                assertArrayEquals(plaintext(size), decrypt(key, size, BlobDecryptor.MAX_SIZE, blob, split), name);
            }
        }
    }

    private byte[] apply(Map<String, Object> base, byte[] blob, Map<String, Object> e) throws Exception {
        String op = (String) e.get("op");
        switch (op) {
            case "truncate":
                return Arrays.copyOf(blob, (int) TestSupport.num(e, "length"));
            case "delete": {
                int o = (int) TestSupport.num(e, "offset");
                int n = (int) TestSupport.num(e, "length");
                byte[] r = new byte[blob.length - n];
                System.arraycopy(blob, 0, r, 0, o);
                System.arraycopy(blob, o + n, r, o, blob.length - o - n);
                return r;
            }
            case "xor": {
                byte[] r = blob.clone();
                r[(int) TestSupport.num(e, "offset")] ^= (byte) TestSupport.num(e, "mask");
                return r;
            }
            case "append": {
                byte[] h = TestSupport.hex((String) e.get("hex"));
                byte[] r = Arrays.copyOf(blob, blob.length + h.length);
                System.arraycopy(h, 0, r, blob.length, h.length);
                return r;
            }
            case "appendCopy": {
                int o = (int) TestSupport.num(e, "offset");
                int n = (int) TestSupport.num(e, "length");
                byte[] r = Arrays.copyOf(blob, blob.length + n);
                System.arraycopy(blob, o, r, blob.length, n);
                return r;
            }
            case "swap": {
                int a = (int) TestSupport.num(e, "offset");
                int b = (int) TestSupport.num(e, "other");
                int n = (int) TestSupport.num(e, "length");
                byte[] r = blob.clone();
                System.arraycopy(blob, a, r, b, n);
                System.arraycopy(blob, b, r, a, n);
                return r;
            }
            case "reseal": {
                int i = (int) TestSupport.num(e, "chunk");
                boolean last = (Boolean) e.get("last");
                int size = (int) TestSupport.num(base, "size");
                byte[] payloadKey = TestSupport.hex((String) base.get("payloadKey"));
                long chunks = Math.max(1, (size + 65_535) / 65_536);
                int len = (int) (i < chunks - 1 ? 65_536 : size - (chunks - 1) * 65_536);
                byte[] p = Arrays.copyOfRange(plaintext(size), i * 65_536, i * 65_536 + len);
                Cipher c = Cipher.getInstance("ChaCha20-Poly1305");
                c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(payloadKey, "ChaCha20"), new IvParameterSpec(BlobDecryptor.nonce(i, last)));
                byte[] sealed = c.doFinal(p);
                byte[] r = blob.clone();
                System.arraycopy(sealed, 0, r, 21 + i * 65_552, sealed.length);
                return r;
            }
            default:
                throw new AssertionError("unknown edit " + op);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void negativesFailWithTheirExactCodeWhateverTheSplit() throws Exception {
        List<Map<String, Object>> negatives = TestSupport.list(v, "negative");
        assertEquals(39, negatives.size());
        Random random = new Random(19);
        int runs = 0;
        for (Map<String, Object> n : negatives) {
            String name = (String) n.get("name");
            Map<String, Object> base = positives.get((String) n.get("base"));
            byte[] blob = encrypt(TestSupport.hex((String) base.get("key")), TestSupport.hex((String) base.get("salt")),
                plaintext((int) TestSupport.num(base, "size")));
            for (Map<String, Object> e : (List<Map<String, Object>>) n.get("edits")) {
                blob = apply(base, blob, e);
            }
            byte[] key = TestSupport.hex((String) n.get("key"));
            long size = TestSupport.num(n, "size");
            long cap = n.containsKey("maxSize") ? TestSupport.num(n, "maxSize") : BlobDecryptor.MAX_SIZE;
            int[] r = new int[32];
            for (int i = 0; i < r.length; i++) {
                r[i] = 1 + random.nextInt(70_000);
            }
            for (int[] split : new int[][] {{Math.max(1, blob.length)}, {1}, {BlobDecryptor.CHUNK}, {BlobDecryptor.CHUNK + 16}, r}) {
                final byte[] b = blob;
                SealedPushException x = assertThrows(SealedPushException.class, () -> decrypt(key, size, cap, b, split), name);
                assertEquals(n.get("expectedError"), x.code().id(), name + " split " + split[0] + ": " + x.getMessage());
                runs++;
            }
        }
        assertEquals(39 * 5, runs);
    }

    @Test
    @SuppressWarnings("unchecked")
    void descriptorCasesAreAcceptedOrSkippedExactlyAsExpected() throws Exception {
        List<Map<String, Object>> cases = TestSupport.list(v, "descriptors");
        assertTrue(cases.size() >= 18, "descriptors cases: " + cases.size());
        int elements = 0;
        for (Map<String, Object> c : cases) {
            String name = (String) c.get("name");
            // The member's JSON text, read the way content is read (not the vectors' big-integer mode).
            List<Object> attachments = (List<Object>) Json.parse(((String) c.get("attachments")).getBytes(StandardCharsets.UTF_8), 32);
            List<Object> expected = (List<Object>) c.get("expected");
            List<AttachmentDescriptor.Parsed> got = AttachmentDescriptor.parseAll(attachments);
            assertEquals(expected.size(), got.size(), name);
            for (int i = 0; i < expected.size(); i++) {
                AttachmentDescriptor.Parsed p = got.get(i);
                String verdict = p.error() == null ? "ok" : p.error().code().id();
                assertEquals(expected.get(i), verdict, name + " element " + i + (p.error() == null ? "" : ": " + p.error().getMessage()));
                assertEquals(p.error() == null, p.descriptor() != null, name);
                if (p.descriptor() != null) {
                    Map<String, Object> m = (Map<String, Object>) attachments.get(i);
                    assertEquals(((Double) m.get("size")).longValue(), p.descriptor().blob().size(), name);
                    assertEquals(m.get("url"), p.descriptor().blob().url(), name);
                    assertArrayEquals(Base64Url.decodeCanonical((String) m.get("key")), p.descriptor().blob().key(), name);
                    assertEquals(((String) m.get("type")).toLowerCase(java.util.Locale.ROOT), p.descriptor().type().type(), name);
                    assertEquals(m.get("name"), p.descriptor().name(), name);
                }
                elements++;
            }
            // The whole content holding the same array is valid content (skips never reject the text).
            String content = "{\"body\":\"x\",\"attachments\":" + c.get("attachments") + "}";
            assertEquals(attachments.size(), Content.parse(content.getBytes(StandardCharsets.UTF_8)).attachments().size(), name);
        }
        assertTrue(elements >= cases.size(), "elements judged: " + elements);
    }

    @Test
    void anOverLongStreamReleasesEveryVerifiedChunkBeforeTrailingData() throws Exception {
        // blob-v1 §5, over-long streams: the first L bytes go through step 2 before blobTrailingData, whatever the split.
        for (Map<String, Object> p : positives.values()) {
            String name = (String) p.get("name");
            int size = (int) TestSupport.num(p, "size");
            byte[] key = TestSupport.hex((String) p.get("key"));
            byte[] blob = encrypt(key, TestSupport.hex((String) p.get("salt")), plaintext(size));
            byte[] longer = Arrays.copyOf(blob, blob.length + 70_000);
            for (int split : new int[] {longer.length, 1, BlobDecryptor.CHUNK + 16, 4_096}) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                BlobDecryptor d = new BlobDecryptor(key, size, BlobDecryptor.MAX_SIZE, out);
                SealedPushException x = assertThrows(SealedPushException.class, () -> {
                    for (int pos = 0; pos < longer.length; pos += split) {
                        d.update(longer, pos, Math.min(split, longer.length - pos));
                    }
                    d.finish();
                }, name);
                assertEquals(ErrorCode.BLOB_TRAILING_DATA, x.code(), name + " split " + split);
                assertArrayEquals(plaintext(size), out.toByteArray(), name + " split " + split + ": every chunk released first");
            }
        }
    }
}
