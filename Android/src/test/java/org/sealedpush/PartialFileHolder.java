package org.sealedpush;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

/**
 * Run in a second JVM by {@link MessagingStepTests}: creates the partial file named by its argument, holds an exclusive
 * lock on it as {@link BlobFetcher#fetchFile} does, writes some bytes, prints {@code locked} and waits to be killed.
 * With {@code --probe <path>}: prints {@code held} if another process holds a lock on the file, else {@code free}.
 */
public final class PartialFileHolder {
    private PartialFileHolder() {
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("--probe")) {
            // Prints whether another process holds a lock on the file.
            try (FileChannel ch = FileChannel.open(Paths.get(args[1]), StandardOpenOption.WRITE)) {
                System.out.println(ch.tryLock() == null ? "held" : "free");
            }
            return;
        }
        try (FileChannel ch = FileChannel.open(Paths.get(args[0]), StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW)) {
            if (ch.tryLock() == null) {
                throw new IllegalStateException("the new file is already locked");
            }
            ch.write(ByteBuffer.wrap("decrypted but not yet verified".getBytes(StandardCharsets.US_ASCII)));
            ch.force(true);
            System.out.println("locked");
            System.out.flush();
            Thread.sleep(120_000);
        }
    }
}
