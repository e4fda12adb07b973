import Foundation
import Logging
import SealedPushAPNsEmulator
import SealedPushClient
import SealedPushCore
import SealedPushGatewayTestSupport
import SealedPushServer

/// A gateway directory written by the real `sealed-push-gateway init` (with an APNs `.p8` key) and a loopback APNs
/// emulator that knows that key: what a process test needs to run `serve` delivering for real.
struct GatewayWithEmulator {
    static let appID = "shop"
    static let topic = "com.example.shop"
    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"

    let directory: URL
    let emulator: APNsEmulator
    let apiKey: String
    let identity: ServerIdentity
    let trustRootsPath: String

    var configPath: String { directory.appendingPathComponent("gateway.json").path }
    var databasePath: String { directory.appendingPathComponent("gateway.sqlite").path }

    /// The environment that points `serve` at the emulator, on any free port.
    var environment: [String: String] {
        let url = "https://127.0.0.1:\(emulator.port)"
        return [
            "SEALEDPUSH_GATEWAY_LISTEN": "127.0.0.1:0",
            "SEALEDPUSH_GATEWAY_APNS_PRODUCTION_URL": url,
            "SEALEDPUSH_GATEWAY_APNS_SANDBOX_URL": url,
            "SEALEDPUSH_GATEWAY_APNS_TRUST_ROOTS": trustRootsPath,
            "SEALEDPUSH_GATEWAY_NODE_ID": "node-1",
        ]
    }

    static func start(_ configure: (inout APNsEmulatorConfiguration) -> Void = { _ in }) async throws -> GatewayWithEmulator {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-gw-proc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keyed = try await KeyedEmulator.start(in: directory, keyID: keyID, teamID: teamID, topic: topic, configure)
        let emulator = keyed.emulator
        let keyPath = keyed.keyPath
        let trustRootsPath = directory.appendingPathComponent("emulator.pem").path
        try Data(emulator.certificatePEM.utf8).write(to: URL(fileURLWithPath: trustRootsPath))

        let gatewayDirectory = directory.appendingPathComponent("gw")
        let result = try GatewayExecutableTests.run([
            "init", "--dir", gatewayDirectory.path, "--app-id", appID, "--topic", topic, "--team-id", teamID,
            "--key-id", keyID, "--apns-key", keyPath,
        ])
        guard result.status == 0,
            let line = result.stdout.split(separator: "\n").first(where: { $0.hasPrefix("API key") }),
            let key = line.split(separator: " ").last
        else {
            await emulator.stop()
            throw TestFailure("init exited \(result.status): \(result.stderr)")
        }
        let identity = try ServerIdentity(contentsOfFile: gatewayDirectory.appendingPathComponent("\(appID).identity").path)
        return GatewayWithEmulator(
            directory: gatewayDirectory, emulator: emulator, apiKey: String(key), identity: identity,
            trustRootsPath: trustRootsPath)
    }

    /// Changes members of the configuration file's `delivery` section.
    func setDelivery(_ values: [String: Any]) throws {
        let url = URL(fileURLWithPath: configPath)
        var json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        var delivery = json["delivery"] as? [String: Any] ?? [:]
        for (name, value) in values { delivery[name] = value }
        json["delivery"] = delivery
        try JSONSerialization.data(withJSONObject: json).write(to: url)
    }

    /// A well-formed 64-hex-digit token for a device number.
    static func token(_ number: Int) -> String {
        let digits = String(number + 1, radix: 16)
        return String(repeating: "c", count: 64 - digits.count) + digits
    }

    /// Registers `device-N` with a fresh key ring over the API; returns its ring.
    func register(_ number: Int, client: HTTPTestClient) async throws -> DeviceKeyRing {
        let ring = SealedPushClientRing.fresh()
        var body = GatewayTestServer.deviceBody(ring.registration(), token: Self.token(number))
        body["environment"] = number % 2 == 0 ? "sandbox" : "production"
        let answer = try await client.send("PUT", "/v1/apps/\(Self.appID)/devices/device-\(number)", key: apiKey, json: body)
        guard answer.status == 201 || answer.status == 200 else {
            throw TestFailure("registering device-\(number) answered \(answer.status): \(answer.text)")
        }
        return ring
    }

    /// Opens a body the emulator received, as the device would.
    func open(_ body: [UInt8], with ring: DeviceKeyRing) throws -> NotificationContent {
        let opener = try EnvelopeOpener(keyRing: ring, serverPublicKeys: [identity.publicKey], topic: Self.topic)
        return try opener.open(body: body, now: UInt64(Date().timeIntervalSince1970)).content
    }

    /// Stops the emulator (a test's `defer` starts this in a task, which a test process that is exiting never runs:
    /// the files go with ``removeFiles()``, called at once beside it).
    func stop() async {
        await emulator.stop()
    }

    /// Removes every file of this setup: the gateway directory, the `.p8` key and the emulator's certificate.
    func removeFiles() {
        try? FileManager.default.removeItem(at: directory.deletingLastPathComponent())
    }
}
