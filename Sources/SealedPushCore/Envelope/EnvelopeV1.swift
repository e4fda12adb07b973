/// Constants and derived values of envelope version 1 (`Specs/envelope-v1.md`).
public enum EnvelopeV1 {
    /// The version byte.
    public static let version: UInt8 = 1
    /// The suite byte: HPKE mode_auth, DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305.
    public static let suiteID: UInt8 = 1
    /// HPKE mode_auth.
    public static let hpkeMode: UInt8 = 0x02
    /// HPKE KEM id 0x0020, KDF id 0x0001, AEAD id 0x0003.
    public static let kemID: UInt16 = 0x0020, kdfID: UInt16 = 0x0001, aeadID: UInt16 = 0x0003
    /// The header's length in bytes; the header is the AEAD's associated data.
    public static let headerLength = 82
    /// The AEAD tag length.
    public static let tagLength = 16
    /// The message id's length.
    public static let messageIDLength = 16
    /// The HPKE encapsulated key's length.
    public static let encLength = 32
    /// The longest lifetime (`expiresAt - issuedAt`) in seconds: 28 days.
    public static let maxLifetime: UInt64 = 2_419_200
    /// How far a receiver lets `issuedAt` run ahead of its own clock before refusing the envelope as `notYetValid`:
    /// 10 minutes (spec §8 step 10a). It absorbs ordinary clock drift between the sender and the device.
    public static let maxClockSkew: UInt64 = 600
    /// The default time to live in seconds: one day.
    public static let defaultTTL: UInt64 = 86_400
    /// The shortest valid envelope: header, the smallest padded plaintext and the tag.
    public static let minimumLength = headerLength + tagLength + 128
    /// The longest envelope a receiver accepts.
    public static let maximumLength = headerLength + tagLength + 4096
    /// The ASCII label at the start of the HPKE `info`.
    public static let infoLabel: [UInt8] = Array("SealedPush envelope v1".utf8)

    /// The HPKE `info`: `"SealedPush envelope v1" || 0x00 || topic`.
    /// - Parameter topic: The APNs topic (bundle id), 1 to 255 bytes of UTF-8 without NUL.
    /// - Returns: The info bytes.
    /// - Throws: ``SealedPushError`` with code `invalidTopic`.
    public static func hpkeInfo(topic: String) throws -> [UInt8] {
        try validateTopic(topic)
        return infoLabel + [0] + Array(topic.utf8)
    }

    /// Step 10a: an envelope issued more than ``maxClockSkew`` after `now` is not yet valid.
    /// - Parameters:
    ///   - issuedAt: The envelope's `issuedAt`, UNIX seconds.
    ///   - now: The receiver's clock, UNIX seconds.
    /// - Throws: ``SealedPushError`` with code `notYetValid` naming both times.
    public static func checkNotBefore(issuedAt: UInt64, now: UInt64) throws {
        guard issuedAt > now, issuedAt - now > maxClockSkew else { return }
        throw SealedPushError(
            .notYetValid,
            "the envelope was issued at \(issuedAt) (UNIX seconds), more than \(maxClockSkew) s after now (\(now)); "
                + "check the sender's and the device's clocks")
    }

    /// Checks an APNs topic.
    /// - Parameter topic: The topic.
    /// - Throws: ``SealedPushError`` with code `invalidTopic` saying what was wrong.
    public static func validateTopic(_ topic: String) throws {
        let count = topic.utf8.count
        guard count >= 1, count <= 255 else {
            throw SealedPushError(.invalidTopic, "the topic must be 1 to 255 bytes of UTF-8, got \(count) bytes")
        }
        guard !topic.utf8.contains(0) else {
            throw SealedPushError(.invalidTopic, "the topic must not contain a NUL character")
        }
    }
}
