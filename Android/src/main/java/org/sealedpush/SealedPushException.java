package org.sealedpush;

/**
 * The library's only exception type: a stable {@link ErrorCode} and a message for developers. Messages never carry
 * plaintext or key material.
 */
public final class SealedPushException extends Exception {
    private static final long serialVersionUID = 1L;
    private final ErrorCode code;

    public SealedPushException(ErrorCode code, String message) {
        super(code.id() + ": " + message);
        this.code = code;
    }

    public SealedPushException(ErrorCode code, String message, Throwable cause) {
        super(code.id() + ": " + message, cause);
        this.code = code;
    }

    /** The spec's error code. */
    public ErrorCode code() {
        return code;
    }
}
