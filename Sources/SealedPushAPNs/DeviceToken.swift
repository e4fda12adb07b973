import SealedPushCore

/// An APNs device token: even-length hex, 64 to 200 characters (Apple's tokens are 32 bytes today, 64 hex
/// characters, but Apple says their length may change). Stored lowercase.
public struct DeviceToken: Hashable, Sendable, CustomStringConvertible {
    /// The shortest accepted token, in hex characters.
    public static let minimumHexLength = 64
    /// The longest accepted token, in hex characters.
    public static let maximumHexLength = 200

    /// The token, lowercase hex.
    public let hex: String

    /// Parses a hex device token.
    /// - Parameter hex: The token as the app reported it (upper- or lowercase hex, no spaces or `<>`).
    /// - Throws: `SealedPushError` with code `.invalidArgument` if it is not even-length hex of 64–200 characters.
    public init(hex: String) throws {
        let utf8 = hex.utf8
        guard utf8.count >= Self.minimumHexLength, utf8.count <= Self.maximumHexLength, utf8.count % 2 == 0 else {
            throw SealedPushError(
                .invalidArgument,
                "a device token must be an even number of hex characters, \(Self.minimumHexLength)–"
                    + "\(Self.maximumHexLength) long (got \(utf8.count))")
        }
        guard utf8.allSatisfy(Self.isHexDigit) else {
            throw SealedPushError(.invalidArgument, "a device token must contain only hex characters 0-9 a-f")
        }
        self.hex = hex.lowercased()
    }

    /// Makes a token from its bytes.
    /// - Parameter bytes: The raw token (32–100 bytes).
    /// - Throws: `SealedPushError` with code `.invalidArgument` for a wrong length.
    public init(bytes: [UInt8]) throws {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        try self.init(hex: String(decoding: text, as: UTF8.self))
    }

    /// The first 8 hex characters and an ellipsis, for logs.
    public var redacted: String { String(hex.prefix(8)) + "…" }

    public var description: String { redacted }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }
}
