/// Failures of the server's HPKE layer (RFC 9180 on libsodium).
///
/// The sealing layer maps these onto `SealedPushError` codes; they never carry secret material.
package enum HPKEError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A key or nonce had the wrong length.
    case invalidLength(what: String, expected: Int, actual: Int)
    /// An X25519 operation produced the all-zero value (a low-order public key), which RFC 9180 §7.1.4 rejects.
    case zeroSharedSecret
    /// An HKDF-Expand output was longer than 255 × 32 bytes or an I2OSP length did not fit in two bytes.
    case outputTooLong(requested: Int, limit: Int)
    /// The context's sequence number is exhausted.
    case messageLimitReached
    /// libsodium failed to initialize.
    case sodiumUnavailable
    /// libsodium refused an operation that should not fail (for example AEAD encryption).
    case primitiveFailed(String)

    package var description: String {
        switch self {
        case let .invalidLength(what, expected, actual):
            "\(what) must be \(expected) bytes, got \(actual)"
        case .zeroSharedSecret:
            "X25519 produced an all-zero shared value (low-order public key)"
        case let .outputTooLong(requested, limit):
            "requested \(requested) bytes of key material, the limit is \(limit)"
        case .messageLimitReached:
            "HPKE context sequence number exhausted"
        case .sodiumUnavailable:
            "libsodium failed to initialize (sodium_init returned -1)"
        case let .primitiveFailed(name):
            "libsodium \(name) failed"
        }
    }
}
