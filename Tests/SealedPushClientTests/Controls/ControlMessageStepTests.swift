import Foundation
import SealedPushCore
import Testing

@testable import SealedPushClient

/// `Specs/control-v1.md` §2.1 through the step: sealed `remove`, `update` and `badge` messages act on the delivered
/// notifications (an in-memory center in place of `UNUserNotificationCenter`), show nothing of their own, and are
/// never applied twice. Each message is sealed here by the test sealer as a backend would.
@Suite("Control messages in the step (control-v1 §2)")
final class ControlMessageStepTests {
    /// This test's directories (its devices' key rings and journals), removed when the test ends.
    let scratch: URL

    init() throws { scratch = try makeTemporaryDirectory() }
    deinit { removeTemporaryDirectory(scratch) }

    let topic = "com.example.sealedpush"
    let quiet = Placeholder.text(body: "Updated")
    let fallback = Placeholder.localized(key: "FALLBACK")

    struct Device {
        let sealer: TestSealer
        let clock: ManualClock
        let receiver: SealedPushReceiver
        let devicePublic: [UInt8]

        func body(_ json: String, ttl: UInt64 = 3_600) throws -> [UInt8] {
            try sealer.sealBody(contentJSON: json, to: devicePublic, issuedAt: clock.now, expiresAt: clock.now + ttl)
        }
    }

    func device() throws -> Device {
        let directoryParent = try makeDirectory(in: scratch)
        let directory = directoryParent.appendingPathComponent("keyring")
        let sealer = TestSealer(topic: topic)
        let clock = ManualClock(1_800_000_000)
        let registration = try DeviceKeyManager(directory: directory).create(now: clock.now)
        let receiver = try SealedPushReceiver(
            directory: directory, serverPublicKeys: [sealer.serverPublicKey], topic: topic, clock: clock.clock)
        return Device(sealer: sealer, clock: clock, receiver: receiver,
                      devicePublic: try KeyText.decodePublicKey(registration.publicKey))
    }

    func step(_ device: Device, center: InMemoryNotificationCenter?, presentation: ControlConfiguration.Presentation? = nil)
        -> NotificationServiceStep
    {
        let controls = center.map { ControlConfiguration(center: $0, presentation: presentation ?? .quietPlaceholder(quiet)) }
        return NotificationServiceStep(
            receiver: device.receiver, configuration: .init(fallbackPlaceholder: fallback, controls: controls))
    }

    func shown(_ center: InMemoryNotificationCenter) -> [String] { center.delivered.map(\.requestIdentifier) }

