package org.sealedpush;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code Specs/vectors/keyring-v1.json}: key ring files every reader must accept (with the keys it reads) or reject as
 * {@code keyStoreCorrupt} ({@code Specs/keyring-v1.md} §2), the same files the Swift reader and the spec's Python
 * checker read.
 */
final class KeyRingVectorTests {
    private final Map<String, Object> v;

    KeyRingVectorTests() throws Exception {
        v = TestSupport.vectors("keyring-v1.json");
    }

    @Test
    void acceptedFilesReadAsTheirKeys() throws Exception {
        List<Map<String, Object>> accepted = TestSupport.list(v, "accepted");
        assertTrue(accepted.size() >= 6);
        for (Map<String, Object> a : accepted) {
            String name = (String) a.get("name");
            KeyRing ring = KeyRing.decode(((String) a.get("file")).getBytes(StandardCharsets.UTF_8));
            List<String> got = new ArrayList<>();
            for (KeyRingEntry e : ring.keys()) {
                got.add(e.keyIdText() + " " + e.createdAt() + " " + e.retiredAt());
            }
            List<String> expected = new ArrayList<>();
            for (Map<String, Object> k : TestSupport.list(a, "keys")) {
                Object retired = k.get("retiredAt");
                expected.add(k.get("keyId") + " " + TestSupport.num(k, "createdAt") + " "
                        + (retired == null ? -1 : TestSupport.num(k, "retiredAt")));
            }
            assertEquals(expected, got, name);
        }
    }

    @Test
    void rejectedFilesAreKeyStoreCorrupt() {
        List<Map<String, Object>> rejected = TestSupport.list(v, "rejected");
        assertTrue(rejected.size() >= 15);
        for (Map<String, Object> r : rejected) {
            String name = (String) r.get("name");
            assertEquals("keyStoreCorrupt", r.get("expectedError"), name);
            SealedPushException e = assertThrows(SealedPushException.class,
                    () -> KeyRing.decode(((String) r.get("file")).getBytes(StandardCharsets.UTF_8)), name);
            assertEquals(ErrorCode.KEY_STORE_CORRUPT, e.code(), name);
        }
    }
}
