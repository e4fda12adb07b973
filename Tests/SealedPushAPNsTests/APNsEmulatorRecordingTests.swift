import Foundation
import SealedPushAPNs
import SealedPushAPNsEmulator
import Testing

@Suite("Emulator recording over TLS")
struct APNsEmulatorRecordingTests {
    @Test func writesAcceptedBodiesToRecordDirectoryAndCertificateToPath() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-rec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificatePath = directory.appendingPathComponent("emulator.pem").path
        try await withFixture({ configuration in
            configuration.recordDirectory = directory.appendingPathComponent("records").path
            configuration.certificateOutputPath = certificatePath
        }) { fixture in
            // Trust the certificate through the file, as the CLI does.
            var configuration = fixture.clientConfiguration()
            configuration.trustRoots = .pemFile(certificatePath)
            let client = try fixture.makeClient(configuration)
            let notification = fixture.notification(7)
            #expect(await client.send(notification).result.isDelivered)
            // The emulator records before it answers, so the file exists once the client has its 200.
            let file = directory.appendingPathComponent("records").appendingPathComponent(notification.deviceToken.hex)
                .appendingPathComponent(notification.apnsID.uuidString.lowercased() + ".json")
            #expect(try Array(Data(contentsOf: file)) == APNsTestFixture.payload)
            await client.shutdown()
        }
    }

    @Test func clientTrustingAnotherCertificateCannotConnect() async throws {
        let other = try await APNsTestFixture.start()
        let otherPEM = other.emulator.certificatePEM
        await other.stop()
        try await withFixture { fixture in
            var configuration = fixture.clientConfiguration()
            configuration.trustRoots = .pem(otherPEM)
            configuration.deadline = .seconds(5)
            let client = try fixture.makeClient(configuration)
            let report = await client.send(fixture.notification(1))
            #expect(report.result.failure?.reason == .transportFailure)
            #expect(fixture.emulator.recorder.totalRequests == 0)
            await client.shutdown()
        }
    }
}
