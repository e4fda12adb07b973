package org.sealedpush;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A device key ring ({@code Specs/keyring-v1.md} §1–2): one current key (the last) and retired keys, oldest first.
 * Immutable: create, rotate and prune return a new ring. Also the {@link DeviceKeys} of an opener.
 */
public final class KeyRing implements DeviceKeys {
    /** The file format's name. */
    public static final String FORMAT = "SealedPush keyring v1";
    /** The default grace window, 30 days. */
    public static final long DEFAULT_GRACE_WINDOW = 2_592_000L;
    /** The largest key ring file, 1 MiB. */
    public static final int MAX_FILE_SIZE = 1_048_576;
    static final long MAX_TIME = 9_007_199_254_740_991L;

    private final List<KeyRingEntry> keys;

    private KeyRing(List<KeyRingEntry> keys) {
        this.keys = Collections.unmodifiableList(new ArrayList<>(keys));
    }

    private static void checkTime(long now) throws SealedPushException {
        if (now < 0 || now > MAX_TIME) {
            throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "time " + now + " is outside 0 ... 2^53 - 1");
        }
    }

    private static KeyRingEntry fresh(long now) throws SealedPushException {
        try {
            byte[][] kp = X25519.generate();
            KeyRingEntry e = new KeyRingEntry(kp[1], kp[0], now, -1);
            Arrays.fill(kp[0], (byte) 0);
            return e;
        } catch (GeneralSecurityException e) {
            throw new SealedPushException(ErrorCode.UNSUPPORTED_PLATFORM, "X25519 key generation unavailable", e);
        }
    }

    /** A ring with one fresh current key created at {@code now}. */
    public static KeyRing create(long now) throws SealedPushException {
        checkTime(now);
        return new KeyRing(Collections.singletonList(fresh(now)));
    }

    /** A new current key; the previous one is retired at {@code now}. */
    public KeyRing rotate(long now) throws SealedPushException {
        checkTime(now);
        List<KeyRingEntry> next = new ArrayList<>(keys);
        next.set(next.size() - 1, current().retired(now));
        next.add(fresh(now));
        return new KeyRing(next).fitted();
    }

    /** Removes every retired key with {@code retiredAt + graceWindow <= now}; never the current key. */
    public KeyRing prune(long now, long graceWindow) throws SealedPushException {
        checkTime(now);
        if (graceWindow < 0) {
            throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "the grace window must not be negative");
        }
        List<KeyRingEntry> next = new ArrayList<>();
        for (KeyRingEntry e : keys) {
            if (!e.isRetired() || e.retiredAt() + graceWindow > now) {
                next.add(e);
            }
        }
        return new KeyRing(next);
    }

    /** Drops the oldest retired keys until the encoded ring fits {@link #MAX_FILE_SIZE} (rotation only, §2.2). */
    KeyRing fitted() {
        List<KeyRingEntry> next = new ArrayList<>(keys);
        while (new KeyRing(next).encode().length > MAX_FILE_SIZE && next.size() > 1) {
            int oldest = 0;
            for (int i = 1; i < next.size() - 1; i++) {
                if (next.get(i).retiredAt() < next.get(oldest).retiredAt()) {
                    oldest = i;
                }
            }
            next.remove(oldest);
        }
        return new KeyRing(next);
    }

    public KeyRingEntry current() {
        return keys.get(keys.size() - 1);
    }

    public List<KeyRingEntry> keys() {
        return keys;
    }

    @Override
    public DeviceKeyAgreement find(byte[] keyId) throws SealedPushException {
        for (KeyRingEntry e : keys) {
            if (e.samePublicKey(keyId)) {
                return new RawDeviceKey(e.privateKey(), e.publicKey());
            }
        }
        return null;
    }

    /** The registration record of the current key (§4), optionally with an FCM token. */
    public DeviceRegistration registration(Long keyLifetime, String fcmToken) {
        KeyRingEntry c = current();
        return new DeviceRegistration(c.publicKey(), c.createdAt(),
            keyLifetime == null ? null : c.createdAt() + keyLifetime, fcmToken);
    }

    /** The file form (§2): UTF-8 JSON. Holds private keys: never log it. */
    public byte[] encode() {
        StringBuilder sb = new StringBuilder();
        sb.append("{\"format\":\"").append(FORMAT).append("\",\"keys\":[");
        for (int i = 0; i < keys.size(); i++) {
            KeyRingEntry e = keys.get(i);
            if (i > 0) {
                sb.append(',');
            }
            sb.append("{\"keyId\":\"").append(e.keyIdText()).append("\",\"publicKey\":\"")
                .append(X25519.publicKeyText(e.publicKey())).append("\",\"privateKey\":\"");
            byte[] sk = e.privateKey();
            sb.append(X25519.privateKeyText(sk));
            Arrays.fill(sk, (byte) 0);
            sb.append("\",\"createdAt\":").append(e.createdAt());
            if (e.isRetired()) {
                sb.append(",\"retiredAt\":").append(e.retiredAt());
            }
            sb.append('}');
        }
        sb.append("]}\n");
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Parses and validates the file form; {@code keyStoreCorrupt} for anything §2 forbids. */
    @SuppressWarnings("unchecked")
    public static KeyRing decode(byte[] data) throws SealedPushException {
        if (data.length > MAX_FILE_SIZE) {
            throw corrupt("the key ring is larger than 1 MiB");
        }
        Object v;
        try {
            v = Json.parse(data, 32);
        } catch (Json.ParseException e) {
            throw corrupt("the key ring is not valid JSON");
        }
        if (!(v instanceof Map)) {
            throw corrupt("the key ring is not a JSON object");
        }
        Map<String, Object> m = (Map<String, Object>) v;
        if (!FORMAT.equals(m.get("format"))) {
            throw corrupt("format is not \"" + FORMAT + "\"");
        }
        if (!(m.get("keys") instanceof List) || ((List<Object>) m.get("keys")).isEmpty()) {
            throw corrupt("keys must be a non-empty array");
        }
        List<Object> list = (List<Object>) m.get("keys");
        List<KeyRingEntry> keys = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < list.size(); i++) {
            if (!(list.get(i) instanceof Map)) {
                throw corrupt("key " + i + " is not an object");
            }
            Map<String, Object> k = (Map<String, Object>) list.get(i);
            if (!(k.get("keyId") instanceof String) || !(k.get("publicKey") instanceof String)
                || !(k.get("privateKey") instanceof String)) {
                throw corrupt("key " + i + " lacks keyId, publicKey or privateKey strings");
            }
            long createdAt = time(k.get("createdAt"), "createdAt", i);
            Object r = k.get("retiredAt");
            boolean last = i == list.size() - 1;
            long retiredAt = -1;
            if (r != null && r != Json.NULL) {
                retiredAt = time(r, "retiredAt", i);
            }
            if (last != (retiredAt < 0)) {
                throw corrupt("exactly the last key must lack retiredAt (key " + i + ")");
            }
            String skText = (String) k.get("privateKey");
            if (skText.endsWith("\n")) {
                throw corrupt("key " + i + ": privateKey must not end with a newline");
            }
            byte[] sk;
            byte[] pk;
            try {
                sk = X25519.parsePrivateKeyText(skText);
                pk = X25519.publicKeyOf(sk);
            } catch (SealedPushException | GeneralSecurityException e) {
                throw corrupt("key " + i + ": privateKey does not parse");
            }
            if (!X25519.publicKeyText(pk).equals(k.get("publicKey"))) {
                throw corrupt("key " + i + ": publicKey does not match privateKey");
            }
            String id = X25519.hex(X25519.keyId(pk));
            if (!id.equals(k.get("keyId"))) {
                throw corrupt("key " + i + ": keyId does not match publicKey");
            }
            if (!ids.add(id)) {
                throw corrupt("key id " + id + " appears twice");
            }
            keys.add(new KeyRingEntry(pk, sk, createdAt, retiredAt));
            Arrays.fill(sk, (byte) 0);
        }
        return new KeyRing(keys);
    }

    private static long time(Object v, String name, int i) throws SealedPushException {
        if (!(v instanceof Double)) {
            throw corrupt("key " + i + ": " + name + " must be an integer");
        }
        double d = (Double) v;
        if (d != Math.rint(d) || d < 0 || d > MAX_TIME) {
            throw corrupt("key " + i + ": " + name + " must be an integer from 0 to 2^53 - 1");
        }
        return (long) d;
    }

    private static SealedPushException corrupt(String what) {
        return new SealedPushException(ErrorCode.KEY_STORE_CORRUPT, what);
    }
}
