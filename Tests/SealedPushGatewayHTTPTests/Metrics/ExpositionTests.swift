import Foundation
import Prometheus
import SealedPushGatewayHTTP
import Testing

@testable import SealedPushGateway

/// `/metrics` as Prometheus' instrumentation practices ask (ops audit, finding 11): a `# HELP` for every family, the
/// families whose label values are known in advance present at 0 before their first event, and the standard process
/// metrics of the client-library guidelines.
@Suite("Gateway HTTP: the metrics exposition")
struct ExpositionTests {
    /// Every family the gateway exposes has one `# HELP` line, right before its `# TYPE` line.
    @Test func everyFamilyHasHelp() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            _ = try await server.client.send("GET", "/healthz")
            let lines = try await server.client.send("GET", "/metrics").text.split(separator: "\n").map(String.init)
            let types = lines.indices.filter { lines[$0].hasPrefix("# TYPE ") }
            #expect(types.count >= 10, "\(types.count) families")
            for index in types {
                let name = lines[index].split(separator: " ")[2]
                #expect(index > 0 && lines[index - 1].hasPrefix("# HELP \(name) "), "no HELP before \(lines[index])")
                if index > 0, lines[index - 1].hasPrefix("# HELP \(name) ") {
                    #expect(lines[index - 1].count > "# HELP \(name) ".count + 10, "\(lines[index - 1])")
                }
            }
            #expect(lines.filter { $0.hasPrefix("# HELP ") }.count == types.count)
        }
    }

    /// A refused receipt's causes and a recorded receipt's usual outcomes are series at 0 before any receipt, so a
    /// rate over them is 0, not absent.
    @Test func knownSeriesStartAtZero() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let text = try await server.client.send("GET", "/metrics").text
            for cause in ["malformed", "unknownSender", "unknownServerKey", "notOpened", "replayed", "unknownMessage",
                          "limitReached", "rateLimited"]
            {
                #expect(text.contains("sealedpush_gateway_receipts_refused_total{cause=\"\(cause)\"} 0"), "\(cause)")
            }
            for outcome in ["decrypted", "duplicate"] {
                #expect(
                    text.contains("sealedpush_gateway_receipts_total{outcome=\"\(outcome)\",reason=\"none\"} 0")
                        || text.contains("sealedpush_gateway_receipts_total{reason=\"none\",outcome=\"\(outcome)\"} 0"),
                    "\(outcome)")
            }
            for what in ["notifications", "jobs"] {
                #expect(text.contains("sealedpush_gateway_withdrawn_total{what=\"\(what)\"} 0"), "\(what)")
            }
        }
    }

    /// The delivery workers' documented transient reasons are series at 0 before the first retry, on both platforms.
    @Test func retryReasonsStartAtZero() {
        let metrics = GatewayMetrics(registry: PrometheusCollectorRegistry())
        _ = DeliveryMetrics(factory: metrics.factory)
        let text = String(decoding: metrics.render(), as: UTF8.self)
        for (platform, reason) in [("apns", "TooManyRequests"), ("apns", "ConnectionLost"), ("fcm", "unavailable")] {
            #expect(
                text.contains("sealedpush_gateway_retries_total{platform=\"\(platform)\",reason=\"\(reason)\"} 0"),
                "\(platform) \(reason)")
        }
        #expect(text.contains("# HELP sealedpush_gateway_retries_total Provider requests that failed transiently"))
    }

    /// The standard process metrics: resident memory, open descriptors (about 400 more after opening 400 files: the
    /// test process's other suites open and close some meanwhile), their limit, CPU seconds and the start time, against
    /// what the kernel reports independently.
    @Test func processMetrics() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            let first = try await server.client.send("GET", "/metrics").text
            let opened = (0..<400).map { _ in open("/dev/null", O_RDONLY) }
            defer { for fd in opened where fd >= 0 { close(fd) } }
            let second = try await server.client.send("GET", "/metrics").text
            let fds = try #require(OperationsTests.value("process_open_fds", in: first))
            let more = try #require(OperationsTests.value("process_open_fds", in: second))
            #expect(opened.allSatisfy { $0 >= 0 })
            #expect(more - fds >= 300 && more - fds <= 500, "\(fds) → \(more)")
            let limit = try #require(OperationsTests.value("process_max_fds", in: second))
            var rlim = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &rlim)
            #expect(limit == Double(rlim.rlim_cur))
            let rss = try #require(OperationsTests.value("process_resident_memory_bytes", in: second))
            let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
            let vmRSS = try #require(
                status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
                    .flatMap { Double($0.split(separator: " ", omittingEmptySubsequences: true)[1]) })
            #expect(rss > vmRSS * 1024 * 0.5 && rss < vmRSS * 1024 * 2, "\(rss) against VmRSS \(vmRSS) kB")
            let cpu = try #require(OperationsTests.value("process_cpu_seconds_total", in: second))
            var usage = rusage()
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
            let used = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
                + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
            #expect(cpu > 0 && cpu <= used + 0.05, "\(cpu) against getrusage \(used)")
            let start = try #require(OperationsTests.value("process_start_time_seconds", in: second))
            let now = Date().timeIntervalSince1970
            #expect(start <= now && start > now - 3 * 3600, "\(start)")
        }
    }
}
