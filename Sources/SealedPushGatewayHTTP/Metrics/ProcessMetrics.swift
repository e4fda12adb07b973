import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The standard process metrics of Prometheus' client-library guidelines (`process_cpu_seconds_total`,
/// `process_open_fds`, `process_max_fds`, `process_virtual_memory_bytes`, `process_resident_memory_bytes`,
/// `process_start_time_seconds`), read from `/proc` at each scrape, as the Go and Python clients do. Nothing on a
/// system without `/proc/self/stat`.
enum ProcessMetrics {
    /// The metrics in Prometheus text format 0.0.4, with their help and type lines; empty where `/proc` is missing.
    static func exposition() -> String {
        #if os(Linux)
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return "" }
        // The fields after the command's closing parenthesis, from field 3 (`state`) on.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        func field(_ number: Int) -> Double? { number - 3 < fields.count ? Double(fields[number - 3]) : nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
        var text = ""
        func add(_ name: String, _ type: String, _ help: String, _ value: Double?) {
            guard let value else { return }
            let number = value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(number)\n"
        }
        if ticks > 0, let user = field(14), let system = field(15) {
            add("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
                (user + system) / ticks)
        }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count).map(Double.init)
        add("process_open_fds", "gauge", "Number of open file descriptors.", descriptors)
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            add("process_max_fds", "gauge", "Maximum number of open file descriptors.", Double(limit.rlim_cur))
        }
        add("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", field(23))
        add("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", field(24).map { $0 * pageSize })
        if ticks > 0, let started = field(22), let boot = bootTime() {
            add("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
                boot + started / ticks)
        }
        return text
        #else
        return ""
        #endif
    }

    /// The system's boot time (UNIX seconds), from `/proc/stat`'s `btime`.
    private static func bootTime() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst("btime ".count))
        }
        return nil
    }
}
