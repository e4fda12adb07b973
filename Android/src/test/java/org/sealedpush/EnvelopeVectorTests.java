package org.sealedpush;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Every opener-side vector of Specs/vectors/envelope-v1.json and the RFC 9180 suite vectors. */
final class EnvelopeVectorTests {
    private final Map<String, Object> v;

    EnvelopeVectorTests() throws Exception {
        v = TestSupport.vectors("envelope-v1.json");
    }

    private EnvelopeOpener opener(String topic) throws SealedPushException {
        byte[] server = X25519.parsePublicKeyText((String) v.get("serverPublicKey"));
        return new EnvelopeOpener(topic, TestSupport.keys(TestSupport.hex((String) v.get("devicePrivateKey"))),
            Collections.singletonList(server));
    }

    @Test
    void keysMatchTheirTextsAndIds() throws Exception {
        byte[] dev = X25519.publicKeyOf(TestSupport.hex((String) v.get("devicePrivateKey")));
        assertEquals(v.get("devicePublicKey"), X25519.publicKeyText(dev));
        assertEquals(v.get("deviceKeyId"), X25519.hex(X25519.keyId(dev)));
        byte[] srv = X25519.publicKeyOf(TestSupport.hex((String) v.get("serverPrivateKey")));
        assertEquals(v.get("serverPublicKey"), X25519.publicKeyText(srv));
        assertEquals(v.get("serverKeyId"), X25519.hex(X25519.keyId(srv)));
    }

