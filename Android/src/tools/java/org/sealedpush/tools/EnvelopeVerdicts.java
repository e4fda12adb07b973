package org.sealedpush.tools;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.sealedpush.DeviceKeys;
import org.sealedpush.EnvelopeOpener;
import org.sealedpush.OpenedEnvelope;
import org.sealedpush.RawDeviceKey;
import org.sealedpush.SealedPushException;
import org.sealedpush.X25519;

/**
 * This library's verdict on each APNs body, opened with one device key and one pinned server key, for
 * {@code scripts/differential-envelope.sh}, which compares it with the Swift library's ({@code sealed-push-vectors
 * envelope-verdicts}) on the same mutated bodies: two openers written from {@code Specs/envelope-v1.md} §8, neither
 * judged by the other's code.
 *
 * <pre>
 * java -cp sealedpush-android.jar:sealedpush-android-tools.jar org.sealedpush.tools.EnvelopeVerdicts \
 *     TOPIC DEVICE_PRIVATE_HEX SERVER_PUBLIC IN OUT
 * </pre>
 *
 * {@code IN} holds one input per line: the receiver's {@code now} (UNIX seconds), a space, the body as lowercase hex.
 * {@code OUT} gets one line per input, in order: {@code OK <message id hex> <hex of the content's canonical JSON>} or
 * {@code ERR <error code>}. Anything but a {@link SealedPushException} from the opener stops the tool with exit status
 * 1 (a finding in itself); bad arguments or files exit 2.
 */
public final class EnvelopeVerdicts {
    private EnvelopeVerdicts() {
    }

    public static void main(String[] args) {
        if (args.length != 5) {
            System.err.println("usage: EnvelopeVerdicts TOPIC DEVICE_PRIVATE_HEX SERVER_PUBLIC IN OUT");
            System.exit(2);
        }
        EnvelopeOpener opener;
        List<String> lines;
        try {
            RawDeviceKey key = new RawDeviceKey(HexText.decode(args[1]));
            byte[] keyId = X25519.keyId(key.publicKey());
            DeviceKeys keys = id -> Arrays.equals(id, keyId) ? key : null;
            opener = new EnvelopeOpener(args[0], keys, Collections.singletonList(X25519.parsePublicKeyText(args[2])));
            lines = Files.readAllLines(Paths.get(args[3]), StandardCharsets.US_ASCII);
        } catch (IOException | SealedPushException | RuntimeException e) {
            System.err.println("EnvelopeVerdicts: cannot set up: " + e);
            System.exit(2);
            return;
        }
        StringBuilder out = new StringBuilder();
        for (int n = 0; n < lines.size(); n++) {
            String[] fields = lines.get(n).split(" ", -1);
            long now = Long.parseLong(fields[0]);
            try {
                OpenedEnvelope opened = opener.openBody(HexText.decode(fields[1]), now);
                String canonical = opened.content().canonicalJson();
                out.append("OK ").append(HexText.encode(opened.messageId())).append(' ')
                    .append(HexText.encode(canonical.getBytes(StandardCharsets.UTF_8)));
            } catch (SealedPushException e) {
                out.append("ERR ").append(e.code().id());
            } catch (RuntimeException e) {
                System.err.println("EnvelopeVerdicts: input " + (n + 1) + " threw " + e.getClass().getName());
                System.exit(1);
            }
            out.append('\n');
        }
        try {
            Files.write(Paths.get(args[4]), out.toString().getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
            System.err.println("EnvelopeVerdicts: cannot write " + args[4] + ": " + e.getMessage());
            System.exit(2);
        }
    }
}
