package org.sealedpush;

import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * A validated notification content object ({@code Specs/envelope-v1.md} §4): the parsed members, unknown ones
 * included, and typed accessors for the known ones.
 */
public final class Content {
    private static final int MAX_DEPTH = 32;
    private final Map<String, Object> members;

    private Content(Map<String, Object> members) {
        this.members = Collections.unmodifiableMap(members);
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
        return new Content(m);
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

    /** The content reference (raw object), or null. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> contentRef() {
        return (Map<String, Object>) members.get("content-ref");
    }
}
