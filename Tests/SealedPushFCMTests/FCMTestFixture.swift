import Foundation
import SealedPushAPNsEmulator
import SealedPushCore
import SealedPushFCM
import SealedPushFCMEmulator
import SealedPushServer

/// A running FCM emulator trusting a service account generated for the test (a fresh RSA key in a 0600 file).
struct FCMTestFixture {
    static let project = "sealedpush-test"
    static let token = "dTest0123456789abcdef:APA91bHk2-Rz8yWcQx7LmV0sNtP4aJ6fUo1iE5rB9dG3hK8wX2cY7vZ0qT6uM4nS1pL9jF3gD8kR5eW2aC7bH0x"

    let emulator: FCMEmulator
    let directory: URL
    let accountPath: String

    static func start(_ configure: (inout FCMEmulatorConfiguration) -> Void = { _ in }) async throws -> FCMTestFixture {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fcm-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let accountPath = directory.appendingPathComponent("service-account.json").path
        // The token_uri's port is known only after start: reserve a placeholder, then rewrite the file.
        let publicKey = try FCMServiceAccount.writeTestAccount(
            to: accountPath, projectID: project, tokenURI: "https://127.0.0.1:1/token")
        var configuration = FCMEmulatorConfiguration(accounts: [
            .init(clientEmail: "sealedpush@\(project).iam.gserviceaccount.com", publicKeyPEM: publicKey, projectID: project)
        ])
        configure(&configuration)
        let emulator = try FCMEmulator(configuration: configuration)
        try await emulator.start()
        try rewriteTokenURI(accountPath, emulator.tokenURI)
        return FCMTestFixture(emulator: emulator, directory: directory, accountPath: accountPath)
    }

    static func rewriteTokenURI(_ path: String, _ uri: String) throws {
        var object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as! [String: Any]
        object["token_uri"] = uri
        let data = try JSONSerialization.data(withJSONObject: object)
        try FileManager.default.removeItem(atPath: path)
        FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600])
    }

    func client(_ configure: (inout FCMClientConfiguration) -> Void = { _ in }) throws -> FCMClient {
        let account = try FCMServiceAccount(contentsOfFile: accountPath)
        var configuration = FCMClientConfiguration(
            serviceAccount: account,
            endpoint: FCMEndpoint(host: "127.0.0.1", port: emulator.port, trustedCertificatePEM: emulator.certificatePEM))
        configuration.retry = FCMRetryPolicy(maxAttempts: 4, maxTotal: .seconds(20), initialBackoff: .milliseconds(20))
        configuration.requestTimeout = .seconds(5)
        configure(&configuration)
        return try FCMClient(configuration: configuration)
    }

    func stop() async {
        await emulator.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    static func message(token: String = token, envelopeLength: Int = 400) -> FCMMessage {
        FCMMessage(token: token, envelope: [UInt8](repeating: 0xAB, count: envelopeLength), ttlSeconds: 3600)
    }
}
