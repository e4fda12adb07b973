import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SealedPushClient
import SealedPushCore

/// A ``BlobTransport`` on `URLSession`: what a Notification Service Extension uses to fetch attachments and
/// content sent by reference.
///
/// Each download runs its own data task with a delegate that hands every body byte to `receive` as it arrives.
/// On Linux, FoundationNetworking queues every buffer for the delegate without limit (it cannot pause a transfer),
/// so a body arriving faster than `receive` takes it is held in memory: use `NIOBlobTransport`
/// (`SealedPushClientNIO`) there. It counts the bytes itself and never
/// trusts `Content-Length`, and it cancels the data task as soon as the download must end: more than
/// `expectedBytes` arrived (`blobTrailingData`, after the bytes up to the end went to `receive`), the deadline passed (`deadlineExceeded`), the calling task was
/// cancelled (`CancellationError`), or `receive` threw (that error).
///
/// ```swift
/// let transport = URLSessionBlobTransport()
/// let file = try BlobFileOpener(attachment: descriptor, directory: containerURL)
/// do {
///     try await transport.download(
///         from: url, expectedBytes: file.ciphertextSize, deadline: deadline, receive: { try file.append($0) })
///     attachmentURL = try file.finish()
/// } catch {
///     file.cancel()
/// }
/// ```
public struct URLSessionBlobTransport: BlobTransport {
    private let configuration: URLSessionConfiguration

    /// Creates a transport.
    ///
    /// - Parameter configuration: The session configuration to start from (default `.ephemeral`). Caching is
    ///   turned off whatever it says: a blob is read once, straight into its decryptor.
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        let copy = configuration.copy() as? URLSessionConfiguration ?? .ephemeral
        copy.urlCache = nil
        copy.requestCachePolicy = .reloadIgnoringLocalCacheData
        copy.httpMaximumConnectionsPerHost = 1
        self.configuration = copy
    }

    public func download(
        from url: URL, expectedBytes: Int, deadline: ContinuousClock.Instant,
        receive: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws {
        try Task.checkCancellation()
        let host = url.host ?? "an unnamed host"
        guard expectedBytes >= 0 else {
            throw SealedPushError(.invalidArgument, "a blob's expected size cannot be negative")
        }
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else {
            throw SealedPushError(.deadlineExceeded, "no time was left to download a blob from \(host)")
        }
        try await withoutActuallyEscaping(receive) { receive in
            let download = BlobDownload(expectedBytes: expectedBytes, host: host, receive: receive)
            defer { download.close() }  // drops `receive` before it would escape this call
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            let session = URLSession(configuration: configuration, delegate: download, delegateQueue: queue)
            defer { session.invalidateAndCancel() }
            var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData)
            request.httpMethod = "GET"
            // A backstop only: the deadline below ends the download on time.
            request.timeoutInterval = max(1, Self.seconds(remaining) + 1)
            let task = session.dataTask(with: request)
            let timer = Task {
                try? await Task.sleep(until: deadline, clock: .continuous)
                if !Task.isCancelled {
                    download.fail(SealedPushError(.deadlineExceeded, "the download from \(host) did not finish by the deadline"))
                }
            }
            defer { timer.cancel() }
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    download.start(task, continuation: continuation)
                }
            } onCancel: {
                download.fail(CancellationError())
            }
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
