package org.sealedpush;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The strict JSON reader and canonical writer of {@code Specs/envelope-v1.md} §4 and §4.1.
 *
 * <p>Values: {@link Map} (insertion-ordered, no duplicated name), {@link List}, {@link String}, {@link Double},
 * {@link Boolean} and {@link #NULL}. Reading rejects invalid UTF-8 (overlong forms, surrogates), lone escaped
 * surrogates, a byte order mark, nesting deeper than the limit, numbers that overflow a double, and integer literals
 * beyond 2^53 − 1.
 */
public final class Json {
    /** The JSON {@code null} value. */
    public static final Object NULL = new Object() {
        @Override
        public String toString() {
            return "null";
        }
    };

    /** A JSON syntax or rule violation; callers map it to their error code. */
    public static final class ParseException extends Exception {
        private static final long serialVersionUID = 1L;

        ParseException(String message) {
            super(message);
        }
    }

    private static final double MAX_SAFE = 9007199254740991.0;
    private final byte[] in;
    private final int maxDepth;
    private final boolean bigIntegers;
    private int pos;

    private Json(byte[] in, int maxDepth, boolean bigIntegers) {
        this.in = in;
        this.maxDepth = maxDepth;
        this.bigIntegers = bigIntegers;
    }

    /** Parses one JSON text (whitespace around it allowed) with at most {@code maxDepth} nested levels. */
    public static Object parse(byte[] utf8, int maxDepth) throws ParseException {
        return parse(utf8, maxDepth, false);
    }

    /** As {@link #parse(byte[], int)}; {@code bigIntegers} rounds integer literals beyond 2^53 − 1 instead (tests). */
    static Object parse(byte[] utf8, int maxDepth, boolean bigIntegers) throws ParseException {
        Json p = new Json(utf8, maxDepth, bigIntegers);
        p.skipWhitespace();
        Object v = p.value(1);
        p.skipWhitespace();
        if (p.pos != utf8.length) {
            throw new ParseException("unexpected data after the JSON value at byte " + p.pos);
        }
        return v;
    }

    private void skipWhitespace() {
        while (pos < in.length) {
            byte b = in[pos];
            if (b == ' ' || b == '\t' || b == '\n' || b == '\r') {
                pos++;
            } else {
                return;
            }
        }
    }

    private ParseException error(String what) {
        return new ParseException(what + " at byte " + pos);
    }

    private Object value(int depth) throws ParseException {
        if (pos >= in.length) {
            throw error("unexpected end of input");
        }
        byte b = in[pos];
        switch (b) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string();
            case 't':
                literal("true");
                return Boolean.TRUE;
            case 'f':
                literal("false");
                return Boolean.FALSE;
            case 'n':
                literal("null");
                return NULL;
            default:
                if (b == '-' || (b >= '0' && b <= '9')) {
                    return number();
                }
                throw error("unexpected character");
        }
    }

    private void literal(String word) throws ParseException {
        int n = word.length();
        if (pos + n > in.length) {
            throw error("unexpected end of input");
        }
        for (int i = 0; i < n; i++) {
            if (in[pos + i] != word.charAt(i)) {
                throw error("invalid literal");
            }
        }
        pos += n;
    }

    private Map<String, Object> object(int depth) throws ParseException {
        if (depth > maxDepth) {
            throw error("nesting deeper than " + maxDepth + " levels");
        }
        pos++;
        LinkedHashMap<String, Object> map = new LinkedHashMap<>();
        skipWhitespace();
        if (pos < in.length && in[pos] == '}') {
            pos++;
            return map;
        }
        while (true) {
            skipWhitespace();
            if (pos >= in.length || in[pos] != '"') {
                throw error("expected a member name");
            }
            String name = string();
            skipWhitespace();
            if (pos >= in.length || in[pos] != ':') {
                throw error("expected ':'");
            }
            pos++;
            skipWhitespace();
            Object v = value(depth + 1);
            if (map.containsKey(name)) {
                throw error("duplicated member name");
            }
            map.put(name, v);
            skipWhitespace();
            if (pos >= in.length) {
                throw error("unexpected end of input");
            }
            if (in[pos] == ',') {
                pos++;
                continue;
            }
            if (in[pos] == '}') {
                pos++;
                return map;
            }
            throw error("expected ',' or '}'");
        }
    }

    private List<Object> array(int depth) throws ParseException {
        if (depth > maxDepth) {
            throw error("nesting deeper than " + maxDepth + " levels");
        }
        pos++;
        ArrayList<Object> list = new ArrayList<>();
        skipWhitespace();
        if (pos < in.length && in[pos] == ']') {
            pos++;
            return list;
        }
        while (true) {
            skipWhitespace();
            list.add(value(depth + 1));
            skipWhitespace();
            if (pos >= in.length) {
                throw error("unexpected end of input");
            }
            if (in[pos] == ',') {
                pos++;
                continue;
            }
            if (in[pos] == ']') {
                pos++;
                return list;
            }
            throw error("expected ',' or ']'");
        }
    }

    private int hex4() throws ParseException {
        if (pos + 4 > in.length) {
            throw error("unexpected end of input in \\u escape");
        }
        int v = 0;
        for (int i = 0; i < 4; i++) {
            int c = in[pos + i];
            int d;
            if (c >= '0' && c <= '9') {
                d = c - '0';
            } else if (c >= 'a' && c <= 'f') {
                d = c - 'a' + 10;
            } else if (c >= 'A' && c <= 'F') {
                d = c - 'A' + 10;
            } else {
                throw error("invalid \\u escape");
            }
            v = (v << 4) | d;
        }
        pos += 4;
        return v;
    }

    private String string() throws ParseException {
        pos++; // opening quote
        StringBuilder sb = new StringBuilder();
        while (true) {
            if (pos >= in.length) {
                throw error("unterminated string");
            }
            int b = in[pos] & 0xff;
            if (b == '"') {
                pos++;
                return sb.toString();
            }
            if (b == '\\') {
                pos++;
                if (pos >= in.length) {
                    throw error("unterminated escape");
                }
                int e = in[pos++];
                switch (e) {
                    case '"': sb.append('"'); break;
                    case '\\': sb.append('\\'); break;
                    case '/': sb.append('/'); break;
                    case 'b': sb.append('\b'); break;
                    case 'f': sb.append('\f'); break;
                    case 'n': sb.append('\n'); break;
                    case 'r': sb.append('\r'); break;
                    case 't': sb.append('\t'); break;
                    case 'u': {
                        int u = hex4();
                        if (u >= 0xD800 && u <= 0xDBFF) {
                            if (pos + 2 > in.length || in[pos] != '\\' || in[pos + 1] != 'u') {
                                throw error("lone escaped surrogate");
                            }
                            pos += 2;
                            int lo = hex4();
                            if (lo < 0xDC00 || lo > 0xDFFF) {
                                throw error("lone escaped surrogate");
                            }
                            sb.append((char) u).append((char) lo);
                        } else if (u >= 0xDC00 && u <= 0xDFFF) {
                            throw error("lone escaped surrogate");
                        } else {
                            sb.append((char) u);
                        }
                        break;
                    }
                    default:
                        throw error("invalid escape");
                }
                continue;
            }
            if (b < 0x20) {
                throw error("control character in string");
            }
            if (b < 0x80) {
                sb.append((char) b);
                pos++;
                continue;
            }
            int cp;
            int need;
            int min;
            if (b >= 0xC2 && b <= 0xDF) {
                cp = b & 0x1F;
                need = 1;
                min = 0x80;
            } else if (b >= 0xE0 && b <= 0xEF) {
                cp = b & 0x0F;
                need = 2;
                min = 0x800;
            } else if (b >= 0xF0 && b <= 0xF4) {
                cp = b & 0x07;
                need = 3;
                min = 0x10000;
            } else {
                throw error("invalid UTF-8");
            }
            if (pos + need >= in.length) {
                throw error("invalid UTF-8");
            }
            for (int i = 1; i <= need; i++) {
                int c = in[pos + i] & 0xff;
                if ((c & 0xC0) != 0x80) {
                    throw error("invalid UTF-8");
                }
                cp = (cp << 6) | (c & 0x3F);
            }
            if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                throw error("invalid UTF-8");
            }
            sb.appendCodePoint(cp);
            pos += need + 1;
        }
    }

    private Double number() throws ParseException {
        int start = pos;
        boolean integer = true;
        if (in[pos] == '-') {
            pos++;
        }
        if (pos >= in.length) {
            throw error("invalid number");
        }
        if (in[pos] == '0') {
            pos++;
        } else if (in[pos] >= '1' && in[pos] <= '9') {
            while (pos < in.length && in[pos] >= '0' && in[pos] <= '9') {
                pos++;
            }
        } else {
            throw error("invalid number");
        }
        if (pos < in.length && in[pos] == '.') {
            integer = false;
            pos++;
            int digits = pos;
            while (pos < in.length && in[pos] >= '0' && in[pos] <= '9') {
                pos++;
            }
            if (pos == digits) {
                throw error("invalid number");
            }
        }
        if (pos < in.length && (in[pos] == 'e' || in[pos] == 'E')) {
            integer = false;
            pos++;
            if (pos < in.length && (in[pos] == '+' || in[pos] == '-')) {
                pos++;
            }
            int digits = pos;
            while (pos < in.length && in[pos] >= '0' && in[pos] <= '9') {
                pos++;
            }
            if (pos == digits) {
                throw error("invalid number");
            }
        }
        String text = new String(in, start, pos - start, StandardCharsets.US_ASCII);
        if (integer && !bigIntegers) {
            int digits = text.startsWith("-") ? text.length() - 1 : text.length();
            if (digits > 16 || Math.abs(Double.parseDouble(text)) > MAX_SAFE) {
                // 17+ digits are all beyond 2^53 - 1 (16 digits at most); check the exact value below.
                if (digits > 16 || new BigDecimal(text).abs().compareTo(BigDecimal.valueOf(9007199254740991L)) > 0) {
                    throw error("integer beyond 2^53 - 1");
                }
            }
            return Double.parseDouble(text);
        }
        double d = Double.parseDouble(text);
        if (Double.isInfinite(d)) {
            throw error("number overflows a double");
        }
        return d;
    }

    // ---- canonical writer (§4.1) ----

    /** Members of the content object, in the order of the envelope spec's table (§4). */
    static final String[] CONTENT_ORDER = {
        "title", "subtitle", "body", "badge", "sound", "thread-id", "category", "interruption-level",
        "relevance-score", "target-content-id", "data", "attachments", "content-ref",
        // Specs/control-v1.md §1–§2: after content-ref, before the unknown members.
        "notification-id", "control",
    };

    private static final Comparator<String> BY_CODE_POINTS = (a, b) -> {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    };

    /** The canonical form of a content object (known members first in table order, then unknown ones sorted). */
    public static String canonicalContent(Map<String, Object> content) {
        StringBuilder sb = new StringBuilder();
        sb.append('{');
        boolean first = true;
        List<String> known = java.util.Arrays.asList(CONTENT_ORDER);
        for (String name : CONTENT_ORDER) {
            if (content.containsKey(name)) {
                first = member(sb, first, name, content.get(name));
            }
        }
        List<String> rest = new ArrayList<>();
        for (String name : content.keySet()) {
            if (!known.contains(name)) {
                rest.add(name);
            }
        }
        Collections.sort(rest, BY_CODE_POINTS);
        for (String name : rest) {
            first = member(sb, first, name, content.get(name));
        }
        return sb.append('}').toString();
    }

    private static boolean member(StringBuilder sb, boolean first, String name, Object value) {
        if (!first) {
            sb.append(',');
        }
        writeString(sb, name);
        sb.append(':');
        write(sb, value);
        return false;
    }

    /** The canonical form of any value (objects' members sorted by code points). */
    public static String canonical(Object value) {
        StringBuilder sb = new StringBuilder();
        write(sb, value);
        return sb.toString();
    }

    @SuppressWarnings("unchecked")
    private static void write(StringBuilder sb, Object v) {
        if (v == NULL || v == null) {
            sb.append("null");
        } else if (v instanceof Boolean) {
            sb.append(((Boolean) v) ? "true" : "false");
        } else if (v instanceof Double) {
            sb.append(canonicalNumber((Double) v));
        } else if (v instanceof String) {
            writeString(sb, (String) v);
        } else if (v instanceof List) {
            sb.append('[');
            boolean first = true;
            for (Object e : (List<Object>) v) {
                if (!first) {
                    sb.append(',');
                }
                first = false;
                write(sb, e);
            }
            sb.append(']');
        } else if (v instanceof Map) {
            Map<String, Object> m = (Map<String, Object>) v;
            List<String> names = new ArrayList<>(m.keySet());
            Collections.sort(names, BY_CODE_POINTS);
            sb.append('{');
            boolean first = true;
            for (String n : names) {
                first = member(sb, first, n, m.get(n));
            }
            sb.append('}');
        } else {
            throw new IllegalArgumentException("not a JSON value: " + v.getClass());
        }
    }

    private static void writeString(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\b': sb.append("\\b"); break;
                case '\f': sb.append("\\f"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }

    /** The §4.1 text of a finite double. */
    public static String canonicalNumber(double x) {
        if (Double.isNaN(x) || Double.isInfinite(x)) {
            throw new IllegalArgumentException("not a finite number");
        }
        if (x == 0) {
            return "0";
        }
        if (x == Math.rint(x) && Math.abs(x) < 9007199254740992.0) {
            return Long.toString((long) x);
        }
        BigDecimal exact = new BigDecimal(x);
        String neg = x < 0 ? "-" : "";
        BigDecimal abs = exact.abs();
        BigDecimal shortest = null;
        for (int n = 1; n <= 17 && shortest == null; n++) {
            shortest = nearestThatReadsBack(abs, n);
        }
        if (shortest == null) {
            throw new IllegalStateException("no round-trip representation");
        }
        BigDecimal stripped = shortest.stripTrailingZeros();
        String digits = stripped.unscaledValue().toString();
        int e = digits.length() - 1 - stripped.scale(); // |x| = d1.d2... × 10^e
        boolean isInteger = x == Math.rint(x);
        if (isInteger || e < -4) {
            StringBuilder sb = new StringBuilder(neg);
            sb.append(digits.charAt(0));
            if (digits.length() > 1) {
                sb.append('.').append(digits, 1, digits.length());
            }
            sb.append('e').append(e < 0 ? '-' : '+');
            int ae = Math.abs(e);
            if (ae < 10) {
                sb.append('0');
            }
            sb.append(ae);
            return sb.toString();
        }
        return neg + stripped.toPlainString();
    }

    /**
     * The n-digit decimal nearest {@code abs} (ties: the even last digit) among those that read back as exactly
     * {@code abs}, or null if none does. Only the two n-digit neighbours of {@code abs}, below and above, can: any
     * n-digit decimal that reads back lies in the rounding interval around {@code abs}, and so does the neighbour on
     * its side. Rounding to nearest alone is not enough: at a power of two the interval below is half as wide as the
     * one above, so the nearest n-digit decimal can fall outside it while the one above reads back (2^-24 =
     * 5.9604644775390625e-08: 5.960464477539062e-08 reads back as another double, 5.960464477539063e-08 as 2^-24).
     */
    private static BigDecimal nearestThatReadsBack(BigDecimal abs, int n) {
        double x = abs.doubleValue();
        BigDecimal below = abs.round(new MathContext(n, RoundingMode.FLOOR));
        BigDecimal above = abs.round(new MathContext(n, RoundingMode.CEILING));
        boolean belowReads = Double.parseDouble(below.toString()) == x;
        boolean aboveReads = Double.parseDouble(above.toString()) == x;
        if (belowReads && aboveReads) {
            int c = abs.subtract(below).compareTo(above.subtract(abs));
            if (c != 0) {
                return c < 0 ? below : above;
            }
            return abs.round(new MathContext(n, RoundingMode.HALF_EVEN));
        }
        return belowReads ? below : aboveReads ? above : null;
    }
}
