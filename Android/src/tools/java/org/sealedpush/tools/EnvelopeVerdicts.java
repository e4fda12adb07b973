package org.sealedpush.tools;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
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
        try {
            RawDeviceKey key = new RawDeviceKey(VerdictLines.bytes(args[1]));
            byte[] keyId = X25519.keyId(key.publicKey());
            DeviceKeys keys = id -> Arrays.equals(id, keyId) ? key : null;
            opener = new EnvelopeOpener(args[0], keys, Collections.singletonList(X25519.parsePublicKeyText(args[2])));
        } catch (SealedPushException | RuntimeException e) {
            System.err.println("EnvelopeVerdicts: cannot set up: " + e);
            System.exit(2);
            return;
        }
        VerdictLines.run("EnvelopeVerdicts", args[3], args[4], line -> {
            String[] fields = line.split(" ", -1);
            OpenedEnvelope opened = opener.openBody(VerdictLines.bytes(fields[1]), Long.parseLong(fields[0]));
            return "OK " + X25519.hex(opened.messageId()) + " "
                + X25519.hex(opened.content().canonicalJson().getBytes(StandardCharsets.UTF_8));
        });
    }
}
