import Foundation
import SealedPushCore

/// The line files of the differential tools (``ContentVerdicts``, ``EnvelopeVerdicts``).
enum VerdictLines {
    /// Writes to `output` one verdict per line of `input`, in order: what `judge` returns, or `ERR <code>` for the
    /// `SealedPushError` it throws (any other error stops the tool).
    static func run(input: String, output: String, _ judge: (Substring) throws -> String) throws {
        let text = try String(contentsOfFile: input, encoding: .utf8)
        var out = ""
        for line in text.split(separator: "\n") {
            do {
                out += try judge(line) + "\n"
            } catch let error as SealedPushError {
                out += "ERR \(error.code.name)\n"
            }
        }
        try out.write(toFile: output, atomically: true, encoding: .utf8)
    }
}
