package org.sealedpush;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.nio.file.OpenOption;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * File rules of {@code Specs/keyring-v1.md} §2.1: no symbolic links (checked with {@code NOFOLLOW_LINKS}), regular
 * files only, writes to a 0600 temporary file in the same directory, forced to disk and atomically renamed, stale
 * temporaries deleted, an exclusive lock file for read-modify-write.
 *
 * <p>Java has no {@code O_NONBLOCK} open: a file is checked to be regular (without following links) right before it
 * is opened with {@code NOFOLLOW_LINKS}. The lock is {@link FileChannel#lock()} (POSIX record locks on Linux and
 * Android), plus an in-process lock per path; it does not exclude a process using {@code flock} on Linux.
 */
final class AtomicFiles {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final ConcurrentHashMap<Path, ReentrantLock> LOCKS = new ConcurrentHashMap<>();

    private AtomicFiles() {
    }

    private static Set<OpenOption> opts(OpenOption... o) {
        return new HashSet<>(Arrays.asList(o));
    }

    /** Checks the directory exists and is a real directory (not a link); {@code keysUnavailable} when missing. */
    static void checkDirectory(Path dir) throws SealedPushException {
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(dir, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException | AccessDeniedException e) {
            throw new SealedPushException(ErrorCode.KEYS_UNAVAILABLE, "the key directory " + dir + " is missing or unreadable");
        } catch (IOException e) {
            throw new SealedPushException(ErrorCode.KEYS_UNAVAILABLE, "the key directory " + dir + " cannot be read", e);
        }
        if (!a.isDirectory() || a.isSymbolicLink()) {
            throw new SealedPushException(ErrorCode.KEY_STORE_CORRUPT, dir + " is not a directory (a symbolic link or other file)");
        }
    }

