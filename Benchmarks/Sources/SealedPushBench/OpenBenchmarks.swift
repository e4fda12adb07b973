import Crypto
import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer

/// Open figures: ours (APNs body → content, and envelope → content) against swift-crypto's HPKE auth open of the
/// same ciphertext, and the libsodium primitive floor of an open.
enum OpenBenchmarks {
    static func run(_ report: Report, fixture: Fixture) throws {
        let (swiftCrypto, floor) = try fixture.comparisons()
        let (sealed, opener, now) = try fixture.sealedAndOpener()

        let samples = try Runner.compare([
            Benchmark(name: "body") { count in
                var sink = 0
                for _ in 0..<count { sink &+= try opener.open(body: sealed.payload, now: now).messageID.count }
                return sink
            },
            Self.envelope(opener, sealed, now: now),
            Benchmark(name: "swift-crypto") { count in
                var sink = 0
                for _ in 0..<count { sink &+= try swiftCrypto.open().count }
                return sink
            },
            Self.floor(floor),
        ])
        let t = Dictionary(uniqueKeysWithValues: samples.map { ($0.name, $0.median) })
        report.add(Row(figure: "open, APNs body → content", ours: t["body"], comparison:
            "swift-crypto HPKE auth open", theirs: t["swift-crypto"], ratio: .cost, target: 1.1))
        report.add(Row(figure: "open, envelope → content", ours: t["envelope"], comparison:
            "swift-crypto HPKE auth open", theirs: t["swift-crypto"], ratio: .cost, target: nil))
        report.add(Row(figure: "open, APNs body → content", ours: t["body"], comparison:
            "libsodium floor: 2 DH + 5 HMAC + AEAD", theirs: t["floor"], ratio: .cost, target: nil))
    }

    /// The device's envelope open (swift-crypto), named `envelope` (the receipt section compares with it too).
    static func envelope(_ opener: EnvelopeOpener, _ sealed: SealedNotification, now: UInt64) -> Benchmark {
        Benchmark(name: "envelope") { count in
            var sink = 0
            for _ in 0..<count { sink &+= try opener.open(envelope: sealed.envelope, now: now).messageID.count }
            return sink
        }
    }

    /// The libsodium floor of one open, named `floor`.
    static func floor(_ floor: SodiumFloor) -> Benchmark {
        Benchmark(name: "floor") { count in
            var sink = 0
            for _ in 0..<count { sink &+= floor.openPrimitives() }
            return sink
        }
    }
}
