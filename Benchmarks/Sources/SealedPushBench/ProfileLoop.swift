import Crypto
import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer

/// `--profile NAME N`: runs one operation N times and nothing else, for `valgrind --tool=callgrind`.
/// NAME: `open-body`, `open-envelope`, `swift-crypto-open`, `seal-repeat`, `swift-crypto-seal`.
enum ProfileLoop {
    static func run(_ name: String, iterations: Int) throws {
        let fixture = try Fixture()
        let info = try EnvelopeV1.hpkeInfo(topic: Fixture.topic)
        let swiftCrypto = try SwiftCryptoHPKE(
            serverKey: fixture.serverKey, deviceKey: fixture.deviceKey, info: info,
            paddedPlaintext: fixture.paddedPlaintext)
        let sealer = try Sealer(identity: fixture.identity, topic: Fixture.topic)
        let now = Sealer.currentTime()
        let sealed = try sealer.seal(Fixture.content, to: fixture.device, now: now)
        let opener = try EnvelopeOpener(
            devicePrivateKeys: [Array(fixture.deviceKey.rawRepresentation)],
            serverPublicKeys: [fixture.identity.publicKey], topic: Fixture.topic)
        var sink = 0
        for _ in 0..<iterations {
            switch name {
            case "open-body": sink &+= try opener.open(body: sealed.payload, now: now).messageID.count
            case "open-envelope": sink &+= try opener.open(envelope: sealed.envelope, now: now).messageID.count
            case "swift-crypto-open": sink &+= try swiftCrypto.open().count
            case "seal-repeat": sink &+= try sealer.seal(Fixture.content, to: fixture.device, now: now).payload.count
            case "swift-crypto-seal": sink &+= try swiftCrypto.seal().ciphertext.count
            default: throw SealedPushError(.invalidArgument, "unknown profile \(name)")
            }
        }
        print("profiled \(iterations) × \(name) (\(sink))")
    }
}
