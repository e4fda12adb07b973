import Foundation
import SealedPushAPNs
import SealedPushAPNsEmulator
import Testing

@Suite("APNs bulk with faults")
struct APNsBulkFaultTests {
    /// 64 in flight over 2 connections: NIOHTTP2 scans its per-stream table linearly below 200 streams, which is
    /// slow in debug builds; this keeps the run to tens of seconds on 2 cores while streams are still in flight at
    /// every GOAWAY and reset.
    @Test func tenThousandSendsWithTenPercentFaultsLoseAndDuplicateNothing() async throws {
        let faults = EmulatorFaultPlan(
            random: [
                .init(.tooManyRequests, probability: 0.03),
                .init(.internalServerError, probability: 0.02),
                .init(.serviceUnavailable, probability: 0.02),
                .init(.slow(milliseconds: 20), probability: 0.024),
                .init(.connectionReset, probability: 0.003),
                .init(.goAway, probability: 0.003),
            ], seed: 20_261_121)
        #expect(abs(faults.totalProbability - 0.10) < 1e-9)
        try await withFixture({ $0.faults = faults }) { fixture in
            var configuration = fixture.clientConfiguration()
            configuration.maxConnections = 2
            configuration.retry = APNsRetryPolicy(
                maxAttempts: 20, initialBackoff: .milliseconds(2), maxBackoff: .milliseconds(40))
            configuration.deadline = .seconds(120)
            let client = try fixture.makeClient(configuration)
            let count = 10_000
            let reports = Collector<APNsSendReport>()
            let summary = await client.sendBulk(
                to: (0..<count).lazy.map { APNsTestFixture.deviceToken($0) },
                template: APNsNotificationTemplate(topic: APNsTestFixture.topic), maxConcurrent: 64,
                payload: { _ in APNsTestFixture.payload }, onReport: { reports.append($0) })

            // Every result accounted for, none lost.
            #expect(summary.total == count)
            #expect(summary.delivered == count)
            #expect(summary.failedByReason.isEmpty)
            let all = reports.all
            #expect(all.count == count)
            #expect(Set(all.map(\.apnsID)).count == count)
            #expect(Set(all.map(\.deviceToken)).count == count)

            // None duplicated: the emulator accepted each apns-id exactly once, and nothing else.
            let recorder = fixture.emulator.recorder
            let accepted = recorder.acceptedCounts
            #expect(accepted.count == count)
            #expect(accepted.values.allSatisfy { $0 == 1 })
            #expect(Set(accepted.keys) == Set(all.map { $0.apnsID.uuidString.lowercased() }))

            // Faults really happened and were retried.
            let injected = recorder.faultsInjected.values.reduce(0, +)
            #expect(injected > 900)
            #expect(recorder.totalRequests > count)
            #expect(summary.retried > 500)
            await client.shutdown()
        }
    }
}
