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
        let emulator = try await FCMEmulator.startTrustingNewAccount(writingAccountTo: accountPath, projectID: project) {
            configure(&$0)
        }
        return FCMTestFixture(emulator: emulator, directory: directory, accountPath: accountPath)
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
