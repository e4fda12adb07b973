import Foundation
import SealedPushAPNsEmulator
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayHTTP
import Testing

/// The configuration's `delivery.webhook` section: its delivery settings (`maxAttempts`, `maxConcurrent`), its trust
/// roots (`caFile`) checked at load, and the unknown-key check knowing them — read from real files.
@Suite("Gateway configuration: webhook")
struct GatewayWebhookSettingsTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-gw-webhook-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        #expect(
            FileManager.default.createFile(
                atPath: directory.appendingPathComponent("webhook.secret").path,
                contents: Data("0123456789abcdef0123\n".utf8), attributes: [.posixPermissions: 0o600]))
    }

    func load(_ webhook: String, environment: [String: String] = [:]) throws -> UnregisteredWebhookConfiguration? {
        let path = directory.appendingPathComponent("gateway.json").path
        let json = #"{"database":"sqlite:x","delivery":{"shutdownGraceSeconds":12,"webhook":"# + webhook + "}}"
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return try GatewayConfiguration.load(path: path, environment: environment).deliveryConfiguration()?.webhook
    }

    func refusal(_ webhook: String) -> String {
        do {
            _ = try load(webhook)
        } catch let error as GatewayConfigurationError {
            return error.message
        } catch {
            return "\(error)"
        }
        return "(accepted)"
    }

    @Test func defaultsAndFileValues() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let defaults = try #require(try load(#"{"url":"https://h.example/","secretFile":"webhook.secret"}"#))
        #expect(defaults.maxAttempts == 8)
        #expect(defaults.maxConcurrent == 4)
        #expect(defaults.queueLimit == 10_000)
        #expect(defaults.drainDeadline == .seconds(12))  // delivery.shutdownGraceSeconds
        #expect(defaults.trustRootsPEM == nil)
        let set = try #require(
            try load(#"{"url":"https://h.example/","secretFile":"webhook.secret","maxAttempts":3,"maxConcurrent":16}"#))
        #expect(set.maxAttempts == 3)
        #expect(set.maxConcurrent == 16)
        // The environment's URL and secret file keep the file's other webhook settings.
        let overridden = try #require(
            try load(
                #"{"url":"https://h.example/","secretFile":"webhook.secret","maxAttempts":3}"#,
                environment: ["SEALEDPUSH_GATEWAY_WEBHOOK_URL": "https://other.example/x",
                              "SEALEDPUSH_GATEWAY_WEBHOOK_SECRET_FILE": "webhook.secret"]))
        #expect(overridden.url.absoluteString == "https://other.example/x")
        #expect(overridden.maxAttempts == 3)
    }

    @Test func refusalsNameTheSetting() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let base = #""url":"https://h.example/","secretFile":"webhook.secret""#
        #expect(refusal("{\(base),\"maxAttempts\":0}").contains("delivery.webhook.maxAttempts must be 1...20"))
        #expect(refusal("{\(base),\"maxAttempts\":21}").contains("delivery.webhook.maxAttempts must be 1...20"))
        #expect(refusal("{\(base),\"maxConcurrent\":0}").contains("delivery.webhook.maxConcurrent must be 1...64"))
        #expect(refusal("{\(base),\"maxConcurent\":2}").contains(#"did you mean "delivery.webhook.maxConcurrent"?"#))
        #expect(refusal("{\(base),\"caFile\":\"missing.pem\"}").contains("delivery.webhook.caFile"))
        let garbage = directory.appendingPathComponent("garbage.pem").path
        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: garbage))
        let refused = refusal("{\(base),\"caFile\":\"garbage.pem\"}")
        #expect(refused.contains("delivery.webhook.caFile") && refused.contains("no PEM certificate"))
    }

    @Test func caFileIsReadAtLoad() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try EmulatorCertificate.generate()
        try Data(certificate.certificatePEM.utf8).write(to: directory.appendingPathComponent("ca.pem"))
        let configuration = try #require(
            try load(#"{"url":"https://h.example/","secretFile":"webhook.secret","caFile":"ca.pem"}"#))
        #expect(configuration.trustRootsPEM == certificate.certificatePEM)
    }
}
