package org.sealedpush;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The canonical number writer of Specs/envelope-v1.md §4.1 step 3 at powers of two, where the rounding interval
 * below the double is half as wide as the one above: the shortest digit string that reads back, nearest the exact
 * value. The expected texts are Python 3's {@code repr(float)} (David Gay's shortest round-trip), not this code's.
 */
final class CanonicalNumberTests {
    /**
     * {k, the §4.1 text of 2^k}. Each text is Python 3.11's {@code repr(2.0**k)}, pasted: every one is an integer of
     * at least 2^53 or has E < -4, so Python's notation ({@code d.ddde±XX}, at least two exponent digits) is the
     * spec's. The first eight are powers of two the writer got wrong (it wrote one digit more: rounding 2^-24 =
     * 5.9604644775390625e-08 exactly to 16 digits half-even gives ...062, which reads back as the double below, while
     * ...063 reads back as 2^-24); the last three it already got right.
     */
    private static final Object[][] PYTHON_REPR = {
        {-24, "5.960464477539063e-08"},
        {-44, "5.684341886080802e-14"},
        {89, "6.189700196426902e+26"},
        {122, "5.316911983139664e+36"},
        {-1017, "7.120236347223045e-307"},
        {-140, "7.174648137343064e-43"},
        {405, "8.263199609878108e+121"},
        {976, "6.386688990511104e+293"},
        {-1074, "5e-324"},
        {-1022, "2.2250738585072014e-308"},
        {1023, "8.98846567431158e+307"},
    };

    @Test
    void powersOfTwoAreWrittenAsPythonsRepr() throws Exception {
        for (Object[] c : PYTHON_REPR) {
            int k = (Integer) c[0];
            String expected = (String) c[1];
            double x = Math.scalb(1.0, k);
            assertEquals(expected, Json.canonicalNumber(x), "2^" + k);
            assertEquals("-" + expected, Json.canonicalNumber(-x), "-2^" + k); // Python: repr(-2.0**k)
        }
        // The audit's input, through content: the value read is 2^-24 and is written back as Python's repr.
        Content content = Content.parse("{\"data\":5.960464477539063e-08}".getBytes(StandardCharsets.UTF_8));
        assertEquals("{\"data\":5.960464477539063e-08}", content.canonicalJson());
    }

    /**
     * Every finite power of two, 2^-1074 to 2^1023, against {@code python-repr-powers-of-two.txt} (Python's repr
     * of each; the file's header says how it was generated): the text reads back as exactly 2^k, has no more
     * significant digits than Python's, the same digits and exponent, and the §4.1 notation.
     */
    @Test
    void everyFinitePowerOfTwoIsShortestAndNearest() throws Exception {
        Path table = TestSupport.repo().resolve("Android/src/test/resources/org/sealedpush/python-repr-powers-of-two.txt");
        List<String> lines = Files.readAllLines(table, StandardCharsets.UTF_8);
        int count = 0;
        for (String line : lines) {
            if (line.startsWith("#")) {
                continue;
            }
            String[] f = line.split(" ");
            int k = Integer.parseInt(f[0]);
            String python = f[1];
            double x = Math.scalb(1.0, k);
            assertEquals(x, Double.parseDouble(python), "the table's line for 2^" + k);
            String java = Json.canonicalNumber(x);
            assertEquals(x, Double.parseDouble(java), "2^" + k + " written " + java + " must read back");
            String[] j = digitsAndExponent(java);
            String[] p = digitsAndExponent(python);
            assertTrue(j[0].length() <= p[0].length(), "2^" + k + ": " + java + " is longer than Python's " + python);
            assertEquals(p[0] + "e" + p[1], j[0] + "e" + j[1], "2^" + k + ": " + java + " against Python's " + python);
            boolean scientific = (k >= 53) || Integer.parseInt(j[1]) < -4; // §4.1: an integer >= 2^53, or E < -4
            String notation = scientific ? "[1-9](\\.[0-9]*[1-9])?e[+-][0-9]{2,3}"
                : k >= 0 ? "[1-9][0-9]*"                     // an integer below 2^53: plain decimal
                : "0\\.0{0,3}([1-9]|[1-9][0-9]*[1-9])";          // below 1, plain decimal with a fraction
            assertTrue(java.matches(notation), "2^" + k + ": " + java + " is not in the notation of §4.1");
            count++;
        }
        assertEquals(2098, count);
    }

    /**
     * {significant digits without leading or trailing zeros, E} of a positive decimal text in any notation
     * ({@code 4.0}, {@code 0.015625}, {@code 1.8014398509481984e+16}), so that value = d1.d2... × 10^E.
     */
    private static String[] digitsAndExponent(String text) {
        int e = text.indexOf('e');
        String mantissa = e < 0 ? text : text.substring(0, e);
        int exponent = e < 0 ? 0 : Integer.parseInt(text.substring(e + 1).replace("+", ""));
        int dot = mantissa.indexOf('.');
        String digits = dot < 0 ? mantissa : mantissa.substring(0, dot) + mantissa.substring(dot + 1);
        int point = dot < 0 ? mantissa.length() : dot; // digits before the decimal point
        while (digits.startsWith("0")) {
            digits = digits.substring(1);
            point--;
        }
        while (digits.endsWith("0")) {
            digits = digits.substring(0, digits.length() - 1);
        }
        return new String[] {digits, Integer.toString(point - 1 + exponent)};
    }
}
