import Foundation
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayTestSupport
import SealedPushServer
import Testing

/// Issue 17 §12: one app flooding the queue (a bulk send to every device) does not hold back another app's
/// notifications: claims take the apps' due jobs in turn, so the other app's jobs go out while the flood drains.
enum FairnessDeliveryContract {
    static let flood = 1_200
    static let quietSends = 20

    static func floodingAppDoesNotDelayAnother(_ harness: any StoreHarness) async throws {
        try await withDeliveryFixture(harness) { fixture in
            // A second app on the same emulator (same topic and key: only the app id differs).
            guard var beta = try await fixture.store.app(id: DeliveryFixture.appID) else { throw HarnessError("no app") }
            beta.id = "beta"
            try await fixture.store.putApp(beta, now: Date())
            var betaKeys: [String: DevicePublicKey] = [:]
            for number in 0..<4 {
                let (key, registration) = try StoreFixtures.registration(createdAt: Date())
                _ = try await fixture.store.putDevice(
                    appID: "beta", deviceID: "beta-\(number)", apnsToken: DeliveryFixture.token(100_000 + number),
                    environment: .production, registration: registration, now: Date())
                betaKeys["beta-\(number)"] = key
            }
            let alphaDevices = try await fixture.registerDevices(flood)
            let floodSend = try await fixture.enqueue(to: alphaDevices).notification

            let service = try DeliveryService(
                store: fixture.store, configuration: fixture.configuration(),
                logger: DeliveryFixture.quietLogger("delivery"))
            let store = fixture.store
            let recorder = fixture.emulator.recorder
            let sealer = fixture.sealer
            let quiet = QuietSends()
            let sender = Task {
                // The quiet app sends once the flood is under way, one notification every 10 ms.
                while recorder.totalAccepted < 50 { try await Task.sleep(for: .milliseconds(5)) }
                for _ in 0..<quietSends {
                    let now = Date()
                    let jobs = try betaKeys.sorted { $0.key < $1.key }.map { deviceID, key in
                        NewNotification.Job(
                            deviceID: deviceID,
                            body: try SealedBody(
                                apnsBody: try sealer.seal(
                                    NotificationContent(body: "quiet"), to: key, ttl: 3600,
                                    now: UInt64(now.timeIntervalSince1970)).payload))
                    }
                    let notification = NewNotification(
                        appID: "beta", createdAt: now, expiresAt: now.addingTimeInterval(3600), jobs: jobs)
                    _ = try await store.enqueue(notification)
                    quiet.append((notification.id, now))
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            let drained = try await runServices([service], timeout: .seconds(240)) {
                quiet.count == quietSends ? try await store.queueIsEmpty() : false
            }
            try await sender.value
            #expect(drained)

            let floodTimes = try await fixture.deliveries(floodSend.id).values.map { delivery in
                #expect(delivery.state == .sent)
                return delivery.updatedAt
            }.sorted()
            var latencies: [Double] = []
            var lastQuiet = Date.distantPast
            for (id, accepted) in quiet.all {
                guard let status = try await store.notificationStatus(appID: "beta", notificationID: id) else {
                    Issue.record("no status for \(id)")
                    continue
                }
                for delivery in status.deliveries {
                    #expect(delivery.state == .sent)
                    latencies.append(delivery.updatedAt.timeIntervalSince(accepted))
                    lastQuiet = max(lastQuiet, delivery.updatedAt)
                }
            }
            latencies.sort()
            let p50 = latencies[latencies.count / 2], p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
            let floodSpan = floodTimes.last!.timeIntervalSince(floodTimes.first!)
            let floodAfterQuiet = floodTimes.filter { $0 > lastQuiet }.count
            print(
                "fairness (\(type(of: harness))): quiet app \(latencies.count) deliveries accepted→sent p50 "
                    + String(format: "%.1f ms, p99 %.1f ms", p50 * 1000, p99 * 1000) + " while the flooding app's "
                    + "\(flood) drained over " + String(format: "%.0f ms", floodSpan * 1000)
                    + "; \(floodAfterQuiet) of the flood went out after the quiet app's last")
            // First come, first served would send every quiet job after the whole flood (none of the flood after
            // them); turns between apps send them while most of the flood still waits.
            #expect(floodAfterQuiet >= flood / 4, "the quiet app waited behind the flood")
        }
    }
}

/// The quiet app's notifications and when each was accepted.
private final class QuietSends: @unchecked Sendable {
    private let lock = NSLock()
    private var sends: [(UUID, Date)] = []

    func append(_ send: (UUID, Date)) { lock.withLock { sends.append(send) } }
    var count: Int { lock.withLock { sends.count } }
    var all: [(UUID, Date)] { lock.withLock { sends } }
}
