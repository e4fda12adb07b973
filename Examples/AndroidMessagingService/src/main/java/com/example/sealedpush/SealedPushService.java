package com.example.sealedpush;

import android.app.NotificationChannel;
import android.app.NotificationManager;
import android.graphics.Bitmap;
import android.graphics.BitmapFactory;
import androidx.core.app.NotificationCompat;
import androidx.core.app.NotificationManagerCompat;
import com.google.firebase.messaging.FirebaseMessagingService;
import com.google.firebase.messaging.RemoteMessage;
import java.io.File;
import java.nio.file.Path;
import java.util.Collections;
import org.sealedpush.EnvelopeOpener;
import org.sealedpush.FileKeyRingStore;
import org.sealedpush.MediaType;
import org.sealedpush.ReplayGuard;
import org.sealedpush.SealedPushException;
import org.sealedpush.SealedPushMessagingStep;
import org.sealedpush.StepResult;
import org.sealedpush.X25519;

/**
 * Opens SealedPush data messages and shows exactly one notification per message: the decrypted one, or the
 * placeholder. NOT COMPILED HERE (no Android SDK in this repository); see README.md.
 */
public final class SealedPushService extends FirebaseMessagingService {
    private static final String CHANNEL = "messages";
    private static final String SERVER_PUBLIC_KEY = "SPK1:REPLACE_WITH_YOUR_SERVER_PUBLIC_KEY_____"; // pinned
    private SealedPushMessagingStep step;

    @Override
    public void onCreate() {
        super.onCreate();
        NotificationManager nm = getSystemService(NotificationManager.class);
        nm.createNotificationChannel(new NotificationChannel(CHANNEL, "Messages", NotificationManager.IMPORTANCE_HIGH));
        try {
            Path keys = new File(getNoBackupFilesDir(), "sealedpush").toPath(); // created by KeyRingSetup (0700)
            Path attachments = new File(getCacheDir(), "sealedpush-attachments").toPath();
            attachments.toFile().mkdirs();
            // The topic is the application id (Specs/fcm-v1.md §1), what the backend seals for.
            EnvelopeOpener opener = new EnvelopeOpener(getPackageName(), new FileKeyRingStore(keys, true),
                Collections.singletonList(X25519.parsePublicKeyText(SERVER_PUBLIC_KEY)));
            step = new SealedPushMessagingStep(opener,
                new ReplayGuard(keys, ReplayGuard.DEFAULT_CAPACITY, ReplayGuard.DEFAULT_DUPLICATE_WINDOW),
                attachments, SealedPushMessagingStep.DEFAULT_DEADLINE_MILLIS, () -> System.currentTimeMillis() / 1000);
        } catch (SealedPushException e) {
            step = null; // unsupported platform (API < 33) or a bad configuration: every message shows the placeholder
        }
    }

    @Override
    public void onMessageReceived(RemoteMessage message) {
        StepResult r = step == null ? null : step.process(message.getData());
        NotificationCompat.Builder n = new NotificationCompat.Builder(this, CHANNEL)
            .setSmallIcon(android.R.drawable.ic_dialog_email)
            .setPriority(NotificationCompat.PRIORITY_HIGH)
            .setAutoCancel(true);
        if (r != null && r.kind() == StepResult.Kind.NOTIFICATION) {
            n.setContentTitle(r.content().title()).setContentText(r.content().body());
            for (StepResult.Attachment a : r.attachments()) {
                if (a.type().kind() == MediaType.Kind.IMAGE) {
                    Bitmap bitmap = BitmapFactory.decodeFile(a.file().toString());
                    if (bitmap != null) {
                        n.setLargeIcon(bitmap).setStyle(new NotificationCompat.BigPictureStyle().bigPicture(bitmap));
                        break;
                    }
                }
            }
        } else {
            // Your placeholder: never the previous content. r.reason() says why (log the code, never content).
            n.setContentText("New message");
        }
        // One id per message: a duplicate (exact resend) replaces the notification it repeats.
        String id = message.getMessageId() != null ? message.getMessageId() : Long.toString(System.nanoTime());
        String tag = r != null && r.content() != null && r.content().threadId() != null ? r.content().threadId() : null;
        if (NotificationManagerCompat.from(this).areNotificationsEnabled()) {
            NotificationManagerCompat.from(this).notify(tag, id.hashCode(), n.build());
        }
    }

    @Override
    public void onNewToken(String token) {
        // Send the registration (the current key + this FCM token) to your backend, off the main thread.
        KeyRingSetup.register(this, token);
    }

    @Override
    public void onDestroy() {
        if (step != null) {
            step.shutdown();
        }
        super.onDestroy();
    }
}
