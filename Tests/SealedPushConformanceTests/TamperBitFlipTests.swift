import Foundation
import SealedPushClient
import SealedPushCore
import Testing

/// Issue 5: every single-bit flip of a sealed envelope is rejected with the error spec §8 names, and through the
/// extension step ends in the fallback placeholder with the matching reason.
///
/// Debug-build budget (an open that reaches the cryptography costs ~0.4 ms in a debug build): for each of the 1,000
/// envelopes, every header bit whose flip the receiver must reject before the cryptography (version, suite, key ids,
/// times made inconsistent or expired) is flipped; of the flips that reach HPKE (message id, enc, the remaining time
/// bits, the ciphertext and tag) a deterministic sample of 12 per envelope is flipped. The first 20 envelopes get
/// every header bit flipped. The exhaustive version — every bit of every envelope, 2.9 million opens — runs in
/// release as `swift run -c release --package-path Benchmarks sealed-push-bench --only tamper` (BENCHMARKS.md).
@Suite struct TamperBitFlipTests {
    static let chunks = 10
    static let exhaustiveHeaderEnvelopes = 20

    /// The bits flipped in envelope `index` (see the suite's documentation).
    static func flips(original: [UInt8], index: Int) -> [Int] {
        let headerBits = 82 * 8
        let bits = original.count * 8
        var chosen = [Int]()
        let sample = TamperFixture.bytes(seed: index, salt: 0xB17, count: 16)
        for bit in 0..<headerBits {
            let early = TamperFixture.expectedCode(tampered: original.flippingBit(bit), original: original)
                != .authenticationFailure
            if early || index < exhaustiveHeaderEnvelopes { chosen.append(bit) }
        }
        // Header bits that reach the cryptography: message id, enc and harmless time bits, 4 per envelope.
        for k in 0..<4 {
            let field = [18 * 8, 50 * 8, 41 * 8, 49 * 8][k]
            let width = [16 * 8, 32 * 8, 8, 8][k]   // the time fields' low bytes keep the envelope consistent
            chosen.append(field + (Int(sample[k]) * 7 + index) % width)
        }
        // Ciphertext: the first byte, the last byte before the tag, the first and last tag bytes, 4 spread bits.
        chosen += [headerBits + index % 8, bits - 136 + index % 8, bits - 128 + index % 8, bits - 8 + index % 8]
        for k in 0..<4 {
            let position = Int(sample[4 + 2 * k]) << 8 | Int(sample[5 + 2 * k])
            chosen.append(headerBits + position % (bits - headerBits))
        }
        return chosen
    }

    @Test func everyOriginalOpens() throws {
        let fixture = try TamperFixture.shared.get()
        for (index, envelope) in fixture.envelopes.enumerated() {
            let opened = try fixture.opener.open(envelope: envelope, now: TamperFixture.now)
            #expect(opened.content == fixture.contents[index])
        }
    }

    @Test(arguments: 0..<chunks)
    func everyFlipIsRejectedWithTheSpecError(chunk: Int) throws {
        let fixture = try TamperFixture.shared.get()
        let perChunk = TamperFixture.envelopeCount / Self.chunks
        var checked = 0
        var mismatches = [String]()
        for index in chunk * perChunk..<(chunk + 1) * perChunk {
            let original = fixture.envelopes[index]
            for bit in Self.flips(original: original, index: index) {
                let tampered = original.flippingBit(bit)
                let expected = TamperFixture.expectedCode(tampered: tampered, original: original).name
                let actual = fixture.outcome(opening: tampered)
                if actual != expected, mismatches.count < 10 {
                    mismatches.append("envelope \(index) bit \(bit) (byte \(bit / 8)): \(actual), expected \(expected)")
                }
                checked += 1
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
        #expect(checked > perChunk * 150, "every envelope has ~150 early-rejected header bits plus 12 sampled flips")
    }

    /// The same flips reach the extension step as APNs bodies: each request delivers the configured fallback
    /// placeholder exactly once with the reason matching the spec error: per envelope, one flip in each of two header
    /// fields (rotating through all eight) and one in the ciphertext, rotating through the bits.
    @Test(arguments: 0..<chunks)
    func everyFlipThroughTheExtensionStepEndsInThePlaceholder(chunk: Int) async throws {
        let fixture = try TamperFixture.shared.get()
        let fallback = Placeholder.text(title: "SealedPush", body: "You have a new message")
        let step = try fixture.extensionStep(fallback: fallback)
        let perChunk = TamperFixture.envelopeCount / Self.chunks
        var mismatches = [String]()
        var delivered = 0
        for index in chunk * perChunk..<(chunk + 1) * perChunk {
            let original = fixture.envelopes[index]
            // Field starts: version, suite, recipient id, sender id, message id, issuedAt, expiresAt, enc.
            let fields = [0, 1, 2, 10, 18, 34, 42, 50]
            var bits = [fields[index % 8] * 8 + index / 8 % 8, fields[(index + 3) % 8] * 8 + index / 8 % 8]
            let ciphertextBits = (original.count - 82) * 8
            bits.append(82 * 8 + (index * 131) % ciphertextBits)
            for bit in bits {
                let tampered = original.flippingBit(bit)
                let expected = TamperFixture.expectedReason(
                    TamperFixture.expectedCode(tampered: tampered, original: original))
                let body = APNsPayload.encode(placeholder: .default, envelope: tampered)
                let delivery = await Self.deliver(step, body)
                delivered += 1
                if delivery.content != .placeholder(fallback) || delivery.outcome != .fallback(expected),
                    mismatches.count < 10
                {
                    mismatches.append(
                        "envelope \(index) bit \(bit): \(delivery.outcome) \(delivery.content), expected \(expected)")
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
        #expect(delivered == perChunk * 3)
    }

    /// Sends one request through the step and waits for its single delivery; a second call of the handler is
    /// recorded as an issue.
    static func deliver(_ step: NotificationServiceStep, _ body: [UInt8]) async -> NotificationDelivery {
        let calls = CallCounter()
        return await withCheckedContinuation { continuation in
            step.didReceive(NotificationRequest(body: body)) { delivery in
                if calls.increment() == 1 {
                    continuation.resume(returning: delivery)
                } else {
                    Issue.record("the content handler ran more than once")
                }
            }
        }
    }
}

/// A thread-safe counter of handler calls.
final class CallCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func increment() -> Int {
        lock.withLock {
            count += 1
            return count
        }
    }
}
