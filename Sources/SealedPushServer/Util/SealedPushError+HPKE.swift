import SealedPushCore

extension SealedPushError {
    /// Maps an HPKE-layer failure to a SealedPush error code with an actionable message.
    ///
    /// - Parameters:
    ///   - error: The HPKE failure.
    ///   - context: What was being done (for example "sealing for device key 0123456789abcdef").
    init(hpke error: HPKEError, context: String) {
        switch error {
        case .zeroSharedSecret:
            self.init(
                .invalidKey,
                "\(context): X25519 gave an all-zero shared value, so the public key is a low-order point "
                    + "(rejected by RFC 9180 §7.1.4)")
        case .invalidLength:
            self.init(.invalidKey, "\(context): \(error.description)")
        case .sodiumUnavailable:
            self.init(.keysUnavailable, "\(context): \(error.description)")
        case .outputTooLong, .messageLimitReached, .primitiveFailed:
            self.init(.invalidArgument, "\(context): \(error.description)")
        }
    }
}
