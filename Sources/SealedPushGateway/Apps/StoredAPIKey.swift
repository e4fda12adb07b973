#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An API key as the store keeps it: its public id, its app and the SHA-256 of the key text — never the key.
public struct StoredAPIKey: Sendable, Hashable {
    /// The key's public id.
    public var id: String
    /// The app the key acts for.
    public var appID: String
    /// SHA-256 of the whole key text (32 bytes).
    public var digest: [UInt8]
    /// A label for operators (`"ci"`, `"backend-eu"`); not secret.
    public var label: String
    /// When the key was added.
    public var createdAt: Date
    /// When the key stops working (nil: never); an expired key is refused like an unknown one.
    public var expiresAt: Date?
    /// When the key last authenticated a request (recorded at most once a minute per node; nil: never).
    public var lastUsedAt: Date?

    /// Whether the key is expired at `now`.
    public func isExpired(at now: Date) -> Bool { expiresAt.map { $0 <= now } ?? false }

    /// Whether a presented key is this key and may act at `now`: the same id, the SHA-256 of its text equal to
    /// ``digest`` (compared in constant time), and not expired.
    /// - Parameters:
    ///   - presented: The key as presented.
    ///   - now: The time an expiry is checked against.
    public func accepts(_ presented: APIKey, at now: Date) -> Bool {
        presented.id == id && APIKey.constantTimeEqual(presented.digest, digest) && !isExpired(at: now)
    }

    /// Creates the stored form of a key.
    /// - Parameters:
    ///   - key: The key (only its id and digest are kept).
    ///   - appID: The app it acts for.
    ///   - label: A label for operators.
    ///   - createdAt: When it was added.
    ///   - expiresAt: When it stops working (nil: never).
    public init(key: APIKey, appID: String, label: String = "", createdAt: Date = Date(), expiresAt: Date? = nil) {
        self.init(id: key.id, appID: appID, digest: key.digest, label: label, createdAt: createdAt, expiresAt: expiresAt)
    }

    /// Creates a stored key from its parts (as read from the database).
    /// - Parameters:
    ///   - id: The key's public id.
    ///   - appID: The app it acts for.
    ///   - digest: SHA-256 of the key text.
    ///   - label: A label for operators.
    ///   - createdAt: When it was added.
    ///   - expiresAt: When it stops working (nil: never).
    ///   - lastUsedAt: When it last authenticated a request.
    public init(
        id: String, appID: String, digest: [UInt8], label: String, createdAt: Date, expiresAt: Date? = nil,
        lastUsedAt: Date? = nil
    ) {
        self.id = id
        self.appID = appID
        self.digest = digest
        self.label = label
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.lastUsedAt = lastUsedAt
    }
}
