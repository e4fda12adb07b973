import Foundation
import Logging
import SealedPushCore
import SealedPushServer

extension FCMEmulator {
    /// Starts an emulator that trusts a new service account (a fresh 2048-bit RSA key) and writes that account's
    /// file, mode 0600 and atomically, with `token_uri` naming this emulator's token endpoint (known only once it
    /// listens). What `sealed-push fcm-emulator --service-account-out` and the tests use.
    ///
    /// - Parameters:
    ///   - accountPath: Where the service-account file goes.
    ///   - projectID: The account's `project_id`; its `client_email` is `sealedpush@PROJECT.iam.gserviceaccount.com`.
    ///   - overwrite: Whether an existing file at `accountPath` may be replaced.
    ///   - logger: The emulator's logger.
    ///   - configure: Adjusts the configuration (address, faults, limits) before the emulator is created; the
    ///     account it trusts is already in `accounts`.
    /// - Returns: The started emulator.
    /// - Throws: `SealedPushError` from the configuration, key generation, binding or writing the file (the
    ///   emulator is stopped again when the file cannot be written).
    public static func startTrustingNewAccount(
        writingAccountTo accountPath: String, projectID: String, overwrite: Bool = false,
        logger: Logger = Logger(label: "sealedpush.fcm-emulator"),
        _ configure: (inout FCMEmulatorConfiguration) throws -> Void = { _ in }
    ) async throws -> FCMEmulator {
        var key = try RSAKeyGenerator.generatePEM()
        defer { Sodium.wipe(&key) }
        let clientEmail = "sealedpush@\(projectID).iam.gserviceaccount.com"
        let publicKey = try RS256SigningKey(pemBytes: key).publicKeyPEM()
        var configuration = FCMEmulatorConfiguration(
            accounts: [.init(clientEmail: clientEmail, publicKeyPEM: publicKey, projectID: projectID)])
        try configure(&configuration)
        let emulator = try FCMEmulator(configuration: configuration, logger: logger)
        try await emulator.start()
        do {
            try FCMServiceAccount.writeTestAccount(
                to: accountPath, projectID: projectID, tokenURI: emulator.tokenURI, clientEmail: clientEmail,
                overwrite: overwrite, privateKeyPEM: key)
        } catch {
            await emulator.stop()
            throw error
        }
        return emulator
    }
}