    @Test("remove by ids and by thread removes exactly those, shows the quiet placeholder or nothing")
    func removeByIDsAndThread() async throws {
        let device = try device()
        let center = InMemoryNotificationCenter()
        center.add(DeliveredNotification(requestIdentifier: "r1", notificationID: "a"))
        center.add(DeliveredNotification(requestIdentifier: "r2", notificationID: "b", threadIdentifier: "chat"))
        center.add(DeliveredNotification(requestIdentifier: "r3", notificationID: "c", threadIdentifier: "chat"))
        center.add(DeliveredNotification(requestIdentifier: "r4", notificationID: "d", threadIdentifier: "other"))
        center.add(DeliveredNotification(requestIdentifier: "r5"))
        let body = try device.body(#"{"control":{"action":"remove","ids":["a","zz"],"thread-id":"chat"}}"#)
        let delivery = await deliver(step(device, center: center), NotificationRequest(body: body, identifier: "rc"))
        #expect(delivery.outcome == .control(.remove))
        #expect(delivery.content == .placeholder(quiet))
        #expect(shown(center) == ["r4", "r5"])
        // With the filtering entitlement: nothing to show.
        let suppressing = step(device, center: center, presentation: .suppress)
        let second = await deliver(suppressing, NotificationRequest(body: try device.body(
            #"{"control":{"action":"remove","ids":["d"]}}"#)))
        #expect(second.outcome == .control(.remove) && second.content == .suppressed)
        #expect(shown(center) == ["r5"])
    }

    @Test("remove and update match ids and thread ids code point by code point, not by canonical equivalence")
    func matchesByCodePoints() async throws {
        let device = try device()
        let center = InMemoryNotificationCenter()
        let nfc = "\u{e9}", nfd = "e\u{301}"  // equal as Swift Strings, two ids under control-v1 §1
        center.add(DeliveredNotification(requestIdentifier: "r-nfc", notificationID: nfc, threadIdentifier: nfc))
        center.add(DeliveredNotification(requestIdentifier: "r-nfd", notificationID: nfd, threadIdentifier: nfd))
        center.add(DeliveredNotification(requestIdentifier: "r-t-nfc", threadIdentifier: nfc))
        let byID = try device.body(#"{"control":{"action":"remove","ids":["e\u0301"]}}"#)
        _ = await deliver(step(device, center: center), NotificationRequest(body: byID))
        #expect(shown(center) == ["r-nfc", "r-t-nfc"])
        let byThread = try device.body(#"{"control":{"action":"remove","thread-id":"\u00e9"}}"#)
        _ = await deliver(step(device, center: center), NotificationRequest(body: byThread))
        #expect(shown(center).isEmpty)
        // An update of one spelling leaves the other's notification alone.
        center.add(DeliveredNotification(requestIdentifier: "u-nfc", notificationID: nfc))
        center.add(DeliveredNotification(requestIdentifier: "u-nfd", notificationID: nfd))
        let update = try device.body(#"{"body":"new","control":{"action":"update","id":"e\u0301"}}"#)
        _ = await deliver(step(device, center: center), NotificationRequest(body: update, identifier: "u-new"))
        #expect(shown(center) == ["u-nfc"])
    }

    @Test("badge sets the count and shows nothing of its own")
    func badge() async throws {
        let device = try device()
        let center = InMemoryNotificationCenter()
        let delivery = await deliver(step(device, center: center), NotificationRequest(body: try device.body(
            #"{"control":{"action":"badge","count":7}}"#)))
        #expect(delivery.outcome == .control(.badge) && delivery.content == .placeholder(quiet))
        #expect(center.badge == 7)
    }

    @Test("update shows the new content with its notification id, and removes an older copy under another request id")
    func update() async throws {
        let device = try device()
        let center = InMemoryNotificationCenter()
        center.add(DeliveredNotification(requestIdentifier: "old-request", notificationID: "m-1"))
        center.add(DeliveredNotification(requestIdentifier: "m-1", notificationID: "m-1"))  // same collapse id
        center.add(DeliveredNotification(requestIdentifier: "other", notificationID: "m-2"))
        let body = try device.body(#"{"title":"Edited","body":"new words","control":{"action":"update","id":"m-1"}}"#)
        let delivery = await deliver(step(device, center: center), NotificationRequest(body: body, identifier: "m-1"))
        #expect(delivery.outcome == .decrypted)
        #expect(delivery.content == .decrypted(NotificationContent(title: "Edited", body: "new words", notificationID: "m-1")))
        #expect(shown(center) == ["m-1", "other"])
    }

    @Test("an exact duplicate of a remove is not applied again; a replay after the window changes nothing")
    func duplicateAndReplay() async throws {
        let device = try device()
        let center = InMemoryNotificationCenter()
        center.add(DeliveredNotification(requestIdentifier: "r1", notificationID: "a"))
        let step = step(device, center: center)
        let body = try device.body(#"{"control":{"action":"remove","ids":["a"]}}"#)
        #expect(await deliver(step, NotificationRequest(body: body)).outcome == .control(.remove))
        #expect(center.delivered.isEmpty)
        // Notification "a" shows again (sent anew); the resend of the same remove must not take it away.
        center.add(DeliveredNotification(requestIdentifier: "r2", notificationID: "a"))
        device.clock.now += 5
        let again = await deliver(step, NotificationRequest(body: body))
        #expect(again.outcome == .duplicate(.deliverAgain) && again.content == .placeholder(quiet))
        #expect(shown(center) == ["r2"])
        device.clock.now += 700
        let replay = await deliver(step, NotificationRequest(body: body))
        #expect(replay.outcome == .fallback(.replayed) && replay.content == .placeholder(fallback))
        #expect(shown(center) == ["r2"])
    }

    @Test("without a control configuration a remove is never shown as content and changes nothing")
    func notConfigured() async throws {
        let device = try device()
        let delivery = await deliver(step(device, center: nil), NotificationRequest(body: try device.body(
            #"{"control":{"action":"remove","ids":["a"]}}"#)))
        #expect(delivery.outcome == .fallback(.controlNotApplied))
        #expect(delivery.content == .placeholder(fallback))
    }

    @Test("a malformed control falls back as malformed, records nothing, and content is untouched")
    func malformedControl() async throws {
        let device = try device()
        let center = InMemoryNotificationCenter()
        center.add(DeliveredNotification(requestIdentifier: "r1", notificationID: "a"))
        let body = try device.body(#"{"control":{"action":"remove","ids":["a"],"typo":true}}"#)
        let delivery = await deliver(step(device, center: center), NotificationRequest(body: body))
        #expect(delivery.outcome == .fallback(.malformed))
        #expect(shown(center) == ["r1"])
    }
}
