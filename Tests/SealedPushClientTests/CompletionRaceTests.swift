import Foundation
import SealedPushCore
import Testing

@testable import SealedPushClient

/// Records every handler and observer call of one request.
private final class CallLog: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var deliveries: [NotificationDelivery] = []
    private(set) var outcomes: [NotificationOutcome] = []
    func deliver(_ delivery: NotificationDelivery) { lock.withLock { deliveries.append(delivery) } }
    func observe(_ outcome: NotificationOutcome) { lock.withLock { outcomes.append(outcome) } }
    var snapshot: ([NotificationDelivery], [NotificationOutcome]) { lock.withLock { (deliveries, outcomes) } }
}

@Suite("Exactly-once completion under races")
struct CompletionRaceTests {
    enum Event: CaseIterable {
        case bestAttempt, success, failure, deadline, expiry
    }

    @Test("100,000 randomized races: the handler runs exactly once, with consistent content")
    func hundredThousandRaces() {
        let races = 100_000
        let chunk = 500
        let placeholder = Placeholder.text(body: "You have a new message")
        let secret = NotificationContent(title: "secret title", body: "secret body")
        var generator = SystemRandomNumberGenerator()
        var failures = 0
        var outcomeCounts: [NotificationOutcome: Int] = [:]

        var start = 0
        while start < races {
            let count = min(chunk, races - start)
            let logs = (0..<count).map { _ in CallLog() }
            let gates = logs.map { log in
                CompletionGate(
                    fallback: .placeholder(placeholder),
                    observer: { log.observe($0) },
                    handler: { log.deliver($0) }
                )
            }
            // Each race: the deadline always fires; success / failure / best attempt / expiry each maybe; the events
            // land in a random order on four threads racing on the same gate.
            let plans: [[[Event]]] = (0..<count).map { _ in
                var events: [Event] = [.deadline]
                if Bool.random(using: &generator) { events.append(.expiry) }
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: events.append(.success)
                case 1: events.append(.failure)
                case 2: events += [.bestAttempt, .success]
                default: events += [.bestAttempt, .failure]
                }
                events.shuffle(using: &generator)
                var slots: [[Event]] = [[], [], [], []]
                for event in events { slots[Int.random(in: 0..<4, using: &generator)].append(event) }
                return slots
            }
            DispatchQueue.concurrentPerform(iterations: 4) { slot in
                for index in 0..<count {
                    for event in plans[index][slot] {
                        switch event {
                        case .bestAttempt: gates[index].recordBestAttempt(secret)
                        case .success: gates[index].succeed(secret)
                        case .failure: gates[index].fail(.authenticationFailure)
                        case .deadline, .expiry: gates[index].timeOut()
                        }
                    }
                }
            }
            for log in logs {
                let (deliveries, outcomes) = log.snapshot
                guard deliveries.count == 1, outcomes.count == 1, let delivery = deliveries.first else {
                    failures += 1
                    continue
                }
                outcomeCounts[delivery.outcome, default: 0] += 1
                let consistent: Bool
                switch delivery.outcome {
                case .decrypted: consistent = delivery.content == .decrypted(secret)
                case .fallback(.timedOut), .fallback(.authenticationFailure):
                    consistent = delivery.content == .placeholder(placeholder)
                case .fallback, .duplicate, .control: consistent = false
                }
                if !consistent || outcomes[0] != delivery.outcome { failures += 1 }
            }
            start += count
        }
        #expect(failures == 0)
        #expect(outcomeCounts.values.reduce(0, +) == races)
        // All three kinds of ending happen (a hand-checked property of the random plans, not of the code).
        #expect(outcomeCounts[.decrypted, default: 0] > 0)
        #expect(outcomeCounts[.fallback(.timedOut), default: 0] > 0)
        #expect(outcomeCounts[.fallback(.authenticationFailure), default: 0] > 0)
    }

    @Test("best attempt: after decryption, expiry delivers the decrypted content, not the placeholder")
    func bestAttempt() {
        let log = CallLog()
        let secret = NotificationContent(body: "hello")
        let gate = CompletionGate(fallback: .original, observer: { log.observe($0) }, handler: { log.deliver($0) })
        #expect(gate.recordBestAttempt(secret))
        #expect(gate.timeOut())
        #expect(!gate.succeed(NotificationContent(body: "later")))
        #expect(!gate.fail(.malformed))
        #expect(!gate.recordBestAttempt(secret))
        let (deliveries, outcomes) = log.snapshot
        #expect(deliveries == [NotificationDelivery(content: .decrypted(secret), outcome: .decrypted)])
        #expect(outcomes == [.decrypted])
    }

    @Test("before decryption, expiry delivers the fallback with timedOut")
    func expiryBeforeDecryption() {
        let log = CallLog()
        let gate = CompletionGate(fallback: .original, observer: nil, handler: { log.deliver($0) })
        #expect(gate.timeOut())
        #expect(!gate.succeed(NotificationContent(body: "late")))
        #expect(log.snapshot.0 == [NotificationDelivery(content: .original, outcome: .fallback(.timedOut))])
    }
}
