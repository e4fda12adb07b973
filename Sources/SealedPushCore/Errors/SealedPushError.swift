/// The one error type SealedPush throws.
///
/// Every failure carries a stable ``Code`` (safe to match on, log and count) and a message a person can act on:
/// what was wrong, which limit, which key id. Messages never contain plaintext or key material.
///
/// New codes can be added without breaking users, so match on the static members instead of exhaustively.
public struct SealedPushError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable error code; ``name`` is its wire/CLI spelling (see `Specs/envelope-v1.md` §10).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The stable identifier, for example `authenticationFailure`.
        public let name: String

        private init(_ name: String) { self.name = name }

        public var description: String { name }

        /// The APNs JSON body is over 4,096 bytes.
        public static let payloadTooLarge = Code("payloadTooLarge")
        /// The APNs JSON body is not a JSON object with an `sp` string member.
        public static let malformedPayload = Code("malformedPayload")
        /// The `sp` member is not canonical unpadded base64url.
        public static let badEncoding = Code("badEncoding")
        /// The envelope is shorter than the smallest valid envelope.
        public static let truncated = Code("truncated")
        /// The envelope's structure or header values are invalid.
        public static let malformedEnvelope = Code("malformedEnvelope")
        /// The envelope's version byte is not 1.
        public static let unsupportedVersion = Code("unsupportedVersion")
        /// The envelope's suite byte is not 1.
        public static let unsupportedSuite = Code("unsupportedSuite")
        /// No device key with the envelope's recipient key id is held.
        public static let unknownRecipientKey = Code("unknownRecipientKey")
        /// No pinned server key with the envelope's sender key id is held.
        public static let unknownSenderKey = Code("unknownSenderKey")
        /// The envelope's `expiresAt` has passed.
        public static let expired = Code("expired")
        /// The envelope's `issuedAt` is more than the allowed clock skew (10 minutes) ahead of the receiver's clock.
        public static let notYetValid = Code("notYetValid")
        /// The envelope failed to open. One code for every cryptographic failure, by design.
        public static let authenticationFailure = Code("authenticationFailure")
        /// The decrypted plaintext is not valid padded content.
        public static let malformedContent = Code("malformedContent")
        /// The envelope's message id was seen before.
        public static let replayed = Code("replayed")
        /// The content does not fit the largest padding bucket.
        public static let contentTooLarge = Code("contentTooLarge")
        /// The APNs topic is empty, too long or contains NUL.
        public static let invalidTopic = Code("invalidTopic")
        /// A key, key id or key file is malformed.
        public static let invalidKey = Code("invalidKey")
        /// An argument is out of range.
        public static let invalidArgument = Code("invalidArgument")
        /// Keys cannot be read right now (for example before the first unlock).
        public static let keysUnavailable = Code("keysUnavailable")
        /// Stored key material exists but is damaged.
        public static let keyStoreCorrupt = Code("keyStoreCorrupt")
        /// A file or system call failed.
        public static let io = Code("io")
        /// A blob does not start with the blob magic (`Specs/blob-v1.md` §8).
        public static let malformedBlob = Code("malformedBlob")
        /// A blob's version byte is not 1.
        public static let unsupportedBlobVersion = Code("unsupportedBlobVersion")
        /// A blob ended before its declared size was reached.
        public static let blobTruncated = Code("blobTruncated")
        /// Bytes arrived after a blob's last chunk.
        public static let blobTrailingData = Code("blobTrailingData")
        /// A blob chunk did not verify. One code for every cryptographic failure of a blob, by design.
        public static let blobAuthenticationFailure = Code("blobAuthenticationFailure")
        /// A blob's declared size is over the cap for its kind.
        public static let blobTooLarge = Code("blobTooLarge")
        /// An attachment descriptor or blob reference breaks `Specs/blob-v1.md` §6.
        public static let malformedAttachment = Code("malformedAttachment")
        /// A blob could not be fetched: an HTTP status other than 200, a refused or reset connection.
        public static let blobUnavailable = Code("blobUnavailable")
        /// Work did not finish by its deadline (a download with the extension's remaining time).
        public static let deadlineExceeded = Code("deadlineExceeded")

        /// Every code defined in this version.
        public static let allCases: [Code] = [
            .payloadTooLarge, .malformedPayload, .badEncoding, .truncated, .malformedEnvelope,
            .unsupportedVersion, .unsupportedSuite, .unknownRecipientKey, .unknownSenderKey, .expired, .notYetValid,
            .authenticationFailure, .malformedContent, .replayed, .contentTooLarge, .invalidTopic, .invalidKey,
            .invalidArgument, .keysUnavailable, .keyStoreCorrupt, .io,
            .malformedBlob, .unsupportedBlobVersion, .blobTruncated, .blobTrailingData, .blobAuthenticationFailure,
            .blobTooLarge, .malformedAttachment, .blobUnavailable, .deadlineExceeded,
        ]

        /// Looks up a code by its stable name.
        /// - Parameter name: The code's name, for example `expired`.
        /// - Returns: The code, or `nil` if this version does not define it.
        public static func named(_ name: String) -> Code? {
            allCases.first { $0.name == name }
        }
    }

    /// What kind of failure this is.
    public let code: Code
    /// A message a person can act on. Never contains plaintext or key material.
    public let message: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: The stable code.
    ///   - message: What was wrong and, where it applies, which limit or key id.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.name): \(message)" }
}
