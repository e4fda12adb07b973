import Foundation
import SealedPushCore

/// `sealed-push-vectors content-verdicts IN OUT`: this library's verdict on each content input, for
/// `scripts/differential-content.sh`, which compares it with the Java library's (`org.sealedpush.tools.ContentVerdicts`)
/// on the same mutated inputs: two implementations written from `Specs/envelope-v1.md` §4 and `Specs/control-v1.md`
/// §1–§2, neither judged by the other's code.
///
/// IN holds one input per line, as lowercase hex (content is any bytes). OUT gets one line per input, in order:
/// `OK <hex of the canonical JSON>` followed by each attachment's verdict (blob-v1 §6.2, ``describe(_:)``, or
/// `err:<code>`), or `ERR <error code>`.
enum ContentVerdicts {
    static func run(input: String, output: String) throws {
        try VerdictLines.run(input: input, output: output) { line in
            let content = try NotificationContent(json: try Hex.decode(String(line)))
            var verdict = "OK " + Hex.encode(try content.canonicalJSON())
            for result in AttachmentDescriptor.parseAll(content.attachments ?? []) {
                switch result {
                case .success(let descriptor): verdict += " " + describe(descriptor)
                case .failure(let error): verdict += " err:\(error.code.name)"
                }
            }
            return verdict
        }
    }

    /// An accepted attachment (blob-v1 §6.2): `ok:` then url, key, size, media type, name (hex; `-` when absent) and
    /// its thumbnail the same way (`-` when none), separated by `:`.
    static func describe(_ descriptor: AttachmentDescriptor) -> String {
        let name = descriptor.name.map { Hex.encode(Array($0.utf8)) } ?? "-"
        let thumbnail = descriptor.thumbnail.map { "(" + describe($0) + ")" } ?? "-"
        return "ok:" + Hex.encode(Array(descriptor.blob.url.utf8)) + ":" + Hex.encode(descriptor.blob.key) + ":"
            + "\(descriptor.blob.size):\(descriptor.mediaType.mimeType):\(name):\(thumbnail)"
    }
}
