import Foundation
import SealedPushCore
import Testing

@testable import SealedPushClient

/// Issue 12 point 4: a gateway resend after a crash or an ambiguous failure reaches the device twice with the very
/// same envelope. The user must never see the decrypted notification replaced by the placeholder.
@Suite("Duplicate deliveries (issue 12)")
final class DuplicateDeliveryTests {
    /// This test's directories (its devices' key rings and journals), removed when the test ends.
    let scratch: URL

    init() throws { scratch = try makeTemporaryDirectory() }
    deinit { removeTemporaryDirectory(scratch) }

    let sealer = TestSealer()
    let placeholder = Placeholder.localized(key: "NOTIFICATION_PLACEHOLDER")

    /// A key ring directory with one key, a receiver on it (read-only store, file replay guard) and a clock.
    func device(now: UInt64) throws -> (URL, [UInt8], ManualClock, SealedPushReceiver) {
        let directoryParent = try makeDirectory(in: scratch)
        let directory = directoryParent.appendingPathComponent("keys")
        let registration = try DeviceKeyManager(directory: directory).create(now: now)
        let clock = ManualClock(now)
        let receiver = try SealedPushReceiver(
            directory: directory, serverPublicKeys: [sealer.serverPublicKey], topic: sealer.topic, clock: clock.clock)
        return (directory, try KeyText.decodePublicKey(registration.publicKey), clock, receiver)
    }

