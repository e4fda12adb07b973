import Foundation

/// One line of the results table: a figure of ours beside one comparison, with the ratio and the target.
struct Row {
    enum Ratio {
        /// `theirs / ours` time: how many times faster we are (higher is better).
        case speedup
        /// `ours / theirs` time: how many times the comparison's cost we pay (lower is better).
        case cost
    }

    let figure: String
    let ours: Double?          // ns/op (or a plain value with `unit`)
    let comparison: String
    let theirs: Double?
    let ratio: Ratio
    /// The target ratio, if any: a minimum for `.speedup`, a maximum for `.cost`.
    let target: Double?
    var unit = "ns/op"

    var value: Double? {
        guard let ours, let theirs, ours > 0, theirs > 0 else { return nil }
        return ratio == .speedup ? theirs / ours : ours / theirs
    }

    var verdict: String {
        guard let target, let value else { return "" }
        switch ratio {
        case .speedup: return value >= target ? "PASS" : "MISS"
        case .cost: return value <= target ? "PASS" : "MISS"
        }
    }
}

/// Collects rows and prints them as one Markdown table (paste-ready for BENCHMARKS.md).
final class Report {
    private(set) var rows: [Row] = []
    private(set) var notes: [String] = []

    func add(_ row: Row) {
        rows.append(row)
        print("  " + Self.line(row), terminator: "\n")
        fflush(nil)
    }

    func note(_ text: String) {
        notes.append(text)
        print("  note: \(text)")
    }

    static func format(_ value: Double?, unit: String) -> String {
        guard let value, value.isFinite else { return "—" }
        switch unit {
        case "ns/op":
            return value >= 100_000 ? String(format: "%.1f µs", value / 1000) : String(format: "%.0f ns", value)
        case "ops/s":
            return value >= 10_000 ? String(format: "%.0f/s", value) : String(format: "%.1f/s", value)
        case "MB":
            return String(format: "%.1f MB", value)
        default:
            return String(format: "%.2f %@", value, unit)
        }
    }

    private static func ratioText(_ row: Row) -> String {
        guard let value = row.value else { return "—" }
        switch row.ratio {
        case .speedup: return String(format: "%.2f× faster", value)
        case .cost: return String(format: "%.2f× the cost", value)
        }
    }

    private static func targetText(_ row: Row) -> String {
        guard let target = row.target else { return "" }
        return (row.ratio == .speedup ? "≥ " : "≤ ") + String(format: "%.2f×", target)
    }

    private static func line(_ row: Row) -> String {
        "\(row.figure): \(format(row.ours, unit: row.unit)) vs \(row.comparison) \(format(row.theirs, unit: row.unit))"
            + " → \(ratioText(row)) \(targetText(row)) \(row.verdict)"
    }

    func printTable(header: [String]) {
        print("")
        for line in header { print(line) }
        print("")
        print("| figure | ours | comparison | theirs | ratio | target | |")
        print("|---|---:|---|---:|---:|---:|---|")
        for row in rows {
            let cells = [
                row.figure, Self.format(row.ours, unit: row.unit), row.comparison,
                Self.format(row.theirs, unit: row.unit), Self.ratioText(row), Self.targetText(row), row.verdict,
            ]
            print("| " + cells.joined(separator: " | ") + " |")
        }
        if !notes.isEmpty {
            print("")
            for note in notes { print("- \(note)") }
        }
    }
}
