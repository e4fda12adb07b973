import Foundation
import Logging
import SealedPushAPNsEmulator
import SealedPushServer

/// An APNs emulator on loopback that accepts one app's provider tokens, and that app's fresh `.p8` key in a 0600
/// file: what every gateway delivery test starts from (delivery, end-to-end and process tests).
public struct KeyedEmulator: Sendable {
    /// The running emulator (stop it when done).
    public let emulator: APNsEmulator
    /// The `.p8` key file (PKCS#8 PEM, mode 0600) in the directory given.
    public let keyPath: String
    /// The key's PEM text.
    public let keyPEM: String

    /// Writes a new key to `directory/AuthKey_<keyID>.p8` and starts an emulator that trusts it for `topic`.
    /// - Parameters:
    ///   - directory: Where the key file goes (must exist).
    ///   - keyID: The key id tokens carry.
    ///   - teamID: The team id tokens carry.
    ///   - topic: The one topic the emulator allows.
    ///   - configure: Further emulator settings (faults, recording limits, unregistered tokens).
    /// - Throws: When the key cannot be written or the emulator cannot start.
    public static func start(
        in directory: URL, keyID: String, teamID: String, topic: String,
        _ configure: (inout APNsEmulatorConfiguration) -> Void = { _ in }
    ) async throws -> KeyedEmulator {
        let keyPath = directory.appendingPathComponent("AuthKey_\(keyID).p8").path
        try APNsKeyGenerator.writeNewKey(to: keyPath)
        let pem = try String(contentsOfFile: keyPath, encoding: .utf8)
        var configuration = APNsEmulatorConfiguration(authKeyPEM: pem, keyID: keyID, teamID: teamID)
        configuration.allowedTopics = [topic]
        configure(&configuration)
        var logger = Logger(label: "test.emulator")
        logger.logLevel = .critical
        let emulator = try APNsEmulator(configuration: configuration, logger: logger)
        try await emulator.start()
        return KeyedEmulator(emulator: emulator, keyPath: keyPath, keyPEM: pem)
    }
}
