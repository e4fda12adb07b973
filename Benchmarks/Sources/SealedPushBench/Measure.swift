#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One benchmarked operation: a name and a body that performs the operation `count` times.
struct Benchmark {
    let name: String
    /// Runs the operation `count` times; the return value is folded into a sink so nothing is optimized away.
    let body: (Int) throws -> Int
}

/// Timing results of one benchmark: nanoseconds per operation for each round.
struct Sample {
    let name: String
    var nanosPerOp: [Double] = []

    /// The median of the rounds (robust against a noisy shared machine).
    var median: Double {
        let sorted = nanosPerOp.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// Operations per second at the median.
    var opsPerSecond: Double { 1e9 / median }
}

/// Timing primitives. Single-threaded figures use the calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), which
/// other processes on a shared machine do not inflate; multi-threaded throughput uses the monotonic wall clock.
enum Clock {
    static func threadCPUNanos() -> UInt64 { read(CLOCK_THREAD_CPUTIME_ID) }
    static func wallNanos() -> UInt64 { read(CLOCK_MONOTONIC) }
    /// Every thread's CPU time in this process (for work that hops threads, such as an async store's writer).
    static func processCPUNanos() -> UInt64 { read(CLOCK_PROCESS_CPUTIME_ID) }

    private static func read(_ clock: clockid_t) -> UInt64 {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}

/// Runs benchmarks round-robin (so drift on the machine hits all of them alike) and returns one sample each.
enum Runner {
    nonisolated(unsafe) static var sink = 0
    /// Target CPU time per round and benchmark.
    nonisolated(unsafe) static var roundNanos: UInt64 = 30_000_000
    nonisolated(unsafe) static var rounds = 11

    static func compare(_ benchmarks: [Benchmark]) throws -> [Sample] {
        // Calibrate: find an iteration count that takes about `roundNanos` for each benchmark (also warms up).
        var counts = [Int]()
        for benchmark in benchmarks {
            var count = 1
            while true {
                let start = Clock.threadCPUNanos()
                sink &+= try benchmark.body(count)
                let elapsed = Clock.threadCPUNanos() - start
                if elapsed >= roundNanos / 4 || count >= 1 << 24 {
                    counts.append(max(1, Int(Double(count) * Double(roundNanos) / Double(max(elapsed, 1)))))
                    break
                }
                count *= 4
            }
        }
        var samples = benchmarks.map { Sample(name: $0.name) }
        for _ in 0..<rounds {
            for (index, benchmark) in benchmarks.enumerated() {
                let count = counts[index]
                let start = Clock.threadCPUNanos()
                sink &+= try benchmark.body(count)
                let elapsed = Clock.threadCPUNanos() - start
                samples[index].nanosPerOp.append(Double(elapsed) / Double(count))
            }
        }
        return samples
    }
}
