package org.sealedpush;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * The registration record a device sends its backend ({@code Specs/keyring-v1.md} §4), with the FCM members
 * {@code "platform":"fcm"} and {@code fcmToken} of {@code Specs/fcm-v1.md} §7 when a token is given.
 */
public final class DeviceRegistration {
    private static final DateTimeFormatter ISO = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss'Z'").withZone(ZoneOffset.UTC);
    private final byte[] publicKey;
    private final long createdAt;
    private final Long expiresAt;
    private final String fcmToken;

    DeviceRegistration(byte[] publicKey, long createdAt, Long expiresAt, String fcmToken) {
        this.publicKey = publicKey.clone();
        this.createdAt = createdAt;
        this.expiresAt = expiresAt;
        this.fcmToken = fcmToken;
    }

    public String publicKeyText() {
        return X25519.publicKeyText(publicKey);
    }

    public String keyIdText() {
        return X25519.hex(X25519.keyId(publicKey));
    }

    /** The JSON record. */
    public String toJson() {
        StringBuilder sb = new StringBuilder("{\"version\":1,");
        if (fcmToken != null) {
            sb.append("\"platform\":\"fcm\",\"fcmToken\":").append(Json.canonical(fcmToken)).append(',');
        }
        sb.append("\"publicKey\":\"").append(publicKeyText())
            .append("\",\"keyId\":\"").append(keyIdText()).append("\",\"createdAt\":\"")
            .append(ISO.format(Instant.ofEpochSecond(createdAt))).append('"');
        if (expiresAt != null) {
            sb.append(",\"expiresAt\":\"").append(ISO.format(Instant.ofEpochSecond(expiresAt))).append('"');
        }
        return sb.append('}').toString();
    }
}
