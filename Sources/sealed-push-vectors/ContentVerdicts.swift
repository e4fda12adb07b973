import Foundation
import SealedPushCore

/// `sealed-push-vectors content-verdicts IN OUT`: this library's verdict on each content input, for
/// `scripts/differential-content.sh`, which compares it with the Java library's (`org.sealedpush.tools.ContentVerdicts`)
/// on the same mutated inputs: two implementations written from `Specs/envelope-v1.md` §4 and `Specs/control-v1.md`
/// §1–§2, neither judged by the other's code.
///
/// IN holds one input per line, as lowercase hex (content is any bytes). OUT gets one line per input, in order:
/// `OK <hex of the canonical JSON>` or `ERR <error code>`.
enum ContentVerdicts {
    static func run(input: String, output: String) throws {
        let text = try String(contentsOfFile: input, encoding: .utf8)
        var out = ""
        for line in text.utf8.split(separator: UInt8(ascii: "\n")) {
            let bytes = try Hex.decode(String(decoding: line, as: UTF8.self))
            do {
                out += "OK " + Hex.encode(try NotificationContent(json: bytes).canonicalJSON()) + "\n"
            } catch let error as SealedPushError {
                out += "ERR \(error.code.name)\n"
            }
        }
        try out.write(toFile: output, atomically: true, encoding: .utf8)
    }
}
