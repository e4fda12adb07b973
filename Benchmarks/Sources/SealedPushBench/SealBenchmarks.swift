import Crypto
import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer

/// Fixed inputs shared by the seal and open sections.
struct Fixture {
    static let topic = "com.example.chat"
    /// A typical chat notification: 170-odd bytes of canonical JSON, padded to the 256-byte bucket.
    static let content = NotificationContent(
        title: "Alice", body: "Lunch at 12:30? I booked the place by the river — bring the slides 📎",
        badge: 3, sound: "default", threadID: "chat-42", category: "MESSAGE")

    let serverKey = Curve25519.KeyAgreement.PrivateKey()
    let deviceKey = Curve25519.KeyAgreement.PrivateKey()
    let identity: ServerIdentity
    let device: DevicePublicKey
    let paddedPlaintext: [UInt8]

    init() throws {
        identity = try ServerIdentity(privateKey: Array(serverKey.rawRepresentation))
        device = try DevicePublicKey(rawRepresentation: Array(deviceKey.publicKey.rawRepresentation))
        paddedPlaintext = try Padding.pad(Fixture.content.canonicalJSON())
    }

    /// The two comparisons of the seal and open figures on this fixture's keys, `info` and padded plaintext:
    /// swift-crypto's HPKE auth mode and the libsodium primitive floor.
    /// A notification sealed now and the opener for it, checked to open to ``content`` (the open and replay sections).
    func sealedAndOpener() throws -> (sealed: SealedNotification, opener: EnvelopeOpener, now: UInt64) {
        let sealer = try Sealer(identity: identity, topic: Fixture.topic)
        let now = Sealer.currentTime()
        let sealed = try sealer.seal(Fixture.content, to: device, now: now)
        let opener = try EnvelopeOpener(
            devicePrivateKeys: [Array(deviceKey.rawRepresentation)], serverPublicKeys: [identity.publicKey],
            topic: Fixture.topic)
        guard try opener.open(body: sealed.payload, now: now).content == Fixture.content else {
            throw SealedPushError(.authenticationFailure, "the benchmark's own envelope did not open to its content")
        }
        return (sealed, opener, now)
    }

    func comparisons() throws -> (swiftCrypto: SwiftCryptoHPKE, floor: SodiumFloor) {
        let swiftCrypto = try SwiftCryptoHPKE(
            serverKey: serverKey, deviceKey: deviceKey, info: EnvelopeV1.hpkeInfo(topic: Fixture.topic),
            paddedPlaintext: paddedPlaintext)
        return (swiftCrypto, SodiumFloor(plaintextLength: paddedPlaintext.count))
    }
}

/// Seal figures: first seal (static-DH cache miss), repeat seal (cache hit) and the payload-build overhead, each
/// against swift-crypto's HPKE auth seal and the libsodium primitive floor, measured in the same rounds.
enum SealBenchmarks {
    static func run(_ report: Report, fixture: Fixture) throws {
        let (swiftCrypto, floor) = try fixture.comparisons()

        // Repeat seal: one device, the static DH value cached after the first call.
        let repeatSealer = try Sealer(identity: fixture.identity, topic: Fixture.topic)
        _ = try repeatSealer.seal(Fixture.content, to: fixture.device)
        // First seal: 4,096 devices cycled through a 1,024-entry cache, so every seal misses, computes the static
        // DH, inserts it and evicts (and zeroes) another entry — the real first-contact path.
        let missSealer = try Sealer(identity: fixture.identity, topic: Fixture.topic, cacheCapacity: 1024)
        let devices = try (0..<4096).map { _ in
            try DevicePublicKey(rawRepresentation: Array(Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation))
        }
        var next = 0
        let placeholderPrefix = APNsPayload.prefix(placeholder: .default)
        let sampleEnvelope = try repeatSealer.seal(Fixture.content, to: fixture.device).envelope

        let samples = try Runner.compare([
            Benchmark(name: "repeat") { count in
                var sink = 0
                for _ in 0..<count { sink &+= try repeatSealer.seal(Fixture.content, to: fixture.device).payload.count }
                return sink
            },
            Benchmark(name: "first") { count in
                var sink = 0
                for _ in 0..<count {
                    sink &+= try missSealer.seal(Fixture.content, to: devices[next]).payload.count
                    next = (next + 1) & 4095
                }
                return sink
            },
            Benchmark(name: "swift-crypto") { count in
                var sink = 0
                for _ in 0..<count { sink &+= try swiftCrypto.seal().ciphertext.count }
                return sink
            },
            floor.sealBenchmark("floor-repeat", staticDH: false, keyGeneration: .edwardsTable),
            floor.sealBenchmark("floor-repeat-ladder", staticDH: false, keyGeneration: .ladder),
            floor.sealBenchmark("floor-first", staticDH: true, keyGeneration: .edwardsTable),
            // The payload-build work around the HPKE seal, measured on its own: canonical JSON + padding before,
            // base64url + JSON body after.
            Benchmark(name: "content-to-padded") { count in
                var sink = 0
                for _ in 0..<count { sink &+= try Padding.pad(Fixture.content.canonicalJSON()).count }
                return sink
            },
            Benchmark(name: "envelope-to-body") { count in
                var sink = 0
                for _ in 0..<count {
                    sink &+= APNsPayload.encode(prefix: placeholderPrefix, envelope: sampleEnvelope).count
                }
                return sink
            },
        ])
        let t = Dictionary(uniqueKeysWithValues: samples.map { ($0.name, $0.median) })
        let bare = t["repeat"]! - t["content-to-padded"]! - t["envelope-to-body"]!

        report.add(Row(figure: "seal, first to a device (cache miss)", ours: t["first"], comparison:
            "swift-crypto HPKE auth seal", theirs: t["swift-crypto"], ratio: .speedup, target: nil))
        report.add(Row(figure: "seal, first to a device (cache miss)", ours: t["first"], comparison:
            "libsodium floor: table keygen + 2 DH + 5 HMAC + AEAD", theirs: t["floor-first"], ratio: .cost,
            target: nil))
        report.add(Row(figure: "seal, repeat (cached static DH)", ours: t["repeat"], comparison:
            "swift-crypto HPKE auth seal", theirs: t["swift-crypto"], ratio: .speedup, target: 1.4))
        report.add(Row(figure: "seal, repeat (cached static DH)", ours: t["repeat"], comparison:
            "libsodium floor: table keygen + 1 DH + 5 HMAC + AEAD", theirs: t["floor-repeat"], ratio: .cost,
            target: nil))
        report.add(Row(figure: "seal, repeat (cached static DH)", ours: t["repeat"], comparison:
            "libsodium floor with ladder keygen (crypto_scalarmult_base)", theirs: t["floor-repeat-ladder"],
            ratio: .speedup, target: nil))
        report.add(Row(figure: "full APNs payload build (content → body)", ours: t["repeat"], comparison:
            "bare seal (payload build − JSON/pad − base64/body)", theirs: bare, ratio: .cost, target: 1.1))
        report.note(String(format:
            "every `Sealer.seal` builds the whole body; its payload work measured alone: canonical JSON + padding "
            + "%.0f ns, base64url + body %.0f ns per notification", t["content-to-padded"]!, t["envelope-to-body"]!))
    }
}
