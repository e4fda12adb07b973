import Crypto
import Foundation
import SealedPushCore
import Testing

@testable import SealedPushClient

/// Runs one request through the step and waits for its single delivery.
func deliver(_ step: NotificationServiceStep, _ request: NotificationRequest) async -> NotificationDelivery {
    await withCheckedContinuation { continuation in
        step.didReceive(request) { continuation.resume(returning: $0) }
    }
}

final class OutcomeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [NotificationOutcome] = []
    func append(_ outcome: NotificationOutcome) { lock.withLock { items.append(outcome) } }
    var all: [NotificationOutcome] { lock.withLock { items } }
}

@Suite("NotificationServiceStep")
struct NotificationServiceStepTests {
    let topic = "com.example.sealedpush"
    let placeholder = Placeholder.localized(key: "NOTIFICATION_PLACEHOLDER")

    @Test("three rotations: all messages open during grace; after pruning each falls back with unknownKey")
    func threeRotations() async throws {
        let directoryParent = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directoryParent) }
        let directory = directoryParent.appendingPathComponent("keyring")
        let sealer = TestSealer(topic: topic)
        let clock = ManualClock(1_800_000_000)
        let manager = DeviceKeyManager(directory: directory)
        let ttl: UInt64 = 28 * 86_400

        var bodies: [[UInt8]] = []
        var registration = try manager.create(now: clock.now)
        for round in 0..<3 {
            // The backend seals to the newest registration it has; then the device rotates.
            let devicePublic = try KeyText.decodePublicKey(registration.publicKey)
            bodies.append(try sealer.sealBody(
                contentJSON: #"{"title":"round \#(round)","body":"secret \#(round)"}"#,
                to: devicePublic,
                issuedAt: clock.now,
                expiresAt: clock.now + ttl
            ))
            clock.now += 86_400
            registration = try manager.rotate(now: clock.now)
        }
        let ring = try #require(try FileKeyStore(directory: directory, access: .readOnly).loadKeyRing())
        #expect(ring.keys.count == 4)

        let log = OutcomeLog()
        let receiver = try SealedPushReceiver(
            directory: directory, serverPublicKeys: [sealer.serverPublicKey], topic: topic, clock: clock.clock
        )
        let step = NotificationServiceStep(
            receiver: receiver,
            configuration: .init(fallbackPlaceholder: placeholder, observer: { log.append($0) })
        )
        // Within the grace window of every retired key (and before every expiresAt).
        clock.now += 86_400
        for (round, body) in bodies.enumerated() {
            let delivery = await deliver(step, NotificationRequest(body: body))
            #expect(delivery.outcome == .decrypted)
            #expect(delivery.content == .decrypted(NotificationContent(title: "round \(round)", body: "secret \(round)")))
        }

        // Prune once every grace window has passed: only the current key survives.
        clock.now += DeviceKeyRing.defaultGracePeriod
        let removed = try manager.prune(now: clock.now)
        #expect(removed.count == 3)
        for body in bodies {
            let delivery = await deliver(step, NotificationRequest(body: body))
            #expect(delivery.outcome == .fallback(.unknownKey))
            #expect(delivery.content == .placeholder(placeholder))
        }
        // A message to the current key still opens.
        let current = try KeyText.decodePublicKey(registration.publicKey)
        let fresh = try sealer.sealBody(
            contentJSON: #"{"body":"now"}"#, to: current, issuedAt: clock.now, expiresAt: clock.now + 60
        )
        #expect(await deliver(step, NotificationRequest(body: fresh)).outcome == .decrypted)
        try await Task.sleep(for: .milliseconds(20))  // let the observer of the last request run
        #expect(log.all == Array(repeating: .decrypted, count: 3) + Array(repeating: .fallback(.unknownKey), count: 3)
            + [.decrypted])
    }

    @Test("replay is rejected across a restart; expiry at the boundary second")
    func replayAndExpiry() async throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let sealer = TestSealer(topic: topic)
        let registration = try DeviceKeyManager(directory: directory).create(now: 1000)
        let devicePublic = try KeyText.decodePublicKey(registration.publicKey)
        let body = try sealer.sealBody(contentJSON: #"{"body":"once"}"#, to: devicePublic, issuedAt: 1000, expiresAt: 2000)

        let first = try SealedPushReceiver(
            directory: directory, serverPublicKeys: [sealer.serverPublicKey], topic: topic, clock: .fixed(1000)
        )
        #expect(try first.open(body: body).content.body == "once")
        // "Restart": a new receiver and new store objects over the same directory, past the 600-second duplicate
        // window (within it the same envelope is a duplicate, keyring spec §5.5; DuplicateDeliveryTests).
        let second = try SealedPushReceiver(
            directory: directory, serverPublicKeys: [sealer.serverPublicKey], topic: topic, clock: .fixed(1999)
        )
        #expect(errorCode { try second.open(body: body) } == .replayed)
        let step = NotificationServiceStep(receiver: second)
        let replayed = await deliver(step, NotificationRequest(body: body))
        #expect(replayed == NotificationDelivery(content: .original, outcome: .fallback(.replayed), errorCode: .replayed))

        let other = try sealer.sealBody(contentJSON: #"{"body":"late"}"#, to: devicePublic, issuedAt: 1000, expiresAt: 2000)
        let atExpiry = try SealedPushReceiver(
            directory: directory, serverPublicKeys: [sealer.serverPublicKey], topic: topic, clock: .fixed(2000)
        )
        #expect(errorCode { try atExpiry.open(body: other) } == .expired)
        #expect(await deliver(NotificationServiceStep(receiver: atExpiry), NotificationRequest(body: other)).outcome
            == .fallback(.expired))
        // A failed open records nothing: one second earlier the same envelope opens once.
        #expect(try first.open(body: other).content.body == "late")
    }

    @Test("keys unreadable → keysUnavailable fallback, and no key file is created")
    func keysUnavailable() async throws {
        let parent = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(parent) }
        let missing = parent.appendingPathComponent("not-yet")
        let sealer = TestSealer(topic: topic)
        let body = try sealer.sealBody(
            contentJSON: "{}", to: Array(Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation),
            issuedAt: 1, expiresAt: 100
        )
        let receiver = try SealedPushReceiver(
            directory: missing, serverPublicKeys: [sealer.serverPublicKey], topic: topic, clock: .fixed(50)
        )
        let log = OutcomeLog()
        let step = NotificationServiceStep(
            receiver: receiver, configuration: .init(fallbackPlaceholder: placeholder, observer: { log.append($0) })
        )
        let delivery = await deliver(step, NotificationRequest(body: body))
        #expect(delivery == NotificationDelivery(
            content: .placeholder(placeholder), outcome: .fallback(.keysUnavailable), errorCode: .keysUnavailable))
        #expect(!FileManager.default.fileExists(atPath: missing.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path).isEmpty)
        // Steps 1-7 need no key and keep their own codes even while keys are unavailable.
        let truncated = APNsPayload.encode(placeholder: .default, envelope: [UInt8](repeating: 1, count: 100))
        #expect(errorCode { try receiver.open(body: truncated) } == .truncated)
        #expect(errorCode { try receiver.open(body: body) } == .keysUnavailable)
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path).isEmpty)

        // Same through a locked in-memory store (before first unlock).
        let store = InMemoryKeyStore()
        try DeviceKeyManager(store: store).create(now: 1)
        store.setAvailable(false)
        let lockedReceiver = try SealedPushReceiver(
            keyStore: store.readOnlyView(), replayGuard: InMemoryReplayGuard(),
            serverPublicKeys: [sealer.serverPublicKey], topic: topic, clock: .fixed(50)
        )
        let locked = await deliver(NotificationServiceStep(receiver: lockedReceiver), NotificationRequest(body: body))
        #expect(locked.outcome == .fallback(.keysUnavailable))
        store.setAvailable(true)
        #expect(try store.loadKeyRing()?.keys.count == 1)
    }

    @Test("failure reasons map from the spec's error codes")
    func reasons() async throws {
        let store = InMemoryKeyStore()
        let registration = try DeviceKeyManager(store: store).create(now: 1)
        let devicePublic = try KeyText.decodePublicKey(registration.publicKey)
        let sealer = TestSealer(topic: topic)
        let receiver = try SealedPushReceiver(
            keyStore: store.readOnlyView(), replayGuard: nil,
            serverPublicKeys: [sealer.serverPublicKey], topic: topic, clock: .fixed(50)
        )
        let step = NotificationServiceStep(receiver: receiver, configuration: .init(fallbackPlaceholder: placeholder))
        func outcome(_ body: [UInt8]) async -> NotificationOutcome {
            await deliver(step, NotificationRequest(body: body)).outcome
        }
        #expect(await outcome(Array("{}".utf8)) == .fallback(.malformed))
        #expect(await outcome(Array(#"{"sp":"!!"}"#.utf8)) == .fallback(.malformed))
        let stranger = TestSealer(topic: topic)
        #expect(await outcome(try stranger.sealBody(contentJSON: "{}", to: devicePublic, issuedAt: 1, expiresAt: 100))
            == .fallback(.unknownSender))
        let wrongTopic = TestSealer(serverKey: sealer.serverKey, topic: "com.example.other")
        #expect(await outcome(try wrongTopic.sealBody(contentJSON: "{}", to: devicePublic, issuedAt: 1, expiresAt: 100))
            == .fallback(.authenticationFailure))
        #expect(await outcome(try sealer.sealBody(contentJSON: "nope", to: devicePublic, issuedAt: 1, expiresAt: 100))
            == .fallback(.malformed))
        let userInfo: [AnyHashable: Any] = ["aps": ["alert": ["body": "x"]]]
        #expect(await deliver(step, NotificationRequest(userInfo: userInfo)).outcome == .fallback(.malformed))
    }

    @Test("the step's own deadline delivers the fallback when opening never finishes")
    func deadline() async throws {
        let release = DispatchSemaphore(value: 0)
        let step = NotificationServiceStep(
            configuration: .init(deadline: .milliseconds(10), fallbackPlaceholder: placeholder)
        ) { _ in
            release.wait()  // a stuck open
            throw SealedPushError(.io, "stuck")
        }
        let delivery = await deliver(step, NotificationRequest(body: Array(#"{"sp":"AAAA"}"#.utf8)))
        #expect(delivery == NotificationDelivery(content: .placeholder(placeholder), outcome: .fallback(.timedOut)))
        release.signal()
    }

    @Test("expiry call: before decryption the fallback, after decryption the best attempt while enrich runs")
    func expiryCall() async throws {
        let opened = OpenedNotification(
            content: NotificationContent(body: "decrypted"), messageID: [UInt8](repeating: 1, count: 16),
            issuedAt: 1, expiresAt: 2, recipientKeyID: try KeyID(bytes: [1, 2, 3, 4, 5, 6, 7, 8]),
            senderKeyID: try KeyID(bytes: [8, 7, 6, 5, 4, 3, 2, 1])
        )
        let decrypted = DispatchSemaphore(value: 0)
        let step = NotificationServiceStep(
            configuration: .init(enrich: { _ in
                decrypted.signal()
                try await Task.sleep(for: .seconds(60))  // unfinished attachment work; cancelled on delivery
                return NotificationContent(body: "enriched")
            })
        ) { _ in opened }
        let second = await withCheckedContinuation { continuation in
            step.didReceive(NotificationRequest(body: Array(#"{"sp":"AAAA"}"#.utf8))) {
                continuation.resume(returning: $0)
            }
            DispatchQueue.global().async {
                decrypted.wait()
                step.serviceExtensionTimeWillExpire()
            }
        }
        #expect(second == NotificationDelivery(content: .decrypted(NotificationContent(body: "decrypted")), outcome: .decrypted))

        // Before decryption: the open is stuck, the expiry call delivers the fallback with timedOut.
        let stuck = DispatchSemaphore(value: 0)
        let blocked = NotificationServiceStep(configuration: .init(fallbackPlaceholder: placeholder)) { _ in
            stuck.wait()
            return opened
        }
        let early = await withCheckedContinuation { continuation in
            blocked.didReceive(NotificationRequest(body: Array(#"{"sp":"AAAA"}"#.utf8))) {
                continuation.resume(returning: $0)
            }
            blocked.serviceExtensionTimeWillExpire()
        }
        stuck.signal()
        #expect(early == NotificationDelivery(content: .placeholder(placeholder), outcome: .fallback(.timedOut)))
    }
}
