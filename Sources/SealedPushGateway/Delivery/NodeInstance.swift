import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One running incarnation of a gateway node: the configured node id plus a random boot id drawn at each process
/// start, and where the process runs. It owns the leases it claims (``leaseOwner``) and keeps a heartbeat in the
/// store's `nodes` table while it runs.
///
/// At start a node compares itself with the instance the store holds for its node id (see
/// ``DeliveryService/start()``): the previous incarnation may be taken over when it stopped cleanly (no record),
/// when its heartbeat is older than ``DeliveryConfiguration/nodeStaleAfter``, or at once when it ran on this very
/// machine and its process is gone (``isProvablyGone``), which is what a `kill -9` and an immediate restart leave.
/// Any other live instance makes the start fail, naming it.
public struct NodeInstance: Sendable, Hashable {
    /// The configured node id (`delivery.nodeId`).
    public var nodeID: String
    /// Random, new at every process start.
    public var bootID: String
    /// The host name the process ran on.
    public var host: String
    /// The kernel's boot id (`/proc/sys/kernel/random/boot_id`) of that machine, empty when unknown: with the host
    /// name, it tells whether a recorded process ran on this machine since its last reboot.
    public var machineBootID: String
    /// The process id.
    public var pid: Int
    /// The process's start time in clock ticks since boot (`/proc/PID/stat` field 22), 0 when unknown: tells a
    /// live process from a later one that reuses its id.
    public var processStart: Int64
    /// When the process started.
    public var startedAt: Date
    /// The last heartbeat (as stored).
    public var heartbeatAt: Date

    /// Creates a record.
    public init(
        nodeID: String, bootID: String, host: String, machineBootID: String, pid: Int, processStart: Int64,
        startedAt: Date, heartbeatAt: Date
    ) {
        self.nodeID = nodeID
        self.bootID = bootID
        self.host = host
        self.machineBootID = machineBootID
        self.pid = pid
        self.processStart = processStart
        self.startedAt = startedAt
        self.heartbeatAt = heartbeatAt
    }

    /// The lease owner this incarnation writes on the jobs it claims: `nodeID/bootID`.
    public var leaseOwner: String { Self.leaseOwner(nodeID: nodeID, bootID: bootID) }

    /// `nodeID/bootID`.
    public static func leaseOwner(nodeID: String, bootID: String) -> String { nodeID + "/" + bootID }

    /// This process, as node `nodeID`, with a new random boot id.
    public static func current(nodeID: String, now: Date) -> NodeInstance {
        let pid = Int(ProcessInfo.processInfo.processIdentifier)
        return NodeInstance(
            nodeID: nodeID, bootID: randomBootID(), host: hostNameOfThisMachine(),
            machineBootID: machineBootIDOfThisMachine(), pid: pid, processStart: processStartTicks(pid: pid) ?? 0,
            startedAt: now, heartbeatAt: now)
    }

    /// True only when this record provably names a process that no longer runs: it ran on this machine (same host
    /// name and kernel boot id) and no process with its id and start time exists. False when it may still run,
    /// or ran elsewhere (then only its heartbeat's age tells).
    public var isProvablyGone: Bool {
        let here = Self.machineBootIDOfThisMachine()
        guard !machineBootID.isEmpty, machineBootID == here, host == Self.hostNameOfThisMachine() else {
            return false
        }
        guard let start = Self.processStartTicks(pid: pid) else { return true }  // no such process
        return processStart != 0 && start != processStart  // the id was reused by a later process
    }

    /// A readable name for logs and errors: `node gw-1 (boot 3f9c…, pid 4242 on host-a, started …)`.
    public var summary: String {
        "node \(nodeID) (boot \(bootID), pid \(pid) on \(host), started \(ISO8601DateFormatter().string(from: startedAt)))"
    }

    static func randomBootID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// `gethostname` (no name service lookup).
    static func hostNameOfThisMachine() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func machineBootIDOfThisMachine() -> String {
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else {
            return ""
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Field 22 of `/proc/PID/stat` (after the parenthesized command name, which may hold spaces), or nil when
    /// there is no such process (or no `/proc`).
    static func processStartTicks(pid: Int) -> Int64? {
        guard pid > 0, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); field 22 is fields[19].
        guard fields.count > 19 else { return nil }
        return Int64(fields[19])
    }
}
