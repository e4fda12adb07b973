import ArgumentParser
import SealedPushAPNsEmulator

/// Parses an emulator's `--fault-script`: comma-separated faults for the first requests, in order. `ok` (or `-`,
/// `none`) lets a request through; `reset` drops the connection; `silent` never answers; `stall` stops reading that
/// request's connection (it and all after it go unanswered, the connection left open); `slow:MS` answers after MS
/// milliseconds (0...600,000); other words are the emulator's own (`statuses`).
enum FaultScript {
    /// The longest script accepted.
    static let maximumEntries = 1_000_000

    /// - Parameters:
    ///   - text: The option's value (empty: no script).
    ///   - statuses: The emulator's own words and their faults (`"429"`, `"goaway"`, …).
    /// - Returns: One fault (or nil for `ok`) per entry.
    /// - Throws: `ValidationError` naming an unknown entry, or a script over ``maximumEntries``.
    static func parse(_ text: String, statuses: [String: EmulatorFault]) throws -> [EmulatorFault?] {
        guard !text.isEmpty else { return [] }
        let entries = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard entries.count <= maximumEntries else { throw ValidationError("--fault-script is too long") }
        return try entries.map { entry -> EmulatorFault? in
            switch entry {
            case "ok", "-", "none": return nil
            case "reset": return .connectionReset
            case "silent": return .noResponse
            case "stall": return .stallConnection
            default:
                if let fault = statuses[entry] { return fault }
                if entry.hasPrefix("slow:"), let milliseconds = Int(entry.dropFirst(5)),
                    (0...600_000).contains(milliseconds)
                {
                    return .slow(milliseconds: milliseconds)
                }
                throw ValidationError("unknown fault '\(entry)' in --fault-script")
            }
        }
    }
}
