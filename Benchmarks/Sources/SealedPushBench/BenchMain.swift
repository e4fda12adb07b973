import Foundation

/// `sealed-push-bench [--quick] [--only primitives,seal,open,replay,receipt,blob,fanout,delivery,store,emulator,memory,tamper] [--cli PATH] [--tamper-envelopes N]`
///
/// Without `--only`, every section but `tamper` (the exhaustive bit-flip run, minutes long) runs.
///
/// Prints each figure beside its comparison as it is measured, then one Markdown table for BENCHMARKS.md.
@main
struct BenchMain {
    static func main() async throws {
        var arguments = CommandLine.arguments.dropFirst()
        var only: Set<String>?
        var quick = false
        var cliPath: String?
        var tamperEnvelopes = 1_000
        while let argument = arguments.popFirst() {
            switch argument {
            case "--quick": quick = true
            case "--only": only = Set((arguments.popFirst() ?? "").split(separator: ",").map(String.init))
            case "--cli": cliPath = arguments.popFirst()
            case "--profile":
                let name = arguments.popFirst() ?? ""
                try ProfileLoop.run(name, iterations: Int(arguments.popFirst() ?? "") ?? 1_000)
                return
            case "--tamper-envelopes": tamperEnvelopes = Int(arguments.popFirst() ?? "") ?? tamperEnvelopes
            default:
                print("usage: sealed-push-bench [--quick] [--only primitives,seal,open,replay,receipt,blob,fanout,delivery,store,emulator,memory,tamper] [--cli PATH] "
                    + "[--tamper-envelopes N]")
                exit(2)
            }
        }
        if quick {
            Runner.rounds = 5
            Runner.roundNanos = 10_000_000
        }
        func enabled(_ section: String) -> Bool { only?.contains(section) ?? true }

        let header = [
            "SealedPush benchmarks, \(ISO8601DateFormatter().string(from: Date())), release build",
            "Machine: \(Machine.summary)",
            "Single-thread figures: median of \(Runner.rounds) interleaved rounds of thread CPU time; "
                + "content: \(try Fixture.content.canonicalJSON().count) bytes of canonical JSON (256-byte bucket).",
        ]
        header.forEach { print($0) }
        let report = Report()
        let fixture = try Fixture()
        if enabled("primitives") { try PrimitiveBreakdown.run(report) }
        if enabled("seal") { try SealBenchmarks.run(report, fixture: fixture) }
        if enabled("open") { try OpenBenchmarks.run(report, fixture: fixture) }
        if enabled("replay") { try ReplayBenchmark.run(report, fixture: fixture, quick: quick) }
        if enabled("receipt") { try ReceiptBenchmark.run(report, fixture: fixture) }
        if enabled("blob") { try BlobBenchmarks.run(report) }
        if enabled("fanout") { try FanOut.run(report, fixture: fixture, seconds: quick ? 1 : 3) }
        if enabled("delivery") { try await DeliveryBenchmark.run(report, fixture: fixture, count: quick ? 5_000 : 20_000) }
        if enabled("store") {
            try await StoreBenchmark.run(report, fixture: fixture, batches: quick ? 200 : 1_000, rounds: quick ? 3 : 5)
        }
        if enabled("emulator") {
            try await EmulatorMemoryBenchmark.run(report, fixture: fixture, cliPath: cliPath, count: quick ? 50_000 : 200_000)
        }
        if enabled("memory") { try MemoryBenchmark.run(report, fixture: fixture, cliPath: cliPath) }
        // The exhaustive tamper run takes minutes: only on request.
        if only?.contains("tamper") == true {
            try TamperExhaustive.run(report, fixture: fixture, envelopes: tamperEnvelopes)
        }
        report.printTable(header: header)
        if report.rows.contains(where: { $0.verdict == "MISS" }) { print("\nSome targets were missed (MISS).") }
    }
}
