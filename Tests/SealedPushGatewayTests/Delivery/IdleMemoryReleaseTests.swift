import Foundation
import Testing

@testable import SealedPushGateway

/// The delivery loop gives the heap's free pages back once delivery has been quiet for a second after work (the
/// 20,000 soak's end/half reading was 1.036–1.066 of a 1.05 bound with freed burst memory left in glibc's arenas).
@Suite("Idle memory release")
struct IdleMemoryReleaseTests {
    final class Count: @unchecked Sendable {
        var value = 0
    }

    @Test func trimsOnceAQuietPeriodAfterWorkAndNeverUnderLoad() {
        let trims = Count()
        var release = IdleMemoryRelease { trims.value += 1 }
        let start = ContinuousClock.now
        func at(_ ms: Int) -> ContinuousClock.Instant { start.advanced(by: .milliseconds(ms)) }

        // Idle from the start: nothing was freed by work, nothing to trim.
        for ms in stride(from: 0, through: 3_000, by: 250) { release.observe(idle: true, now: at(ms)) }
        #expect(trims.value == 0)

        // Work, then idle: no trim before the quiet period, one at it, none after while it stays idle.
        release.observe(idle: false, now: at(3_100))
        let first = release.observe(idle: true, now: at(3_200))
        let beforeQuietPeriod = release.observe(idle: true, now: at(4_100))
        let atQuietPeriod = release.observe(idle: true, now: at(4_200))
        #expect(!first && !beforeQuietPeriod && atQuietPeriod)
        for ms in stride(from: 4_400, through: 8_000, by: 250) { release.observe(idle: true, now: at(ms)) }
        #expect(trims.value == 1)

        // Work that keeps coming back within the quiet period: never trimmed under load.
        for ms in stride(from: 9_000, through: 20_000, by: 500) {
            release.observe(idle: false, now: at(ms))
            release.observe(idle: true, now: at(ms + 250))
        }
        #expect(trims.value == 1)
        // Then quiet: trimmed once more.
        release.observe(idle: true, now: at(21_300))
        #expect(trims.value == 2)
    }

    @Test func trimHeapGivesFreedHolesBack() throws {
        #if os(Linux)
        #expect(IdleMemoryRelease.canTrim)
        // 40,000 blocks of 1 KiB, touched; 39 of every 40 freed: holes the allocator keeps (they are not at the top
        // of the heap), about 38 MiB that only a trim returns.
        let blocks = (0..<40_000).map { _ -> UnsafeMutableRawPointer in
            let block = UnsafeMutableRawPointer.allocate(byteCount: 1_024, alignment: 16)
            block.initializeMemory(as: UInt8.self, repeating: 0xA5, count: 1_024)
            return block
        }
        var kept: [UnsafeMutableRawPointer] = []
        for (index, block) in blocks.enumerated() {
            if index % 40 == 39 { kept.append(block) } else { block.deallocate() }
        }
        defer { for block in kept { block.deallocate() } }
        let before = try Self.residentAnonymousKiB()
        IdleMemoryRelease.trimHeap()
        let after = try Self.residentAnonymousKiB()
        // At least 16 of the ~38 MiB back (other tests in this process allocate meanwhile).
        #expect(before - after >= 16 * 1_024, "RssAnon \(before) KiB before the trim, \(after) KiB after")
        #endif
    }

    /// `RssAnon` of this process, from /proc/self/status.
    static func residentAnonymousKiB() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("RssAnon:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }
}
