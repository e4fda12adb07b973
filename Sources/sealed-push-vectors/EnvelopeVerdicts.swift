import Foundation
import SealedPushClient
import SealedPushCore

/// `sealed-push-vectors envelope-verdicts TOPIC DEVICE_PRIVATE_HEX SERVER_PUBLIC IN OUT`: this library's verdict on
/// each APNs body, opened by the client's opener (swift-crypto) with one device key and one pinned server key, for
/// `scripts/differential-envelope.sh`, which compares it with the Java library's
/// (`org.sealedpush.tools.EnvelopeVerdicts`) on the same mutated bodies: two openers written from
/// `Specs/envelope-v1.md` §8, neither judged by the other's code.
///
/// IN holds one input per line: the receiver's `now` (UNIX seconds), a space, the body as lowercase hex. OUT gets one
/// line per input, in order: `OK <message id hex> <hex of the content's canonical JSON>` or `ERR <error code>`.
enum EnvelopeVerdicts {
    static func run(
        topic: String, devicePrivateKeyHex: String, serverPublicKey: String, input: String, output: String
    ) throws {
        let opener = try EnvelopeOpener(
            devicePrivateKeys: [try Hex.decode(devicePrivateKeyHex)],
            serverPublicKeys: [try KeyText.decodePublicKey(serverPublicKey)], topic: topic)
        try VerdictLines.run(input: input, output: output) { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 2, let now = UInt64(fields[0]) else {
                throw SealedPushError(.invalidArgument, "an input line is not \"NOW HEX\"")
            }
            let opened = try opener.open(body: try Hex.decode(String(fields[1])), now: now)
            return "OK " + Hex.encode(opened.messageID) + " " + Hex.encode(try opened.content.canonicalJSON())
        }
    }
}
