import Foundation
import SealedPushAPNs
import SealedPushAPNsEmulator
import Testing

/// GOAWAY, resets, idle closes and unanswered requests, over real TLS + HTTP/2 on loopback.
@Suite("APNs connection loss")
struct APNsConnectionLossTests {
    /// Sends `count` notifications in bulk and checks that each ended delivered and was accepted exactly once.
    static func sendAllExactlyOnce(
        _ fixture: APNsTestFixture, client: APNsClient, count: Int, maxConcurrent: Int
    ) async -> APNsBulkSummary {
        let notifications = (0..<count).map { fixture.notification($0) }
        let reports = Collector<APNsSendReport>()
        let summary = await client.send(notifications, maxConcurrent: maxConcurrent) { reports.append($0) }
        #expect(summary.total == count)
        #expect(summary.delivered == count)
        #expect(summary.failed == 0, "\(reports.all.compactMap { $0.result.failure }.prefix(3))")
        let byID = Dictionary(grouping: reports.all, by: \.apnsID)
        #expect(byID.count == count)  // exactly one report per notification
        let recorder = fixture.emulator.recorder
        var notOnce = 0
        for notification in notifications where recorder.acceptedCount(apnsID: notification.apnsID.uuidString) != 1 {
            notOnce += 1
        }
        #expect(notOnce == 0)
        #expect(recorder.totalAccepted == count)
        return summary
    }

    @Test func goAwayWithStreamsInFlightDeliversEachExactlyOnce() async throws {
        // Requests 0–9 are answered at once; 10–59 are held (slow); request 60 triggers GOAWAY, which drops the
        // 50 held streams unanswered and refuses everything after the last answered stream.
        var script: [EmulatorFault?] = Array(repeating: nil, count: 10)
        script += Array(repeating: EmulatorFault.slow(milliseconds: 2000), count: 50)
        script.append(.goAway)
        try await withFixture({ $0.faults = EmulatorFaultPlan(script: script) }) { fixture in
            let client = try fixture.makeClient()
            let summary = await Self.sendAllExactlyOnce(fixture, client: client, count: 300, maxConcurrent: 100)
            #expect(fixture.emulator.recorder.faultsInjected["GOAWAY"] == 1)
            #expect(client.statistics.goAwaysReceived >= 1)
            #expect(client.statistics.connectionsOpened >= 2)
            #expect(summary.retried >= 50)  // the held streams had to be resent
            #expect(fixture.emulator.recorder.totalRequests > 300)
            await client.shutdown()
        }
    }

    @Test func connectionResetWithStreamsInFlightDeliversEachExactlyOnce() async throws {
        var script: [EmulatorFault?] = Array(repeating: nil, count: 10)
        script += Array(repeating: EmulatorFault.slow(milliseconds: 2000), count: 30)
        script.append(.connectionReset)
        try await withFixture({ $0.faults = EmulatorFaultPlan(script: script) }) { fixture in
            let client = try fixture.makeClient()
            let summary = await Self.sendAllExactlyOnce(fixture, client: client, count: 200, maxConcurrent: 60)
            #expect(fixture.emulator.recorder.faultsInjected["connection reset"] == 1)
            #expect(summary.retried >= 30)
            #expect(summary.possibleDuplicates >= 1)  // lost in flight: the client cannot know they were not processed
            await client.shutdown()
        }
    }

