import Testing

@testable import SealedPushGatewayHTTP

/// `RecentlyRead`: a record read once is used for its lifetime without another read; `refresh` reads it again (a
/// receipt sealed to an identity the kept app record does not know yet); ids that find nothing are never kept.
@Suite struct RecentlyReadTests {
    final class Reads: @unchecked Sendable {
        var count = 0
    }

    @Test func keptWithinItsLifetimeAndReadAgainOnRefresh() async throws {
        let cache = RecentlyRead<String>(lifetime: .seconds(60))
        let reads = Reads()
        func read(_ value: String?) -> () async throws -> String? {
            { reads.count += 1; return value }
        }
        #expect(try await cache.record(id: "a", read: read("v1")) == "v1")
        #expect(try await cache.record(id: "a", read: read("other")) == "v1")
        #expect(reads.count == 1)
        // Refresh: read again and keep what the store says now.
        #expect(try await cache.record(id: "a", refresh: true, read: read("v2")) == "v2")
        #expect(try await cache.record(id: "a", read: read("other")) == "v2")
        #expect(reads.count == 2)
        // A refresh that finds nothing answers nothing and leaves the kept record.
        #expect(try await cache.record(id: "a", refresh: true, read: read(nil)) == nil)
        #expect(try await cache.record(id: "a", read: read("other")) == "v2")
        // Ids that find nothing are read every time.
        #expect(try await cache.record(id: "b", read: read(nil)) == nil)
        #expect(try await cache.record(id: "b", read: read("b1")) == "b1")
        #expect(reads.count == 5)
    }

    @Test func expiresAndStaysWithinItsCapacity() async throws {
        let short = RecentlyRead<Int>(lifetime: .milliseconds(1))
        #expect(try await short.record(id: "x", read: { 1 }) == 1)
        try await Task.sleep(for: .milliseconds(5))
        #expect(try await short.record(id: "x", read: { 2 }) == 2)
        let small = RecentlyRead<Int>(lifetime: .seconds(60), capacity: 2)
        for (index, id) in ["p", "q", "r"].enumerated() { _ = try await small.record(id: id, read: { index }) }
        // "r" started the memory over: "p" is read again.
        #expect(try await small.record(id: "p", read: { 9 }) == 9)
        #expect(try await small.record(id: "r", read: { 8 }) == 2)
    }

    /// Records kept together (a send's devices): only those kept and still within their lifetime are answered; a
    /// forgotten one is read again.
    @Test func keptTogetherAndForgotten() async throws {
        let cache = RecentlyRead<Int>(lifetime: .seconds(60))
        cache.keep(["a": 1, "b": 2], readAt: .now)
        cache.keep(["old": 3], readAt: .now - .seconds(61))
        #expect(cache.kept(ids: ["a", "b", "c", "old"]) == ["a": 1, "b": 2])
        cache.forget(id: "a")
        #expect(cache.kept(ids: ["a", "b"]) == ["b": 2])
        #expect(try await cache.record(id: "a", read: { 5 }) == 5)
        let small = RecentlyRead<Int>(lifetime: .seconds(60), capacity: 3)
        small.keep(["p": 1, "q": 2], readAt: .now)
        small.keep(["r": 3, "s": 4], readAt: .now)  // past the capacity: the memory starts over
        #expect(small.kept(ids: ["p", "q", "r", "s"]) == ["r": 3, "s": 4])
        small.keep(["w": 1, "x": 2, "y": 3, "z": 4], readAt: .now)  // more than it may hold: kept none
        #expect(small.kept(ids: ["r", "s", "w", "x", "y", "z"]) == ["r": 3, "s": 4])
    }
}
