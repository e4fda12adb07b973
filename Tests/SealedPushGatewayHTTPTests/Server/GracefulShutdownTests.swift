import Foundation
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayTestSupport
import Testing

/// Graceful shutdown of the gateway's service group: a request in flight is finished, then the store is closed.
@Suite("Gateway HTTP: graceful shutdown", .serialized)
struct GracefulShutdownTests {
    @Test func aRequestInFlightIsFinishedThenTheStoreCloses() async throws {
        let (pings, pingStarted) = AsyncStream.makeStream(of: Void.self)
        let server = try await GatewayTestServer.start(.sqlite) { inner in
            // A ping that takes 700 ms (and says when it starts).
            HookedGatewayStore(inner: inner, beforePing: {
                pingStarted.yield()
                try await Task.sleep(for: .milliseconds(700))
            })
        }
        do {
            async let health = server.client.send("GET", "/healthz")
            for await _ in pings { break }  // the request is inside the handler, waiting for the store
            let stopping = Task { try await server.shutDown() }
            let answer = try await health
            #expect(answer.status == 200)
            #expect(answer.json["database"] as? String == "ok")
            try await stopping.value
            // The store was closed after the server stopped.
            await #expect(throws: (any Error).self) { try await server.store.ping() }
            // And nothing listens any more.
            await #expect(throws: (any Error).self) { _ = try await server.client.send("GET", "/healthz") }
            try await server.cleanUp()
        } catch {
            try? await server.stop()
            throw error
        }
    }
}
