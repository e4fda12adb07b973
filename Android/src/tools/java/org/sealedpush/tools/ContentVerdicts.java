package org.sealedpush.tools;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import org.sealedpush.AttachmentDescriptor;
import org.sealedpush.Content;
import org.sealedpush.SealedPushException;
import org.sealedpush.X25519;

/**
 * This library's verdict on each content input, for {@code scripts/differential-content.sh}, which compares it with the
 * Swift library's ({@code sealed-push-vectors content-verdicts}) on the same mutated inputs: two implementations
 * written from {@code Specs/envelope-v1.md} §4 and {@code Specs/control-v1.md} §1–§2, neither judged by the other's
 * code.
 *
 * <pre>
 * java -cp sealedpush-android.jar:sealedpush-android-tools.jar org.sealedpush.tools.ContentVerdicts IN OUT
 * </pre>
 *
 * {@code IN} holds one input per line as lowercase hex; {@code OUT} gets one line per input, in order: {@code OK <hex
 * of the canonical JSON>} followed by each attachment's verdict (blob-v1 §6.2: {@code ok:} and its fields, or
 * {@code err:<code>}), or {@code ERR <error code>}. Anything but a {@link SealedPushException} from the parser stops
 * the tool with exit status 1 (a finding in itself); bad arguments or files exit 2.
 */
public final class ContentVerdicts {
    private ContentVerdicts() {
    }

    public static void main(String[] args) {
        if (args.length != 2) {
            System.err.println("usage: ContentVerdicts IN OUT");
            System.exit(2);
        }
        VerdictLines.run("ContentVerdicts", args[0], args[1], line -> {
            Content content = Content.parse(VerdictLines.bytes(line));
            StringBuilder verdict = new StringBuilder("OK ")
                .append(X25519.hex(content.canonicalJson().getBytes(StandardCharsets.UTF_8)));
            List<Object> attachments = content.attachments();
            for (AttachmentDescriptor.Parsed parsed
                    : AttachmentDescriptor.parseAll(attachments == null ? Collections.emptyList() : attachments)) {
                verdict.append(' ').append(parsed.error() != null
                    ? "err:" + parsed.error().code().id() : describe(parsed.descriptor()));
            }
            return verdict.toString();
        });
    }

    /** An accepted attachment: url, key, size, media type, name (hex; {@code -} when absent), thumbnail alike. */
    private static String describe(AttachmentDescriptor d) {
        String name = d.name() == null ? "-" : X25519.hex(d.name().getBytes(StandardCharsets.UTF_8));
        String thumbnail = d.thumbnail() == null ? "-" : "(" + describe(d.thumbnail()) + ")";
        return "ok:" + X25519.hex(d.blob().url().getBytes(StandardCharsets.UTF_8)) + ":"
            + X25519.hex(d.blob().key()) + ":" + d.blob().size() + ":" + d.type().type() + ":" + name + ":"
            + thumbnail;
    }
}
