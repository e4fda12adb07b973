import Foundation
import SealedPushCore
import SealedPushGateway
import SealedPushServer
import Testing

/// Apps, devices and sealed bodies made the way the gateway will make them (real keys, real sealing).
struct StoreFixtures {
    let identity: ServerIdentity
    let sealer: Sealer
    /// A fixed clock: 2027-01-15T08:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    init() throws {
        identity = try ServerIdentity.generate()
        sealer = try Sealer(identity: identity, topic: "com.example.app")
    }

    static func app(_ id: String) -> GatewayApp {
        GatewayApp(
            id: id, topic: "com.example.\(id)", teamID: "TEAM123456", apnsKeyID: "KEY1234567",
            apnsKeyPath: "/etc/sealed-push/\(id).p8", serverIdentityPath: "/etc/sealed-push/\(id).spsk")
    }

    /// A fresh device key and its registration record (keyring-v1 §4).
    static func registration(createdAt: Date = now) throws -> (DevicePublicKey, DeviceRegistration) {
        let key = try ServerIdentity.generate()  // an X25519 key pair like a device's
        let publicKey = try DevicePublicKey(rawRepresentation: key.publicKey)
        return (publicKey, DeviceRegistration(publicKey: key.publicKeyText, keyId: key.keyID.hex, createdAt: createdAt))
    }

    /// A token of its own for each `n` below 65,536 (`register` gives device `i` token `i`: with one byte, devices 256
    /// apart shared a token, and registering the later one unregistered the earlier).
    static func token(_ n: Int) -> String { String(repeating: String(format: "%04x", n % 65_536), count: 16) }

    /// Registers `deviceIDs` in `appID` and returns their public keys.
    @discardableResult
    static func register(_ deviceIDs: [String], in appID: String, _ store: any GatewayStore) async throws
        -> [String: DevicePublicKey]
    {
        var keys: [String: DevicePublicKey] = [:]
        for (index, deviceID) in deviceIDs.enumerated() {
            let (key, registration) = try Self.registration()
            _ = try await store.putDevice(
                appID: appID, deviceID: deviceID, apnsToken: token(index), environment: .sandbox,
                registration: registration, now: now)
            keys[deviceID] = key
        }
        return keys
    }

    /// Seals `content` to each device and builds the notification to enqueue.
    func notification(
        appID: String, to keys: [String: DevicePublicKey], content: NotificationContent = NotificationContent(body: "hi"),
        idempotencyKey: String? = nil, ttl: TimeInterval = 3600, id: UUID = UUID()
    ) throws -> NewNotification {
        let jobs = try keys.keys.sorted().map { deviceID in
            let sealed = try sealer.seal(content, to: keys[deviceID]!, ttl: UInt64(ttl), now: UInt64(Self.now.timeIntervalSince1970))
            return NewNotification.Job(
                deviceID: deviceID, body: try SealedBody(apnsBody: sealed.payload), messageID: Hex.encode(sealed.messageID),
                keyID: sealed.recipientKeyID.hex)
        }
        return NewNotification(
            id: id, appID: appID, idempotencyKey: idempotencyKey, priority: 10, collapseID: id.uuidString.lowercased(),
            createdAt: Self.now, expiresAt: Self.now.addingTimeInterval(ttl), jobs: jobs)
    }
}

/// Runs `body` on a migrated store over a fresh database, then closes it and deletes the database.
func withMigratedStore(
    _ harness: any StoreHarness, _ body: (any GatewayStore, StoreFixtures) async throws -> Void
) async throws {
    let store = try await harness.makeStore()
    do {
        _ = try await store.migrate()
        try await store.putApp(StoreFixtures.app("alpha"), now: StoreFixtures.now)
        try await store.putApp(StoreFixtures.app("beta"), now: StoreFixtures.now)
        try await body(store, try StoreFixtures())
    } catch {
        try? await store.close()
        try? await harness.tearDown()
        throw error
    }
    try await store.close()
    try await harness.tearDown()
}
