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
    /// - Returns: The 32-byte key, a canonical X25519 u-coordinate (see ``checkCanonicalPublicKey(_:)``).
    /// - Throws: ``SealedPushError`` with code `invalidKey` saying what was wrong, without echoing the text: what is
    ///   given where a public key belongs may be a secret (a private key pasted by mistake is named as one).
    public static func decodePublicKey(_ text: String) throws -> [UInt8] {
        let raw = try decode(Array(text.utf8), prefix: publicKeyPrefix, what: "public key")
        try checkCanonicalPublicKey(raw)
        return raw
    }

    /// Checks that 32 bytes are the canonical encoding of an X25519 u-coordinate: little-endian `u < 2^255 − 19`
    /// (spec §7). X25519 itself masks bit 255 and reduces modulo p, so a non-canonical key works as the same point
    /// while its key id (over the bytes as given) differs from the one the device computes: sealing to it would
    /// always fail with `unknownRecipientKey`. SealedPush rejects it instead.
    ///
    /// - Parameter raw: A 32-byte public key.
    /// - Throws: ``SealedPushError`` with code `invalidKey` for another length or a non-canonical encoding.
    public static func checkCanonicalPublicKey(_ raw: [UInt8]) throws {
        guard raw.count == keyLength else {
            throw SealedPushError(.invalidKey, "a public key is \(keyLength) bytes, got \(raw.count)")
        }
        guard raw[31] & 0x80 == 0 else {
            throw SealedPushError(
                .invalidKey, "a public key must have bit 255 clear (a canonical X25519 u-coordinate); this one is set")
        }
        // u >= p = 2^255 - 19 only for 0x7f ff .. ff followed (little-endian, low byte first) by a low byte >= 0xed.
        let isHighAllOnes = raw[31] == 0x7F && raw[1..<31].allSatisfy { $0 == 0xFF }
        guard !(isHighAllOnes && raw[0] >= 0xED) else {
            throw SealedPushError(
                .invalidKey, "a public key must be below 2^255 − 19 (a canonical X25519 u-coordinate); this one is not")
        }
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
        return try decode(Array(body), prefix: privateKeyPrefix, what: "private key file")
    }

    /// Decodes a private key's text form where it stands alone, as a key ring's `privateKey` member
    /// (`Specs/keyring-v1.md` §2): exactly `SPSK1:` and 43 base64url characters — the file form's final `\n` is not
    /// part of it.
    /// - Parameter chars: The UTF-8 bytes of the text.
    /// - Returns: The 32-byte private key.
    /// - Throws: ``SealedPushError`` with code `invalidKey` saying what was wrong (never echoing key bytes).
    public static func decodePrivateKey(_ chars: [UInt8]) throws -> [UInt8] {
        try decode(chars, prefix: privateKeyPrefix, what: "private key")
    }

    /// Never echoes the text: a private key's characters are secret, and what is given where a public key belongs
    /// may be one.
    private static func decode(_ chars: [UInt8], prefix: String, what: String) throws -> [UInt8] {
        let prefixBytes = Array(prefix.utf8)
        let expected = prefixBytes.count + Base64URL.encodedLength(keyLength)
        guard chars.starts(with: prefixBytes) else {
            if prefix == publicKeyPrefix, chars.starts(with: Array(privateKeyPrefix.utf8)) {
                throw SealedPushError(
                    .invalidKey,
                    "a \(what) must start with \"\(prefix)\"; this is a private key (\"\(privateKeyPrefix)…\", not shown), "
                        + "which must never leave its owner: give its public key (\"\(publicKeyPrefix)…\") instead")
            }
            throw SealedPushError(
                .invalidKey, "a \(what) must start with \"\(prefix)\" (the \(chars.count) characters given do not)")
        }
        guard chars.count == expected else {
            throw SealedPushError(.invalidKey, "a \(what) is \(expected) characters, got \(chars.count)")
        }
        do {
            return try Base64URL.decode(utf8: Array(chars.dropFirst(prefixBytes.count)))
        } catch let error as SealedPushError {
            throw SealedPushError(.invalidKey, "a \(what) has bad base64url: \(error.message)")
        }
    }
}
