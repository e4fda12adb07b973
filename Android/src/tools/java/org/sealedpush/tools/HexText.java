package org.sealedpush.tools;

/** Lowercase hex for the differential tools' line files ({@link ContentVerdicts}, {@link EnvelopeVerdicts}). */
final class HexText {
    private HexText() {
    }

    /** The bytes of even-length lowercase or uppercase hex; {@link NumberFormatException} for anything else. */
    static byte[] decode(String hex) {
        if (hex.length() % 2 != 0) {
            throw new NumberFormatException("odd-length hex");
        }
        byte[] bytes = new byte[hex.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return bytes;
    }

    /** Lowercase hex of {@code bytes}. */
    static String encode(byte[] bytes) {
        StringBuilder text = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) {
            text.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
        }
        return text.toString();
    }
}
