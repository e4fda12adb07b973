import Foundation
import SealedPushAPNs
import SealedPushAPNsEmulator
import Testing

/// How the pool spreads requests over the connections it is allowed.
@Suite("APNs connection pool")
struct APNsConnectionPoolTests {
    /// `send --connections 4` with the default concurrency (100, far below one connection's 1,000 streams) must
    /// still use 4 connections, not open one and leave the rest unused.
    @Test func spreadsConcurrentSendsOverTheConfiguredConnections() async throws {
        try await withFixture { fixture in
            var configuration = fixture.clientConfiguration()
            configuration.maxConnections = 4
            let client = try fixture.makeClient(configuration)
            // Load opens the connections; on a loaded machine the last handshakes may finish after it, so wait
            // (bounded) for them before the second round. A pool that opens only what it needs stays at 1.
            let first = await client.send((0..<200).map { fixture.notification($0) }, maxConcurrent: 100)
            #expect(first.delivered == 200)
            for _ in 0..<200 where client.statistics.connectionsOpened < 4 {
                try await Task.sleep(for: .milliseconds(50))
            }
            let count = 400
            let summary = await client.send((0..<count).map { fixture.notification($0) }, maxConcurrent: 100)
            #expect(summary.delivered == count)
            #expect(client.statistics.connectionsOpened == 4)
            #expect(fixture.emulator.recorder.connectionCount == 4)
            #expect(client.statistics.connectionsUsed == 4)
            #expect(fixture.emulator.recorder.connectionsWithRequests == 4)
            await client.shutdown()
        }
    }
}
