import Foundation
import NIOHPACK
import NIOPosix
import NIOSSL
import SealedPushAPNsEmulator
import SealedPushServer
import Testing

@testable import SealedPushAPNs

/// `apns-push-type` as APNs treats it: required for watchOS, recommended elsewhere, so a request without it is
/// accepted (and counted); an unknown value is rejected. Raw requests over the client's own TLS + HTTP/2
/// connection, since `APNsClient` always sends the header.
@Suite("Emulator push type")
struct APNsEmulatorPushTypeTests {
    @Test func acceptsAndCountsRequestsWithoutPushTypeAndRejectsUnknownOnes() async throws {
        try await withFixture { fixture in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.applicationProtocols = ["h2"]
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(fixture.emulator.certificatePEM.utf8)))
            let connection = try await APNsConnection.connect(
                id: 1, endpoint: APNsEndpoint(host: "127.0.0.1", port: fixture.emulator.port),
                sslContext: try NIOSSLContext(configuration: tls), group: MultiThreadedEventLoopGroup.singleton,
                timeout: .seconds(10), proxy: nil, logger: APNsTestFixture.quietLogger("raw"), events: { _ in })
            let issuer = try ProviderTokenIssuer(
                key: try APNsSigningKey(pemBytes: fixture.keyPEM), keyID: APNsTestFixture.keyID,
                teamID: APNsTestFixture.teamID)
            let authorization = try issuer.makeToken(issuedAt: Date()).authorizationHeader

            func send(_ number: Int, pushType: String?) async -> (status: Int?, body: String) {
                var headers = HPACKHeaders([
                    (":method", "POST"), (":scheme", "https"),
                    (":path", "/3/device/" + APNsTestFixture.deviceToken(number).hex), (":authority", "127.0.0.1"),
                    ("authorization", authorization), ("apns-topic", APNsTestFixture.topic),
                ])
                if let pushType { headers.add(name: "apns-push-type", value: pushType) }
                let outcome = await connection.execute(
                    APNsWireRequest(headers: headers, body: APNsTestFixture.payload), timeout: .seconds(10))
                guard case .response(let response) = outcome else { return (nil, "\(outcome)") }
                return (response.status, String(decoding: response.body, as: UTF8.self))
            }

            let without = await send(1, pushType: nil)
            #expect(without.status == 200, "\(without.body)")
            let alert = await send(2, pushType: "alert")
            #expect(alert.status == 200, "\(alert.body)")
            let unknown = await send(3, pushType: "loud")
            #expect(unknown.status == 400)
            #expect(unknown.body.contains("InvalidPushType"))
            let again = await send(4, pushType: nil)
            #expect(again.status == 200, "\(again.body)")

            let recorder = fixture.emulator.recorder
            #expect(recorder.totalRequests == 4)
            #expect(recorder.totalAccepted == 3)
            #expect(recorder.requestsWithoutPushType == 2)
            let recorded = recorder.notifications(for: APNsTestFixture.deviceToken(1).hex)
            #expect(recorded.count == 1)
            #expect(recorded.first?.pushType == nil)
            #expect(recorder.notifications(for: APNsTestFixture.deviceToken(2).hex).first?.pushType == "alert")
            connection.close()
        }
    }
}
