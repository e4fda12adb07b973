package org.sealedpush;

import java.util.Base64;

/** Canonical unpadded base64url (RFC 4648 §5) as the specs require: no padding, no other alphabet, zero tail bits. */
public final class Base64Url {
    private Base64Url() {
    }

    /** Encodes without padding. */
    public static String encode(byte[] data) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(data);
    }

    /**
     * Decodes a canonical unpadded base64url string, or returns {@code null} when it is not one (characters outside
     * the alphabet, {@code =}, a length of 1 mod 4, non-zero unused bits).
     */
    public static byte[] decodeCanonical(CharSequence s) {
        int n = s.length();
        if (n % 4 == 1) {
            return null;
        }
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            boolean ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'
                || c == '_';
            if (!ok) {
                return null;
            }
        }
        byte[] out;
        try {
            out = Base64.getUrlDecoder().decode(s.toString());
        } catch (IllegalArgumentException e) {
            return null;
        }
        if (!encode(out).contentEquals(s)) {
            return null; // non-zero unused bits
        }
        return out;
    }
}
