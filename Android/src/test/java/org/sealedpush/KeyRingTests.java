package org.sealedpush;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Key ring per Specs/keyring-v1.md §1–4 with the atomic file store. */
final class KeyRingTests {
    @TempDir
    Path dir;

    private static ErrorCode code(Executable e) {
        try {
            e.run();
        } catch (SealedPushException x) {
            return x.code();
        } catch (Exception x) {
            throw new AssertionError("not the library's exception", x);
        }
        throw new AssertionError("no exception");
    }

    interface Executable {
        void run() throws Exception;
    }

    @Test
    void createRotatePruneRoundTripThroughTheFile() throws Exception {
        FileKeyRingStore store = new FileKeyRingStore(dir, false);
        assertEquals(ErrorCode.KEYS_UNAVAILABLE, code(store::read));
        KeyRing r1 = store.create(1_800_000_000L);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("keyring.json"))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, code(() -> store.create(1_800_000_000L)));
        KeyRing r2 = store.rotate(1_800_086_400L);
        assertEquals(2, r2.keys().size());
        assertEquals(1_800_086_400L, r2.keys().get(0).retiredAt());
        assertArrayEquals(r1.current().publicKey(), r2.keys().get(0).publicKey());
        assertEquals(-1, r2.current().retiredAt());
        // Both keys open: find by id.
        assertNotNull(store.find(r1.current().keyId()));
        assertNotNull(store.find(r2.current().keyId()));
        assertNull(store.find(new byte[8]));
        // Prune keeps the retired key inside the grace window, drops it at retiredAt + grace.
        assertEquals(2, store.prune(1_800_086_400L + KeyRing.DEFAULT_GRACE_WINDOW - 1, KeyRing.DEFAULT_GRACE_WINDOW).keys().size());
        KeyRing pruned = store.prune(1_800_086_400L + KeyRing.DEFAULT_GRACE_WINDOW, KeyRing.DEFAULT_GRACE_WINDOW);
        assertEquals(1, pruned.keys().size());
        assertArrayEquals(r2.current().publicKey(), store.read().current().publicKey());
        // No stale temporaries.
        try (java.util.stream.Stream<Path> s = Files.list(dir)) {
            assertEquals(0, s.filter(p -> p.getFileName().toString().contains(".tmp-")).count());
        }
        // Read-only store refuses writes and creates nothing.
        FileKeyRingStore ro = new FileKeyRingStore(dir, true);
        assertEquals(ErrorCode.INVALID_ARGUMENT, code(() -> ro.rotate(1_900_000_000L)));
        assertEquals(ErrorCode.INVALID_ARGUMENT, code(() -> KeyRing.create(1L << 53)));
    }

    @Test
    @SuppressWarnings("unchecked")
    void registrationRecord() throws Exception {
        KeyRing ring = KeyRing.create(1_800_000_000L);
        String json = ring.registration(15_552_000L, "fcm-token-1").toJson();
        Map<String, Object> m = (Map<String, Object>) Json.parse(json.getBytes(StandardCharsets.UTF_8), 4);
        assertEquals(1.0, m.get("version"));
        byte[] pk = X25519.parsePublicKeyText((String) m.get("publicKey"));
        assertEquals(X25519.hex(X25519.keyId(pk)), m.get("keyId"));
        assertEquals("2027-01-15T08:00:00Z", m.get("createdAt"));
        assertEquals("2027-07-14T08:00:00Z", m.get("expiresAt"));
        assertEquals("fcm", m.get("platform"));
        assertEquals("fcm-token-1", m.get("fcmToken"));
        assertTrue(json.startsWith("{\"version\":1,\"platform\":\"fcm\",\"fcmToken\":\"fcm-token-1\",\"publicKey\":"), json);
        assertEquals(false, ring.registration(null, null).toJson().contains("platform"));
    }

    private void writeRing(String json) throws Exception {
        Files.write(dir.resolve("keyring.json"), json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void corruptRingsAreRefusedAndLeftUntouched() throws Exception {
        KeyRing ring = KeyRing.create(100).rotate(200);
        String good = new String(ring.encode(), StandardCharsets.UTF_8);
        FileKeyRingStore store = new FileKeyRingStore(dir, true);
        writeRing(good);
        assertEquals(2, store.read().keys().size());
        String k0 = ring.keys().get(0).keyIdText();
        String[] bad = {
            "", "[]", "{}", good.replace("SealedPush keyring v1", "SealedPush keyring v2"),
            good.replace(",\"retiredAt\":200", ""), // the first key lacks retiredAt
            good.replace("\"createdAt\":200}", "\"createdAt\":200,\"retiredAt\":300}"), // the last has it
            good.replace(k0, "0000000000000000"), good.replace("\"createdAt\":100", "\"createdAt\":-1"),
            good.replace("\"createdAt\":100", "\"createdAt\":9007199254740992"),
            good.replace("\"createdAt\":100", "\"createdAt\":1.5"),
            good.replace("\"createdAt\":100", "\"createdAt\":100,\"createdAt\":100"),
            "{\"format\":\"SealedPush keyring v1\",\"keys\":[]}",
        };
        for (String b : bad) {
            writeRing(b);
            assertEquals(ErrorCode.KEY_STORE_CORRUPT, code(store::read), b);
            assertEquals(b, new String(Files.readAllBytes(dir.resolve("keyring.json")), StandardCharsets.UTF_8));
        }
        // Unknown members are ignored, retiredAt null on the last key is accepted.
        writeRing(good.replace("\"createdAt\":200}", "\"createdAt\":200,\"retiredAt\":null,\"x\":[1]}"));
        assertEquals(2, store.read().keys().size());
        // Over 1 MiB: refused before reading.
        Files.write(dir.resolve("keyring.json"), new byte[KeyRing.MAX_FILE_SIZE + 1]);
        assertEquals(ErrorCode.KEY_STORE_CORRUPT, code(store::read));
    }

    @Test
    void linksAndSpecialFilesAreCorruptNeverFollowed() throws Exception {
        Path real = Files.createDirectory(dir.resolve("real"));
        FileKeyRingStore writer = new FileKeyRingStore(real, false);
        writer.create(100);
        Path link = dir.resolve("link");
        Files.createSymbolicLink(link, real);
        assertEquals(ErrorCode.KEY_STORE_CORRUPT, code(() -> new FileKeyRingStore(link, true).read()));
        Path other = Files.createDirectory(dir.resolve("other"));
        Files.createSymbolicLink(other.resolve("keyring.json"), real.resolve("keyring.json"));
        assertEquals(ErrorCode.KEY_STORE_CORRUPT, code(() -> new FileKeyRingStore(other, true).read()));
        assertEquals(ErrorCode.KEY_STORE_CORRUPT, code(() -> new FileKeyRingStore(other, false).rotate(200)));
        assertTrue(Files.isSymbolicLink(other.resolve("keyring.json")));
        Path fifoDir = Files.createDirectory(dir.resolve("fifo"));
        Process p = new ProcessBuilder("mkfifo", fifoDir.resolve("keyring.json").toString()).start();
        assertEquals(0, p.waitFor());
        assertEquals(ErrorCode.KEY_STORE_CORRUPT, code(() -> new FileKeyRingStore(fifoDir, true).read()));
        assertEquals(ErrorCode.KEYS_UNAVAILABLE, code(() -> new FileKeyRingStore(dir.resolve("missing"), true).read()));
    }

    @Test
    void concurrentRotationsLoseNoKey() throws Exception {
        FileKeyRingStore store = new FileKeyRingStore(dir, false);
        store.create(100);
        Thread[] ts = new Thread[4];
        java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        for (int t = 0; t < ts.length; t++) {
            ts[t] = new Thread(() -> {
                try {
                    for (int i = 0; i < 5; i++) {
                        store.rotate(200);
                    }
                } catch (Throwable e) {
                    failure.set(e);
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        assertNull(failure.get());
        assertEquals(21, store.read().keys().size());
    }

    @Test
    void openerReadsKeysThroughTheStoreAndReportsUnavailable() throws Exception {
        byte[][] server = X25519.generate();
        FileKeyRingStore ro = new FileKeyRingStore(dir.resolve("none"), true);
        EnvelopeOpener opener = new EnvelopeOpener("com.example", ro, java.util.Collections.singletonList(server[1]));
        Map<String, Object> v = TestSupport.vectors("envelope-v1.json");
        @SuppressWarnings("unchecked")
        Map<String, Object> p = ((java.util.List<Map<String, Object>>) v.get("positive")).get(0);
        assertEquals(ErrorCode.KEYS_UNAVAILABLE,
            code(() -> opener.openBody(((String) p.get("payload")).getBytes(StandardCharsets.UTF_8), TestSupport.num(p, "now"))));
    }
}
