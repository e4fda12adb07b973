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
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;

/**
 * Downloads and decrypts blobs ({@code Specs/blob-v1.md} §5, §7) with {@link HttpURLConnection}: no redirects, the
 * transport length never trusted, every read bounded by the deadline and a watchdog that disconnects at the deadline
 * (a server that trickles bytes cannot hold the step). Decrypted files appear under their final name only once every
 * chunk verified; a failure deletes the partial file. Thread-safe.
 */
public final class BlobFetcher {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String PARTIAL_SUFFIX = ".partial";
    private static final Pattern PARTIAL_NAME = Pattern.compile("\\.[0-9a-f]{32}\\.partial");
    /** The partial files this process is writing. */
    private static final Set<Path> LIVE_PARTIALS = ConcurrentHashMap.newKeySet();
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
     * Downloads and decrypts an attachment into {@code directory}: a new 0600 file named {@code <32 hex>.<ext>} that
     * exists only once verified. Returns its path.
     *
     * <p>While it is written, the plaintext lives in {@code .<32 hex>.partial} (the Swift side's name), created
     * exclusively, never through a link, and held under an exclusive {@link FileChannel#tryLock() file lock} until it
     * is renamed or deleted; a process killed meanwhile leaves an unlocked partial file that
     * {@link #removeAbandonedPartialFiles} deletes.
     */
    public Path fetchFile(BlobReference ref, long cap, String extension, Path directory, long deadlineNanos)
        throws SealedPushException {
        String stem = String.format("%016x%016x", RANDOM.nextLong(), RANDOM.nextLong());
        Path partial = directory.resolve("." + stem + PARTIAL_SUFFIX);
        Path target = directory.resolve(stem + "." + extension);
        boolean done = false;
        Path live = partial.toAbsolutePath().normalize();
        LIVE_PARTIALS.add(live); // before the file exists: this process's clean-up never opens a live partial file
        try {
            HashSet<OpenOption> o = new HashSet<>(Arrays.asList(StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW,
                LinkOption.NOFOLLOW_LINKS));
            try (FileChannel ch = FileChannel.open(partial, o,
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                 OutputStream out = Channels.newOutputStream(ch)) {
                lockQuietly(ch);
                fetch(ref, cap, out, deadlineNanos);
                ch.force(true);
                if (System.nanoTime() - deadlineNanos >= 0) {
                    throw new SealedPushException(ErrorCode.DEADLINE_EXCEEDED, "the attachment did not finish in time");
                }
                // Renamed while the lock is held, as on the Swift side.
                Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
                done = true;
            }
            return target;
        } catch (IOException e) {
            if (done) { // closing failed after the rename: the file is not trusted
                deleteQuietly(target);
            }
            throw new SealedPushException(ErrorCode.IO, "cannot write the attachment file: " + e.getClass().getSimpleName(), e);
        } finally {
            if (!done) {
                try {
                    Files.deleteIfExists(partial);
                } catch (IOException ignored) {
                    // nothing more to do here; the next removeAbandonedPartialFiles takes it
                }
            }
            LIVE_PARTIALS.remove(live);
        }
    }

    /** Locks a new partial file; released when the channel closes or the process dies (a POSIX record lock). */
    private static void lockQuietly(FileChannel ch) {
        try {
            ch.tryLock();
        } catch (IOException | OverlappingFileLockException e) {
            // A file system without locks: the clean-up cannot take the lock either, so it leaves the file alone.
        }
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // best effort
        }
    }

    /**
     * Deletes the partial files ({@code .<32 hex>.partial}) of downloads whose process died from {@code directory}:
     * files that are regular (links are left alone), whose last change is at least one second old, that no download of
     * this process is writing, and whose lock another process does not hold. {@link SealedPushMessagingStep} calls it
     * at the start of each message; an app may call it too (for example when it starts).
     *
     * @return how many files were deleted
     */
    public static int removeAbandonedPartialFiles(Path directory) {
        List<Path> candidates = new ArrayList<>();
        try (DirectoryStream<Path> names = Files.newDirectoryStream(directory)) {
            for (Path p : names) {
                if (PARTIAL_NAME.matcher(p.getFileName().toString()).matches()) {
                    candidates.add(p);
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        int removed = 0;
        for (Path p : candidates) {
            if (LIVE_PARTIALS.contains(p.toAbsolutePath().normalize())) {
                // Opening and closing it here would drop this process's lock on it (POSIX record locks).
                continue;
            }
            try {
                BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                if (!a.isRegularFile() || System.currentTimeMillis() - a.lastModifiedTime().toMillis() < 1_000) {
                    continue;
                }
                try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
                    FileLock lock = ch.tryLock();
                    if (lock == null) {
                        continue; // a live download in another process
                    }
                    Files.delete(p);
                    removed++;
                }
            } catch (IOException | OverlappingFileLockException e) {
                // gone meanwhile, not ours to open, or locked: leave it
            }
        }
        return removed;
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
