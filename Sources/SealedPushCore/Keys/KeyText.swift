/// Text forms of X25519 keys (spec §7).
///
/// - Public key: `SPK1:` + base64url (no padding) of the 32-byte key — 48 characters.
/// - Private key file: `SPSK1:` + base64url of the 32-byte key, then one `\n` (optional when reading).
public enum KeyText {
    /// The public key prefix, `SPK1:`.
    public static let publicKeyPrefix = "SPK1:"
    /// The private key file prefix, `SPSK1:`.
    public static let privateKeyPrefix = "SPSK1:"
    /// The length of an X25519 key in bytes.
    public static let keyLength = 32

    /// Encodes a public key in its text form.
    /// - Parameter raw: The 32-byte X25519 public key.
    /// - Returns: `SPK1:` followed by 43 base64url characters.
    public static func encodePublicKey(_ raw: [UInt8]) -> String {
        publicKeyPrefix + Base64URL.encode(raw)
    }

    /// Decodes a public key's text form.
    /// - Parameter text: `SPK1:` followed by 43 base64url characters; surrounding whitespace is not accepted.
    /// - Returns: The 32-byte key.
    /// - Throws: ``SealedPushError`` with code `invalidKey` saying what was wrong.
    public static func decodePublicKey(_ text: String) throws -> [UInt8] {
        try decode(Array(text.utf8), prefix: publicKeyPrefix, what: "public key")
    }

    /// Encodes a private key file's contents.
    /// - Parameter raw: The 32-byte X25519 private key.
    /// - Returns: The UTF-8 bytes of `SPSK1:<43 characters>\n`. Callers own and must zero them.
    public static func encodePrivateKeyFile(_ raw: [UInt8]) -> [UInt8] {
        Array((privateKeyPrefix + Base64URL.encode(raw) + "\n").utf8)
    }

    /// Decodes a private key file's contents.
    /// - Parameter bytes: The file's bytes: `SPSK1:<43 characters>` with or without one final `\n`.
    /// - Returns: The 32-byte private key.
    /// - Throws: ``SealedPushError`` with code `invalidKey` saying what was wrong (never echoing key bytes).
    public static func decodePrivateKeyFile(_ bytes: [UInt8]) throws -> [UInt8] {
        var body = bytes[...]
        if body.last == UInt8(ascii: "\n") { body = body.dropLast() }
        return try decode(Array(body), prefix: privateKeyPrefix, what: "private key file", echo: false)
    }

    private static func decode(_ chars: [UInt8], prefix: String, what: String, echo: Bool = true) throws -> [UInt8] {
        let prefixBytes = Array(prefix.utf8)
        let expected = prefixBytes.count + Base64URL.encodedLength(keyLength)
        let shown = echo ? " (\"\(String(decoding: chars.prefix(60), as: UTF8.self))\")" : ""
        guard chars.starts(with: prefixBytes) else {
            throw SealedPushError(.invalidKey, "a \(what) must start with \"\(prefix)\"\(shown)")
        }
        guard chars.count == expected else {
            throw SealedPushError(
                .invalidKey, "a \(what) is \(expected) characters, got \(chars.count)\(shown)")
        }
        do {
            return try Base64URL.decode(utf8: Array(chars.dropFirst(prefixBytes.count)))
        } catch let error as SealedPushError {
            throw SealedPushError(.invalidKey, "a \(what) has bad base64url: \(error.message)")
        }
    }
}
