package org.sealedpush;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sealedpush.tools.OpenDataMessage;

/**
 * The command-line tool {@code org.sealedpush.tools.OpenDataMessage} (what scripts/demo-gateway's step 9 runs) on a
 * data map sealed by the Swift CLI, with a key ring written by the Swift CLI and an attachment served over loopback
 * HTTP: the same canonical content as Swift's {@code open} prints, the attachment byte for byte, then a duplicate, a
 * wrong topic (the placeholder, no plaintext) and malformed data files with their codes and exit statuses.
 */
final class OpenDataMessageTests {
    private static final String TOPIC = "com.example.chat.android";
    private static final String BODY = "Lunch at 1? Photo attached.";

    @TempDir
    Path dir;

    private Path cli;
    private HttpServer http;

    @BeforeEach
    void setUp() throws Exception {
        cli = TestSupport.cli();
        if (TestSupport.ci() && cli == null) {
            throw new AssertionError("CI: SEALEDPUSH_CLI must name the sealed-push binary");
        }
        assumeTrue(cli != null, "SEALEDPUSH_CLI not set: the OpenDataMessage tests are skipped");
        Path blobs = dir.resolve("blobs");
        http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        http.createContext("/", ex -> {
            Path f = blobs.resolve(ex.getRequestURI().getPath().substring(1)).normalize();
            if (!f.startsWith(blobs) || !Files.isRegularFile(f)) {
                ex.sendResponseHeaders(404, -1);
            } else {
                byte[] b = Files.readAllBytes(f);
                ex.sendResponseHeaders(200, b.length);
                try (OutputStream o = ex.getResponseBody()) {
                    o.write(b);
                }
            }
            ex.close();
        });
        http.start();
    }

    @AfterEach
    void tearDown() {
        if (http != null) {
            http.stop(0);
        }
    }

    private static final class Result {
        final int status;
        final String out;
        final String err;

        Result(int status, String out, String err) {
            this.status = status;
            this.out = out;
            this.err = err;
        }
    }

