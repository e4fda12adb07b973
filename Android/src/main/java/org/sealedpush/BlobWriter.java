package org.sealedpush;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/** Writes a version 1 blob ({@code Specs/blob-v1.md} §3–4) from a plaintext of known size, one chunk in memory. */
public final class BlobWriter {
    private BlobWriter() {
    }

    /** Encrypts exactly {@code size} bytes of {@code in} under {@code blobKey} and {@code salt} to {@code out}. */
    public static void write(byte[] blobKey, byte[] salt, long size, InputStream in, OutputStream out)
        throws SealedPushException, IOException {
        if (blobKey.length != 32 || salt.length != 16 || size < 0 || size > BlobDecryptor.MAX_SIZE) {
            throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "a 32-byte key, a 16-byte salt and a size up to 2^32");
        }
        byte[] payloadKey;
        try {
            byte[] prk = Hpke.extract(salt, blobKey);
            payloadKey = Hpke.expand(prk, BlobDecryptor.INFO, 32);
            Arrays.fill(prk, (byte) 0);
        } catch (GeneralSecurityException e) {
            throw new SealedPushException(ErrorCode.UNSUPPORTED_PLATFORM, "HmacSHA256 unavailable", e);
        }
        out.write(new byte[] {0x53, 0x50, 0x42, 0x4C, 1});
        out.write(salt);
        long chunks = Math.max(1, (size + BlobDecryptor.CHUNK - 1) / BlobDecryptor.CHUNK);
        byte[] buf = new byte[BlobDecryptor.CHUNK];
        try {
            for (long i = 0; i < chunks; i++) {
                int len = (int) (i < chunks - 1 ? BlobDecryptor.CHUNK : size - (chunks - 1) * BlobDecryptor.CHUNK);
                int got = 0;
                while (got < len) {
                    int r = in.read(buf, got, len - got);
                    if (r < 0) {
                        throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "the plaintext is shorter than its size");
                    }
                    got += r;
                }
                Cipher c = Cipher.getInstance("ChaCha20-Poly1305");
                c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(payloadKey, "ChaCha20"),
                    new IvParameterSpec(BlobDecryptor.nonce(i, i == chunks - 1)));
                out.write(c.doFinal(buf, 0, len));
            }
        } catch (GeneralSecurityException e) {
            throw new SealedPushException(ErrorCode.UNSUPPORTED_PLATFORM, "ChaCha20-Poly1305 unavailable", e);
        } finally {
            Arrays.fill(buf, (byte) 0);
            Arrays.fill(payloadKey, (byte) 0);
        }
    }
}
