import Crypto
import Foundation
import SealedPushCore
import SealedPushServer

/// Bulk fan-out: one notification sealed for many devices (10,000 device keys, cache warm), in seals per second
/// of wall-clock time on one thread and on every core. One `Sealer` is shared by all threads, as in a server.
enum FanOut {
    static func run(_ report: Report, fixture: Fixture, seconds: Double) throws {
        let sealer = try Sealer(identity: fixture.identity, topic: Fixture.topic)
        let devices = try (0..<10_000).map { _ in
            try DevicePublicKey(rawRepresentation: Array(Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation))
        }
        for device in devices { _ = try sealer.seal(Fixture.content, to: device) }   // warm the static-DH cache

        func throughput(threads: Int) -> Double {
            let deadline = Clock.wallNanos() + UInt64(seconds * 1e9)
            let total = Mutex(0)
            let start = Clock.wallNanos()
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                var index = thread * 997
                var sealed = 0
                while Clock.wallNanos() < deadline {
                    for _ in 0..<32 {
                        _ = try? sealer.seal(Fixture.content, to: devices[index % devices.count])
                        index += 1
                    }
                    sealed += 32
                }
                total.withLock { $0 += sealed }
            }
            let elapsed = Double(Clock.wallNanos() - start) / 1e9
            return Double(total.withLock { $0 }) / elapsed
        }

        let cores = ProcessInfo.processInfo.activeProcessorCount
        let one = throughput(threads: 1)
        let all = throughput(threads: cores)
        var row = Row(figure: "bulk fan-out, 1 thread (10k devices)", ours: one, comparison:
            "—", theirs: nil, ratio: .speedup, target: nil)
        row.unit = "ops/s"
        report.add(row)
        row = Row(figure: "bulk fan-out, \(cores) threads (10k devices)", ours: all, comparison:
            "1 thread", theirs: one, ratio: .cost, target: nil)
        row.unit = "ops/s"
        report.add(row)
        report.note(String(format: "fan-out scaling %d threads / 1 thread = %.2f× (wall clock; the machine is shared, "
            + "so other processes' load lowers the multi-thread figure)", cores, all / one))
    }
}
