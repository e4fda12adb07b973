package org.sealedpush;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/** An attachment descriptor ({@code Specs/blob-v1.md} §6.2): a blob reference with a media type. */
public final class AttachmentDescriptor {
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
