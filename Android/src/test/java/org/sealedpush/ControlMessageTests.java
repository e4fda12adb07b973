package org.sealedpush;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code Specs/control-v1.md} §1–§2 in the Java library: notification ids and control messages in content (every
 * accepted and refused case of the spec's tables, as hand-written JSON), and the messaging step with remove, update
 * and badge messages (applied once, never shown, duplicates not applied again, replays falling back).
 */
final class ControlMessageTests {
    @TempDir
    Path dir;

    private static final String TOPIC = "com.example.android";
    private TestSealer sealer;
    private KeyRing ring;

    @BeforeEach
    void setUp() throws Exception {
        sealer = new TestSealer(TOPIC);
        ring = KeyRing.create(now());
    }

    static long now() {
        return System.currentTimeMillis() / 1000;
    }

    private static Content parse(String json) throws SealedPushException {
        return Content.parse(json.getBytes(StandardCharsets.UTF_8));
    }

    private static void refused(String json) {
        SealedPushException e = assertThrows(SealedPushException.class, () -> parse(json), json);
        assertEquals(ErrorCode.MALFORMED_CONTENT, e.code(), json);
    }

    private static String repeat(String s, int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.append(s);
        }
        return sb.toString();
    }

    /** {@code ["i0","i1",…]} with {@code n} distinct ids. */
    private static String ids(int n) {
        List<String> l = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            l.add("\"i" + i + "\"");
        }
        return "[" + String.join(",", l) + "]";
    }

    // ---- §1 notification-id ----

    @Test
    void notificationIdsOfOneTo64BytesWithoutControlCharactersAreAccepted() throws Exception {
        assertEquals("a", parse("{\"notification-id\":\"a\"}").notificationId());
        String ascii64 = repeat("x", 64);
        assertEquals(ascii64, parse("{\"notification-id\":\"" + ascii64 + "\"}").notificationId());
        // 32 × "é" (2 bytes each) = 64 bytes; 16 × U+1F600 (4 bytes, a surrogate pair in Java) = 64 bytes.
        String twoByte = repeat("\u00e9", 32);
        assertEquals(twoByte, parse("{\"notification-id\":\"" + twoByte + "\"}").notificationId());
        String fourByte = repeat("\ud83d\ude00", 16);
        assertEquals(fourByte, parse("{\"notification-id\":\"" + fourByte + "\"}").notificationId());
        // U+0020 and U+007F are at or above U+0020.
        assertEquals(" \u007f", parse("{\"notification-id\":\" \\u007f\"}").notificationId());
        assertNull(parse("{\"title\":\"t\"}").notificationId());
    }

    @Test
    void notificationIdsThatAreNotSuchStringsAreRefused() {
        refused("{\"notification-id\":\"\"}");
        refused("{\"notification-id\":\"" + repeat("x", 65) + "\"}");
        refused("{\"notification-id\":\"" + repeat("\u00e9", 32) + "x\"}"); // 65 bytes, 33 code points
        refused("{\"notification-id\":\"" + repeat("\ud83d\ude00", 16) + "x\"}");
        refused("{\"notification-id\":\"a\\u001fb\"}");
        refused("{\"notification-id\":\"a\\tb\"}");
        refused("{\"notification-id\":\"\\u0000\"}");
        refused("{\"notification-id\":\"a\\nb\"}");
        refused("{\"notification-id\":1}");
        refused("{\"notification-id\":null}");
        refused("{\"notification-id\":[\"a\"]}");
        refused("{\"notification-id\":{}}");
        refused("{\"notification-id\":true}");
    }

    @Test
    void canonicalOrderPutsNotificationIdThenControlAfterContentRefAndBeforeUnknownMembers() throws Exception {
        Content c = parse("{\"zz\":1,\"control\":{\"id\":\"n\",\"action\":\"update\"},\"A\":2,\"notification-id\":\"n\","
            + "\"content-ref\":{\"url\":\"https://example.com/b\"},\"title\":\"T\"}");
        assertEquals("{\"title\":\"T\",\"content-ref\":{\"url\":\"https://example.com/b\"},\"notification-id\":\"n\","
            + "\"control\":{\"action\":\"update\",\"id\":\"n\"},\"A\":2,\"zz\":1}", c.canonicalJson());
    }

    // ---- §2 control: accepted ----

    @Test
    void removeByIdsThreadOrBoth() throws Exception {
        Control c = parse("{\"control\":{\"action\":\"remove\",\"ids\":[\"a\",\"b\"]}}").control();
        assertEquals(Control.Action.REMOVE, c.action());
        assertEquals(Arrays.asList("a", "b"), c.ids());
        assertNull(c.threadId());
        c = parse("{\"control\":{\"thread-id\":\"chat-42\",\"action\":\"remove\"}}").control();
        assertEquals(Collections.emptyList(), c.ids());
        assertEquals("chat-42", c.threadId());
        c = parse("{\"control\":{\"action\":\"remove\",\"ids\":[\"a\"],\"thread-id\":\"t\"}}").control();
        assertEquals(Collections.singletonList("a"), c.ids());
        assertEquals("t", c.threadId());
        // 64 ids; ids as long as a notification id may be; a thread id of 255 bytes.
        assertEquals(64, parse("{\"control\":{\"action\":\"remove\",\"ids\":" + ids(64) + "}}").control().ids().size());
        String id64 = repeat("y", 64);
        assertEquals(id64, parse("{\"control\":{\"action\":\"remove\",\"ids\":[\"" + id64 + "\"]}}").control().ids().get(0));
        String thread255 = repeat("t", 253) + "\u00e9";
        assertEquals(thread255, parse("{\"control\":{\"action\":\"remove\",\"thread-id\":\"" + thread255 + "\"}}").control().threadId());
        // "a" and "A", "\u00e9" and "e\u0301" are different ids.
        assertEquals(4, parse("{\"control\":{\"action\":\"remove\",\"ids\":[\"a\",\"A\",\"\\u00e9\",\"e\\u0301\"]}}").control().ids().size());
    }

    @Test
    void idsCompareCodePointByCodePointSoNfcAndNfdAreTwoIds() throws Exception {
        // control-v1 §1: "\u00e9" (NFC) and "e\u0301" (NFD) are two ids; no normalization anywhere.
        Control c = parse("{\"control\":{\"action\":\"remove\",\"ids\":[\"\\u00e9\",\"e\\u0301\"]}}").control();
        assertEquals(Arrays.asList("\u00e9", "e\u0301"), c.ids());
        refused("{\"control\":{\"action\":\"remove\",\"ids\":[\"e\\u0301\",\"e\\u0301\"]}}");
        refused("{\"notification-id\":\"\\u00e9\",\"control\":{\"action\":\"update\",\"id\":\"e\\u0301\"}}");
    }

    @Test
    void removeAndBadgeMayCarryOnlyNotificationIdControlBadgeAndUnknownMembers() throws Exception {
        Content c = parse("{\"notification-id\":\"fresh-1\",\"control\":{\"action\":\"remove\",\"ids\":[\"a\"]},\"badge\":3,"
            + "\"x-app\":{\"k\":[1,2]}}");
        assertEquals("fresh-1", c.notificationId());
        assertEquals(Control.Action.REMOVE, c.control().action());
        c = parse("{\"control\":{\"action\":\"badge\",\"count\":5},\"badge\":9,\"x\":null}");
        assertEquals(5, c.control().count());
    }

    @Test
    void badgeCountsFrom0To2147483647() throws Exception {
        assertEquals(0, parse("{\"control\":{\"action\":\"badge\",\"count\":0}}").control().count());
        assertEquals(2147483647L, parse("{\"control\":{\"action\":\"badge\",\"count\":2147483647}}").control().count());
        // An integer member takes any whole number (envelope-v1 §4).
        assertEquals(7, parse("{\"control\":{\"action\":\"badge\",\"count\":7.0}}").control().count());
        assertEquals(10, parse("{\"control\":{\"action\":\"badge\",\"count\":1e1}}").control().count());
    }

    @Test
    void updateCarriesTheNewContent() throws Exception {
        Content c = parse("{\"title\":\"edited\",\"body\":\"b\",\"sound\":\"default\",\"thread-id\":\"t\",\"data\":null,"
            + "\"attachments\":[],\"control\":{\"action\":\"update\",\"id\":\"msg-7\"}}");
        assertEquals(Control.Action.UPDATE, c.control().action());
        assertEquals("msg-7", c.control().id());
        assertNull(c.notificationId());
        c = parse("{\"notification-id\":\"msg-7\",\"title\":\"x\",\"control\":{\"action\":\"update\",\"id\":\"msg-7\"}}");
        assertEquals("msg-7", c.notificationId());
    }

    // ---- §2 control: refused ----

    @Test
    void aControlThatIsNotAnObjectOrHasNoKnownActionIsRefused() {
        for (String v : new String[] {"\"remove\"", "[]", "null", "1", "true", "{}", "{\"action\":1}", "{\"action\":null}",
            "{\"action\":\"Remove\"}", "{\"action\":\"delete\",\"ids\":[\"a\"]}", "{\"action\":\"\"}", "{\"ids\":[\"a\"]}",
            "{\"action\":[\"remove\"],\"ids\":[\"a\"]}"}) {
            refused("{\"control\":" + v + "}");
        }
    }

    @Test
    void aRemoveWithABadOrExtraMemberIsRefused() {
        String[] bad = {
            "\"ids\":[]", // an empty array is not 1 to 64 ids
            "\"ids\":[],\"thread-id\":\"t\"",
            "\"ids\":" + ids(65),
            "\"ids\":[\"a\",\"b\",\"a\"]",
            "\"ids\":[\"\"]",
            "\"ids\":[\"" + repeat("x", 65) + "\"]",
            "\"ids\":[\"a\\u0001\"]",
            "\"ids\":[1]",
            "\"ids\":[null]",
            "\"ids\":[[\"a\"]]",
            "\"ids\":\"a\"",
            "\"ids\":null",
            "\"ids\":{\"a\":1}",
            "\"thread-id\":\"\"",
            "\"thread-id\":\"" + repeat("t", 256) + "\"",
            "\"thread-id\":\"" + repeat("t", 254) + "\u00e9\"", // 256 bytes
            "\"thread-id\":1",
            "\"thread-id\":null",
            "\"thread-id\":[\"t\"]",
            "\"ids\":[\"a\"],\"id\":\"a\"", // another action's member
            "\"ids\":[\"a\"],\"count\":1",
            "\"ids\":[\"a\"],\"extra\":true",
            "\"thread-id\":\"t\",\"Ids\":[\"a\"]",
        };
        for (String members : bad) {
            refused("{\"control\":{\"action\":\"remove\"," + members + "}}");
        }
        refused("{\"control\":{\"action\":\"remove\"}}"); // an empty removal
    }

    @Test
    void anUpdateOrBadgeWithAMissingIllTypedOrExtraMemberIsRefused() {
        for (String members : new String[] {"", "\"id\":\"\"", "\"id\":1", "\"id\":null", "\"id\":[\"a\"]",
            "\"id\":\"" + repeat("x", 65) + "\"", "\"id\":\"a\\u001f\"", "\"id\":\"a\",\"ids\":[\"a\"]",
            "\"id\":\"a\",\"count\":1", "\"id\":\"a\",\"thread-id\":\"t\"", "\"ids\":[\"a\"]"}) {
            refused("{\"title\":\"t\",\"control\":{\"action\":\"update\"" + (members.isEmpty() ? "" : "," + members) + "}}");
        }
        for (String members : new String[] {"", "\"count\":-1", "\"count\":2147483648", "\"count\":1.5", "\"count\":\"3\"",
            "\"count\":null", "\"count\":[1]", "\"count\":1,\"id\":\"a\"", "\"count\":1,\"ids\":[\"a\"]", "\"count\":1,\"x\":0"}) {
            refused("{\"control\":{\"action\":\"badge\"" + (members.isEmpty() ? "" : "," + members) + "}}");
        }
    }

    @Test
    void removeOrBadgeWithAnyOtherKnownMemberIsRefused() {
        String[] members = {"\"title\":\"t\"", "\"subtitle\":\"s\"", "\"body\":\"b\"", "\"sound\":\"default\"",
            "\"thread-id\":\"t\"", "\"category\":\"c\"", "\"interruption-level\":\"passive\"", "\"relevance-score\":0.5",
            "\"target-content-id\":\"x\"", "\"data\":null", "\"data\":{}", "\"attachments\":[]",
            "\"content-ref\":{\"url\":\"https://example.com/b\"}"};
        for (String m : members) {
            refused("{\"control\":{\"action\":\"remove\",\"ids\":[\"a\"]}," + m + "}");
            refused("{" + m + ",\"control\":{\"action\":\"badge\",\"count\":1}}");
        }
    }

    @Test
    void anUpdateWhoseNotificationIdDiffersFromControlIdIsRefused() {
        refused("{\"notification-id\":\"a\",\"title\":\"t\",\"control\":{\"action\":\"update\",\"id\":\"b\"}}");
        refused("{\"notification-id\":\"A\",\"control\":{\"action\":\"update\",\"id\":\"a\"}}");
    }

    @Test
    void refusalsCarryNoPlaintext() {
        String secret = "Sekret-4711";
        String[] cases = {
            "{\"control\":{\"action\":\"remove\",\"ids\":[\"" + secret + "\",\"" + secret + "\"]}}",
            "{\"control\":{\"action\":\"remove\",\"ids\":[\"a\"],\"" + secret + "\":\"" + secret + "\"}}",
            "{\"control\":{\"action\":\"" + secret + "\"}}",
            "{\"notification-id\":\"" + secret + "\\n\"}",
            "{\"notification-id\":\"" + secret + "\",\"control\":{\"action\":\"update\",\"id\":\"x" + secret + "\"}}",
            "{\"title\":\"" + secret + "\",\"control\":{\"action\":\"badge\",\"count\":1}}",
            "{\"control\":{\"action\":\"badge\",\"count\":\"" + secret + "\"}}",
        };
        for (String json : cases) {
            SealedPushException e = assertThrows(SealedPushException.class, () -> parse(json));
            assertEquals(ErrorCode.MALFORMED_CONTENT, e.code());
            assertFalse(e.getMessage().contains(secret), e.getMessage());
        }
    }

    // ---- the messaging step (§2.1) ----

    private SealedPushMessagingStep step() throws Exception {
        EnvelopeOpener opener = new EnvelopeOpener(TOPIC, ring, Collections.singletonList(sealer.serverPublic));
        return new SealedPushMessagingStep(opener, new ReplayGuard(dir, 1024, 600), dir, 8_000, ControlMessageTests::now);
    }

    private Map<String, String> message(String contentJson) throws Exception {
        return Collections.singletonMap("sp", sealer.seal(contentJson, ring.current().publicKey(), now(), 3600));
    }

    private Map<String, String> message(String contentJson, byte[] messageId) throws Exception {
        return Collections.singletonMap("sp",
            Base64Url.encode(sealer.seal(contentJson, ring.current().publicKey(), now(), 3600, messageId)));
    }

    @Test
    void aRemoveIsAppliedOnceAndNeverShown() throws Exception {
        SealedPushMessagingStep s = step();
        try {
            Map<String, String> m = message("{\"notification-id\":\"ctl-1\",\"control\":{\"action\":\"remove\",\"ids\":[\"msg-1\",\"msg-2\"],"
                + "\"thread-id\":\"chat-42\"}}");
            StepResult r = s.process(m);
            assertEquals(StepResult.Kind.CONTROL, r.kind(), "reason " + r.reason());
            assertFalse(r.isDuplicate());
            assertNull(r.content());
            assertNull(r.notificationId());
            assertEquals(Control.Action.REMOVE, r.control().action());
            assertEquals(Arrays.asList("msg-1", "msg-2"), r.control().ids());
            assertEquals("chat-42", r.control().threadId());
            assertTrue(r.attachments().isEmpty());
            // The exact same envelope again: a duplicate, reported as such, not to be applied again, still not shown.
            StepResult again = s.process(m);
            assertEquals(StepResult.Kind.CONTROL, again.kind());
            assertTrue(again.isDuplicate());
            assertNull(again.content());
        } finally {
            s.shutdown();
        }
    }

    @Test
    void aBadgeIsAControlResultWithItsCount() throws Exception {
        SealedPushMessagingStep s = step();
        try {
            StepResult r = s.process(message("{\"control\":{\"action\":\"badge\",\"count\":12},\"badge\":99}"));
            assertEquals(StepResult.Kind.CONTROL, r.kind(), "reason " + r.reason());
            assertFalse(r.isDuplicate());
            assertEquals(Control.Action.BADGE, r.control().action());
            assertEquals(12, r.control().count());
            assertNull(r.content());
        } finally {
            s.shutdown();
        }
    }

    @Test
    void anUpdateIsShownUnderTheUpdatedIdWithoutItsControlMember() throws Exception {
        SealedPushMessagingStep s = step();
        try {
            Map<String, String> m = message("{\"title\":\"Alice\",\"body\":\"edited\",\"control\":{\"action\":\"update\",\"id\":\"msg-7\"}}");
            StepResult r = s.process(m);
            assertEquals(StepResult.Kind.NOTIFICATION, r.kind(), "reason " + r.reason());
            assertFalse(r.isDuplicate());
            assertEquals("msg-7", r.notificationId());
            assertNull(r.control());
            assertNull(r.content().control());
            assertEquals("{\"title\":\"Alice\",\"body\":\"edited\",\"notification-id\":\"msg-7\"}", r.content().canonicalJson());
            // A duplicate of an update is a duplicate of its content (control-v1 §2.1): shown again, flagged so the
            // app does not apply the removal again.
            StepResult again = s.process(m);
            assertEquals(StepResult.Kind.NOTIFICATION, again.kind());
            assertTrue(again.isDuplicate());
            assertEquals("msg-7", again.notificationId());
            assertEquals("{\"title\":\"Alice\",\"body\":\"edited\",\"notification-id\":\"msg-7\"}", again.content().canonicalJson());
        } finally {
            s.shutdown();
        }
    }

    @Test
    void deliveredContentExposesItsNotificationId() throws Exception {
        SealedPushMessagingStep s = step();
        try {
            StepResult r = s.process(message("{\"title\":\"t\",\"notification-id\":\"msg-1\"}"));
            assertEquals(StepResult.Kind.NOTIFICATION, r.kind(), "reason " + r.reason());
            assertEquals("msg-1", r.notificationId());
            assertNull(r.control());
            StepResult none = s.process(message("{\"title\":\"t\"}"));
            assertEquals(StepResult.Kind.NOTIFICATION, none.kind());
            assertNull(none.notificationId());
        } finally {
            s.shutdown();
        }
    }

    @Test
    void aReplayedControlMessageFallsBack() throws Exception {
        SealedPushMessagingStep s = step();
        try {
            byte[] id = new byte[16];
            new java.security.SecureRandom().nextBytes(id);
            assertEquals(StepResult.Kind.CONTROL, s.process(message("{\"control\":{\"action\":\"remove\",\"ids\":[\"a\"]}}", id)).kind());
            // Another envelope with the same message id (not an exact copy): replayed, the placeholder, no control.
            StepResult replay = s.process(message("{\"control\":{\"action\":\"remove\",\"ids\":[\"b\"]}}", id));
            assertEquals(StepResult.Kind.PLACEHOLDER, replay.kind());
            assertEquals(ErrorCode.REPLAYED, replay.reason());
            assertNull(replay.control());
        } finally {
            s.shutdown();
        }
    }

    @Test
    void aMalformedControlMessageFallsBackBeforeTheReplayStateRecordsItsId() throws Exception {
        SealedPushMessagingStep s = step();
        try {
            byte[] id = new byte[16];
            new java.security.SecureRandom().nextBytes(id);
            StepResult bad = s.process(message("{\"body\":\"b\",\"control\":{\"action\":\"remove\",\"ids\":[\"a\"]}}", id));
            assertEquals(StepResult.Kind.PLACEHOLDER, bad.kind());
            assertEquals(ErrorCode.MALFORMED_CONTENT, bad.reason());
            assertNull(bad.control());
            // The id was not recorded (envelope step 12 precedes step 13): a good envelope with it opens.
            StepResult good = s.process(message("{\"control\":{\"action\":\"remove\",\"ids\":[\"a\"]}}", id));
            assertEquals(StepResult.Kind.CONTROL, good.kind(), "reason " + good.reason());
            assertFalse(good.isDuplicate());
        } finally {
            s.shutdown();
        }
    }

    // ---- with the Swift CLI ----

    @Test
    void aControlMessageSealedBySwiftOpensToTheSameAction() throws Exception {
        Path cli = TestSupport.cli();
        if (TestSupport.ci() && cli == null) {
            throw new AssertionError("CI: SEALEDPUSH_CLI must name the sealed-push binary");
        }
        assumeTrue(cli != null, "SEALEDPUSH_CLI not set: the Swift interop test is skipped");
        String serverPublic = run(cli, "keygen", "--out", dir.resolve("server.key").toString());
        String[] contents = {
            "{\"control\":{\"action\":\"remove\",\"ids\":[\"a\"]}}",
            "{\"notification-id\":\"n-2\",\"control\":{\"thread-id\":\"chat-42\",\"action\":\"remove\",\"ids\":[\"a\",\"b\"]}}",
            "{\"control\":{\"action\":\"badge\",\"count\":3}}",
            "{\"title\":\"Alice\",\"control\":{\"action\":\"update\",\"id\":\"msg-7\"}}",
        };
        Path ringDir = Files.createDirectory(dir.resolve("ring"));
        FileKeyRingStore store = new FileKeyRingStore(ringDir, false);
        store.create(now() - 100);
        KeyRing keys = store.read();
        EnvelopeOpener opener = new EnvelopeOpener(TOPIC, new FileKeyRingStore(ringDir, true),
            Collections.singletonList(X25519.parsePublicKeyText(serverPublic)));
        SealedPushMessagingStep s = new SealedPushMessagingStep(opener, new ReplayGuard(ringDir, 1024, 600), dir, 8_000,
            ControlMessageTests::now);
        try {
            List<StepResult> results = new ArrayList<>();
            for (int i = 0; i < contents.length; i++) {
                Path file = dir.resolve("control-" + i + ".json");
                Files.write(file, contents[i].getBytes(StandardCharsets.UTF_8));
                String body = run(cli, "seal", "--server-key", dir.resolve("server.key").toString(), "--device-public",
                    X25519.publicKeyText(keys.current().publicKey()), "--topic", TOPIC, "--content", file.toString());
                @SuppressWarnings("unchecked")
                Map<String, Object> apns = (Map<String, Object>) Json.parse(body.getBytes(StandardCharsets.UTF_8), 8);
                results.add(s.process(Collections.singletonMap("sp", (String) apns.get("sp"))));
            }
            StepResult remove = results.get(0);
            assertEquals(StepResult.Kind.CONTROL, remove.kind(), "reason " + remove.reason());
            assertEquals(Control.Action.REMOVE, remove.control().action());
            assertEquals(Collections.singletonList("a"), remove.control().ids());
            assertNull(remove.control().threadId());
            StepResult both = results.get(1);
            assertEquals(StepResult.Kind.CONTROL, both.kind(), "reason " + both.reason());
            assertEquals(Arrays.asList("a", "b"), both.control().ids());
            assertEquals("chat-42", both.control().threadId());
            StepResult badge = results.get(2);
            assertEquals(StepResult.Kind.CONTROL, badge.kind(), "reason " + badge.reason());
            assertEquals(3, badge.control().count());
            StepResult update = results.get(3);
            assertEquals(StepResult.Kind.NOTIFICATION, update.kind(), "reason " + update.reason());
            assertEquals("{\"title\":\"Alice\",\"notification-id\":\"msg-7\"}", update.content().canonicalJson());
        } finally {
            s.shutdown();
        }
    }

    private String run(Path cli, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(cli.toString());
        cmd.addAll(Arrays.asList(args));
        Path err = dir.resolve("cli-stderr.txt");
        Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = p.getInputStream()) {
            in.transferTo(out);
        }
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("sealed-push timed out: " + cmd);
        }
        String text = new String(out.toByteArray(), StandardCharsets.UTF_8).trim();
        if (p.exitValue() != 0) {
            throw new AssertionError("sealed-push " + String.join(" ", args) + " failed: "
                + new String(Files.readAllBytes(err), StandardCharsets.UTF_8));
        }
        return text;
    }
}
