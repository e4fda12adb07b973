package com.example.sealedpush;

import android.app.NotificationChannel;
import android.app.NotificationManager;
import android.content.SharedPreferences;
import android.graphics.Bitmap;
import android.graphics.BitmapFactory;
import android.service.notification.StatusBarNotification;
import androidx.core.app.NotificationCompat;
import androidx.core.app.NotificationManagerCompat;
import com.google.firebase.messaging.FirebaseMessagingService;
import com.google.firebase.messaging.RemoteMessage;
import java.io.File;
import java.nio.file.Path;
import java.util.Collections;
import org.sealedpush.Control;
import org.sealedpush.EnvelopeOpener;
import org.sealedpush.FileKeyRingStore;
import org.sealedpush.MediaType;
import org.sealedpush.ReplayGuard;
import org.sealedpush.SealedPushException;
import org.sealedpush.SealedPushMessagingStep;
import org.sealedpush.StepResult;
import org.sealedpush.X25519;

/**
 * Opens SealedPush data messages and shows at most one notification per message: the decrypted one, or the
 * placeholder; a control message (Specs/control-v1.md §2: remove, badge) is applied and shows nothing. Notifications
 * with a notification id are posted under tag = that id, so a remove cancels them and an update replaces them.
 * NOT COMPILED HERE (no Android SDK in this repository); see README.md.
 */
public final class SealedPushService extends FirebaseMessagingService {
    private static final String CHANNEL = "messages";
    /** The int id of every tagged notification: (tag = notification id, TAGGED_ID) names one notification. */
    private static final int TAGGED_ID = 1;
    /** Where a badge count waits for the next notification (setNumber: no badge API without extra libraries). */
    private static final String PREFS = "sealedpush";
    private static final String PENDING_BADGE = "pendingBadge";
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
        if (r != null && r.kind() == StepResult.Kind.CONTROL) {
            // Nothing to show, ever. An exact duplicate was applied already: not again.
            if (!r.isDuplicate()) {
                apply(r.control());
            }
            return;
        }
        NotificationCompat.Builder n = new NotificationCompat.Builder(this, CHANNEL)
            .setSmallIcon(android.R.drawable.ic_dialog_email)
            .setPriority(NotificationCompat.PRIORITY_HIGH)
            .setAutoCancel(true);
        SharedPreferences prefs = getSharedPreferences(PREFS, MODE_PRIVATE);
        int badge = prefs.getInt(PENDING_BADGE, -1);
        if (badge >= 0) {
            n.setNumber(badge); // launchers that show a count take it from the notification's number
        }
        if (r != null && r.kind() == StepResult.Kind.NOTIFICATION) {
            n.setContentTitle(r.content().title()).setContentText(r.content().body());
            if (r.content().threadId() != null) {
                n.setGroup(r.content().threadId()); // a remove by thread-id cancels this group
            }
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
        // Tag = the notification id (an update carries the updated one, so it replaces that notification in place;
        // a duplicate replaces itself). Without one: one id per message.
        String tag = r != null ? r.notificationId() : null;
        String id = message.getMessageId() != null ? message.getMessageId() : Long.toString(System.nanoTime());
        if (NotificationManagerCompat.from(this).areNotificationsEnabled()) {
            NotificationManagerCompat.from(this).notify(tag, tag != null ? TAGGED_ID : id.hashCode(), n.build());
            if (badge >= 0) {
                prefs.edit().remove(PENDING_BADGE).apply();
            }
        }
    }

    /** Applies a remove or a badge (control-v1 §2.1); removing nothing is not an error. */
    private void apply(Control c) {
        NotificationManagerCompat nm = NotificationManagerCompat.from(this);
        if (c.action() == Control.Action.REMOVE) {
            for (String notificationId : c.ids()) {
                nm.cancel(notificationId, TAGGED_ID);
            }
            if (c.threadId() != null) {
                for (StatusBarNotification s : getSystemService(NotificationManager.class).getActiveNotifications()) {
                    if (c.threadId().equals(s.getNotification().getGroup())) {
                        nm.cancel(s.getTag(), s.getId());
                    }
                }
            }
        } else if (c.action() == Control.Action.BADGE) {
            // No launcher-independent badge API: the count rides on the next notification (setNumber).
            getSharedPreferences(PREFS, MODE_PRIVATE).edit().putInt(PENDING_BADGE, (int) c.count()).apply();
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