    @Test
    @SuppressWarnings("unchecked")
    void positivesOpenToTheirContentByteForByte() throws Exception {
        List<Map<String, Object>> positives = TestSupport.list(v, "positive");
        assertEquals(14, positives.size());
        EnvelopeOpener opener = opener((String) v.get("topic"));
        for (Map<String, Object> p : positives) {
            String name = (String) p.get("name");
            byte[] body = ((String) p.get("payload")).getBytes(StandardCharsets.UTF_8);
            OpenedEnvelope o = opener.openBody(body, TestSupport.num(p, "now"));
            assertEquals(p.get("contentJSON"), o.content().canonicalJson(), name);
            assertEquals(p.get("messageId"), TestSupport.hex(o.messageId()), name);
            assertEquals(TestSupport.num(p, "issuedAt"), o.issuedAt(), name);
            assertEquals(TestSupport.num(p, "expiresAt"), o.expiresAt(), name);
            assertEquals(p.get("deviceKeyId") == null ? v.get("deviceKeyId") : p.get("deviceKeyId"),
                TestSupport.hex(o.recipientKeyId()), name);
            // The vector's content object, written canonically by this implementation, is its contentJSON.
            assertEquals(p.get("contentJSON"), Json.canonicalContent((Map<String, Object>) p.get("content")), name);
            // The envelope is the sp value decoded.
            Map<String, Object> parsed = (Map<String, Object>) Json.parse(body, 32);
            assertArrayEquals(TestSupport.hex((String) p.get("envelope")), Base64Url.decodeCanonical((String) parsed.get("sp")), name);
            // And the padded plaintext is what HPKE opens (checked through the AEAD with the vector's layout).
            byte[] padded = TestSupport.hex((String) p.get("paddedPlaintext"));
            byte[] content = ((String) p.get("contentJSON")).getBytes(StandardCharsets.UTF_8);
            assertEquals(content.length, ((padded[0] & 0xff) << 8) | (padded[1] & 0xff), name);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void negativesFailWithTheirExactCode() throws Exception {
        List<Map<String, Object>> negatives = TestSupport.list(v, "negative");
        assertEquals(61, negatives.size());
        for (Map<String, Object> n : negatives) {
            String name = (String) n.get("name");
            EnvelopeOpener opener = opener((String) n.get("topic"));
            byte[] body = ((String) n.get("payload")).getBytes(StandardCharsets.UTF_8);
            long now = TestSupport.num(n, "now");
            SealedPushException e = assertThrows(SealedPushException.class, () -> {
                if (Boolean.TRUE.equals(n.get("parsedBody"))) {
                    opener.openParsed((Map<String, Object>) Json.parse(body, 1000), now);
                } else {
                    opener.openBody(body, now);
                }
            }, name);
            assertEquals(n.get("expectedError"), e.code().id(), name + ": " + e.getMessage());
        }
    }

    @Test
    void aParsedBodyOverTheLongestEnvelopeTextIsMalformedEnvelopeBeforeDecoding() throws Exception {
        // Specs/fcm-v1.md §4 step 3a, "the envelope spec's rules for a body handed over parsed": a text longer than
        // b64len(82 + 16 + 4096) = floor((4 * 4194 + 2) / 3) = floor(16778 / 3) = 5,592 is malformedEnvelope
        // before any decoding, though "=" (and a length of 1 mod 4) would make it badEncoding (step 3).
        EnvelopeOpener opener = opener((String) v.get("topic"));
        String[][] cases = {
            {"A".repeat(5599) + "=", "malformedEnvelope"}, // 5,600 characters: the audit's input
            {"A".repeat(5593), "malformedEnvelope"},       // 5,593 = 1 (mod 4)
            {"A".repeat(5591) + "=", "badEncoding"},       // 5,592: not over the longest, so decoded, and "=" is refused
        };
        for (String[] c : cases) {
            String name = c[0].length() + " characters";
            Map<String, Object> body = Collections.singletonMap("sp", c[0]);
            SealedPushException e = assertThrows(SealedPushException.class, () -> opener.openParsed(body, 1_800_000_000L), name);
            assertEquals(c[1], e.code().id(), name + ": " + e.getMessage());
        }
    }

    @Test
    void acceptedBodiesOpen() throws Exception {
        List<Map<String, Object>> accepted = TestSupport.list(v, "accepted");
        assertEquals(6, accepted.size());
        EnvelopeOpener opener = opener((String) v.get("topic"));
        for (Map<String, Object> a : accepted) {
            OpenedEnvelope o = opener.openBody(((String) a.get("payload")).getBytes(StandardCharsets.UTF_8), TestSupport.num(a, "now"));
            assertEquals(a.get("contentJSON"), o.content().canonicalJson(), (String) a.get("name"));
        }
    }

    @Test
    void canonicalNumbers() {
        List<Map<String, Object>> numbers = TestSupport.list(v, "canonicalNumbers");
        assertEquals(31, numbers.size());
        for (Map<String, Object> c : numbers) {
            double d = Double.longBitsToDouble(Long.parseUnsignedLong((String) c.get("bits"), 16));
            assertEquals(c.get("text"), Json.canonicalNumber(d), (String) c.get("bits"));
        }
    }

    @Test
    void invalidPublicKeysAreRefused() {
        List<Map<String, Object>> keys = TestSupport.list(v, "invalidPublicKeys");
        assertEquals(7, keys.size());
        for (Map<String, Object> k : keys) {
            SealedPushException e = assertThrows(SealedPushException.class,
                () -> X25519.parsePublicKeyText((String) k.get("text")), (String) k.get("name"));
            assertEquals(ErrorCode.INVALID_KEY, e.code(), (String) k.get("name"));
        }
    }

    @Test
    void invalidTopicsAreRefusedAtCreation() throws Exception {
        for (String topic : new String[] {"", "a\0b", new String(new char[256]).replace('\0', 'x')}) {
            SealedPushException e = assertThrows(SealedPushException.class, () -> opener(topic));
            assertEquals(ErrorCode.INVALID_TOPIC, e.code());
        }
        opener(new String(new char[255]).replace('\0', 'x'));
    }

    @Test
    void rfc9180AuthModeVector() throws Exception {
        Map<String, Object> r = TestSupport.vectors("rfc9180-x25519-chacha20poly1305.json");
        int checked = 0;
        for (Map<String, Object> t : TestSupport.list(r, "vectors")) {
            if (TestSupport.num(t, "mode") != 2) {
                continue;
            }
            RawDeviceKey skR = new RawDeviceKey(TestSupport.hex((String) t.get("skRm")));
            assertEquals(t.get("pkRm"), TestSupport.hex(skR.publicKey()));
            byte[] shared = Hpke.authDecap(TestSupport.hex((String) t.get("enc")), skR, TestSupport.hex((String) t.get("pkSm")));
            assertEquals(t.get("shared_secret"), TestSupport.hex(shared));
            byte[][] kn = Hpke.keySchedule(shared, TestSupport.hex((String) t.get("info")));
            assertEquals(t.get("key"), TestSupport.hex(kn[0]));
            assertEquals(t.get("base_nonce"), TestSupport.hex(kn[1]));
            @SuppressWarnings("unchecked")
            Map<String, Object> first = ((List<Map<String, Object>>) t.get("encryptions")).get(0);
            byte[] ct = TestSupport.hex((String) first.get("ct"));
            byte[] pt = Hpke.aeadOpen(kn[0], kn[1], TestSupport.hex((String) first.get("aad")), ct, 0, ct.length);
            assertEquals(first.get("pt"), TestSupport.hex(pt));
            checked++;
        }
        if (checked == 0) {
            fail("no mode_auth vector in the RFC 9180 file");
        }
    }
}
