/// A configuration that cannot be used; the message names the file, variable or setting.
public struct GatewayConfigurationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public let message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
