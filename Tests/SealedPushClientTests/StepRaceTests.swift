import Foundation
import SealedPushCore
import Testing

@testable import SealedPushClient

/// Counts handler calls per request id.
private final class DeliveryCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [Int: Int] = [:]
    private var outcomes: [Int: NotificationDelivery] = [:]
    private var waiter: CheckedContinuation<Void, Never>?
    private var expected: Int

    init(expected: Int) { self.expected = expected }

    func record(_ id: Int, _ delivery: NotificationDelivery) {
        let resume: CheckedContinuation<Void, Never>? = lock.withLock {
            counts[id, default: 0] += 1
            outcomes[id] = delivery
            if counts.count == expected, let waiter {
                self.waiter = nil
                return waiter
            }
            return nil
        }
        resume?.resume()
    }

    func waitForAll() async {
        await withCheckedContinuation { continuation in
            let done = lock.withLock {
                if counts.count == expected { return true }
                waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }

    var snapshot: ([Int: Int], [Int: NotificationDelivery]) { lock.withLock { (counts, outcomes) } }
}

@Suite("NotificationServiceStep end-to-end races")
struct StepRaceTests {
    @Test("5,000 requests through the real step: open success/failure, tiny deadlines and expiry calls race")
    func stepRaces() async throws {
        let requests = 5_000
        let secret = NotificationContent(body: "secret")
        let opened = OpenedNotification(
            content: secret, messageID: [UInt8](repeating: 7, count: 16), issuedAt: 1, expiresAt: 2,
            recipientKeyID: try KeyID(bytes: [1, 1, 1, 1, 1, 1, 1, 1]), senderKeyID: try KeyID(bytes: [2, 2, 2, 2, 2, 2, 2, 2])
        )
        let placeholder = Placeholder.text(body: "New message")
        let counter = DeliveryCounter(expected: requests)
        let observed = Counter()
        // Several steps (extension instances), each getting requests and expiry calls from other threads.
        let steps = (0..<4).map { index in
            NotificationServiceStep(
                configuration: .init(
                    deadline: .microseconds(Int64(50 + 200 * index)),
                    fallbackPlaceholder: placeholder,
                    observer: { _ in observed.increment() }
                )
            ) { envelope in
                // The envelope's first byte (random per request) picks success or a failure, after a short spin.
                let selector = envelope.first ?? 0
                for _ in 0..<Int(selector % 64) { _ = UInt64.random(in: 0...1) }
                if selector % 2 == 0 { return opened }
                throw SealedPushError(.authenticationFailure, "forged")
            }
        }
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            var generator = SystemRandomNumberGenerator()
            for id in stride(from: worker, to: requests, by: 4) {
                let step = steps[Int.random(in: 0..<steps.count, using: &generator)]
                let selector = UInt8.random(in: 0...255, using: &generator)
                let body = Array(#"{"sp":""#.utf8) + Array(Base64URL.encode([selector, 0, 0]).utf8) + Array(#""}"#.utf8)
                step.didReceive(NotificationRequest(body: body)) { counter.record(id, $0) }
                if Int.random(in: 0..<3, using: &generator) == 0 {
                    steps[Int.random(in: 0..<steps.count, using: &generator)].serviceExtensionTimeWillExpire()
                }
            }
        }
        await counter.waitForAll()
        // Give late events (deadlines, opens finishing after an expiry) time to try a second delivery.
        try await Task.sleep(for: .milliseconds(200))
        let (counts, deliveries) = counter.snapshot
        #expect(counts.count == requests)
        #expect(counts.values.allSatisfy { $0 == 1 })
        #expect(observed.value == requests)
        for delivery in deliveries.values {
            switch delivery.outcome {
            case .decrypted: #expect(delivery.content == .decrypted(secret))
            case .fallback(.timedOut), .fallback(.authenticationFailure):
                #expect(delivery.content == .placeholder(placeholder))
            case .fallback(let other): Issue.record("unexpected reason \(other)")
            case .duplicate(let handling): Issue.record("unexpected duplicate \(handling)")
            case .control(let kind): Issue.record("unexpected control \(kind)")
            }
        }
    }

    @Test("random content sealed by the test sender opens to the same content, up to the largest bucket")
    func randomContentRoundTrip() throws {
        let sealer = TestSealer()
        let ring = DeviceKeyRing.generate(now: 1)
        let opener = try EnvelopeOpener(keyRing: ring, serverPublicKeys: [sealer.serverPublicKey], topic: sealer.topic)
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{01}", "é", "€", "🙂", "👩‍👩‍👧", "中"]
        func text(_ maxCount: Int) -> String {
            String((0..<Int.random(in: 0...maxCount, using: &generator)).map { _ in
                alphabet[Int.random(in: 0..<alphabet.count, using: &generator)]
            })
        }
        var sizes: Set<Int> = []
        for round in 0..<300 {
            var content = NotificationContent(
                title: Bool.random(using: &generator) ? text(40) : nil,
                subtitle: Bool.random(using: &generator) ? text(20) : nil,
                body: round % 50 == 0 ? text(600) : text(200),
                badge: Bool.random(using: &generator) ? Int.random(in: 0...2_147_483_647, using: &generator) : nil,
                threadID: Bool.random(using: &generator) ? text(10) : nil,
                data: Bool.random(using: &generator) ? .object(["k": .string(text(30)), "n": .number(1.5)]) : nil
            )
            var json = try content.canonicalJSON()
            if json.count > 2910 {
                content.body = "short"
                json = try content.canonicalJSON()
            }
            let envelope = try sealer.sealEnvelope(
                contentJSON: String(decoding: json, as: UTF8.self), to: ring.current.publicKey, issuedAt: 1, expiresAt: 100
            )
            sizes.insert(envelope.count)
            #expect(try opener.open(envelope: envelope, now: 2).content == content)
        }
        // The largest content that fits: 2,910 bytes of JSON in the 2,912-byte bucket.
        let filler = String(repeating: "x", count: 2910 - #"{"body":""}"#.utf8.count)
        let largest = #"{"body":"\#(filler)"}"#
        #expect(largest.utf8.count == 2910)
        let envelope = try sealer.sealEnvelope(contentJSON: largest, to: ring.current.publicKey, issuedAt: 1, expiresAt: 100)
        #expect(envelope.count == 82 + 16 + 2912)
        #expect(try opener.open(envelope: envelope, now: 2).content.body == filler)
        #expect(sizes.count > 1)
    }
}
