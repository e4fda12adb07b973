package org.sealedpush.tools;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import org.sealedpush.SealedPushException;

/** The line files of the differential tools ({@link ContentVerdicts}, {@link EnvelopeVerdicts}). */
final class VerdictLines {
    /** One input line's verdict; a {@link SealedPushException} is the verdict {@code ERR <code>}. */
    interface Judge {
        String verdict(String line) throws SealedPushException;
    }

    private VerdictLines() {
    }

    /**
     * Writes to {@code out} one verdict per line of {@code in}, in order. Anything but a {@link SealedPushException}
     * from the judge stops the tool with exit status 1 (a finding in itself); unreadable or unwritable files exit 2.
     */
    static void run(String tool, String in, String out, Judge judge) {
        List<String> lines;
        try {
            lines = Files.readAllLines(Paths.get(in), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            System.err.println(tool + ": cannot read " + in + ": " + e.getMessage());
            System.exit(2);
            return;
        }
        StringBuilder text = new StringBuilder();
        for (int n = 0; n < lines.size(); n++) {
            try {
                text.append(judge.verdict(lines.get(n)));
            } catch (SealedPushException e) {
                text.append("ERR ").append(e.code().id());
            } catch (RuntimeException e) {
                System.err.println(tool + ": input " + (n + 1) + " threw " + e.getClass().getName());
                System.exit(1);
            }
            text.append('\n');
        }
        try {
            Files.write(Paths.get(out), text.toString().getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
            System.err.println(tool + ": cannot write " + out + ": " + e.getMessage());
            System.exit(2);
        }
    }

    /** The bytes of even-length hex; {@link NumberFormatException} for anything else. */
    static byte[] bytes(String hex) {
        if (hex.length() % 2 != 0) {
            throw new NumberFormatException("odd-length hex");
        }
        byte[] bytes = new byte[hex.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return bytes;
    }
}
