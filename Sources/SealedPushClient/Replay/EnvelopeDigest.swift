import Crypto

/// The digest a replay guard keeps with a message id to tell an exact duplicate from a different envelope reusing
/// the id (`Specs/keyring-v1.md` §5.5): the first 16 bytes of SHA-256 over the binary envelope (header and
/// ciphertext, after base64url decoding).
public enum EnvelopeDigest {
    /// The digest's length in bytes.
    public static let length = 16

    /// Computes the digest of a binary envelope.
    ///
    /// - Parameter envelope: The envelope bytes (already base64url-decoded).
    /// - Returns: The first 16 bytes of `SHA-256(envelope)`.
    public static func of(_ envelope: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: envelope).prefix(length))
    }
}
