package org.sealedpush;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The resolutions of the spec questions listed in Android/README.md ("Notes on the spec"), pinned. */
final class SpecNotesTests {
    private static Content content(String json) throws SealedPushException {
        return Content.parse(json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void anIntegerMemberTakesAnyWholeNumber() throws Exception {
        assertEquals(1, content("{\"badge\":1.0}").badge());
        assertEquals(1, content("{\"badge\":1e0}").badge());
        assertEquals(2147483647L, content("{\"badge\":2.147483647e9}").badge());
        for (String bad : new String[] {"1.5", "-1", "2147483648", "\"1\""}) {
            SealedPushException x = assertThrows(SealedPushException.class, () -> content("{\"badge\":" + bad + "}"), bad);
            assertEquals(ErrorCode.MALFORMED_CONTENT, x.code(), bad);
        }
        // keyring-v1 §2: createdAt and retiredAt likewise.
        KeyRing ring = KeyRing.create(1_800_000_000L);
        String text = new String(ring.encode(), StandardCharsets.UTF_8);
        String whole = text.replace("\"createdAt\":1800000000", "\"createdAt\":1800000000.0");
        assertEquals(text.length() + 2, whole.length());
        assertEquals(1_800_000_000L, KeyRing.decode(whole.getBytes(StandardCharsets.UTF_8)).current().createdAt());
        String fraction = text.replace("\"createdAt\":1800000000", "\"createdAt\":1800000000.5");
        assertEquals(ErrorCode.KEY_STORE_CORRUPT,
            assertThrows(SealedPushException.class, () -> KeyRing.decode(fraction.getBytes(StandardCharsets.UTF_8))).code());
    }

    @Test
    @SuppressWarnings("unchecked")
    void aThumbnailIsHeldToTheImageCapAndADefectiveOneIsDroppedAlone() throws Exception {
        String ref = "\"url\":\"https://blobs.example.com/t\",\"key\":\"BRAbJjE8R1JdaHN-iZSfqrXAy9bh7PcCDRgjLjlET1o\"";
        String video = "{" + ref + ",\"size\":40000000,\"type\":\"video/mp4\",\"thumbnail\":{" + ref + ",\"size\":%d,\"type\":\"%s\"}}";
        String[][] cases = {
            {"10000000", "image/png", "kept"},      // at the image cap
            {"10000001", "image/png", "dropped"},   // over the image cap, though under the video's
            {"1000", "video/mp4", "dropped"},       // not an image
        };
        for (String[] c : cases) {
            String json = String.format(video, Long.parseLong(c[0]), c[1]);
            Map<String, Object> m = (Map<String, Object>) Json.parse(json.getBytes(StandardCharsets.UTF_8), 32);
            AttachmentDescriptor d = AttachmentDescriptor.parse(m);
            assertNotNull(d, json);
            assertEquals(40_000_000L, d.blob().size());
            if (c[2].equals("kept")) {
                assertNotNull(d.thumbnail(), json);
                assertEquals(Long.parseLong(c[0]), d.thumbnail().blob().size());
            } else {
                assertNull(d.thumbnail(), json);
            }
        }
    }
}
