package com.example.sealedpush;

import android.content.Context;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.sealedpush.FileKeyRingStore;
import org.sealedpush.KeyRing;
import org.sealedpush.SealedPushException;

/**
 * App-side key ring management: create once, rotate on your schedule, prune daily, register on every token refresh
 * and rotation. The messaging service only reads. NOT COMPILED HERE; see README.md.
 */
final class KeyRingSetup {
    private KeyRingSetup() {
    }

    static void register(Context context, String fcmToken) {
        new Thread(() -> {
            try {
                Path dir = new File(context.getNoBackupFilesDir(), "sealedpush").toPath();
                if (!Files.exists(dir)) {
                    Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                }
                FileKeyRingStore store = new FileKeyRingStore(dir, false);
                long now = System.currentTimeMillis() / 1000;
                try {
                    store.read();
                } catch (SealedPushException e) {
                    store.create(now); // only when there is no ring at all (keysUnavailable)
                }
                store.prune(now, KeyRing.DEFAULT_GRACE_WINDOW);
                String json = store.registration(null, fcmToken).toJson();
                Backend.sendRegistration(json); // your HTTPS call, with retries
            } catch (Exception e) {
                // retry on the next app start / token refresh
            }
        }, "sealedpush-register").start();
    }

    /** Placeholder for the app's own backend client. */
    static final class Backend {
        private Backend() {
        }

        static void sendRegistration(String json) {
        }
    }
}
