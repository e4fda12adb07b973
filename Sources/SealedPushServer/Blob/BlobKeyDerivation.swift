import SealedPushCore

/// The payload key of a blob: `HKDF-SHA256(salt = header salt, IKM = blob key, info = "SealedPush blob v1 payload",
/// L = 32)` (`Specs/blob-v1.md` §3), on the server's libsodium HMAC.
enum BlobKeyDerivation {
    static func payloadKey(blobKey: SecretBytes, salt: some RawBytes) throws -> SecretBytes {
        let prk = HKDFSHA256.extract(salt: salt, ikm: blobKey)
        do {
            return try HKDFSHA256.expand(prk: prk, info: BlobFormat.payloadKeyInfo, length: BlobFormat.keyLength)
        } catch let error as HPKEError {
            throw SealedPushError(hpke: error, context: "deriving a blob payload key")
        }
    }
}
