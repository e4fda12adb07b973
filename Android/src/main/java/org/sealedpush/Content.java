package org.sealedpush;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A validated notification content object ({@code Specs/envelope-v1.md} §4, with {@code notification-id} and
 * {@code control} of {@code Specs/control-v1.md} §1–§2): the parsed members, unknown ones included, and typed
 * accessors for the known ones. Error messages name only the spec's member names, never content.
 */
public final class Content {
    private static final int MAX_DEPTH = 32;
    /** The known members a {@code remove} or {@code badge} message must not carry (control-v1 §2, content rules). */
    private static final String[] NOT_WITH_REMOVE_OR_BADGE = {
        "title", "subtitle", "body", "sound", "thread-id", "category", "interruption-level", "relevance-score",
        "target-content-id", "data", "attachments", "content-ref",
    };
    private final Map<String, Object> members;
    private final Control control;

    private Content(Map<String, Object> members, Control control) {
        this.members = Collections.unmodifiableMap(members);
        this.control = control;
    }

    /** Parses and validates content JSON (UTF-8); {@code malformedContent} on any violation of §4. */
    @SuppressWarnings("unchecked")
    public static Content parse(byte[] utf8) throws SealedPushException {
        Object v;
        try {
            v = Json.parse(utf8, MAX_DEPTH);
        } catch (Json.ParseException e) {
            throw new SealedPushException(ErrorCode.MALFORMED_CONTENT, "content is not valid JSON: " + e.getMessage());
        }
        if (!(v instanceof Map)) {
            throw new SealedPushException(ErrorCode.MALFORMED_CONTENT, "content is not a JSON object");
        }
        Map<String, Object> m = (Map<String, Object>) v;
        for (String s : new String[] {"title", "subtitle", "body", "sound", "thread-id", "category", "target-content-id"}) {
            if (m.containsKey(s) && !(m.get(s) instanceof String)) {
                throw bad(s, "a string");
            }
        }
        if (m.containsKey("badge")) {
            Object b = m.get("badge");
            if (!(b instanceof Double) || (Double) b != Math.rint((Double) b) || (Double) b < 0 || (Double) b > 2147483647.0) {
                throw bad("badge", "an integer from 0 to 2147483647");
            }
        }
        if (m.containsKey("interruption-level")) {
            Object l = m.get("interruption-level");
            if (!("passive".equals(l) || "active".equals(l) || "time-sensitive".equals(l) || "critical".equals(l))) {
                throw bad("interruption-level", "one of passive, active, time-sensitive, critical");
            }
        }
        if (m.containsKey("relevance-score")) {
            Object r = m.get("relevance-score");
            if (!(r instanceof Double) || !((Double) r >= 0 && (Double) r <= 1)) {
                throw bad("relevance-score", "a number from 0 to 1");
            }
        }
        if (m.containsKey("attachments")) {
            Object a = m.get("attachments");
            if (!(a instanceof List)) {
                throw bad("attachments", "an array");
            }
            for (Object e : (List<Object>) a) {
                if (!(e instanceof Map) || !(((Map<String, Object>) e).get("url") instanceof String)) {
                    throw bad("attachments", "an array of objects with a url string");
                }
            }
        }
        if (m.containsKey("content-ref")) {
            Object r = m.get("content-ref");
            if (!(r instanceof Map) || !(((Map<String, Object>) r).get("url") instanceof String)) {
                throw bad("content-ref", "an object with a url string");
            }
        }
        if (m.containsKey("notification-id") && !Control.isNotificationId(m.get("notification-id"))) {
            throw bad("notification-id", "a string of 1 to 64 UTF-8 bytes with no code point below U+0020");
        }
        Control control = null;
        if (m.containsKey("control")) {
            control = Control.parse(m.get("control"));
            if (control.action() == Control.Action.UPDATE) {
                if (m.containsKey("notification-id") && !m.get("notification-id").equals(control.id())) {
                    throw new SealedPushException(ErrorCode.MALFORMED_CONTENT,
                        "content: an update's notification-id must equal control.id");
                }
            } else {
                for (String s : NOT_WITH_REMOVE_OR_BADGE) {
                    if (m.containsKey(s)) {
                        throw new SealedPushException(ErrorCode.MALFORMED_CONTENT,
                            "content: a remove or badge control message carries a known member other than notification-id, control and badge");
                    }
                }
            }
        }
        return new Content(m, control);
    }

    /**
     * The content as delivered: these members without {@code control}, and with {@code notification-id} set to
     * {@code notificationId} when that is not null (an update's {@code control.id}, control-v1 §2.1 step 2).
     */
    Content delivered(String notificationId) {
        if (control == null && (notificationId == null || notificationId.equals(notificationId()))) {
            return this;
        }
        Map<String, Object> m = new LinkedHashMap<>(members);
        m.remove("control");
        if (notificationId != null) {
            m.put("notification-id", notificationId);
        }
        return new Content(m, null);
    }

    private static SealedPushException bad(String member, String what) {
        return new SealedPushException(ErrorCode.MALFORMED_CONTENT, "content member " + member + " must be " + what);
    }

    /** Every member, in the order received (unknown members included). */
    public Map<String, Object> members() {
        return members;
    }

    /** The canonical form (§4.1). */
    public String canonicalJson() {
        return Json.canonicalContent(members);
    }

    public String title() {
        return (String) members.get("title");
    }

    public String subtitle() {
        return (String) members.get("subtitle");
    }

    public String body() {
        return (String) members.get("body");
    }

    /** The badge, or -1 when absent. */
    public long badge() {
        Object b = members.get("badge");
        return b == null ? -1 : ((Double) b).longValue();
    }

    public String sound() {
        return (String) members.get("sound");
    }

    public String threadId() {
        return (String) members.get("thread-id");
    }

    public String category() {
        return (String) members.get("category");
    }

    /** The attachment descriptors (raw objects), empty when absent. */
    @SuppressWarnings("unchecked")
    public List<Object> attachments() {
        Object a = members.get("attachments");
        return a == null ? Collections.emptyList() : (List<Object>) a;
    }

    /** The notification id (control-v1 §1), or null when absent. */
    public String notificationId() {
        return (String) members.get("notification-id");
    }

    /** The parsed {@code control} member (control-v1 §2), or null for content that is not a control message. */
    public Control control() {
        return control;
    }

    /** The content reference (raw object), or null. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> contentRef() {
        return (Map<String, Object>) members.get("content-ref");
    }
}