    @Test func reconnectsAfterIdleClose() async throws {
        try await withFixture({ $0.idleTimeout = .milliseconds(100) }) { fixture in
            let client = try fixture.makeClient()
            #expect(await client.send(fixture.notification(1)).result.isDelivered)
            // Wait (bounded) until the emulator has closed the idle connection with GOAWAY.
            for _ in 0..<500 where client.statistics.goAwaysReceived == 0 {  // up to 10 s: a TSan run is slow
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(client.statistics.goAwaysReceived == 1)
            let report = await client.send(fixture.notification(2))
            #expect(report.result.isDelivered)
            #expect(report.attempts == 1)
            #expect(client.statistics.connectionsOpened == 2)
            #expect(fixture.emulator.recorder.connectionCount == 2)
            await client.shutdown()
        }
    }

    @Test func unansweredRequestEndsAtItsDeadlineWithTimeout() async throws {
        try await withFixture({ $0.faults = EmulatorFaultPlan(script: [nil, .noResponse]) }) { fixture in
            var configuration = fixture.clientConfiguration()
            // Generous, so the answered requests never time out on a loaded machine (or under TSan); the silent
            // one ends at exactly this timeout.
            configuration.requestTimeout = .seconds(4)
            let client = try fixture.makeClient(configuration)
            #expect(await client.send(fixture.notification(1)).result.isDelivered)
            let silent = fixture.notification(2)
            let report = await client.send(silent)
            #expect(report.result.failure?.reason == .timeout)
            #expect(report.result.failure?.status == nil)
            #expect(report.attempts == 1)  // not retried: it may have been delivered
            #expect(fixture.emulator.recorder.requestCount(apnsID: silent.apnsID.uuidString) == 1)
            #expect(fixture.emulator.recorder.acceptedCount(apnsID: silent.apnsID.uuidString) == 0)
            // A later send is delivered (on a new connection: nothing arrived on the old one while the silent request
            // waited, so it was retired).
            let after = await client.send(fixture.notification(3))
            #expect(after.result.isDelivered, "\(after.result)")
            await client.shutdown()
        }
    }

    /// Regression: a connection whose peer went away without closing it (here the emulator stops reading it) kept
    /// getting every later request, each ending in a timeout, until TCP itself gave up (minutes). A request that
    /// times out while its connection read nothing at all now retires the connection.
    @Test func aSilentConnectionIsRetiredAfterATimeoutAndTheNextSendUsesANewOne() async throws {
        try await withFixture({ $0.faults = EmulatorFaultPlan(script: [nil, .stallConnection]) }) { fixture in
            var configuration = fixture.clientConfiguration()
            configuration.requestTimeout = .seconds(2)  // generous: the answered requests never reach it
            let client = try fixture.makeClient(configuration)
            #expect(await client.send(fixture.notification(1)).result.isDelivered)
            let stalled = await client.send(fixture.notification(2))
            #expect(stalled.result.failure?.reason == .timeout)
            let after = await client.send(fixture.notification(3))
            #expect(after.result.isDelivered, "\(after.result)")
            #expect(client.statistics.connectionsOpened == 2)
            #expect(client.statistics.silentConnectionsRetired == 1)
            #expect(fixture.emulator.recorder.connectionCount == 2)
            await client.shutdown()
        }
    }

    @Test func unreachableEndpointFailsWithTransportFailureWithinBounds() async throws {
        // Bind an emulator to learn a free port, then stop it: nothing listens there any more.
        let fixture = try await APNsTestFixture.start()
        var configuration = fixture.clientConfiguration()
        await fixture.stop()
        configuration.deadline = .seconds(5)
        let client = try fixture.makeClient(configuration)
        let report = await client.send(fixture.notification(1))
        #expect(report.result.failure?.reason == .transportFailure)
        // Bounded: at most the policy's 4 attempts; on a loaded machine the 5 s deadline may end them sooner.
        #expect((1...4).contains(report.attempts), "\(report.attempts) attempts")
        await client.shutdown()
    }

    @Test func oneStreamUntilTheFirstTokenRequestSucceeds() async throws {
        // The first answer is slow: a client that opened more streams meanwhile would show them here.
        try await withFixture({ $0.faults = EmulatorFaultPlan(script: [.slow(milliseconds: 300)]) }) { fixture in
            let client = try fixture.makeClient()
            _ = await Self.sendAllExactlyOnce(fixture, client: client, count: 50, maxConcurrent: 50)
            #expect(fixture.emulator.recorder.streamsOpenBeforeFirstAnswer == [1])
            #expect(client.statistics.peakStreamsPerConnection > 1)  // and it opened up afterwards
            await client.shutdown()
        }
    }

    @Test func honoursTheServersConcurrentStreamLimit() async throws {
        try await withFixture({ configuration in
            configuration.maxConcurrentStreams = 3
            configuration.faults = EmulatorFaultPlan(random: [.init(.slow(milliseconds: 20), probability: 1)])
        }) { fixture in
            let client = try fixture.makeClient()
            _ = await Self.sendAllExactlyOnce(fixture, client: client, count: 40, maxConcurrent: 40)
            // 40 notifications were offered at once; the server allows 3 streams.
            #expect(client.statistics.peakStreamsPerConnection == 3)
            #expect(client.statistics.resends == 0)
            await client.shutdown()
        }
    }
}
