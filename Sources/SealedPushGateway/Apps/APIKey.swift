import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A bearer API key of one app: `sp_<16 hex id>_<43 base64url secret>`.
///
/// The id is public (it finds the stored record); the whole key is secret. The store keeps only
/// ``digest`` (SHA-256 of the whole key text); ``GatewayStore/authenticate(bearer:)`` compares digests in constant
/// time. The key text is printed once when created and never logged: `description` and `dump` show the id only.
public struct APIKey: Sendable, CustomStringConvertible, CustomReflectable {
    /// The public id (16 lowercase hex digits).
    public let id: String
    /// The whole key text, to hand to the backend once.
    public let text: String

    /// Generates a fresh key from the system's cryptographically secure random source.
    public static func generate() -> APIKey {
        var generator = SystemRandomNumberGenerator()
        let idBytes = (0..<8).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let secretBytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let id = idBytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        let secret = Data(secretBytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return APIKey(id: id, text: "sp_\(id)_\(secret)")
    }

    /// Parses a presented bearer key; nil when it does not have the shape of a key (nothing is looked up then).
    /// - Parameter text: The bearer token as presented.
    public init?(parsing text: String) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 3 + 16 + 1 + 43, text.hasPrefix("sp_"), utf8[19] == UInt8(ascii: "_") else { return nil }
        let id = utf8[3..<19]
        guard id.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        guard utf8[20...].allSatisfy({ Self.isBase64URL($0) }) else { return nil }
        self.init(id: String(decoding: id, as: UTF8.self), text: text)
    }

    private init(id: String, text: String) {
        self.id = id
        self.text = text
    }

    /// SHA-256 of the key text: what the store keeps.
    public var digest: [UInt8] { Self.digest(of: text) }

    /// SHA-256 of a presented key text.
    /// - Parameter text: The key text.
    public static func digest(of text: String) -> [UInt8] { Array(SHA256.hash(data: Array(text.utf8))) }

    /// Compares two digests in time that depends only on their lengths.
    /// - Parameters:
    ///   - a: One digest.
    ///   - b: The other.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// The key's id only; the secret is never printed.
    public var description: String { "APIKey(id: \(id))" }

    /// The key's id only, so `dump` and debuggers do not print the secret either.
    public var customMirror: Mirror { Mirror(self, children: ["id": id]) }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
