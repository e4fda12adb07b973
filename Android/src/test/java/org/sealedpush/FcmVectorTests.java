package org.sealedpush;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The receiver vectors of Specs/vectors/fcm-v1.json (the FCM profile, Specs/fcm-v1.md §4): each data map opens to its
 * content or fails with its code, through {@link EnvelopeOpener#openData} and the messaging step. Skipped when the
 * file is not in this checkout (the profile lands on its own branch); {@code -Dsealedpush.fcm.vectors=PATH} names
 * another copy.
 */
final class FcmVectorTests {
    @SuppressWarnings("unchecked")
    private static Map<String, Object> vectors() throws Exception {
        String p = System.getProperty("sealedpush.fcm.vectors", "");
        Path path = p.isEmpty() ? TestSupport.repo().resolve("Specs/vectors/fcm-v1.json") : Paths.get(p);
        assumeTrue(Files.exists(path), "Specs/vectors/fcm-v1.json not in this checkout");
        return (Map<String, Object>) Json.parse(Files.readAllBytes(path), 1000, true);
    }

    private static EnvelopeOpener opener(Map<String, Object> v, String topic) throws Exception {
        return new EnvelopeOpener(topic, TestSupport.keys(TestSupport.hex((String) v.get("devicePrivateKey"))),
            Collections.singletonList(X25519.parsePublicKeyText((String) v.get("serverPublicKey"))));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, String> data(Map<String, Object> m) {
        Map<String, String> out = new HashMap<>();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) m.get("data")).entrySet()) {
            out.put(e.getKey(), (String) e.getValue());
        }
        return out;
    }

    @Test
    void positivesOpenAndNegativesFailWithTheirCode() throws Exception {
        Map<String, Object> v = vectors();
        List<Map<String, Object>> positives = TestSupport.list(v, "positive");
        EnvelopeOpener opener = opener(v, (String) v.get("topic"));
        for (Map<String, Object> p : positives) {
            OpenedEnvelope o = opener.openData(data(p), TestSupport.num(p, "now"));
            assertEquals(p.get("contentJSON"), o.content().canonicalJson(), (String) p.get("name"));
            assertEquals(p.get("messageId"), TestSupport.hex(o.messageId()), (String) p.get("name"));
            // The same through the messaging step (no replay guard, no attachments): one notification.
            long now = TestSupport.num(p, "now");
            StepResult r = new SealedPushMessagingStep(opener, null, null, 5_000, () -> now).process(data(p));
            assertEquals(StepResult.Kind.NOTIFICATION, r.kind(), (String) p.get("name"));
            assertEquals(p.get("contentJSON"), r.content().canonicalJson());
        }
        List<Map<String, Object>> negatives = TestSupport.list(v, "negative");
        for (Map<String, Object> n : negatives) {
            EnvelopeOpener o = opener(v, (String) n.get("topic"));
            SealedPushException e = assertThrows(SealedPushException.class,
                () -> o.openData(data(n), TestSupport.num(n, "now")), (String) n.get("name"));
            assertEquals(n.get("expectedError"), e.code().id(), n.get("name") + ": " + e.getMessage());
            long now = TestSupport.num(n, "now");
            StepResult r = new SealedPushMessagingStep(o, null, null, 5_000, () -> now).process(data(n));
            assertEquals(StepResult.Kind.PLACEHOLDER, r.kind());
            assertEquals(n.get("expectedError"), r.reason().id());
        }
        System.out.println("fcm vectors: " + positives.size() + " positive, " + negatives.size() + " negative");
    }
}
