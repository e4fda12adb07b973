/// An invalid argument given to the APNs client (a malformed device token, endpoint or configuration).
///
/// Delivery outcomes are never thrown: they are ``APNsResult`` values.
public struct APNsClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable error code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let name: String
        fileprivate init(_ name: String) { self.name = name }

        /// The device token is not even-length hex of 64–200 characters.
        public static let badDeviceToken = Code("badDeviceToken")
        /// The endpoint URL is not `https://host[:port]`.
        public static let invalidEndpoint = Code("invalidEndpoint")
        /// A configuration value is outside its range.
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// The trust roots cannot be loaded.
        public static let invalidTrustRoots = Code("invalidTrustRoots")

        public var description: String { name }
    }

    /// The stable code.
    public let code: Code
    /// What was wrong and which limit applies.
    public let message: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: The stable code.
    ///   - message: An actionable message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
