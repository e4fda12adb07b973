package org.sealedpush;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * What {@code FirebaseMessagingService.onMessageReceived} calls: opens the data message's envelope, checks the replay
 * guard, fetches the content reference and attachments that fit in the deadline, and returns exactly one
 * {@link StepResult}. A control message ({@code Specs/control-v1.md} §2) that is a {@code remove} or {@code badge}
 * returns {@link StepResult.Kind#CONTROL} (nothing to show; the app applies it unless it is a duplicate); an
 * {@code update} returns its content under {@code control.id}, and an exact duplicate of one is a duplicate of that
 * content. Nothing outlives the deadline: work still running then is abandoned (its files deleted) and the
 * placeholder with {@code deadlineExceeded} is returned. Thread-safe.
 */
public final class SealedPushMessagingStep {
    /** The data message key holding the envelope (base64url), as in the APNs body. */
    public static final String ENVELOPE_KEY = "sp";
    /** Default deadline: 8 s of the 10 s Android gives {@code onMessageReceived}. */
    public static final long DEFAULT_DEADLINE_MILLIS = 8_000;
    /** Default content reference cap (blob-v1 §6.4). */
    public static final long DEFAULT_CONTENT_CAP = 65_536;

    private final EnvelopeOpener opener;
    private final ReplayGuard replayGuard;
    private final Path attachmentDirectory;
    private final long deadlineMillis;
    private final long reserveMillis;
    private final LongSupplier clock;
    private final BlobFetcher fetcher = new BlobFetcher();
    private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "sealedpush-step");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param opener the envelope opener (topic, device keys, pinned server keys)
     * @param replayGuard the replay guard, or null for none
     * @param attachmentDirectory where attachment files are written, or null to skip attachments (text only)
     * @param deadlineMillis the whole step's budget (e.g. 8,000 of Android's 10 s)
     * @param clock device time in UNIX seconds
     */
    public SealedPushMessagingStep(EnvelopeOpener opener, ReplayGuard replayGuard, Path attachmentDirectory,
        long deadlineMillis, LongSupplier clock) throws SealedPushException {
        if (deadlineMillis <= 0) {
            throw new SealedPushException(ErrorCode.INVALID_ARGUMENT, "the deadline must be positive");
        }
        this.opener = opener;
        this.replayGuard = replayGuard;
        this.attachmentDirectory = attachmentDirectory;
        this.deadlineMillis = deadlineMillis;
        this.reserveMillis = Math.min(250, deadlineMillis / 10);
        this.clock = clock;
    }

    /** Processes one FCM data message (its {@code getData()} map); returns exactly one result within the deadline. */
    public StepResult process(Map<String, String> data) {
        final long start = System.nanoTime();
        final long hardDeadline = start + deadlineMillis * 1_000_000L;
        final long fetchDeadline = hardDeadline - reserveMillis * 1_000_000L;
        final AtomicBoolean abandoned = new AtomicBoolean();
        final List<Path> written = new ArrayList<>();
        Future<StepResult> f;
        try {
            f = executor.submit(() -> work(data, fetchDeadline, abandoned, written));
        } catch (RuntimeException e) {
            return StepResult.placeholder(ErrorCode.IO);
        }
        try {
            return f.get(Math.max(0, hardDeadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            abandon(f, abandoned, written);
            return StepResult.placeholder(ErrorCode.DEADLINE_EXCEEDED);
        } catch (InterruptedException e) {
            abandon(f, abandoned, written);
            Thread.currentThread().interrupt();
            return StepResult.placeholder(ErrorCode.DEADLINE_EXCEEDED);
        } catch (ExecutionException e) {
            abandon(f, abandoned, written);
            Throwable c = e.getCause();
            return StepResult.placeholder(c instanceof SealedPushException ? ((SealedPushException) c).code() : ErrorCode.IO);
        }
    }

    private static void abandon(Future<StepResult> f, AtomicBoolean abandoned, List<Path> written) {
        synchronized (written) {
            abandoned.set(true);
            for (Path p : written) {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException ignored) {
                    // best effort
                }
            }
        }
        f.cancel(true);
    }

    private StepResult work(Map<String, String> data, long fetchDeadline, AtomicBoolean abandoned, List<Path> written)
        throws SealedPushException {
        if (attachmentDirectory != null) {
            // Leftovers of a process killed mid-download (decrypted bytes that never became a file) go first.
            BlobFetcher.removeAbandonedPartialFiles(attachmentDirectory);
        }
        long now = clock.getAsLong();
        OpenedEnvelope opened = opener.openData(data, now);
        if (abandoned.get() || Thread.currentThread().isInterrupted()) {
            // The placeholder was already returned: do not spend the message id on an answer nobody sees.
            throw new SealedPushException(ErrorCode.DEADLINE_EXCEEDED, "the step was abandoned before the replay check");
        }
        boolean duplicate = false;
        if (replayGuard != null) {
            duplicate = replayGuard.check(opened, now) == ReplayGuard.Outcome.DUPLICATE;
        }
        Content content = opened.content();
        Control control = content.control();
        if (control != null && control.action() != Control.Action.UPDATE) {
            // control-v1 §2.1: a remove or badge shows nothing; an exact duplicate of one is not applied again.
            return StepResult.control(control, duplicate);
        }
        // An update, also an exact duplicate of one, is content: a duplicate is shown again or suppressed like any
        // duplicate (control-v1 §2.1), and the app does not apply its removal again (isDuplicate()).
        // An update is delivered as content under the updated notification's id, without its control member.
        String updated = control == null ? null : control.id();
        String notificationId = updated != null ? updated : content.notificationId();
        content = content.delivered(updated);
        List<StepResult.Skipped> skipped = new ArrayList<>();
        Map<String, Object> ref = content.contentRef();
        if (ref != null) {
            try {
                BlobReference r = BlobReference.parse(ref, DEFAULT_CONTENT_CAP);
                Content full = Content.parse(fetcher.fetchBytes(r, DEFAULT_CONTENT_CAP, fetchDeadline));
                // A content-ref or control inside fetched content is ignored (no chains). The notification id: an
                // update's control.id; otherwise the full content's own, or the preview's when it has none.
                content = full.delivered(updated != null || full.notificationId() == null ? notificationId : null);
            } catch (SealedPushException e) {
                skipped.add(new StepResult.Skipped(-1, e.code()));
            }
        }
        List<StepResult.Attachment> files = new ArrayList<>();
        if (attachmentDirectory != null) {
            fetchAttachments(content, fetchDeadline, abandoned, written, files, skipped);
        }
        return StepResult.notification(content, duplicate, files, skipped);
    }

    /**
     * Fetches the first {@link AttachmentDescriptor#MAX_ATTACHMENTS} valid attachments all at once, each with the whole
     * time left (one stalled server cannot spend another attachment's time), and records the results in the
     * sender's order. Elements past the 8th and defective descriptors are skipped with their code.
     */
    private void fetchAttachments(Content content, long fetchDeadline, AtomicBoolean abandoned, List<Path> written,
        List<StepResult.Attachment> files, List<StepResult.Skipped> skipped) {
        List<AttachmentDescriptor.Parsed> parsed = AttachmentDescriptor.parseAll(content.attachments());
        List<Future<Path>> downloads = new ArrayList<>(parsed.size());
        List<AtomicBoolean> givenUp = new ArrayList<>(parsed.size());
        for (AttachmentDescriptor.Parsed p : parsed) {
            final AttachmentDescriptor d = p.descriptor();
            final AtomicBoolean late = new AtomicBoolean();
            givenUp.add(late);
            if (d == null) {
                downloads.add(null);
                continue;
            }
            try {
                downloads.add(executor.submit(() -> download(d, fetchDeadline, abandoned, late, written)));
            } catch (RuntimeException e) {
                downloads.add(null);
            }
        }
        for (int i = 0; i < parsed.size(); i++) {
            AttachmentDescriptor.Parsed p = parsed.get(i);
            if (p.error() != null) {
                skipped.add(new StepResult.Skipped(i, p.error().code()));
                continue;
            }
            Future<Path> f = downloads.get(i);
            if (f == null) {
                skipped.add(new StepResult.Skipped(i, ErrorCode.IO));
                continue;
            }
            try {
                // The download stops itself at fetchDeadline; half the reserve covers its clean-up, the other half is
                // left for the answer (the step's own wait ends at fetchDeadline + the whole reserve).
                long wait = Math.max(0, fetchDeadline + reserveMillis * 500_000L - System.nanoTime());
                Path file = f.get(wait, TimeUnit.NANOSECONDS);
                files.add(new StepResult.Attachment(file, p.descriptor().type(), p.descriptor().name()));
            } catch (TimeoutException e) {
                synchronized (written) {
                    givenUp.get(i).set(true); // a file that still arrives is deleted, not kept
                }
                f.cancel(true);
                skipped.add(new StepResult.Skipped(i, ErrorCode.DEADLINE_EXCEEDED));
            } catch (ExecutionException e) {
                Throwable c = e.getCause();
                skipped.add(new StepResult.Skipped(i, c instanceof SealedPushException ? ((SealedPushException) c).code() : ErrorCode.IO));
            } catch (InterruptedException e) {
                // The step was abandoned: stop the downloads (their files are deleted by them or by abandon()).
                for (Future<Path> g : downloads) {
                    if (g != null) {
                        g.cancel(true);
                    }
                }
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private Path download(AttachmentDescriptor d, long fetchDeadline, AtomicBoolean abandoned, AtomicBoolean givenUp,
        List<Path> written) throws SealedPushException, IOException {
        if (System.nanoTime() - fetchDeadline >= 0) {
            throw new SealedPushException(ErrorCode.DEADLINE_EXCEEDED, "no time left for this attachment");
        }
        Path file = fetcher.fetchFile(d.blob(), d.type().cap(), d.type().extension(), attachmentDirectory, fetchDeadline);
        synchronized (written) {
            if (abandoned.get() || givenUp.get()) {
                Files.deleteIfExists(file);
                throw new SealedPushException(ErrorCode.DEADLINE_EXCEEDED, "the step stopped waiting for this attachment");
            }
            written.add(file);
        }
        return file;
    }

    /** Stops the step's threads (call when the service is destroyed). */
    public void shutdown() {
        executor.shutdownNow();
    }
}
