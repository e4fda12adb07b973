package org.sealedpush;

/**
 * The stable error codes of {@code Specs/envelope-v1.md} §10, {@code Specs/blob-v1.md} §8 and
 * {@code Specs/keyring-v1.md} §3, each with its wire identifier ({@link #id()}).
 */
public enum ErrorCode {
    PAYLOAD_TOO_LARGE("payloadTooLarge"),
    MALFORMED_PAYLOAD("malformedPayload"),
    BAD_ENCODING("badEncoding"),
    TRUNCATED("truncated"),
    MALFORMED_ENVELOPE("malformedEnvelope"),
    UNSUPPORTED_VERSION("unsupportedVersion"),
    UNSUPPORTED_SUITE("unsupportedSuite"),
    UNKNOWN_RECIPIENT_KEY("unknownRecipientKey"),
    UNKNOWN_SENDER_KEY("unknownSenderKey"),
    EXPIRED("expired"),
    NOT_YET_VALID("notYetValid"),
    AUTHENTICATION_FAILURE("authenticationFailure"),
    MALFORMED_CONTENT("malformedContent"),
    REPLAYED("replayed"),
    CONTENT_TOO_LARGE("contentTooLarge"),
    INVALID_TOPIC("invalidTopic"),
    INVALID_KEY("invalidKey"),
    INVALID_ARGUMENT("invalidArgument"),
    KEYS_UNAVAILABLE("keysUnavailable"),
    KEY_STORE_CORRUPT("keyStoreCorrupt"),
    IO("io"),
    MALFORMED_BLOB("malformedBlob"),
    UNSUPPORTED_BLOB_VERSION("unsupportedBlobVersion"),
    BLOB_TRUNCATED("blobTruncated"),
    BLOB_TRAILING_DATA("blobTrailingData"),
    BLOB_AUTHENTICATION_FAILURE("blobAuthenticationFailure"),
    BLOB_TOO_LARGE("blobTooLarge"),
    MALFORMED_ATTACHMENT("malformedAttachment"),
    BLOB_UNAVAILABLE("blobUnavailable"),
    DEADLINE_EXCEEDED("deadlineExceeded"),
    /**
     * Not a wire code of the specs: the platform lacks X25519 ("XDH"), ChaCha20-Poly1305 or HmacSHA256 (Android
     * below API 33). Raised when a component is created, never while a message is processed.
     */
    UNSUPPORTED_PLATFORM("unsupportedPlatform");

    private final String id;

    ErrorCode(String id) {
        this.id = id;
    }

    /** The stable identifier used in the specs and vectors, e.g. {@code "authenticationFailure"}. */
    public String id() {
        return id;
    }

    /** The code with the given spec identifier, or {@code null}. */
    public static ErrorCode fromId(String id) {
        for (ErrorCode c : values()) {
            if (c.id.equals(id)) {
                return c;
            }
        }
        return null;
    }
}