    @Test("regression: the same envelope delivered twice a few seconds apart shows the decrypted content both times")
    func resentEnvelopeIsNotReplacedByThePlaceholder() async throws {
        let now: UInt64 = 1_800_000_000
        let (_, devicePublic, clock, receiver) = try device(now: now)
        let step = NotificationServiceStep(receiver: receiver, configuration: .init(fallbackPlaceholder: placeholder))
        let body = try sealer.sealBody(
            contentJSON: #"{"title":"Ana","body":"lunch at 1?"}"#, to: devicePublic, issuedAt: now, expiresAt: now + 3_600)
        let expected = NotificationDelivery.Content.decrypted(NotificationContent(title: "Ana", body: "lunch at 1?"))

        let first = await deliver(step, NotificationRequest(body: body))
        #expect(first.content == expected)
        clock.now = now + 3  // the gateway's resend, moments later
        let second = await deliver(step, NotificationRequest(body: body))
        #expect(second.content == expected)
        #expect(second.content != .placeholder(placeholder))
    }

    func seal(_ content: String, to devicePublic: [UInt8], issuedAt: UInt64, ttl: UInt64 = 3_600,
              messageID: [UInt8] = TestSealer.randomMessageID()) throws -> [UInt8] {
        try sealer.sealBody(contentJSON: content, to: devicePublic, issuedAt: issuedAt, expiresAt: issuedAt + ttl,
                            messageID: messageID)
    }

    @Test("the outcome says duplicate, the report too, and a fresh process on the same directory agrees")
    func outcomeIsDuplicateAcrossReload() async throws {
        let now: UInt64 = 1_800_000_000
        let (directory, devicePublic, clock, receiver) = try device(now: now)
        let log = OutcomeLog()
        let reports = ReportLog()
        let configuration = NotificationServiceStep.Configuration(
            fallbackPlaceholder: placeholder, observer: { log.append($0) }, reportObserver: { reports.append($0) })
        let body = try seal(#"{"body":"see you"}"#, to: devicePublic, issuedAt: now)
        let expected = NotificationDelivery.Content.decrypted(NotificationContent(body: "see you"))

        let first = await deliver(NotificationServiceStep(receiver: receiver, configuration: configuration),
                                  NotificationRequest(body: body))
        #expect(first.content == expected && first.outcome == .decrypted)
        // A new receiver and step on the same directory: what a new extension process does.
        clock.now = now + 30
        let reloaded = try SealedPushReceiver(
            directory: directory, serverPublicKeys: [sealer.serverPublicKey], topic: sealer.topic, clock: clock.clock)
        let second = await deliver(NotificationServiceStep(receiver: reloaded, configuration: configuration),
                                   NotificationRequest(body: body))
        #expect(second.content == expected)
        #expect(second.outcome == .duplicate(.deliverAgain))
        #expect(second.errorCode == nil)
        #expect(log.all == [.decrypted, .duplicate(.deliverAgain)])
        #expect(reports.all.map(\.outcome) == [.decrypted, .duplicate(.deliverAgain)])
        // Through the receiver directly: the verdict names the first acceptance time.
        clock.now = now + 31
        #expect(try reloaded.open(body: body).replayVerdict == .duplicate(firstAcceptedAt: now))
    }

    @Test("with suppression configured the duplicate delivers nothing to show, exactly once")
    func suppressed() async throws {
        let now: UInt64 = 1_800_000_000
        let (_, devicePublic, clock, receiver) = try device(now: now)
        let step = NotificationServiceStep(
            receiver: receiver, configuration: .init(fallbackPlaceholder: placeholder, duplicates: .suppress))
        let body = try seal(#"{"body":"one"}"#, to: devicePublic, issuedAt: now)
        let first = await deliver(step, NotificationRequest(body: body))
        #expect(first.content == .decrypted(NotificationContent(body: "one")))
        clock.now = now + 2
        let handled = CallCounter()
        let second = await withCheckedContinuation { continuation in
            step.didReceive(NotificationRequest(body: body)) {
                handled.increment()
                continuation.resume(returning: $0)
            }
        }
        #expect(second == NotificationDelivery(content: .suppressed, outcome: .duplicate(.suppress)))
        try await Task.sleep(for: .milliseconds(50))
        #expect(handled.value == 1)
    }

    @Test("the same message id in a different envelope (a re-seal) falls back as replayed")
    func differentEnvelopeSameID() async throws {
        let now: UInt64 = 1_800_000_000
        let (_, devicePublic, clock, receiver) = try device(now: now)
        let step = NotificationServiceStep(receiver: receiver, configuration: .init(fallbackPlaceholder: placeholder))
        let messageID = TestSealer.randomMessageID()
        let original = try seal(#"{"body":"pay 10"}"#, to: devicePublic, issuedAt: now, messageID: messageID)
        let reseal = try seal(#"{"body":"pay 10"}"#, to: devicePublic, issuedAt: now, messageID: messageID)
        #expect(original != reseal)  // a new HPKE encapsulation: other bytes
        #expect(await deliver(step, NotificationRequest(body: original)).outcome == .decrypted)
        clock.now = now + 1
        let second = await deliver(step, NotificationRequest(body: reseal))
        #expect(second == NotificationDelivery(content: .placeholder(placeholder), outcome: .fallback(.replayed),
                                               errorCode: .replayed))
    }

    @Test("the same envelope after the window falls back as replayed, also once the clock is set back")
    func afterWindow() async throws {
        let now: UInt64 = 1_800_000_000
        let (_, devicePublic, clock, receiver) = try device(now: now)
        let step = NotificationServiceStep(receiver: receiver, configuration: .init(fallbackPlaceholder: placeholder))
        let body = try seal(#"{"body":"old"}"#, to: devicePublic, issuedAt: now)
        #expect(await deliver(step, NotificationRequest(body: body)).outcome == .decrypted)
        clock.now = now + FileReplayGuard.defaultDuplicateWindow
        #expect(await deliver(step, NotificationRequest(body: body)).outcome == .fallback(.replayed))
        clock.now = now + 5
        #expect(await deliver(step, NotificationRequest(body: body)).outcome == .fallback(.replayed))
    }

    @Test("in-memory guard: duplicate delivered again")
    func inMemoryGuard() async throws {
        let store = InMemoryKeyStore()
        let registration = try DeviceKeyManager(store: store).create(now: 1_000)
        let clock = ManualClock(1_000)
        let receiver = try SealedPushReceiver(
            keyStore: store.readOnlyView(), replayGuard: InMemoryReplayGuard(),
            serverPublicKeys: [sealer.serverPublicKey], topic: sealer.topic, clock: clock.clock)
        let step = NotificationServiceStep(receiver: receiver, configuration: .init(fallbackPlaceholder: placeholder))
        let body = try seal(#"{"body":"mem"}"#, to: try KeyText.decodePublicKey(registration.publicKey), issuedAt: 1_000)
        #expect(await deliver(step, NotificationRequest(body: body)).outcome == .decrypted)
        clock.now = 1_010
        let second = await deliver(step, NotificationRequest(body: body))
        #expect(second == NotificationDelivery(
            content: .decrypted(NotificationContent(body: "mem")), outcome: .duplicate(.deliverAgain)))
    }

    @Test("a duplicate's best attempt at expiry is reported as duplicate, not decrypted")
    func bestAttemptKeepsDuplicateOutcome() async throws {
        let opened = OpenedNotification(
            content: NotificationContent(body: "again"), messageID: [UInt8](repeating: 1, count: 16), issuedAt: 1,
            expiresAt: 2, recipientKeyID: try KeyID(bytes: [1, 2, 3, 4, 5, 6, 7, 8]),
            senderKeyID: try KeyID(bytes: [8, 7, 6, 5, 4, 3, 2, 1]), replayVerdict: .duplicate(firstAcceptedAt: 1))
        let started = DispatchSemaphore(value: 0)
        let step = NotificationServiceStep(
            configuration: .init(enrich: { input in
                #expect(input.isDuplicate)
                started.signal()
                try await Task.sleep(for: .seconds(60))
                return input.content
            })
        ) { _ in opened }
        let delivery = await withCheckedContinuation { continuation in
            step.didReceive(NotificationRequest(body: Array(#"{"sp":"AAAA"}"#.utf8))) { continuation.resume(returning: $0) }
            DispatchQueue.global().async {
                started.wait()
                step.serviceExtensionTimeWillExpire()
            }
        }
        #expect(delivery == NotificationDelivery(
            content: .decrypted(NotificationContent(body: "again")), outcome: .duplicate(.deliverAgain)))
    }
}

final class ReportLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [NotificationReport] = []
    func append(_ report: NotificationReport) { lock.withLock { items.append(report) } }
    var all: [NotificationReport] { lock.withLock { items } }
}

final class CallCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
