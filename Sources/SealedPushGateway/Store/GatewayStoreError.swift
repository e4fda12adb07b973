/// An error from a ``GatewayStore``: a stable code, a message a user can act on, and the input at fault.
///
/// Messages never carry content, sealed bodies, API keys or device tokens.
public struct GatewayStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable error identifier.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as the HTTP layer reports it.
        public let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// An argument is outside what the store accepts (empty device list, bad priority, expiry before creation).
        public static let invalidArgument = Code("invalidArgument")
        /// A device named in a notification is not registered in the app.
        public static let unknownDevice = Code("unknownDevice")
        /// A job was sealed to a key, or for a platform, that is no longer its device's registration: the device
        /// registered again after the sender read it. Seal to the current registration and enqueue again.
        public static let deviceKeyChanged = Code("deviceKeyChanged")
        /// The app named does not exist.
        public static let unknownApp = Code("unknownApp")
        /// The database failed or could not be reached.
        public static let database = Code("database")
        /// The database holds a schema newer than this code knows (a newer gateway migrated it).
        public static let schemaTooNew = Code("schemaTooNew")
        /// Another live process runs with this node id (the message names it and when it would count as dead).
        public static let nodeInUse = Code("nodeInUse")
    }

    /// What went wrong.
    public let code: Code
    /// What was wrong and which limit or name, for a person.
    public let message: String
    /// The input at fault as a path into the request (`devices[3]`), when one input is.
    public let field: String?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The stable code.
    ///   - message: What was wrong, for a person.
    ///   - field: The input at fault, if one is.
    public init(_ code: Code, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    /// A job of `devices[index]` sealed to a registration the device no longer has.
    static func deviceKeyChanged(deviceID: String, index: Int) -> GatewayStoreError {
        GatewayStoreError(
            .deviceKeyChanged,
            "device '\(deviceID)' registered another key or platform since it was read: seal to its current key",
            field: "devices[\(index)]")
    }

    /// Whether the error refuses one notification of an enqueue (``GatewayStore/enqueueBatch(_:)``), not the batch.
    var refusesOneNotification: Bool {
        code == .unknownDevice || code == .deviceKeyChanged || code == .invalidArgument
    }

    public var description: String {
        "GatewayStoreError(\(code)\(field.map { ", field \($0)" } ?? "")): \(message)"
    }
}
