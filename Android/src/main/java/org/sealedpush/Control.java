package org.sealedpush;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code control} member of content ({@code Specs/control-v1.md} §2): what a message does to notifications
 * already delivered. Parsed strictly: an unknown action, a missing, ill-typed or extra member, an empty removal, more
 * than 64 ids or a duplicated id is {@code malformedContent}. Error messages name only the spec's member names, never
 * a name or value taken from the content.
 */
public final class Control {
    /** The three actions of §2. */
    public enum Action {
        /** Remove delivered notifications by notification id and/or thread identifier. */
        REMOVE,
        /** Replace the notification {@link #id()} with this message's content. */
        UPDATE,
        /** Set the app's badge to {@link #count()}. */
        BADGE
    }

    /** At most this many ids in one removal (§2). */
    public static final int MAX_IDS = 64;
    /** A notification id is 1 to 64 bytes of UTF-8 (§1). */
    public static final int MAX_NOTIFICATION_ID_BYTES = 64;
    /** A removal's {@code thread-id} is 1 to 255 bytes of UTF-8 (§2). */
    public static final int MAX_THREAD_ID_BYTES = 255;

    private final Action action;
    private final List<String> ids;
    private final String threadId;
    private final String id;
    private final long count;

    private Control(Action action, List<String> ids, String threadId, String id, long count) {
        this.action = action;
        this.ids = Collections.unmodifiableList(ids);
        this.threadId = threadId;
        this.id = id;
        this.count = count;
    }

    public Action action() {
        return action;
    }

    /** {@code remove}: the notification ids to remove (possibly empty when only {@link #threadId()} is given). */
    public List<String> ids() {
        return ids;
    }

    /** {@code remove}: the thread identifier whose notifications to remove, or null. */
    public String threadId() {
        return threadId;
    }

    /** {@code update}: the notification id replaced; null for the other actions. */
    public String id() {
        return id;
    }

    /** {@code badge}: the badge count (0 ... 2,147,483,647); -1 for the other actions. */
    public long count() {
        return count;
    }

    /** Parses the value of {@code control}. */
    @SuppressWarnings("unchecked")
    static Control parse(Object value) throws SealedPushException {
        if (!(value instanceof Map)) {
            throw bad("control must be an object");
        }
        Map<String, Object> m = (Map<String, Object>) value;
        Object a = m.get("action");
        if (!(a instanceof String)) {
            throw bad("control.action must be a string");
        }
        switch ((String) a) {
            case "remove": {
                onlyMembers(m, "ids", "thread-id");
                List<String> ids = new ArrayList<>();
                if (m.containsKey("ids")) {
                    Object v = m.get("ids");
                    if (!(v instanceof List) || ((List<Object>) v).isEmpty() || ((List<Object>) v).size() > MAX_IDS) {
                        throw bad("control.ids must be an array of 1 to " + MAX_IDS + " notification ids");
                    }
                    Set<String> seen = new HashSet<>();
                    for (Object e : (List<Object>) v) {
                        if (!isNotificationId(e)) {
                            throw bad("control.ids must hold notification ids (strings of 1 to 64 UTF-8 bytes, no code point below U+0020)");
                        }
                        if (!seen.add((String) e)) {
                            throw bad("control.ids holds the same notification id twice");
                        }
                        ids.add((String) e);
                    }
                }
                String thread = null;
                if (m.containsKey("thread-id")) {
                    Object t = m.get("thread-id");
                    if (!(t instanceof String) || !utf8Within((String) t, MAX_THREAD_ID_BYTES)) {
                        throw bad("control.thread-id must be a string of 1 to " + MAX_THREAD_ID_BYTES + " UTF-8 bytes");
                    }
                    thread = (String) t;
                }
                if (ids.isEmpty() && thread == null) {
                    throw bad("a remove control needs ids, thread-id or both");
                }
                return new Control(Action.REMOVE, ids, thread, null, -1);
            }
            case "update": {
                onlyMembers(m, "id");
                Object id = m.get("id");
                if (!isNotificationId(id)) {
                    throw bad("control.id must be a notification id (a string of 1 to 64 UTF-8 bytes, no code point below U+0020)");
                }
                return new Control(Action.UPDATE, Collections.<String>emptyList(), null, (String) id, -1);
            }
            case "badge": {
                onlyMembers(m, "count");
                Object c = m.get("count");
                if (!(c instanceof Double) || (Double) c != Math.rint((Double) c) || (Double) c < 0 || (Double) c > 2147483647.0) {
                    throw bad("control.count must be an integer from 0 to 2147483647");
                }
                return new Control(Action.BADGE, Collections.<String>emptyList(), null, null, ((Double) c).longValue());
            }
            default:
                throw bad("control.action must be remove, update or badge");
        }
    }

    /** Every member of {@code m} is {@code action} or one of {@code allowed}. */
    private static void onlyMembers(Map<String, Object> m, String... allowed) throws SealedPushException {
        int known = 1;
        for (String s : allowed) {
            if (m.containsKey(s)) {
                known++;
            }
        }
        if (m.size() != known) {
            // The extra member's name comes from the content: it is not repeated here.
            throw bad("control has a member its action does not define");
        }
    }

    /** §1: a string of 1 to 64 bytes of UTF-8 with no code point below U+0020. */
    static boolean isNotificationId(Object v) {
        if (!(v instanceof String) || !utf8Within((String) v, MAX_NOTIFICATION_ID_BYTES)) {
            return false;
        }
        String s = (String) v;
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < 0x20) {
                return false;
            }
        }
        return true;
    }

    /** 1 to {@code max} bytes of UTF-8 (the parser already refused lone surrogates). */
    private static boolean utf8Within(String s, int max) {
        int n = s.getBytes(StandardCharsets.UTF_8).length;
        return n >= 1 && n <= max;
    }

    private static SealedPushException bad(String what) {
        return new SealedPushException(ErrorCode.MALFORMED_CONTENT, "content: " + what);
    }
}
