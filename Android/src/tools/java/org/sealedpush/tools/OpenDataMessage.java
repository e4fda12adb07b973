package org.sealedpush.tools;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.sealedpush.EnvelopeOpener;
import org.sealedpush.ErrorCode;
import org.sealedpush.FileKeyRingStore;
import org.sealedpush.Json;
import org.sealedpush.ReplayGuard;
import org.sealedpush.SealedPushException;
import org.sealedpush.SealedPushMessagingStep;
import org.sealedpush.StepResult;
import org.sealedpush.X25519;

/**
 * Opens one recorded FCM data message the way an Android app's {@code onMessageReceived} does, from the command line:
 * the same {@link SealedPushMessagingStep} (a read-only key ring directory as written by {@code sealed-push device
 * init} or {@link FileKeyRingStore}, the {@link ReplayGuard} in that directory, attachments fetched over HTTP by the
 * library's fetcher), then prints the canonical content JSON on standard output, and each attachment file, skipped
 * attachment and a duplicate on standard error.
 *
 * <pre>
 * java -cp sealedpush-android.jar:sealedpush-android-tools.jar org.sealedpush.tools.OpenDataMessage \
 *     --keyring DIR --topic APPLICATION_ID --server-public SPK1:… --data FILE --attachments-dir DIR [--deadline-ms N]
 * </pre>
 *
 * {@code FILE} holds the data map as a JSON object of strings ({@code {"sp":"…"}}, what {@code RemoteMessage.getData()}
 * holds). Exit status 0 with the notification, 1 when the app would show its placeholder (the reason's error code on
 * standard error), 2 for bad arguments or an unreadable data file. Messages name error codes, never plaintext.
 */
public final class OpenDataMessage {
    /** The largest data file read (FCM's whole payload is 4,096 bytes; the opener judges {@code sp}'s own length). */
    static final int MAX_DATA_FILE = 65_536;

