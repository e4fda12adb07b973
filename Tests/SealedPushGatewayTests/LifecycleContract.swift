import Foundation
import SealedPushCore
import SealedPushGateway
import Testing

/// Store contract (issue 20 §3): withdrawing a notification while it is being delivered, and recording sealed
/// receipts once. Run on every store by SQLiteStoreTests and PostgresStoreTests.
enum LifecycleContract {
    static let now = StoreFixtures.now

    /// A withdrawal racing delivery: the queued job ends `withdrawn` and is never claimed, the one a worker holds
    /// ends `withdrawn` in flight (its worker's finish changes nothing) and counts as reached with the sent one; a
    /// second withdrawal changes nothing and answers the same; another app cannot withdraw it.
    static func withdrawRacingDelivery(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register(["a", "b", "c"], in: "alpha", store)
            let notification = try fixtures.notification(appID: "alpha", to: keys)
            _ = try await store.enqueue(notification)
            let claimed = try await store.claim(owner: "w", limit: 2, leaseDuration: .seconds(60), now: now)
            #expect(claimed.count == 2)
            let sent = claimed[0], inFlight = claimed[1]
            #expect(try await store.finish(jobID: sent.id, owner: "w", outcome: .sent(apnsID: "A1"), now: now))
            let queuedDevice = Set(["a", "b", "c"]).subtracting([sent.deviceID, inFlight.deviceID]).first!

            #expect(try await store.withdraw(appID: "beta", notificationID: notification.id, now: now) == nil)
            #expect(try await store.withdraw(appID: "alpha", notificationID: UUID(), now: now) == nil)
            let later = now.addingTimeInterval(5)
            let first = try #require(try await store.withdraw(appID: "alpha", notificationID: notification.id, now: later))
            #expect(first.withdrawnNow == 2 && !first.alreadyWithdrawn)
            #expect(first.reachedDevices == [sent.deviceID, inFlight.deviceID].sorted())
            #expect(first.collapseID == notification.collapseID && first.expiresAt == notification.expiresAt)

            // The worker that held the job finishes after the withdrawal: nothing changes; nothing is left to claim.
            #expect(!(try await store.finish(jobID: inFlight.id, owner: "w", outcome: .sent(apnsID: "A2"), now: later)))
            #expect(try await store.claim(owner: "w2", limit: 10, leaseDuration: .seconds(60), now: later.addingTimeInterval(120)).isEmpty)
            #expect(try await store.queueDepth() == QueueDepth(queued: 0, claimed: 0))

            let status = try #require(try await store.notificationStatus(appID: "alpha", notificationID: notification.id))
            #expect(status.withdrawnAt == later)
            let byDevice = Dictionary(uniqueKeysWithValues: status.deliveries.map { ($0.deviceID, $0) })
            #expect(byDevice[sent.deviceID]?.state == .sent)
            #expect(byDevice[inFlight.deviceID]?.state == .withdrawn)
            #expect(byDevice[inFlight.deviceID]?.reason == Withdrawal.reasonInFlight)
            #expect(byDevice[queuedDevice]?.state == .withdrawn)
            #expect(byDevice[queuedDevice]?.reason == Withdrawal.reasonQueued)

            let again = try #require(
                try await store.withdraw(appID: "alpha", notificationID: notification.id, now: later.addingTimeInterval(9)))
            #expect(again.withdrawnNow == 0 && again.alreadyWithdrawn)
            #expect(again.reachedDevices == first.reachedDevices)
            #expect(try await store.notificationStatus(appID: "alpha", notificationID: notification.id)?.withdrawnAt == later)
        }
    }

    /// A receipt is recorded on the job that sent its message id to that very device key, once: the same receipt
    /// again is `replayed`, a receipt about another device's message (sealed with another key) or for another app is
    /// `unknownMessage`, and neither changes anything; a second receipt about the job is counted, the first kept.
    /// Expired receipt ids are purged with the notifications.
    static func receiptsRecordedOnce(_ harness: any StoreHarness) async throws {
        try await withMigratedStore(harness) { store, fixtures in
            let keys = try await StoreFixtures.register(["a", "b"], in: "alpha", store)
            // 28 days: the notification outlives the receipts' 7 days.
            let notification = try fixtures.notification(appID: "alpha", to: keys, ttl: 2_419_200)
            _ = try await store.enqueue(notification)
            let jobA = try #require(notification.jobs.first { $0.deviceID == "a" })
            let jobB = try #require(notification.jobs.first { $0.deviceID == "b" })
            let keyA = try #require(jobA.keyID)
            let deviceA = try #require(try await store.device(appID: "alpha", keyID: keyA))
            #expect(deviceA.deviceID == "a")
            #expect(try await store.device(appID: "beta", keyID: jobA.keyID!) == nil)
            #expect(try await store.device(appID: "alpha", keyID: String(repeating: "0", count: 64)) == nil)

            func receipt(_ id: String, key: String? = nil, message: String? = nil, app: String = "alpha",
                         outcome: String = "decrypted", reason: String? = nil) -> ReceivedReceipt {
                ReceivedReceipt(
                    appID: app, keyID: key ?? jobA.keyID!, receiptID: id,
                    receiptExpiresAt: now.addingTimeInterval(604_800), messageID: message ?? jobA.messageID!,
                    outcome: outcome, reason: reason, attachmentsDelivered: 1, attachmentsFailed: 0,
                    deviceTime: now.addingTimeInterval(3), receivedAt: now.addingTimeInterval(4))
            }
            let id1 = String(repeating: "1", count: 32), id2 = String(repeating: "2", count: 32)
            #expect(try await store.recordReceipt(receipt(id1, message: jobB.messageID!)) == .unknownMessage)
            #expect(try await store.recordReceipt(receipt(id1, key: jobB.keyID!)) == .unknownMessage)
            #expect(try await store.recordReceipt(receipt(id1, app: "beta")) == .unknownMessage)
            #expect(try await store.recordReceipt(receipt(id1)) == .recorded(notificationID: notification.id, deviceID: "a", first: true))
            #expect(try await store.recordReceipt(receipt(id1)) == .replayed)
            #expect(
                try await store.recordReceipt(receipt(id2, outcome: "fallback", reason: "timedOut"))
                    == .recorded(notificationID: notification.id, deviceID: "a", first: false))

            let status = try #require(try await store.notificationStatus(appID: "alpha", notificationID: notification.id))
            let a = try #require(status.deliveries.first { $0.deviceID == "a" })
            #expect(
                a.receipt
                    == JobReceipt(
                        outcome: "decrypted", reason: nil, attachmentsDelivered: 1, attachmentsFailed: 0,
                        deviceTime: now.addingTimeInterval(3), receivedAt: now.addingTimeInterval(4), count: 2))
            #expect(status.deliveries.first { $0.deviceID == "b" }?.receipt == nil)

            // Past the receipts' expiry the retention purge forgets their ids (the notification lives on): the
            // receipt is no longer a replay (the envelope's own expiry refuses it before the store is asked).
            #expect(try await store.purgeExpired(before: now.addingTimeInterval(604_801), limit: 100) == 0)
            #expect(try await store.recordReceipt(receipt(id1)) == .recorded(notificationID: notification.id, deviceID: "a", first: false))

            // A batch (the receipt endpoint's group commit) answers each as one at a time would, in order: a
            // receipt id twice in one batch is a replay the second time, the first receipt of a job is the first.
            let id3 = String(repeating: "3", count: 32), id4 = String(repeating: "4", count: 32)
            let b = { (id: String, outcome: String) in
                ReceivedReceipt(
                    appID: "alpha", keyID: jobB.keyID!, receiptID: id, receiptExpiresAt: now.addingTimeInterval(604_800),
                    messageID: jobB.messageID!, outcome: outcome, reason: nil, attachmentsDelivered: 0,
                    attachmentsFailed: 0, deviceTime: now, receivedAt: now)
            }
            let answers = try await store.recordReceipts([
                b(id3, "decrypted"), b(id3, "decrypted"), receipt(id4, message: jobB.messageID!), b(id4, "duplicate"),
            ])
            #expect(
                answers == [
                    .recorded(notificationID: notification.id, deviceID: "b", first: true), .replayed, .unknownMessage,
                    .recorded(notificationID: notification.id, deviceID: "b", first: false),
                ])
            #expect(try await store.recordReceipts([]) == [])
            let after = try #require(try await store.notificationStatus(appID: "alpha", notificationID: notification.id))
            // The job keeps its first receipt's fields (not the later one's of the same batch) and counts both.
            #expect(after.deliveries.first { $0.deviceID == "b" }?.receipt?.count == 2)
            #expect(after.deliveries.first { $0.deviceID == "b" }?.receipt?.outcome == "decrypted")
            #expect(after.deliveries.first { $0.deviceID == "a" }?.receipt?.count == 3)

            // A job takes at most ReceivedReceipt.maxPerJob receipts. Job b has 2: a batch that fills it and goes one
            // past gets the last one refused; after that a receipt about it changes nothing, whether its id is new or
            // one kept before (the limit is checked first), and the job's first receipt and count stay.
            let room = ReceivedReceipt.maxPerJob - 2
            let filling = (0...room).map { b(String(format: "%032x", 0x5000 + $0), "duplicate") }
            #expect(
                try await store.recordReceipts(filling)
                    == Array(repeating: .recorded(notificationID: notification.id, deviceID: "b", first: false), count: room)
                    + [.limitReached])
            #expect(try await store.recordReceipt(b(String(format: "%032x", 0x6000), "duplicate")) == .limitReached)
            #expect(try await store.recordReceipt(b(id3, "decrypted")) == .limitReached)
            let full = try #require(try await store.notificationStatus(appID: "alpha", notificationID: notification.id))
            #expect(full.deliveries.first { $0.deviceID == "b" }?.receipt?.count == ReceivedReceipt.maxPerJob)
            #expect(full.deliveries.first { $0.deviceID == "b" }?.receipt?.outcome == "decrypted")
            // Job a (3 receipts) still has room: the limit is per job.
            #expect(
                try await store.recordReceipt(receipt(String(format: "%032x", 0x7000)))
                    == .recorded(notificationID: notification.id, deviceID: "a", first: false))
        }
    }
}
