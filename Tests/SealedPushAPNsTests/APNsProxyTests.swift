import Foundation
import Testing

import SealedPushAPNs
import SealedPushCore
import SealedPushProxyTestSupport

/// `APNsClientConfiguration.proxy`: the client reaches APNs (the emulator) through a real `CONNECT` proxy, with the
/// credentials the proxy asks for; a proxy that refuses fails the sends with its answer, never with the password.
@Suite struct APNsProxyTests {
    @Test func sendsGoThroughTheProxysTunnelWithItsCredentials() async throws {
        // The proxy checks the header RFC 7617 defines, computed here independently of the client.
        let expected = "Basic " + Data("gw-1:p@ss:word".utf8).base64EncodedString()
        let proxy = try await ConnectProxy(policy: .requireAuthorization(expected))
        try await withFixture { fixture in
            var configuration = fixture.clientConfiguration()
            configuration.proxy = try ProviderProxy(url: "http://gw-1:p%40ss%3Aword@127.0.0.1:\(proxy.port)")
            let client = try fixture.makeClient(configuration)
            for number in 1...3 {
                let report = await client.send(fixture.notification(number))
                #expect(report.result.isDelivered, "\(report.result)")
            }
            await client.shutdown()
            #expect(fixture.emulator.recorder.totalAccepted == 3)
            #expect(proxy.requests == [
                ConnectProxy.Request(
                    target: "127.0.0.1:\(fixture.emulator.port)", host: "127.0.0.1:\(fixture.emulator.port)",
                    authorization: expected, opened: true)
            ])
        }
        await proxy.stop()
    }

    @Test func aProxyThatRefusesFailsTheSendWithItsAnswer() async throws {
        let proxy = try await ConnectProxy(policy: .requireAuthorization("Basic none-will-do"))
        try await withFixture { fixture in
            var configuration = fixture.clientConfiguration()
            configuration.proxy = try ProviderProxy(url: "http://gw-1:hunter2@127.0.0.1:\(proxy.port)")
            configuration.deadline = .seconds(2)
            configuration.connectTimeout = .seconds(2)
            let client = try fixture.makeClient(configuration)
            let report = await client.send(fixture.notification(1))
            await client.shutdown()
            let text = "\(report.result) \(report.transientFailures)"
            #expect(!report.result.isDelivered)
            #expect(text.contains("407 Proxy Authentication Required"), "\(text)")
            #expect(text.contains("http://gw-1:…@127.0.0.1:\(proxy.port)"), "\(text)")
            #expect(!text.contains("hunter2"))
            #expect(fixture.emulator.recorder.totalRequests == 0)
            #expect(!proxy.requests.isEmpty && proxy.requests.allSatisfy { !$0.opened })
        }
        await proxy.stop()
    }

    @Test func aProxyThatNeverAnswersIsBoundedByTheConnectTimeout() async throws {
        let proxy = try await ConnectProxy(policy: .silent)
        try await withFixture { fixture in
            var configuration = fixture.clientConfiguration()
            configuration.proxy = try ProviderProxy(url: "http://127.0.0.1:\(proxy.port)")
            configuration.connectTimeout = .milliseconds(500)
            configuration.deadline = .seconds(2)
            let client = try fixture.makeClient(configuration)
            let started = ContinuousClock.now
            let report = await client.send(fixture.notification(1))
            let elapsed = ContinuousClock.now - started
            await client.shutdown()
            #expect(!report.result.isDelivered)
            #expect(elapsed < .seconds(5), "the deadline was not kept: \(elapsed)")
            #expect(fixture.emulator.recorder.totalRequests == 0)
        }
        await proxy.stop()
    }
}
