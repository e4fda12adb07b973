package org.sealedpush;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.SocketTimeoutException;
import java.net.URL;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HashSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Downloads and decrypts blobs ({@code Specs/blob-v1.md} §5, §7) with {@link HttpURLConnection}: no redirects, the
 * transport length never trusted, every read bounded by the deadline and a watchdog that disconnects at the deadline
 * (a server that trickles bytes cannot hold the step). Decrypted files appear under their final name only once every
 * chunk verified; a failure deletes the partial file. Thread-safe.
 */
public final class BlobFetcher {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sealedpush-blob-watchdog");
        t.setDaemon(true);
        return t;
    });

    /** Downloads a blob into memory (content by reference), at most {@code cap} plaintext bytes. */
    public byte[] fetchBytes(BlobReference ref, long cap, long deadlineNanos) throws SealedPushException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        fetch(ref, cap, out, deadlineNanos);
        return out.toByteArray();
    }

    /**
     * Downloads and decrypts an attachment into {@code directory}: a new 0600 file named {@code sp-<random>.<ext>}
     * that exists only once verified. Returns its path.
     */
    public Path fetchFile(BlobReference ref, long cap, String extension, Path directory, long deadlineNanos)
        throws SealedPushException {
        String base = "sp-" + Long.toHexString(RANDOM.nextLong()) + Long.toHexString(RANDOM.nextLong());
        Path partial = directory.resolve(base + ".part");
        Path target = directory.resolve(base + "." + extension);
        boolean done = false;
        try {
            HashSet<OpenOption> o = new HashSet<>(Arrays.asList(StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW,
                LinkOption.NOFOLLOW_LINKS));
            try (FileChannel ch = FileChannel.open(partial, o,
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                 OutputStream out = Channels.newOutputStream(ch)) {
                fetch(ref, cap, out, deadlineNanos);
                ch.force(true);
            }
            if (System.nanoTime() - deadlineNanos >= 0) {
                throw new SealedPushException(ErrorCode.DEADLINE_EXCEEDED, "the attachment did not finish in time");
            }
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
            done = true;
            return target;
        } catch (IOException e) {
            throw new SealedPushException(ErrorCode.IO, "cannot write the attachment file: " + e.getClass().getSimpleName(), e);
        } finally {
            if (!done) {
                try {
                    Files.deleteIfExists(partial);
                } catch (IOException ignored) {
                    // nothing more to do; the name is random and the file holds only verified chunks
                }
            }
        }
    }

    /** Streams a blob through a {@link BlobDecryptor} into {@code out}. */
    public void fetch(BlobReference ref, long cap, OutputStream out, long deadlineNanos) throws SealedPushException {
        BlobDecryptor decryptor = new BlobDecryptor(ref.key(), ref.size(), cap, out);
        long remainingMs = remainingMillis(deadlineNanos);
        HttpURLConnection conn;
        try {
            URL url = new URL(ref.url());
            if (!"http".equalsIgnoreCase(url.getProtocol()) && !"https".equalsIgnoreCase(url.getProtocol())) {
                throw new SealedPushException(ErrorCode.MALFORMED_ATTACHMENT, "only http and https blob URLs are fetched");
            }
            conn = (HttpURLConnection) url.openConnection();
        } catch (IOException e) {
            throw new SealedPushException(ErrorCode.MALFORMED_ATTACHMENT, "the blob URL cannot be used", e);
        }
        AtomicBoolean timedOut = new AtomicBoolean();
        ScheduledFuture<?> watchdog = WATCHDOG.schedule(() -> {
            timedOut.set(true);
            conn.disconnect();
        }, remainingMs, TimeUnit.MILLISECONDS);
        try {
            conn.setInstanceFollowRedirects(false);
            conn.setUseCaches(false);
            conn.setConnectTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, remainingMs)));
            conn.setReadTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, remainingMs)));
            conn.setRequestProperty("Accept-Encoding", "identity");
            int status = conn.getResponseCode();
            if (status != 200) {
                throw new SealedPushException(ErrorCode.BLOB_UNAVAILABLE, "the blob server answered HTTP " + status);
            }
            byte[] buf = new byte[16_384];
            try (InputStream in = conn.getInputStream()) {
                while (true) {
                    long left = remainingMillis(deadlineNanos);
                    if (left <= 0) {
                        throw new SealedPushException(ErrorCode.DEADLINE_EXCEEDED, "the blob did not arrive in time");
                    }
                    conn.setReadTimeout((int) Math.min(Integer.MAX_VALUE, left));
                    int n = in.read(buf);
                    if (n < 0) {
                        break;
                    }
                    decryptor.update(buf, 0, n);
                }
            }
            decryptor.finish();
        } catch (SocketTimeoutException e) {
            throw new SealedPushException(ErrorCode.DEADLINE_EXCEEDED, "the blob did not arrive in time");
        } catch (IOException e) {
            if (timedOut.get() || remainingMillis(deadlineNanos) <= 0) {
                throw new SealedPushException(ErrorCode.DEADLINE_EXCEEDED, "the blob did not arrive in time");
            }
            throw new SealedPushException(ErrorCode.BLOB_UNAVAILABLE, "the blob could not be fetched: " + e.getClass().getSimpleName());
        } catch (SealedPushException e) {
            if (timedOut.get() && e.code() == ErrorCode.BLOB_TRUNCATED) {
                throw new SealedPushException(ErrorCode.DEADLINE_EXCEEDED, "the blob did not arrive in time");
            }
            throw e;
        } finally {
            watchdog.cancel(false);
            conn.disconnect();
        }
    }

    private static long remainingMillis(long deadlineNanos) {
        long ns = deadlineNanos - System.nanoTime();
        return ns <= 0 ? 0 : Math.max(1, ns / 1_000_000);
    }
}
