/// A failure to configure or start the emulator (bad configuration, certificate generation, bind).
public struct APNsEmulatorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong and what to change.
    public let message: String

    /// Creates an error.
    /// - Parameter message: An actionable message.
    public init(_ message: String) { self.message = message }

    public var description: String { "APNs emulator: \(message)" }
}
