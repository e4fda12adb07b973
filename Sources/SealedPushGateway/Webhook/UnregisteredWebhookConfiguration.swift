import Crypto
import Foundation
import SealedPushCore

/// Where and how the gateway tells a backend that one of its devices became unregistered.
///
/// Each event is a `POST` of a small JSON object (``UnregisteredDeviceEvent``; no content, no token) with these
/// headers:
/// - `Content-Type: application/json`
/// - `SealedPush-Event: device.unregistered`
/// - `SealedPush-Delivery`: a UUID for the event, the same on every retry (for the receiver to drop repeats)
/// - `SealedPush-Timestamp`: the Unix time of this attempt, in whole seconds (decimal)
/// - `SealedPush-Signature`: `v1=` and the lowercase hex HMAC-SHA256, keyed with the shared secret, of the
///   timestamp's decimal text, a `.`, and the exact body bytes.
///
/// A receiver recomputes the HMAC over the header's timestamp and the raw body, compares in constant time, and
/// refuses timestamps more than a few minutes from its clock. Any 2xx answer delivers the event; other answers,
/// transport errors and timeouts are retried with backoff up to ``maxAttempts`` times, then the event is dropped
/// and logged. Webhook calls never hold up delivery: events wait in a bounded queue (``queueLimit``; beyond it the
/// newest are dropped and logged).
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
    /// The event type sent in ``eventHeader``.
    public static let eventType = "device.unregistered"

    /// The `http` or `https` URL to post to.
    public var url: URL
    /// Attempts per event, 1...20 (default 4).
    public var maxAttempts: Int
    /// The most time one attempt may take, connecting included (default 5 s).
    public var requestTimeout: Duration
    /// The delay before the first retry, doubled for each further one (default 500 ms).
    public var initialBackoff: Duration
    /// The most events waiting to be sent (default 10,000).
    public var queueLimit: Int
    /// On shutdown, how long waiting events may still be sent (default 5 s).
    public var drainDeadline: Duration

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
        self.maxAttempts = 4
        self.requestTimeout = .seconds(5)
        self.initialBackoff = .milliseconds(500)
        self.queueLimit = 10_000
        self.drainDeadline = .seconds(5)
    }

    /// The URL and limits; never the secret.
    public var description: String {
        "UnregisteredWebhookConfiguration(url: \(url.absoluteString), maxAttempts: \(maxAttempts), "
            + "requestTimeout: \(requestTimeout), secret: <redacted>)"
    }

    /// As ``description``: never the secret.
    public var debugDescription: String { description }

    /// Dumps and debuggers show the URL and limits only.
    public var customMirror: Mirror {
        Mirror(self, children: ["url": url, "maxAttempts": maxAttempts, "requestTimeout": requestTimeout], displayStyle: .struct)
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

    func validate() throws {
        guard (1...20).contains(maxAttempts) else {
            throw SealedPushError(.invalidArgument, "webhook maxAttempts must be 1...20 (got \(maxAttempts))")
        }
        guard requestTimeout > .zero, initialBackoff >= .zero, drainDeadline >= .zero, queueLimit > 0 else {
            throw SealedPushError(.invalidArgument, "webhook timeouts and queue limit must be positive")
        }
    }
}
