import Crypto
import Foundation
import SealedPushCore

/// Where and how the gateway posts its webhook events (``UnregisteredDeviceEvent``, ``ReceiptEvent``) to a backend.
///
/// **Signature.** Each event is a `POST` of a small JSON object (ids, outcomes and times; no content, no token) with
/// these headers:
/// - `Content-Type: application/json`
/// - `SealedPush-Event`: the event type (`device.unregistered`, `notification.receipt`)
/// - `SealedPush-Delivery`: a UUID for the event, the same on every retry (for the receiver to drop repeats)
/// - `SealedPush-Timestamp`: the Unix time of this attempt, in whole seconds (decimal ASCII)
/// - `SealedPush-Signature`: `v1=` and the lowercase hex HMAC-SHA256, keyed with the shared secret's bytes, of the
///   timestamp's decimal text, a `.` and the exact body bytes.
///
/// A receiver recomputes the HMAC over the header's timestamp and the raw body, compares in constant time, and
/// refuses timestamps more than 5 minutes from its clock (`Specs/gateway-api.yaml`, "Webhook events").
///
/// **Delivery policy** (durable with a ``WebhookOutbox``, as the gateway runs it: see ``UnregisteredWebhook``):
/// - A 2xx answer delivers the event. A 3xx is a failure of the event at once (redirects are never followed: a
///   redirect would not change on retry, and following one would send the signed event elsewhere), and so is a 4xx
///   other than 408, 425 and 429 (the receiver refused these bytes; they would be refused again). A 5xx, 408, 425,
///   429, a transport error or a timeout (``requestTimeout``) is retried up to ``maxAttempts`` attempts in all,
///   waiting ``initialBackoff`` doubled after each failure up to ``maxBackoff``, each wait drawn between half and
///   all of it (defaults: 8 attempts over about 5 to 10 minutes) — or, when the answer carried a `Retry-After`
///   (seconds or an HTTP date), that wait, at most ``maxBackoff`` (see ``retryWait(afterFailures:retryAfter:random:)``).
/// - Up to ``maxConcurrent`` events are posted at once, so events may arrive out of order (each carries its time);
///   an event waiting for its retry does not hold a slot.
/// - At most ``queueLimit`` events are held (waiting, waiting for a retry, or being posted); beyond it, outbox events
///   wait in the store, and an event given to ``UnregisteredWebhook/notify(_:)`` is dropped.
/// - On shutdown, events still held get ``drainDeadline``: retries then wait at most 250 ms. Outbox events still
///   held then go back to the outbox; others are dropped.
/// - Every event given up (attempts spent, a redirect, a refusal; without an outbox, the queue full or shutdown) is
///   logged at `error` with its type, ids and reason, and counted (``UnregisteredWebhook``'s metrics).
///
/// The URL may carry credentials (a user and password, a `?token=`): logs and errors only ever show
/// ``redactedURL``.
public struct UnregisteredWebhookConfiguration: Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The header naming the event type.
    public static let eventHeader = "SealedPush-Event"
    /// The header carrying the event's id.
    public static let deliveryHeader = "SealedPush-Delivery"
    /// The header carrying the signed timestamp.
    public static let timestampHeader = "SealedPush-Timestamp"
    /// The header carrying the signature.
    public static let signatureHeader = "SealedPush-Signature"
    /// The event type sent in ``eventHeader`` for unregistered devices.
    public static let eventType = "device.unregistered"
    /// The allowed range of ``maxAttempts``.
    public static let attemptsRange = 1...20
    /// The allowed range of ``maxConcurrent``.
    public static let concurrencyRange = 1...64

    /// The `http` or `https` URL to post to.
    public var url: URL
    /// Attempts per event, 1...20 (default 8).
    public var maxAttempts: Int
    /// Events posted at once, 1...64 (default 4).
    public var maxConcurrent: Int
    /// The most time one attempt may take, connecting included (default 10 s).
    public var requestTimeout: Duration
    /// The wait before the first retry, doubled for each further one (default 5 s).
    public var initialBackoff: Duration
    /// The longest wait between two attempts (default 300 s).
    public var maxBackoff: Duration
    /// The most events held at once (default 10,000).
    public var queueLimit: Int
    /// On shutdown, how long held events may still be sent (default 5 s; `serve` uses
    /// `delivery.shutdownGraceSeconds`).
    public var drainDeadline: Duration
    /// PEM certificates trusted for an `https` URL instead of the system's roots (a private CA); nil for the
    /// system's.
    public var trustRootsPEM: String?

    /// The HMAC key (zeroed by swift-crypto when released).
    let key: SymmetricKey

    /// Creates a webhook configuration.
    /// - Parameters:
    ///   - url: The `http` or `https` URL to post to.
    ///   - secret: The shared secret (at least 16 bytes). Zero your copy afterwards; this keeps its own.
    /// - Throws: `SealedPushError` `invalidArgument` for another scheme or a short secret.
    public init(url: URL, secret: [UInt8]) throws {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            throw SealedPushError(.invalidArgument, "the webhook URL must be http:// or https:// with a host")
        }
        guard secret.count >= 16 else {
            throw SealedPushError(
                .invalidArgument, "the webhook secret must be at least 16 bytes (got \(secret.count))")
        }
        self.url = url
        self.key = SymmetricKey(data: secret)
        self.maxAttempts = 8
        self.maxConcurrent = 4
        self.requestTimeout = .seconds(10)
        self.initialBackoff = .seconds(5)
        self.maxBackoff = .seconds(300)
        self.queueLimit = 10_000
        self.drainDeadline = .seconds(5)
        self.trustRootsPEM = nil
    }

    /// The URL as logs and errors show it: `scheme://host:port/path`, without user or password, the query (which
    /// may hold a token) replaced by `?…`, no fragment.
    public var redactedURL: String {
        Self.redacted(url)
    }

    /// `url` as logs may show it (see ``redactedURL``).
    /// - Parameter url: A URL.
    /// - Returns: `scheme://host:port/path`, and `?…` when it had a query.
    public static func redacted(_ url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? "?"
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let host = components?.host ?? url.host ?? ""
        let path = components?.percentEncodedPath ?? ""
        let query = components?.percentEncodedQuery == nil ? "" : "?…"
        return scheme + "://" + ProviderProxy.authority(host: host, port: port) + path + query
    }

    /// The redacted URL and limits; never the secret, a credential or a query.
    public var description: String {
        "UnregisteredWebhookConfiguration(url: \(redactedURL), maxAttempts: \(maxAttempts), "
            + "maxConcurrent: \(maxConcurrent), requestTimeout: \(requestTimeout), secret: <redacted>)"
    }

    /// As ``description``: never the secret.
    public var debugDescription: String { description }

    /// Dumps and debuggers show the redacted URL and limits only.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "url": redactedURL, "maxAttempts": maxAttempts, "maxConcurrent": maxConcurrent,
                "requestTimeout": requestTimeout,
            ], displayStyle: .struct)
    }

    /// The ``signatureHeader`` value for a timestamp and body (what a receiver recomputes).
    /// - Parameters:
    ///   - timestamp: The ``timestampHeader`` text.
    ///   - body: The exact body bytes.
    /// - Returns: `v1=` and the lowercase hex HMAC-SHA256 of `timestamp + "." + body`.
    public func signature(timestamp: String, body: [UInt8]) -> String {
        var message = Array(timestamp.utf8)
        message.append(UInt8(ascii: "."))
        message += body
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: key)
        return "v1=" + mac.map { String(format: "%02x", $0) }.joined()
    }

    /// The wait before the attempt after `failures` failed ones: ``initialBackoff`` doubled `failures - 1` times, at
    /// most ``maxBackoff``, drawn between half and all of it.
    /// - Parameters:
    ///   - failures: Attempts failed so far (1 or more).
    ///   - random: A number in 0...1 (the jitter).
    /// - Returns: The wait.
    public func backoff(afterFailures failures: Int, random: Double) -> Duration {
        let full = min(initialBackoff * (1 << min(max(failures - 1, 0), 20)), maxBackoff)
        return full * (0.5 + 0.5 * min(max(random, 0), 1))
    }

    /// The wait before the attempt after `failures` failed ones, the last answered with `retryAfter`: the receiver's
    /// `Retry-After` wait when it gave one, at most ``maxBackoff``; otherwise
    /// ``backoff(afterFailures:random:)``.
    /// - Parameters:
    ///   - failures: Attempts failed so far (1 or more).
    ///   - retryAfter: The wait the last answer's `Retry-After` asked for, if any.
    ///   - random: A number in 0...1 (the jitter of the backoff).
    /// - Returns: The wait.
    public func retryWait(afterFailures failures: Int, retryAfter: Duration?, random: Double) -> Duration {
        guard let retryAfter else { return backoff(afterFailures: failures, random: random) }
        return min(max(retryAfter, .zero), maxBackoff)
    }

    func validate() throws {
        guard Self.attemptsRange.contains(maxAttempts) else {
            throw SealedPushError(.invalidArgument, "webhook maxAttempts must be 1...20 (got \(maxAttempts))")
        }
        guard Self.concurrencyRange.contains(maxConcurrent) else {
            throw SealedPushError(.invalidArgument, "webhook maxConcurrent must be 1...64 (got \(maxConcurrent))")
        }
        guard requestTimeout > .zero, initialBackoff >= .zero, maxBackoff >= initialBackoff, drainDeadline >= .zero,
            queueLimit > 0
        else {
            throw SealedPushError(.invalidArgument, "webhook timeouts and queue limit must be positive")
        }
    }
}
