/// The 8-byte identifier of an X25519 public key (spec §2.2).
///
/// `keyId(pk) = SHA-256("SealedPush key id v1" || 0x00 || pk)[0..8)`. Core has no hash function by design, so
/// each side computes the digest with its own crypto library over ``derivationPrefix`` followed by the key, and
/// wraps the first ``length`` bytes with ``init(bytes:)``.
public struct KeyID: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The number of bytes in a key id.
    public static let length = 8

    /// The bytes hashed before the public key: the ASCII label `SealedPush key id v1` and one zero byte.
    public static let derivationPrefix: [UInt8] = Array("SealedPush key id v1".utf8) + [0]

    /// The key id's bytes.
    public let bytes: [UInt8]

    /// Wraps 8 bytes, or the first 8 bytes of a longer digest.
    /// - Parameter bytes: At least 8 bytes; only the first 8 are kept.
    /// - Throws: ``SealedPushError`` with code `invalidKey` if fewer than 8 bytes are given.
    public init(bytes: some Collection<UInt8>) throws {
        guard bytes.count >= Self.length else {
            throw SealedPushError(.invalidKey, "a key id needs \(Self.length) bytes, got \(bytes.count)")
        }
        self.bytes = Array(bytes.prefix(Self.length))
    }

    /// Parses the text form: 16 hexadecimal digits.
    /// - Parameter hex: The key id's text form.
    /// - Throws: ``SealedPushError`` with code `invalidKey` if it is not 16 hex digits.
    public init(hex: String) throws {
        guard hex.utf8.count == 2 * Self.length, let raw = try? Hex.decode(hex) else {
            throw SealedPushError(.invalidKey, "a key id is \(2 * Self.length) hex digits, got \"\(hex.prefix(40))\"")
        }
        self.bytes = raw
    }

    /// The text form: 16 lowercase hexadecimal digits.
    public var hex: String { Hex.encode(bytes) }

    public var description: String { hex }

    public static func < (lhs: KeyID, rhs: KeyID) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}
