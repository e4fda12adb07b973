package org.sealedpush;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;

/**
 * The one result of {@link SealedPushMessagingStep#process}: the decrypted notification (with the attachment files
 * that arrived in time), a control message to apply with nothing to show ({@code Specs/control-v1.md} §2), or the
 * app's placeholder with the reason. Exactly one, never none.
 */
public final class StepResult {
    /** Which of the three. */
    public enum Kind {
        /** Content to show: {@link #content()}, posted under {@link #notificationId()} when it has one. */
        NOTIFICATION,
        /**
         * A control message (control-v1 §2): nothing to show, ever. Apply {@link #control()} (a {@code remove} or
         * {@code badge}) unless {@link #isDuplicate()}; an exact duplicate of any control message, an {@code update}
         * included, comes as this kind with {@code isDuplicate()} true and is not applied again (§2.1).
         */
        CONTROL,
        /** The app's placeholder: {@link #reason()} says why. */
        PLACEHOLDER
    }

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
    private final Control control;

    private StepResult(Kind kind, Content content, boolean duplicate, List<Attachment> attachments, List<Skipped> skipped,
        ErrorCode reason, Control control) {
        this.kind = kind;
        this.content = content;
        this.duplicate = duplicate;
        this.attachments = Collections.unmodifiableList(attachments);
        this.skipped = Collections.unmodifiableList(skipped);
        this.reason = reason;
        this.control = control;
    }

    static StepResult notification(Content content, boolean duplicate, List<Attachment> attachments, List<Skipped> skipped) {
        return new StepResult(Kind.NOTIFICATION, content, duplicate, attachments, skipped, null, null);
    }

    static StepResult control(Control control, boolean duplicate) {
        return new StepResult(Kind.CONTROL, null, duplicate, Collections.<Attachment>emptyList(),
            Collections.<Skipped>emptyList(), null, control);
    }

    static StepResult placeholder(ErrorCode reason) {
        return new StepResult(Kind.PLACEHOLDER, null, false, Collections.<Attachment>emptyList(),
            Collections.<Skipped>emptyList(), reason, null);
    }

    public Kind kind() {
        return kind;
    }

    /**
     * The content to show (the full content when a content reference was fetched, else the envelope's); null for a
     * control message and for a placeholder. An update's content has no {@code control} member and its
     * {@code notification-id} is the updated notification's ({@code control.id}).
     */
    public Content content() {
        return content;
    }

    /** The notification id of the content to show (control-v1 §1), or null (none given, or not a notification). */
    public String notificationId() {
        return content == null ? null : content.notificationId();
    }

    /** The control message to apply (remove or badge; an update only when a duplicate); null for the other kinds. */
    public Control control() {
        return control;
    }

    /**
     * True for an exact resend within the duplicate window (keyring §5.5): a notification may be shown again (or
     * suppressed); a control message is not applied again.
     */
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
