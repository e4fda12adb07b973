import Foundation
import Testing

import SealedPushCore
import SealedPushFCM
import SealedPushProxyTestSupport

/// `FCMClientConfiguration.proxy`: the OAuth token and the message both go through a real `CONNECT` proxy; a proxy
/// that refuses the tunnel fails the send with its answer.
@Suite struct FCMProxyTests {
    @Test func theTokenAndTheMessageGoThroughTheProxy() async throws {
        let proxy = try await ConnectProxy()
        let fixture = try await FCMTestFixture.start()
        let client = try fixture.client { $0.proxy = try? ProviderProxy(url: "http://127.0.0.1:\(proxy.port)") }
        let result = await client.send(FCMTestFixture.message())
        #expect(result.isSuccess, "\(String(describing: result.failure))")
        #expect(fixture.emulator.recorder.accessTokensIssued == 1)
        #expect(fixture.emulator.recorder.messages(for: FCMTestFixture.token).count == 1)
        // The token endpoint is the emulator too: one tunnel carries both.
        #expect(proxy.requests.map(\.target) == ["127.0.0.1:\(fixture.emulator.port)"])
        #expect(proxy.requests.allSatisfy { $0.opened && $0.authorization == nil })
        await client.shutdown()
        await fixture.stop()
        await proxy.stop()
    }

    @Test func aRefusedTunnelFailsTheSendWithTheProxysAnswer() async throws {
        let proxy = try await ConnectProxy(policy: .refuse(status: 403))
        let fixture = try await FCMTestFixture.start()
        let client = try fixture.client {
            $0.proxy = try? ProviderProxy(url: "http://127.0.0.1:\(proxy.port)")
            $0.retry = FCMRetryPolicy(maxAttempts: 2, maxTotal: .seconds(5), initialBackoff: .milliseconds(20))
        }
        let result = await client.send(FCMTestFixture.message())
        #expect(!result.isSuccess)
        let text = "\(String(describing: result.failure))"
        #expect(text.contains("403"), "\(text)")
        #expect(text.contains("http://127.0.0.1:\(proxy.port)"), "\(text)")
        #expect(fixture.emulator.recorder.totalRequests == 0 && fixture.emulator.recorder.accessTokensIssued == 0)
        await client.shutdown()
        await fixture.stop()
        await proxy.stop()
    }
}
