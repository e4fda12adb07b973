import Foundation
import SealedPushAPNs
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayHTTP
import Testing

/// The configuration's `delivery` section: defaults, file values, environment overrides, and refusals that name the
/// setting or the file — read from real files.
@Suite("Gateway configuration: delivery")
struct GatewayDeliverySettingsTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-gw-delivery-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func write(_ json: String) throws -> String {
        let path = directory.appendingPathComponent("gateway.json").path
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func secret(_ text: String, mode: Int) throws -> String {
        let path = directory.appendingPathComponent("webhook.secret").path
        try? FileManager.default.removeItem(atPath: path)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode]))
        return path
    }

    func refusal(_ json: String, environment: [String: String] = [:]) throws -> String {
        let path = try write(json)
        do {
            let configuration = try GatewayConfiguration.load(path: path, environment: environment)
            _ = try configuration.deliveryConfiguration()
        } catch let error as GatewayConfigurationError {
            return error.message
        }
        return "(accepted)"
    }

    @Test func missingSectionMeansAppleWithDefaults() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = try GatewayConfiguration.load(path: try write(#"{"database":"sqlite:gw.sqlite"}"#), environment: [:])
        let delivery = try #require(try configuration.deliveryConfiguration())
        #expect(delivery.productionEndpoint == APNsEndpoint(host: "api.push.apple.com", port: 443))
        #expect(delivery.sandboxEndpoint == APNsEndpoint(host: "api.development.push.apple.com", port: 443))
        #expect(delivery.client.trustRoots == .system)
        #expect(delivery.maxConcurrentSends == 128)
        #expect(delivery.leaseDuration == .seconds(90))
        #expect(!delivery.nodeID.isEmpty)
        #expect(delivery.webhook == nil)
        #expect(delivery.retention == .seconds(7 * 86_400))
        #expect(delivery.nodeHeartbeatInterval == .seconds(2) && delivery.nodeStaleAfter == .seconds(10))
        #expect(delivery.jobRetry == APNsRetryPolicy(maxAttempts: 8, initialBackoff: .seconds(5), maxBackoff: .seconds(300)))
        let keepAll = try GatewayConfiguration.load(
            path: try write(#"{"database":"sqlite:gw.sqlite","delivery":{"retentionSeconds":0}}"#), environment: [:])
        #expect(try keepAll.deliveryConfiguration()?.retention == nil)
    }

    @Test func fileValuesAndEnvironmentOverrides() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try secret("0123456789abcdef0123\n", mode: 0o600)
        let path = try write(
            #"{"database":"sqlite:gw.sqlite","delivery":{"nodeId":"gw-a","productionURL":"https://apns.example:8443","trustRootsFile":"roots.pem","maxConnections":3,"maxConcurrentSends":8,"apnsDeadlineSeconds":5,"leaseSeconds":15.5,"heartbeatSeconds":0.5,"nodeStaleSeconds":3,"retryAttempts":12,"retryInitialSeconds":0.5,"retryMaxSeconds":20,"webhook":{"url":"https://hooks.example/sp","secretFile":"webhook.secret"}}}"#)
        try Data("pem".utf8).write(to: directory.appendingPathComponent("roots.pem"))
        let fromFile = try #require(try GatewayConfiguration.load(path: path, environment: [:]).deliveryConfiguration())
        #expect(fromFile.nodeID == "gw-a")
        #expect(fromFile.productionEndpoint == APNsEndpoint(host: "apns.example", port: 8443))
        #expect(fromFile.client.trustRoots == .pemFile(directory.path + "/roots.pem"))
        #expect(fromFile.client.maxConnections == 3)
        #expect(fromFile.maxConcurrentSends == 8)
        #expect(fromFile.client.deadline == .seconds(5))
        #expect(fromFile.leaseDuration == .milliseconds(15_500))
        #expect(fromFile.nodeHeartbeatInterval == .milliseconds(500) && fromFile.nodeStaleAfter == .seconds(3))
        #expect(fromFile.jobRetry == APNsRetryPolicy(maxAttempts: 12, initialBackoff: .milliseconds(500), maxBackoff: .seconds(20)))
        #expect(fromFile.webhook?.url.absoluteString == "https://hooks.example/sp")
        // The secret is the file's bytes without the final newline: the signature a receiver computes with it.
        let expected = try UnregisteredWebhookConfiguration(
            url: URL(string: "https://hooks.example/sp")!, secret: Array("0123456789abcdef0123".utf8))
        #expect(fromFile.webhook?.signature(timestamp: "1", body: [1, 2]) == expected.signature(timestamp: "1", body: [1, 2]))
        #expect(!String(describing: fromFile.webhook!).contains("0123456789abcdef"))

        let overridden = try GatewayConfiguration.load(
            path: path,
            environment: [
                "SEALEDPUSH_GATEWAY_NODE_ID": "gw-b", "SEALEDPUSH_GATEWAY_APNS_SANDBOX_URL": "https://127.0.0.1:9999",
                "SEALEDPUSH_GATEWAY_APNS_PRODUCTION_URL": "https://[::1]:9998",
            ])
        let delivery = try #require(try overridden.deliveryConfiguration())
        #expect(delivery.nodeID == "gw-b")
        #expect(delivery.sandboxEndpoint == APNsEndpoint(host: "127.0.0.1", port: 9999))
        #expect(delivery.productionEndpoint == APNsEndpoint(host: "::1", port: 9998))
        let off = try GatewayConfiguration.load(path: path, environment: ["SEALEDPUSH_GATEWAY_DELIVERY": "off"])
        #expect(try off.deliveryConfiguration() == nil)
    }

    @Test func refusalsNameTheSetting() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"leaseSeconds":20}}"#).contains("delivery.leaseSeconds"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"productionURL":"http://apns"}}"#).contains("delivery.productionURL"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"maxConcurrentSends":0}}"#).contains("delivery.maxConcurrentSends"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"apnsDeadlineSeconds":-1}}"#).contains("delivery.apnsDeadlineSeconds"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"retentionSeconds":3600}}"#).contains("delivery.retentionSeconds"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"heartbeatSeconds":0}}"#).contains("delivery.heartbeatSeconds"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"heartbeatSeconds":5,"nodeStaleSeconds":9}}"#).contains("delivery.nodeStaleSeconds"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"heartbeatSecond":5}}"#).contains("\"delivery.heartbeatSeconds\""))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"retryAttempts":0}}"#).contains("delivery.retryAttempts"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"retryInitialSeconds":0}}"#).contains("delivery.retryInitialSeconds"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"retryInitialSeconds":10,"retryMaxSeconds":5}}"#)
            .contains("delivery.retryMaxSeconds (5.0) must be at least delivery.retryInitialSeconds (10.0)"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"fcmURL":"http://fcm.example"}}"#).contains("delivery.fcmURL"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"fcmURL":"https://fcm.example/v1"}}"#).contains("delivery.fcmURL"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"fcmTrustFile":"/nonexistent.pem"}}"#).contains("delivery.fcmTrustFile"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"fcmUrl":"https://x"}}"#).contains("\"delivery.fcmURL\""))
        #expect(
            try refusal(#"{"database":"sqlite:x"}"#, environment: ["SEALEDPUSH_GATEWAY_DELIVERY": "maybe"])
                .contains("SEALEDPUSH_GATEWAY_DELIVERY"))
        #expect(
            try refusal(#"{"database":"sqlite:x"}"#, environment: ["SEALEDPUSH_GATEWAY_WEBHOOK_URL": "https://h.example"])
                .contains("SEALEDPUSH_GATEWAY_WEBHOOK_SECRET_FILE"))
    }

    @Test func webhookSecretFileMustBePrivateAndLongEnough() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = #"{"database":"sqlite:x","delivery":{"webhook":{"url":"https://h.example/","secretFile":"webhook.secret"}}}"#
        _ = try secret("0123456789abcdef0123", mode: 0o644)
        let readable = try refusal(json)
        #expect(readable.contains("readable by others") && readable.contains("644"))
        #expect(!readable.contains("0123456789abcdef"))
        _ = try secret("short", mode: 0o600)
        #expect(try refusal(json).contains("at least 16 bytes"))
        // A symlink to a private file is refused too (never read a secret through a link).
        let target = directory.appendingPathComponent("real.secret").path
        #expect(FileManager.default.createFile(atPath: target, contents: Data("0123456789abcdef0123".utf8), attributes: [.posixPermissions: 0o600]))
        try FileManager.default.removeItem(atPath: directory.appendingPathComponent("webhook.secret").path)
        try FileManager.default.createSymbolicLink(
            atPath: directory.appendingPathComponent("webhook.secret").path, withDestinationPath: target)
        #expect(try refusal(json).contains("not a link"))
    }

    @Test func theProxyAndItsCredentialsFile() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let none = try #require(try GatewayConfiguration.load(path: try write(#"{"database":"sqlite:x"}"#), environment: [:])
            .deliveryConfiguration())
        #expect(none.proxy == nil)
        // Credentials from their own 0600 file; the file's path relative to gateway.json.
        let credentials = directory.appendingPathComponent("proxy.credentials").path
        #expect(FileManager.default.createFile(
            atPath: credentials, contents: Data("gw-1:pa:ss w0rd\n".utf8), attributes: [.posixPermissions: 0o600]))
        let path = try write(
            #"{"database":"sqlite:x","delivery":{"proxy":"http://egress.internal:3128","proxyCredentialsFile":"proxy.credentials"}}"#)
        let proxy = try #require(try GatewayConfiguration.load(path: path, environment: [:]).deliveryConfiguration()?.proxy)
        #expect(proxy == (try ProviderProxy(host: "egress.internal", port: 3128, username: "gw-1", password: "pa:ss w0rd")))
        // The environment replaces the file's proxy (a deployment's egress differs per site).
        let overridden = try #require(
            try GatewayConfiguration.load(
                path: try write(#"{"database":"sqlite:x","delivery":{"proxy":"http://egress.internal:3128"}}"#),
                environment: ["SEALEDPUSH_GATEWAY_PROXY": "http://10.1.2.3:8080"]
            ).deliveryConfiguration()?.proxy)
        #expect(overridden == (try ProviderProxy(host: "10.1.2.3", port: 8080)))
    }

    @Test func proxyRefusalsNameTheSettingAndNeverThePassword() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let inline = try refusal(#"{"database":"sqlite:x","delivery":{"proxy":"http://gw:hunter2@egress.internal:3128"}}"#)
        #expect(inline.contains("delivery.proxy must not hold a user or password") && inline.contains("proxyCredentialsFile"))
        #expect(!inline.contains("hunter2"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"proxy":"https://egress.internal:3128"}}"#)
            .contains("delivery.proxy: the proxy's scheme must be http"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"proxy":"http://egress.internal"}}"#)
            .contains("delivery.proxy: a proxy URL names its port"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"proxyCredentialsFile":"c"}}"#)
            .contains("delivery.proxyCredentialsFile is set but delivery.proxy is not"))
        let json = #"{"database":"sqlite:x","delivery":{"proxy":"http://egress.internal:3128","proxyCredentialsFile":"proxy.credentials"}}"#
        let credentials = directory.appendingPathComponent("proxy.credentials").path
        #expect(FileManager.default.createFile(
            atPath: credentials, contents: Data("gw-1:hunter2".utf8), attributes: [.posixPermissions: 0o640]))
        let readable = try refusal(json)
        #expect(readable.contains("delivery.proxyCredentialsFile") && readable.contains("readable by others"))
        #expect(!readable.contains("hunter2"))
        try FileManager.default.removeItem(atPath: credentials)
        #expect(FileManager.default.createFile(
            atPath: credentials, contents: Data("hunter2-without-user".utf8), attributes: [.posixPermissions: 0o600]))
        let malformed = try refusal(json)
        #expect(malformed.contains("holds user:password") && !malformed.contains("hunter2"))
        #expect(try refusal(#"{"database":"sqlite:x","delivery":{"proxyy":"http://egress.internal:3128"}}"#)
            .contains(#"unknown setting "delivery.proxyy"; did you mean "delivery.proxy"?"#))
    }
}
