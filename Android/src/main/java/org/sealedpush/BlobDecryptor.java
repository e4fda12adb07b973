package org.sealedpush;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * A streaming blob reader ({@code Specs/blob-v1.md} §5): bytes are pushed in any split with {@link #update}, each
 * chunk is verified before its plaintext goes to the output, and {@link #finish} checks the end. The result never
 * depends on how the bytes are split. Memory: one chunk. Not thread-safe; one instance per blob.
 */
public final class BlobDecryptor {
    /** Plaintext bytes per chunk. */
    public static final int CHUNK = 65_536;
    /** The largest plaintext size of a version 1 blob (2^32). */
    public static final long MAX_SIZE = 4_294_967_296L;
    static final int HEADER = 21;
    private static final byte[] MAGIC = {0x53, 0x50, 0x42, 0x4C};
    static final byte[] INFO = "SealedPush blob v1 payload".getBytes(StandardCharsets.US_ASCII);

    private final byte[] blobKey;
    private final long size;
    private final long chunks;
    private final long total;
    private final OutputStream out;
    private final byte[] header = new byte[HEADER];
    private final byte[] chunk = new byte[CHUNK + 16];
    private byte[] payloadKey;
    private long pos;
    private long chunkIndex;
    private int chunkFill;
    private SealedPushException failed;
    private boolean finished;

    /**
     * @param blobKey the 32-byte blob key
     * @param declaredSize the descriptor's {@code size}
     * @param cap the reader's cap for this kind of blob
     * @param out where verified plaintext goes
     */
    public BlobDecryptor(byte[] blobKey, long declaredSize, long cap, OutputStream out) throws SealedPushException {
        if (blobKey == null || blobKey.length != 32) {
            throw new SealedPushException(ErrorCode.MALFORMED_ATTACHMENT, "a blob key is 32 bytes");
        }
        if (declaredSize < 0 || declaredSize > cap || declaredSize > MAX_SIZE) {
            throw new SealedPushException(ErrorCode.BLOB_TOO_LARGE,
                "declared size " + declaredSize + " is over the cap " + Math.min(cap, MAX_SIZE));
        }
        this.blobKey = blobKey.clone();
        this.size = declaredSize;
        this.chunks = Math.max(1, (declaredSize + CHUNK - 1) / CHUNK);
        this.total = ciphertextSize(declaredSize);
        this.out = out;
    }

    /** {@code 21 + S + 16 · max(1, ceil(S / 65536))}. */
    public static long ciphertextSize(long s) {
        return HEADER + s + 16 * Math.max(1, (s + CHUNK - 1) / CHUNK);
    }

    private long chunkLength(long i) {
        return i < chunks - 1 ? CHUNK : size - (chunks - 1) * CHUNK;
    }

    private SealedPushException fail(ErrorCode code, String message) {
        failed = new SealedPushException(code, message);
        wipe();
        return failed;
    }

    /** Feeds received bytes in stream order; throws at the first failure (and on every later call). */
    public void update(byte[] b, int off, int len) throws SealedPushException, IOException {
        if (failed != null) {
            throw failed;
        }
        if (finished) {
            throw new IllegalStateException("update after finish");
        }
        int end = off + len;
        int i = off;
        while (i < end) {
            if (pos >= total) {
                throw fail(ErrorCode.BLOB_TRAILING_DATA, "a byte arrived after the blob's last chunk");
            }
            if (pos < HEADER) {
                byte x = b[i];
                if (pos < 4 && x != MAGIC[(int) pos]) {
                    throw fail(ErrorCode.MALFORMED_BLOB, "the blob does not start with SPBL");
                }
                if (pos == 4 && x != 1) {
                    throw fail(ErrorCode.UNSUPPORTED_BLOB_VERSION, "blob version " + (x & 0xff));
                }
                header[(int) pos] = x;
                pos++;
                i++;
                if (pos == HEADER) {
                    derivePayloadKey();
                }
                continue;
            }
            int want = (int) (chunkLength(chunkIndex) + 16);
            int n = Math.min(want - chunkFill, end - i);
            System.arraycopy(b, i, chunk, chunkFill, n);
            chunkFill += n;
            pos += n;
            i += n;
            if (chunkFill == want) {
                openChunk(want);
            }
        }
    }

    private void derivePayloadKey() throws SealedPushException {
        try {
            byte[] prk = Hpke.extract(Arrays.copyOfRange(header, 5, 21), blobKey);
            payloadKey = Hpke.expand(prk, INFO, 32);
            Arrays.fill(prk, (byte) 0);
        } catch (GeneralSecurityException e) {
            throw fail(ErrorCode.UNSUPPORTED_PLATFORM, "HmacSHA256 unavailable");
        }
    }

    static byte[] nonce(long i, boolean last) {
        byte[] n = new byte[12];
        for (int k = 0; k < 8; k++) {
            n[10 - k] = (byte) (i >>> (8 * k));
        }
        n[11] = (byte) (last ? 1 : 0);
        return n;
    }

    private void openChunk(int length) throws SealedPushException, IOException {
        byte[] plain;
        try {
            Cipher c = Cipher.getInstance("ChaCha20-Poly1305");
            c.init(Cipher.DECRYPT_MODE, new SecretKeySpec(payloadKey, "ChaCha20"),
                new IvParameterSpec(nonce(chunkIndex, chunkIndex == chunks - 1)));
            plain = c.doFinal(chunk, 0, length);
        } catch (GeneralSecurityException | RuntimeException e) {
            throw fail(ErrorCode.BLOB_AUTHENTICATION_FAILURE, "a blob chunk did not verify");
        }
        try {
            out.write(plain);
        } finally {
            Arrays.fill(plain, (byte) 0);
        }
        chunkIndex++;
        chunkFill = 0;
    }

    /** Ends the stream: {@code blobTruncated} unless every byte of the blob arrived. */
    public void finish() throws SealedPushException {
        if (failed != null) {
            throw failed;
        }
        if (pos < total) {
            throw fail(ErrorCode.BLOB_TRUNCATED, "the blob ended after " + pos + " of " + total + " bytes");
        }
        finished = true;
        wipe();
    }

    private void wipe() {
        Arrays.fill(blobKey, (byte) 0);
        Arrays.fill(chunk, (byte) 0);
        if (payloadKey != null) {
            Arrays.fill(payloadKey, (byte) 0);
        }
    }
}
