import Foundation
import SealedPushAPNs
import SealedPushGateway
import SealedPushGatewayTestSupport
import SealedPushServer
import Testing

/// Issue 17 §11: an app's APNs credentials change in the store (what `sealed-push-gateway app set-apns` writes) while
/// delivery runs, and the running node sends with the new key from then on — no restart.
enum CredentialReloadDeliveryContract {
    static func apnsKeyChangeTakesEffectWithoutRestart(_ harness: any StoreHarness) async throws {
        try await withDeliveryFixture(harness) { fixture in
            // The app starts with a key the emulator does not know (a revoked key, say): APNs answers
            // 403 InvalidProviderToken.
            let revokedPath = fixture.directory.appendingPathComponent("AuthKey_REVOKED001.p8").path
            try APNsKeyGenerator.writeNewKey(to: revokedPath)
            guard var app = try await fixture.store.app(id: DeliveryFixture.appID) else { throw HarnessError("no app") }
            let goodPath = app.apnsKeyPath
            app.apnsKeyPath = revokedPath
            app.apnsKeyID = "REVOKED001"
            try await fixture.store.putApp(app, now: Date())
            let revoked = app

            let devices = try await fixture.registerDevices(2)
            var configuration = fixture.configuration()
            configuration.appRefreshInterval = .milliseconds(200)
            let service = try DeliveryService(
                store: fixture.store, configuration: configuration, logger: DeliveryFixture.quietLogger("delivery"))
            let store = fixture.store
            let first = try await fixture.enqueue(to: devices).notification
            let second = LockedID()
            let fixtureCopy = fixture
            let reached = try await runServices([service], timeout: .seconds(60)) {
                guard try await store.queueIsEmpty() else { return false }
                if let id = second.value {
                    return try await fixtureCopy.deliveries(id).values.allSatisfy { $0.state != .queued }
                }
                // The first send failed on the revoked key; the operator sets the new one, the node keeps running.
                var fixed = revoked
                fixed.apnsKeyPath = goodPath
                fixed.apnsKeyID = DeliveryFixture.keyID
                try await store.putApp(fixed, now: Date())
                // Running nodes read the app again within delivery.appRefreshSeconds (200 ms here).
                try await Task.sleep(for: .milliseconds(400))
                let id = try await fixtureCopy.enqueue(to: devices).notification.id
                second.value = id
                return false
            }
            #expect(reached)
            for delivery in try await fixture.deliveries(first.id).values {
                #expect(delivery.state == .failed && delivery.reason == "InvalidProviderToken", "\(delivery)")
            }
            let secondID = try #require(second.value)
            for delivery in try await fixture.deliveries(secondID).values {
                #expect(delivery.state == .sent, "\(delivery)")
            }
            #expect(fixture.emulator.recorder.totalAccepted == devices.count)
        }
    }
}

/// The id of the second notification, set from the polling closure.
private final class LockedID: @unchecked Sendable {
    private let lock = NSLock()
    private var id: UUID?

    var value: UUID? {
        get { lock.withLock { id } }
        set { lock.withLock { id = newValue } }
    }
}
