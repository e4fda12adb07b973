import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SealedPushCore

/// One download of ``URLSessionBlobTransport``: the data task's delegate, which counts and forwards the body and
/// ends the download exactly once, whichever comes first (the end of the body, an error, too many bytes, the
/// deadline, cancellation).
final class BlobDownload: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let expectedBytes: Int
    private let host: String
    private let lock = NSLock()
    private var receive: (@Sendable (UnsafeRawBufferPointer) throws -> Void)?
    private var continuation: CheckedContinuation<Void, any Error>?
    private var task: URLSessionTask?
    private var pendingError: (any Error)?
    private var finished = false
    private var receivedBytes = 0

    init(expectedBytes: Int, host: String, receive: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void) {
        self.expectedBytes = expectedBytes
        self.host = host
        self.receive = receive
    }

    /// Starts the data task, unless the download already ended (cancelled before it began).
    func start(_ task: URLSessionTask, continuation: CheckedContinuation<Void, any Error>) {
        let early: (any Error)? = lock.withLock {
            if finished { return pendingError ?? CancellationError() }
            self.continuation = continuation
            self.task = task
            return nil
        }
        if let early {
            continuation.resume(throwing: early)
        } else {
            task.resume()
        }
    }

    /// Ends the download with `error` (if it has not ended yet) and cancels the data task.
    func fail(_ error: any Error) {
        end(.failure(error))
    }

    /// Forgets `receive`; after this it is never called again.
    func close() {
        lock.withLock {
            finished = true
            receive = nil
        }
    }

    private func end(_ result: Result<Void, any Error>) {
        let (continuation, task) = lock.withLock { () -> (CheckedContinuation<Void, any Error>?, URLSessionTask?) in
            guard !finished else { return (nil, nil) }
            finished = true
            receive = nil
            if case .failure(let error) = result { pendingError = error }
            defer {
                self.continuation = nil
                self.task = nil
            }
            return (self.continuation, self.task)
        }
        if case .failure = result { task?.cancel() }
        continuation?.resume(with: result)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let http = response as? HTTPURLResponse else {
            fail(SealedPushError(.blobUnavailable, "\(host) did not answer with HTTP"))
            completionHandler(.cancel)
            return
        }
        guard http.statusCode == 200 else {
            fail(SealedPushError(.blobUnavailable, "\(host) answered HTTP status \(http.statusCode), not 200"))
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let failure: (any Error)? = lock.withLock {
            guard !finished, let receive else { return nil }
            // Only the bytes up to the blob's end go to `receive`, so a chunk that fails there is reported first; a
            // byte past the end is `blobTrailingData` (Specs/blob-v1.md §5), whatever the split.
            let taken = min(expectedBytes - receivedBytes, data.count)
            receivedBytes += taken
            do {
                if taken > 0 {
                    try data.withUnsafeBytes { try receive(UnsafeRawBufferPointer(rebasing: $0.prefix(taken))) }
                }
            } catch {
                return error
            }
            guard taken == data.count else {
                return SealedPushError(
                    .blobTrailingData,
                    "\(host) sent more than the blob's \(expectedBytes) bytes (Content-Length is not trusted)")
            }
            return nil
        }
        if let failure { fail(failure) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let received = lock.withLock { receivedBytes }
        if received == expectedBytes {
            // Every expected byte arrived (and `receive` took them): an error after that, such as a connection
            // closed short of a larger Content-Length, does not matter.
            end(.success(()))
        } else if let error {
            fail(SealedPushError(.blobUnavailable, "the connection to \(host) failed: \(Self.describe(error))"))
        } else {
            fail(
                SealedPushError(
                    .blobTruncated, "\(host) ended the blob after \(received) of its \(expectedBytes) bytes"))
        }
    }

    /// A description of a transport error that names neither the URL nor its path.
    private static func describe(_ error: any Error) -> String {
        guard let urlError = error as? URLError else {
            let nsError = error as NSError
            return "\(nsError.domain) error \(nsError.code)"
        }
        switch urlError.code {
        case .networkConnectionLost: return "the connection was lost or reset"
        case .cannotConnectToHost: return "the connection was refused"
        case .cannotFindHost, .dnsLookupFailed: return "the host was not found"
        case .timedOut: return "the request timed out"
        case .notConnectedToInternet: return "there is no network connection"
        case .secureConnectionFailed: return "the TLS connection failed"
        default: return "URL error \(urlError.code.rawValue)"
        }
    }
}
