import Foundation
import SealedPushGateway
import Testing

/// The devices a send left out (``NewNotification/skippedDevices``) are kept with its notification: its status and
/// a replay of its idempotency key (alone or in a batch) list them, in the send's order, as the send answered them.
enum SkippedDevicesContract {
    static let now = StoreFixtures.now

    static func keptWithTheNotification(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register(["a", "b"], in: "alpha", store)
            let skipped = [
                SkippedDevice(
                    deviceID: "z-old", code: "invalidKey",
                    reason: "its registered key 0123456789abcdef expired at 2027-01-15T07:00:00Z; the device must "
                        + "register a new key"),
                // Text JSON escapes, and a device that sorts before the first: the send's order is kept.
                SkippedDevice(
                    deviceID: "c.fcm", code: "fcmNotConfigured",
                    reason: "it is an FCM device but app alpha has no \"FCM\" credentials — `app set-fcm` / \\ ✓"),
            ]
            var first = try fixtures.notification(appID: "alpha", to: keys, idempotencyKey: "skip-1")
            first.skippedDevices = skipped
            let accepted = try await store.enqueue(first)
            #expect(!accepted.replayed && accepted.skippedDevices.isEmpty)
            let status = try #require(try await store.notificationStatus(appID: "alpha", notificationID: first.id))
            #expect(status.skippedDevices == skipped)
            #expect(status.deliveries.map(\.deviceID) == ["a", "b"])

            // A replay, alone and in a batch, answers the first request's devices left out, not its own.
            var retry = try fixtures.notification(appID: "alpha", to: keys, idempotencyKey: "skip-1")
            retry.skippedDevices = [SkippedDevice(deviceID: "b", code: "invalidKey", reason: "another answer")]
            let replay = try await store.enqueue(retry)
            #expect(replay == EnqueueResult(id: first.id, replayed: true, jobCount: 2, skippedDevices: skipped))
            let plain = try fixtures.notification(appID: "alpha", to: keys)
            let batch = try await store.enqueueBatch([retry, plain])
            #expect((try? batch[0].get()) == EnqueueResult(id: first.id, replayed: true, jobCount: 2, skippedDevices: skipped))

            // A notification that left none out has none, as has its replay; so has one enqueued in a batch with one
            // that did.
            #expect((try? batch[1].get())?.skippedDevices == [])
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: plain.id)?.skippedDevices == [])
            let keyed = try fixtures.notification(appID: "alpha", to: keys, idempotencyKey: "skip-2")
            _ = try await store.enqueue(keyed)
            #expect(try await store.enqueue(keyed).skippedDevices == [])
            var leftOut = try fixtures.notification(appID: "alpha", to: ["a": keys["a"]!])
            leftOut.skippedDevices = [skipped[0]]
            let mixed = try fixtures.notification(appID: "alpha", to: ["b": keys["b"]!])
            _ = try await store.enqueueBatch([leftOut, mixed])
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: leftOut.id)?.skippedDevices == [skipped[0]])
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: mixed.id)?.skippedDevices == [])
        }
    }
}
