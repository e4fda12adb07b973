/// SHA-256 of a whole blob, for the spec vectors' `ciphertextSHA256` (the generator and the tests; the format
/// itself needs no whole-file hash).
package enum BlobDigest {
    /// `crypto_hash_sha256` of `bytes`.
    package static func sha256(_ bytes: [UInt8]) -> [UInt8] { Sodium.sha256(bytes) }
}
