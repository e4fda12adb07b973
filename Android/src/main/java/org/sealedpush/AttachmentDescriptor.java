package org.sealedpush;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/** An attachment descriptor ({@code Specs/blob-v1.md} §6.2): a blob reference with a media type. */
public final class AttachmentDescriptor {
    /**
     * The most elements of {@code attachments} a receiver processes ({@code MAX_ATTACHMENTS}, blob-v1 §6.2): each
     * further element is skipped with {@code malformedAttachment}.
     */
    public static final int MAX_ATTACHMENTS = 8;

    /** The verdict on one element of {@code attachments}: a valid descriptor, or the error it is skipped with. */
    public static final class Parsed {
        private final AttachmentDescriptor descriptor;
        private final SealedPushException error;

        private Parsed(AttachmentDescriptor descriptor, SealedPushException error) {
            this.descriptor = descriptor;
            this.error = error;
        }

        /** The valid descriptor, or null when skipped. */
        public AttachmentDescriptor descriptor() {
            return descriptor;
        }

        /** Why the element is skipped ({@code malformedAttachment} or {@code blobTooLarge}), or null. */
        public SealedPushException error() {
            return error;
        }
    }

    private final BlobReference blob;
    private final MediaType type;
    private final String name;
    private final AttachmentDescriptor thumbnail;

    private AttachmentDescriptor(BlobReference blob, MediaType type, String name, AttachmentDescriptor thumbnail) {
        this.blob = blob;
        this.type = type;
        this.name = name;
        this.thumbnail = thumbnail;
    }

    /**
     * Validates one element of {@code attachments}: {@code malformedAttachment} or {@code blobTooLarge} for a
     * descriptor to skip. A defective thumbnail is dropped, never failing the attachment.
     */
    @SuppressWarnings("unchecked")
    public static AttachmentDescriptor parse(Map<String, Object> m) throws SealedPushException {
        AttachmentDescriptor d = parseOne(m, false);
        Object t = m.get("thumbnail");
        if (t == null) {
            return d;
        }
        AttachmentDescriptor thumb = null;
        if (t instanceof Map && !((Map<String, Object>) t).containsKey("thumbnail")) {
            try {
                thumb = parseOne((Map<String, Object>) t, true);
            } catch (SealedPushException e) {
                thumb = null;
            }
        }
        return new AttachmentDescriptor(d.blob, d.type, d.name, thumb);
    }

    /**
     * Judges every element of a content's {@code attachments}, in order (blob-v1 §6.2): the first
     * {@link #MAX_ATTACHMENTS} are parsed with {@link #parse}; every element past them is skipped with
     * {@code malformedAttachment} whatever it holds. (An element that is not an object with a {@code url} string has
     * already rejected the whole content in {@link Content#parse}; here it is {@code malformedAttachment}.)
     */
    @SuppressWarnings("unchecked")
    public static List<Parsed> parseAll(List<Object> attachments) {
        List<Parsed> out = new ArrayList<>(attachments.size());
        for (int i = 0; i < attachments.size(); i++) {
            Object e = attachments.get(i);
            try {
                if (i >= MAX_ATTACHMENTS) {
                    throw BlobReference.bad("attachment " + (i + 1) + " is past the limit of " + MAX_ATTACHMENTS
                        + " (blob-v1 §6.2)");
                }
                if (!(e instanceof Map)) {
                    throw BlobReference.bad("an attachment is a JSON object");
                }
                out.add(new Parsed(parse((Map<String, Object>) e), null));
            } catch (SealedPushException x) {
                out.add(new Parsed(null, x));
            }
        }
        return Collections.unmodifiableList(out);
    }

    private static AttachmentDescriptor parseOne(Map<String, Object> m, boolean thumbnail) throws SealedPushException {
        if (!(m.get("url") instanceof String)) {
            throw BlobReference.bad("an attachment needs a url string");
        }
        Object t = m.get("type");
        MediaType type = t instanceof String ? MediaType.of((String) t) : null;
        if (type == null) {
            throw BlobReference.bad("type must be one of the media types of blob-v1 §6.3");
        }
        if (thumbnail && type.kind() != MediaType.Kind.IMAGE) {
            throw BlobReference.bad("a thumbnail must be an image");
        }
        String name = null;
        if (m.containsKey("name")) {
            Object n = m.get("name");
            int len = n instanceof String ? ((String) n).getBytes(StandardCharsets.UTF_8).length : -1;
            if (len < 1 || len > 255) {
                throw BlobReference.bad("name must be 1 to 255 bytes");
            }
            name = (String) n;
        }
        // Reference rules (including the cap, blobTooLarge) after the descriptor's own members: a descriptor whose
        // type is unknown has no cap to check against.
        BlobReference blob = BlobReference.parse(m, type.cap());
        return new AttachmentDescriptor(blob, type, name, null);
    }

    public BlobReference blob() {
        return blob;
    }

    public MediaType type() {
        return type;
    }

    /** The display name, or null. Never a path. */
    public String name() {
        return name;
    }

    /** The valid thumbnail, or null. */
    public AttachmentDescriptor thumbnail() {
        return thumbnail;
    }
}