    /** Runs the Swift CLI; stdout (trimmed), or an assertion failure with its stderr. */
    private String swift(String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(cli.toString());
        cmd.addAll(Arrays.asList(args));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.PIPE).start();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread t = new Thread(() -> copy(p.getErrorStream(), err));
        t.start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        copy(p.getInputStream(), out);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("sealed-push timed out: " + cmd);
        }
        t.join();
        if (p.exitValue() != 0) {
            throw new AssertionError("sealed-push " + String.join(" ", args) + " failed: " + err.toString("UTF-8"));
        }
        return out.toString("UTF-8").trim();
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        byte[] b = new byte[8192];
        try {
            int n;
            while ((n = in.read(b)) > 0) {
                out.write(b, 0, n);
            }
        } catch (IOException ignored) {
            // process ended
        }
    }

    private static Result tool(String... args) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status;
        try (PrintStream o = new PrintStream(out, true, "UTF-8"); PrintStream e = new PrintStream(err, true, "UTF-8")) {
            status = OpenDataMessage.run(args, o, e);
        }
        return new Result(status, out.toString("UTF-8"), err.toString("UTF-8"));
    }

    private static void copyTree(Path from, Path to) throws IOException {
        Files.createDirectory(to);
        try (java.util.stream.Stream<Path> s = Files.list(from)) {
            for (Path f : (Iterable<Path>) s::iterator) {
                Files.copy(f, to.resolve(f.getFileName()), java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void opensASwiftSealedDataMapAsSwiftDoesThenADuplicateAndFailuresWithTheirCodes() throws Exception {
        String serverPublic = swift("keygen", "--out", dir.resolve("server.key").toString());
        Path ring = dir.resolve("ring");
        Map<String, Object> registration = (Map<String, Object>) Json.parse(
            swift("device", "init", "--keyring", ring.toString()).getBytes(StandardCharsets.UTF_8), 4);
        Path swiftRing = dir.resolve("ring-swift");
        copyTree(ring, swiftRing); // each opener sees the message for the first time
        byte[] image = new byte[70_000]; // more than one blob chunk
        new SecureRandom().nextBytes(image);
        Path photo = dir.resolve("photo.mp4");
        Files.write(photo, image);
        String apnsBody = swift("seal", "--server-key", dir.resolve("server.key").toString(), "--device-public",
            (String) registration.get("publicKey"), "--topic", TOPIC, "--title", "Alice", "--body", BODY,
            "--attach", photo.toString(), "--attach-type", "video/mp4", "--blob-dir", dir.resolve("blobs").toString(),
            "--blob-url", "http://127.0.0.1:" + http.getAddress().getPort() + "/");
        String sp = (String) ((Map<String, Object>) Json.parse(apnsBody.getBytes(StandardCharsets.UTF_8), 8)).get("sp");
        Path data = dir.resolve("data.json");
        Files.write(data, ("{\"sp\":\"" + sp + "\"}").getBytes(StandardCharsets.UTF_8)); // what FCM delivers
        assertFalse(new String(Files.readAllBytes(data), StandardCharsets.UTF_8).contains("Lunch"));

        String swiftContent = swift("open", "--keyring", swiftRing.toString(), "--topic", TOPIC, "--server-public",
            serverPublic, "--payload", data.toString(), "--attachments-dir", dir.resolve("swift-attachments").toString());
        assertTrue(swiftContent.contains(BODY), swiftContent);

        Path attachments = dir.resolve("java-attachments");
        String[] args = {"--keyring", ring.toString(), "--topic", TOPIC, "--server-public", serverPublic,
            "--data", data.toString(), "--attachments-dir", attachments.toString()};
        Result first = tool(args);
        assertEquals(0, first.status, first.err);
        assertEquals(swiftContent + "\n", first.out);
        assertFalse(first.err.contains("duplicate"), first.err);
        Matcher m = Pattern.compile("attachment: (\\S+) \\(video/mp4\\)").matcher(first.err);
        assertTrue(m.find(), first.err);
        assertArrayEquals(image, Files.readAllBytes(Path.of(m.group(1))));
        assertTrue(Files.readAllBytes(Path.of(m.group(1))).length > 0);

        // The same data map again within the window: the replay state in the ring says duplicate, content shown again.
        Result again = tool(args);
        assertEquals(0, again.status, again.err);
        assertEquals(first.out, again.out);
        assertTrue(again.err.contains("duplicate"), again.err);

        // Another application id: the placeholder with its code, nothing decrypted printed anywhere.
        String[] wrongTopic = args.clone();
        wrongTopic[3] = "com.example.other";
        Result other = tool(wrongTopic);
        assertEquals(1, other.status);
        assertEquals("", other.out);
        assertEquals("placeholder: authenticationFailure\n", other.err);

        // A data map without sp is the step's malformedPayload; a non-string member or no JSON is refused up front.
        Files.write(data, "{\"other\":\"x\"}".getBytes(StandardCharsets.UTF_8));
        Result noSp = tool(args);
        assertEquals(1, noSp.status);
        assertEquals("placeholder: malformedPayload\n", noSp.err);
        Files.write(data, "{\"sp\":1}".getBytes(StandardCharsets.UTF_8));
        Result notString = tool(args);
        assertEquals(2, notString.status);
        assertTrue(notString.err.startsWith("OpenDataMessage: malformedPayload: "), notString.err);
        Files.write(data, "{\"sp\":".getBytes(StandardCharsets.UTF_8));
        assertEquals(2, tool(args).status);
        Result missing = tool("--keyring", ring.toString(), "--topic", TOPIC);
        assertEquals(2, missing.status);
        assertTrue(missing.err.startsWith("OpenDataMessage: invalidArgument: "), missing.err);
        assertEquals(2, tool(args[0], args[1], "--server-public", "SPK1:short").status);
    }
}
