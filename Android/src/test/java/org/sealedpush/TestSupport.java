package org.sealedpush;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;

/** Shared helpers of the tests: the repository's vectors, hex, the Swift CLI. */
final class TestSupport {
    private TestSupport() {
    }

    static Path repo() {
        String r = System.getProperty("sealedpush.repo");
        return Paths.get(r == null || r.isEmpty() ? ".." : r).toAbsolutePath().normalize();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> vectors(String name) throws IOException, Json.ParseException {
        return (Map<String, Object>) Json.parse(Files.readAllBytes(repo().resolve("Specs/vectors").resolve(name)), 1000, true);
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> list(Map<String, Object> m, String name) {
        return (List<Map<String, Object>>) m.get(name);
    }

    static byte[] hex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    static String hex(byte[] b) {
        return X25519.hex(b);
    }

    static long num(Map<String, Object> m, String name) {
        return ((Double) m.get(name)).longValue();
    }

    /** The Swift CLI (sealed-push), or null when not configured. */
    static Path cli() {
        String c = System.getProperty("sealedpush.cli");
        if (c == null || c.isEmpty()) {
            return null;
        }
        return Paths.get(c);
    }

    static boolean ci() {
        return "true".equals(System.getProperty("sealedpush.ci"));
    }

    /** A device key set holding exactly the given raw private keys. */
    static DeviceKeys keys(byte[]... privateKeys) throws SealedPushException {
        final java.util.List<RawDeviceKey> ks = new java.util.ArrayList<>();
        for (byte[] k : privateKeys) {
            ks.add(new RawDeviceKey(k));
        }
        return keyId -> {
            for (RawDeviceKey k : ks) {
                if (java.util.Arrays.equals(X25519.keyId(k.publicKey()), keyId)) {
                    return k;
                }
            }
            return null;
        };
    }
}
