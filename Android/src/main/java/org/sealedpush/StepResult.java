package org.sealedpush;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;

/**
 * The one result of {@link SealedPushMessagingStep#process}: the decrypted notification (with the attachment files
 * that arrived in time) or the app's placeholder with the reason. Never both, never none.
 */
public final class StepResult {
    /** Which of the two. */
    public enum Kind { NOTIFICATION, PLACEHOLDER }

    /** A decrypted attachment file (0600, in the step's directory); the app owns and deletes it. */
    public static final class Attachment {
        private final Path file;
        private final MediaType type;
        private final String name;

        Attachment(Path file, MediaType type, String name) {
            this.file = file;
            this.type = type;
            this.name = name;
        }

        public Path file() {
            return file;
        }

        public MediaType type() {
            return type;
        }

        /** The sender's display name, or null; never a path. */
        public String name() {
            return name;
        }
    }

    /** An attachment (or the content reference) that was skipped, with its error code. */
    public static final class Skipped {
        private final int index;
        private final ErrorCode reason;

        Skipped(int index, ErrorCode reason) {
            this.index = index;
            this.reason = reason;
        }

        /** The index in {@code attachments}, or -1 for the content reference. */
        public int index() {
            return index;
        }

        public ErrorCode reason() {
            return reason;
        }
    }

    private final Kind kind;
    private final Content content;
    private final boolean duplicate;
    private final List<Attachment> attachments;
    private final List<Skipped> skipped;
    private final ErrorCode reason;

    private StepResult(Kind kind, Content content, boolean duplicate, List<Attachment> attachments, List<Skipped> skipped,
        ErrorCode reason) {
        this.kind = kind;
        this.content = content;
        this.duplicate = duplicate;
        this.attachments = Collections.unmodifiableList(attachments);
        this.skipped = Collections.unmodifiableList(skipped);
        this.reason = reason;
    }

    static StepResult notification(Content content, boolean duplicate, List<Attachment> attachments, List<Skipped> skipped) {
        return new StepResult(Kind.NOTIFICATION, content, duplicate, attachments, skipped, null);
    }

    static StepResult placeholder(ErrorCode reason) {
        return new StepResult(Kind.PLACEHOLDER, null, false, Collections.<Attachment>emptyList(),
            Collections.<Skipped>emptyList(), reason);
    }

    public Kind kind() {
        return kind;
    }

    /** The content to show (the full content when a content reference was fetched, else the envelope's); null for a placeholder. */
    public Content content() {
        return content;
    }

    /** True for an exact resend within the duplicate window (keyring §5.5): show it again (or suppress it). */
    public boolean isDuplicate() {
        return duplicate;
    }

    public List<Attachment> attachments() {
        return attachments;
    }

    public List<Skipped> skipped() {
        return skipped;
    }

    /** Why the placeholder is shown; null for a notification. */
    public ErrorCode reason() {
        return reason;
    }
}
