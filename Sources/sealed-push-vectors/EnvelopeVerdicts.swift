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
        let text = try String(contentsOfFile: input, encoding: .utf8)
        var out = ""
        for line in text.utf8.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            guard fields.count == 2, let now = UInt64(String(decoding: fields[0], as: UTF8.self)) else {
                throw SealedPushError(.invalidArgument, "an input line is not \"NOW HEX\"")
            }
            let body = try Hex.decode(String(decoding: fields[1], as: UTF8.self))
            do {
                let opened = try opener.open(body: body, now: now)
                out += "OK " + Hex.encode(opened.messageID) + " " + Hex.encode(try opened.content.canonicalJSON()) + "\n"
            } catch let error as SealedPushError {
                out += "ERR \(error.code.name)\n"
            }
        }
        try out.write(toFile: output, atomically: true, encoding: .utf8)
    }
}