    /** True when {@code file} exists (without following a link). */
    static boolean exists(Path file) {
        return Files.exists(file, LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * Reads a regular file of at most {@code max} bytes; {@code keysUnavailable} when missing or unreadable,
     * {@code keyStoreCorrupt} when a link, a non-regular file, or larger than {@code max} (checked before reading).
     */
    static byte[] read(Path file, long max) throws SealedPushException {
        checkDirectory(file.getParent());
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException | AccessDeniedException e) {
            throw new SealedPushException(ErrorCode.KEYS_UNAVAILABLE, file + " is missing or unreadable");
        } catch (IOException e) {
            throw new SealedPushException(ErrorCode.KEYS_UNAVAILABLE, file + " cannot be read", e);
        }
        if (!a.isRegularFile()) {
            throw new SealedPushException(ErrorCode.KEY_STORE_CORRUPT, file + " is not a regular file (a link, FIFO, socket, device or directory)");
        }
        if (a.size() > max) {
            throw new SealedPushException(ErrorCode.KEY_STORE_CORRUPT, file + " is larger than " + max + " bytes");
        }
        try (FileChannel ch = FileChannel.open(file, opts(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS));
             InputStream in = Channels.newInputStream(ch)) {
            byte[] buf = new byte[(int) Math.min(max + 1, Math.max(a.size() + 1, 64))];
            int n = 0;
            while (true) {
                if (n == buf.length) {
                    if (buf.length > max) {
                        throw new SealedPushException(ErrorCode.KEY_STORE_CORRUPT, file + " is larger than " + max + " bytes");
                    }
                    buf = Arrays.copyOf(buf, (int) Math.min(max + 1, (long) buf.length * 2));
                }
                int r = in.read(buf, n, buf.length - n);
                if (r < 0) {
                    break;
                }
                n += r;
            }
            if (n > max) {
                throw new SealedPushException(ErrorCode.KEY_STORE_CORRUPT, file + " is larger than " + max + " bytes");
            }
            return Arrays.copyOf(buf, n);
        } catch (NoSuchFileException | AccessDeniedException e) {
            throw new SealedPushException(ErrorCode.KEYS_UNAVAILABLE, file + " is missing or unreadable");
        } catch (IOException e) {
            if (e.getMessage() != null && e.getMessage().contains("ELOOP")) {
                throw new SealedPushException(ErrorCode.KEY_STORE_CORRUPT, file + " became a symbolic link");
            }
            throw new SealedPushException(ErrorCode.KEYS_UNAVAILABLE, file + " cannot be read", e);
        }
    }

    /** Writes {@code data} to {@code file} atomically (0600 temporary, force, rename, directory fsync). */
    static void write(Path file, byte[] data) throws SealedPushException {
        Path dir = file.getParent();
        checkDirectory(dir);
        if (exists(file)) {
            try {
                BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                if (!a.isRegularFile()) {
                    throw new SealedPushException(ErrorCode.KEY_STORE_CORRUPT, file + " is not a regular file");
                }
            } catch (IOException e) {
                throw new SealedPushException(ErrorCode.IO, "cannot inspect " + file, e);
            }
        }
        String prefix = file.getFileName() + ".tmp-";
        Path tmp = dir.resolve(prefix + Long.toHexString(RANDOM.nextLong()) + Long.toHexString(RANDOM.nextLong()));
        try {
            try (FileChannel ch = FileChannel.open(tmp, opts(StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW,
                LinkOption.NOFOLLOW_LINKS), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
                ByteBuffer b = ByteBuffer.wrap(data);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
        } catch (FileAlreadyExistsException e) {
            throw new SealedPushException(ErrorCode.IO, "temporary file collision in " + dir, e);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // best effort; the next successful write deletes stale temporaries
            }
            throw new SealedPushException(ErrorCode.IO, "cannot write " + file + ": " + e.getClass().getSimpleName(), e);
        }
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException ignored) {
            // directory fsync is a SHOULD; some platforms cannot open a directory
        }
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, prefix + "*")) {
            for (Path stale : s) {
                Files.deleteIfExists(stale);
            }
        } catch (IOException ignored) {
            // stale temporaries are retried at the next write
        }
    }

    /** An exclusive lock on {@code lockFile} (created 0600 if missing) plus an in-process lock; close to release. */
    /** A held lock; closing releases it. */
    interface Held extends AutoCloseable {
        @Override
        void close() throws SealedPushException;
    }

    static Held lock(Path lockFile) throws SealedPushException {
        checkDirectory(lockFile.getParent());
        ReentrantLock local = LOCKS.computeIfAbsent(lockFile.toAbsolutePath().normalize(), p -> new ReentrantLock());
        local.lock();
        FileChannel ch = null;
        try {
            if (exists(lockFile)) {
                BasicFileAttributes a = Files.readAttributes(lockFile, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                if (!a.isRegularFile()) {
                    throw new SealedPushException(ErrorCode.KEY_STORE_CORRUPT, lockFile + " is not a regular file");
                }
                ch = FileChannel.open(lockFile, opts(StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS));
            } else {
                ch = FileChannel.open(lockFile, opts(StandardOpenOption.WRITE, StandardOpenOption.CREATE,
                    LinkOption.NOFOLLOW_LINKS), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            }
            final FileChannel channel = ch;
            final FileLock fl = channel.lock();
            return () -> {
                try {
                    fl.release();
                    channel.close();
                } catch (IOException e) {
                    throw new SealedPushException(ErrorCode.IO, "cannot release " + lockFile, e);
                } finally {
                    local.unlock();
                }
            };
        } catch (SealedPushException e) {
            local.unlock();
            throw e;
        } catch (AccessDeniedException e) {
            closeQuietly(ch);
            local.unlock();
            throw new SealedPushException(ErrorCode.KEYS_UNAVAILABLE, "cannot open the lock file " + lockFile);
        } catch (IOException e) {
            closeQuietly(ch);
            local.unlock();
            throw new SealedPushException(ErrorCode.IO, "cannot lock " + lockFile, e);
        }
    }

    private static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // nothing to do
            }
        }
    }
}
