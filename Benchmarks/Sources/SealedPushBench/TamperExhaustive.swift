import Crypto
import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer

/// The exhaustive tamper run (issue 5) that the debug test suite samples: every single-bit flip of every byte of
/// 1,000 sealed envelopes is opened by the client and must fail with the error spec §8 names for it (computed
/// independently from the flipped bytes). Uses every core; prints opens, mismatches and time.
enum TamperExhaustive {
    static func run(_ report: Report, fixture: Fixture, envelopes count: Int) throws {
        let sealer = try Sealer(identity: fixture.identity, topic: Fixture.topic)
        let now = Sealer.currentTime()
        let opener = try EnvelopeOpener(
            devicePrivateKeys: [Array(fixture.deviceKey.rawRepresentation)],
            serverPublicKeys: [fixture.identity.publicKey], topic: Fixture.topic)
        var sealed = [[UInt8]]()
        for index in 0..<count {
            let content = NotificationContent(
                title: "Message \(index)", body: String(repeating: "x", count: index % 50 == 0 ? 300 : 10 + index % 150),
                badge: index % 3 == 0 ? index : nil, threadID: "thread-\(index % 7)")
            sealed.append(try sealer.seal(content, to: fixture.device, now: now).envelope)
        }
        let envelopes = sealed
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let totals = Mutex((opens: 0, mismatches: 0))
        let firstMismatch = Mutex<String?>(nil)
        let start = Clock.wallNanos()
        DispatchQueue.concurrentPerform(iterations: cores) { worker in
            var opens = 0
            var mismatches = 0
            for index in stride(from: worker, to: envelopes.count, by: cores) {
                let original = envelopes[index]
                var tampered = original
                for bit in 0..<original.count * 8 {
                    tampered[bit / 8] ^= 1 << UInt8(bit % 8)
                    let expected = expectedCode(tampered, original: original, now: now)
                    let actual: String
                    do {
                        _ = try opener.open(envelope: tampered, now: now)
                        actual = "opened"
                    } catch let error as SealedPushError {
                        actual = error.code.name
                    } catch {
                        actual = "unexpected \(type(of: error))"
                    }
                    if actual != expected {
                        mismatches += 1
                        firstMismatch.withLock { $0 = $0 ?? "envelope \(index) bit \(bit): \(actual), expected \(expected)" }
                    }
                    tampered[bit / 8] ^= 1 << UInt8(bit % 8)
                    opens += 1
                }
            }
            totals.withLock {
                $0.opens += opens
                $0.mismatches += mismatches
            }
        }
        let seconds = Double(Clock.wallNanos() - start) / 1e9
        let (opens, mismatches) = totals.withLock { $0 }
        var row = Row(figure: "tamper: every bit flip of \(count) envelopes (\(opens) opens, \(mismatches) wrong)",
                      ours: Double(opens) / seconds, comparison: "—", theirs: nil, ratio: .speedup, target: nil)
        row.unit = "ops/s"
        report.add(row)
        report.note(String(format: "exhaustive tamper run: %d single-bit flips across %d envelopes, %d not rejected "
            + "with the spec's error, %.1f s on %d threads", opens, count, mismatches, seconds, cores))
        if let first = firstMismatch.withLock({ $0 }) { report.note("first tamper mismatch: \(first)") }
    }

    /// Spec §8 steps 4–11 for a flipped envelope (same rule as the conformance tests' oracle).
    static func expectedCode(_ tampered: [UInt8], original: [UInt8], now: UInt64) -> String {
        if tampered.count < 82 + 16 + 128 { return "truncated" }
        if tampered.count > 82 + 16 + 4096 { return "malformedEnvelope" }
        if tampered[0] != 1 { return "unsupportedVersion" }
        if tampered[1] != 1 { return "unsupportedSuite" }
        let issuedAt = tampered[34..<42].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let expiresAt = tampered[42..<50].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        if issuedAt > expiresAt || expiresAt - issuedAt > 2_419_200 { return "malformedEnvelope" }
        if tampered[2..<10] != original[2..<10] { return "unknownRecipientKey" }
        if tampered[10..<18] != original[10..<18] { return "unknownSenderKey" }
        if !(now < expiresAt) { return "expired" }
        return "authenticationFailure"
    }
}

/// A minimal lock around a value.
final class Mutex<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