    private OpenDataMessage() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** The tool without {@code System.exit}: returns the exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        Options o;
        try {
            o = Options.parse(args);
        } catch (SealedPushException e) {
            err.println("OpenDataMessage: " + e.getMessage());
            err.println(Options.USAGE);
            return 2;
        }
        Map<String, String> data;
        SealedPushMessagingStep step;
        try {
            data = readDataMap(o.data);
            prepareDirectory(o.attachments);
            EnvelopeOpener opener = new EnvelopeOpener(o.topic, new FileKeyRingStore(o.keyring, true), o.serverKeys);
            step = new SealedPushMessagingStep(opener,
                new ReplayGuard(o.keyring, ReplayGuard.DEFAULT_CAPACITY, ReplayGuard.DEFAULT_DUPLICATE_WINDOW),
                o.attachments, o.deadlineMillis, () -> System.currentTimeMillis() / 1000);
        } catch (SealedPushException e) {
            err.println("OpenDataMessage: " + e.getMessage());
            return 2;
        }
        try {
            StepResult r = step.process(data);
            if (r.kind() == StepResult.Kind.PLACEHOLDER) {
                err.println("placeholder: " + r.reason().id());
                return 1;
            }
            if (r.kind() == StepResult.Kind.CONTROL) {
                // A control message (Specs/control-v1.md §2): nothing to show, so nothing on standard output.
                err.println("control: " + r.control().action().name().toLowerCase(java.util.Locale.ROOT));
                if (r.isDuplicate()) {
                    err.println("duplicate");
                }
                return 0;
            }
            out.println(r.content().canonicalJson());
            out.flush();
            if (r.isDuplicate()) {
                err.println("duplicate");
            }
            for (StepResult.Attachment a : r.attachments()) {
                err.println("attachment: " + a.file().toAbsolutePath() + " (" + a.type().type() + ")");
            }
            for (StepResult.Skipped s : r.skipped()) {
                err.println((s.index() < 0 ? "content reference" : "attachment " + s.index()) + " skipped: "
                    + s.reason().id());
            }
            return 0;
        } finally {
            step.shutdown();
        }
    }

    /** Reads the data map: a JSON object whose members are all strings, at most {@link #MAX_DATA_FILE} bytes. */
    static Map<String, String> readDataMap(Path file) throws SealedPushException {
        byte[] bytes;
        try {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "--data must name a regular file (not a link)");
            }
            try (InputStream in = Files.newInputStream(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
                bytes = in.readNBytes(MAX_DATA_FILE + 1);
            }
        } catch (IOException e) {
            throw new SealedPushException(ErrorCode.IO, "cannot read the data file: " + e.getClass().getSimpleName());
        }
        if (bytes.length > MAX_DATA_FILE) {
            throw new SealedPushException(ErrorCode.PAYLOAD_TOO_LARGE, "the data file is larger than " + MAX_DATA_FILE + " bytes");
        }
        Object v;
        try {
            v = Json.parse(bytes, 2);
        } catch (Json.ParseException e) {
            throw new SealedPushException(ErrorCode.MALFORMED_PAYLOAD, "the data file is not valid JSON");
        }
        if (!(v instanceof Map)) {
            throw new SealedPushException(ErrorCode.MALFORMED_PAYLOAD, "the data file is not a JSON object");
        }
        Map<String, String> data = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
            if (!(e.getValue() instanceof String)) {
                throw new SealedPushException(ErrorCode.MALFORMED_PAYLOAD,
                    "data member " + e.getKey() + " is not a string (an FCM data map holds strings only)");
            }
            data.put((String) e.getKey(), (String) e.getValue());
        }
        return data;
    }

    /** Creates the attachments directory (0700) when missing; refuses a link or a non-directory. */
    static void prepareDirectory(Path dir) throws SealedPushException {
        try {
            if (Files.isSymbolicLink(dir)) {
                throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "--attachments-dir must not be a link");
            }
            if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } else if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "--attachments-dir is not a directory");
            }
        } catch (IOException e) {
            throw new SealedPushException(ErrorCode.IO, "cannot create the attachments directory: " + e.getClass().getSimpleName());
        }
    }

    /** The command line. */
    static final class Options {
        static final String USAGE = "usage: OpenDataMessage --keyring DIR --topic APPLICATION_ID --server-public SPK1:… "
            + "(repeatable) --data FILE --attachments-dir DIR [--deadline-ms N (default "
            + SealedPushMessagingStep.DEFAULT_DEADLINE_MILLIS + ")]";
        Path keyring;
        String topic;
        final List<byte[]> serverKeys = new ArrayList<>();
        Path data;
        Path attachments;
        long deadlineMillis = SealedPushMessagingStep.DEFAULT_DEADLINE_MILLIS;

        static Options parse(String[] args) throws SealedPushException {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String name = args[i];
                if (i + 1 >= args.length) {
                    throw bad(name + " needs a value (or is not an option)");
                }
                String value = args[++i];
                switch (name) {
                    case "--keyring":
                        o.keyring = Paths.get(value);
                        break;
                    case "--topic":
                        o.topic = value;
                        break;
                    case "--server-public":
                        o.serverKeys.add(X25519.parsePublicKeyText(value));
                        break;
                    case "--data":
                        o.data = Paths.get(value);
                        break;
                    case "--attachments-dir":
                        o.attachments = Paths.get(value);
                        break;
                    case "--deadline-ms":
                        try {
                            o.deadlineMillis = Long.parseLong(value);
                        } catch (NumberFormatException e) {
                            throw bad("--deadline-ms must be a whole number of milliseconds");
                        }
                        if (o.deadlineMillis < 1 || o.deadlineMillis > 600_000) {
                            throw bad("--deadline-ms must be 1 ... 600000");
                        }
                        break;
                    default:
                        throw bad("unknown option " + name);
                }
            }
            if (o.keyring == null || o.topic == null || o.serverKeys.isEmpty() || o.data == null || o.attachments == null) {
                throw bad("--keyring, --topic, --server-public, --data and --attachments-dir are required");
            }
            return o;
        }

        private static SealedPushException bad(String what) {
            return new SealedPushException(ErrorCode.INVALID_ARGUMENT, what);
        }
    }
}
