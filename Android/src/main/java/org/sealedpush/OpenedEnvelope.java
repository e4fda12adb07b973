package org.sealedpush;

/** An envelope that passed steps 1–12 of {@code Specs/envelope-v1.md} §8: its content and authenticated header. */
public final class OpenedEnvelope {
    private final Content content;
    private final byte[] messageId;
    private final long issuedAt;
    private final long expiresAt;
    private final byte[] recipientKeyId;
    private final byte[] digest;

    OpenedEnvelope(Content content, byte[] messageId, long issuedAt, long expiresAt, byte[] recipientKeyId, byte[] digest) {
        this.content = content;
        this.messageId = messageId;
        this.issuedAt = issuedAt;
        this.expiresAt = expiresAt;
        this.recipientKeyId = recipientKeyId;
        this.digest = digest;
    }

    public Content content() {
        return content;
    }

    /** The 16-byte message id. */
    public byte[] messageId() {
        return messageId.clone();
    }

    /** issuedAt, UNIX seconds (an unsigned 64-bit value; below 2^63 for any envelope that opened now). */
    public long issuedAt() {
        return issuedAt;
    }

    /** expiresAt, UNIX seconds (an unsigned 64-bit value). */
    public long expiresAt() {
        return expiresAt;
    }

    public byte[] recipientKeyId() {
        return recipientKeyId.clone();
    }

    /** The first 16 bytes of SHA-256 over the binary envelope ({@code Specs/keyring-v1.md} §5). */
    public byte[] digest() {
        return digest.clone();
    }
}
