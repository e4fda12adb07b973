/// An error from loading an APNs signing key, signing a provider token, or writing a key file.
///
/// `code` is stable and meant for programs; `message` says what was wrong and what to do. When OpenSSL reported
/// the failure, `openSSLErrors` holds its drained error queue (library strings only, never key material).
public struct ProviderTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable error code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let name: String
        fileprivate init(_ name: String) { self.name = name }

        /// The key is not an unencrypted PKCS#8 PEM P-256 private key.
        public static let invalidKey = Code("invalidKey")
        /// A key id, team id or time is not acceptable.
        public static let invalidArgument = Code("invalidArgument")
        /// OpenSSL failed while signing or generating a key.
        public static let cryptoFailure = Code("cryptoFailure")
        /// Reading or writing a key file failed.
        public static let io = Code("io")

        public var description: String { name }
    }

    /// The stable code.
    public let code: Code
    /// What was wrong, and which limit or argument.
    public let message: String
    /// OpenSSL's error queue at the time of the failure, oldest first (may be empty).
    public let openSSLErrors: [String]

    /// Creates an error.
    /// - Parameters:
    ///   - code: The stable code.
    ///   - message: An actionable message.
    ///   - openSSLErrors: OpenSSL's drained error strings, if any.
    public init(_ code: Code, _ message: String, openSSLErrors: [String] = []) {
        self.code = code
        self.message = message
        self.openSSLErrors = openSSLErrors
    }

    public var description: String {
        if openSSLErrors.isEmpty { return "\(code): \(message)" }
        return "\(code): \(message) [OpenSSL: \(openSSLErrors.joined(separator: "; "))]"
    }
}
