import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer

/// Receipt figures (issue 20 §3): what the gateway pays to open one sealed receipt (`ReceiptOpener`, libsodium: the
/// same HPKE auth open as a notification's, in the other direction, over a fixed 256-byte record) against the open
/// benchmark's own figure (the device opening a notification envelope, swift-crypto) and the libsodium floor of an
/// open, measured in the same rounds. The receipts per second one core opens is `1e9 / ns`. The opener keeps each
/// device key's static DH value, so a device heard from before costs one scalar multiplication; "first receipt of a
/// device" is the same open with nothing kept (capacity 0), both scalar multiplications.
enum ReceiptBenchmark {
    static func run(_ report: Report, fixture: Fixture) throws {
        let (_, floor) = try fixture.comparisons()
        let (sealed, opener, now) = try fixture.sealedAndOpener()
        let ring = DeviceKeyRing.generate(now: now)
        let deviceKey = ring.keys[0]
        let sealer = try ReceiptSealer(
            keyStore: InMemoryKeyStore(keyRing: ring), serverPublicKeys: [fixture.identity.publicKey], topic: Fixture.topic)
        let receipt = try sealer.seal(
            DeliveryReceipt(messageID: sealed.messageID, outcome: .decrypted, deviceTime: now),
            deviceKeyID: deviceKey.keyID, serverKeyID: fixture.identity.keyID, now: now)
        let receiptOpener = try ReceiptOpener(identity: fixture.identity, topic: Fixture.topic)
        let coldOpener = try ReceiptOpener(identity: fixture.identity, topic: Fixture.topic, cacheCapacity: 0)
        let lookup: (KeyID) -> [UInt8]? = { $0 == deviceKey.keyID ? deviceKey.publicKey : nil }
        guard try receiptOpener.open(receipt, devicePublicKey: lookup, now: now).receipt.messageID == sealed.messageID else {
            throw SealedPushError(.authenticationFailure, "the benchmark's own receipt did not open")
        }

        let samples = try Runner.compare([
            Benchmark(name: "receipt") { count in
                var sink = 0
                for _ in 0..<count { sink &+= try receiptOpener.open(receipt, devicePublicKey: lookup, now: now).receiptID.count }
                return sink
            },
            Benchmark(name: "receipt-cold") { count in
                var sink = 0
                for _ in 0..<count { sink &+= try coldOpener.open(receipt, devicePublicKey: lookup, now: now).receiptID.count }
                return sink
            },
            OpenBenchmarks.envelope(opener, sealed, now: now),
            OpenBenchmarks.floor(floor),
        ])
        let t = Dictionary(uniqueKeysWithValues: samples.map { ($0.name, $0.median) })
        report.add(Row(figure: "receipt open at the gateway (354 B, libsodium)", ours: t["receipt"], comparison:
            "open, envelope → content (device, swift-crypto)", theirs: t["envelope"], ratio: .cost, target: nil))
        report.add(Row(figure: "receipt open at the gateway (354 B, libsodium)", ours: t["receipt"], comparison:
            "libsodium floor: 2 DH + 5 HMAC + AEAD", theirs: t["floor"], ratio: .cost, target: nil))
        report.add(Row(figure: "receipt open at the gateway (354 B, libsodium)", ours: t["receipt"], comparison:
            "first receipt of a device (static DH computed)", theirs: t["receipt-cold"], ratio: .cost, target: nil))
        if let ns = t["receipt"], ns > 0 {
            report.add(Row(figure: "receipts opened per second, one core", ours: 1e9 / ns, comparison: "-",
                theirs: nil, ratio: .throughput, target: nil, unit: "ops/s"))
        }
    }
}
