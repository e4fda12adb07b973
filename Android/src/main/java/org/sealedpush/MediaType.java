package org.sealedpush;

import java.util.Locale;

/** The media types of {@code Specs/blob-v1.md} §6.3 with their caps and file extensions. */
public final class MediaType {
    /** Image, audio or video. */
    public enum Kind { IMAGE, AUDIO, VIDEO }

    private final String type;
    private final Kind kind;
    private final String extension;

    private MediaType(String type, Kind kind, String extension) {
        this.type = type;
        this.kind = kind;
        this.extension = extension;
    }

    private static final String[][] TABLE = {
        {"image/jpeg", "IMAGE", "jpg"}, {"image/png", "IMAGE", "png"}, {"image/gif", "IMAGE", "gif"},
        {"audio/mpeg", "AUDIO", "mp3"}, {"audio/mp4", "AUDIO", "m4a"}, {"audio/x-m4a", "AUDIO", "m4a"},
        {"audio/m4a", "AUDIO", "m4a"}, {"audio/wav", "AUDIO", "wav"}, {"audio/x-wav", "AUDIO", "wav"},
        {"audio/wave", "AUDIO", "wav"}, {"audio/aiff", "AUDIO", "aiff"}, {"audio/x-aiff", "AUDIO", "aiff"},
        {"video/mp4", "VIDEO", "mp4"}, {"video/x-m4v", "VIDEO", "m4v"}, {"video/quicktime", "VIDEO", "mov"},
        {"video/mpeg", "VIDEO", "mpg"}, {"video/x-msvideo", "VIDEO", "avi"}, {"video/avi", "VIDEO", "avi"},
    };

    /** The supported type (ASCII case-insensitive), or {@code null}. */
    public static MediaType of(String type) {
        String t = lowerAscii(type);
        for (String[] row : TABLE) {
            if (row[0].equals(t)) {
                return new MediaType(row[0], Kind.valueOf(row[1]), row[2]);
            }
        }
        return null;
    }

    private static String lowerAscii(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            sb.append(c >= 'A' && c <= 'Z' ? (char) (c + 32) : c);
        }
        return sb.toString();
    }

    public String type() {
        return type;
    }

    public Kind kind() {
        return kind;
    }

    /** The file extension of §6.3, without a dot. */
    public String extension() {
        return extension;
    }

    /** The cap of §6.3: image 10,000,000, audio 5,000,000, video 50,000,000 bytes. */
    public long cap() {
        switch (kind) {
            case IMAGE: return 10_000_000L;
            case AUDIO: return 5_000_000L;
            default: return 50_000_000L;
        }
    }

    @Override
    public String toString() {
        return type.toLowerCase(Locale.ROOT);
    }
}
