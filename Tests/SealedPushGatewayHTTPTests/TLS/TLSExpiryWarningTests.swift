import Foundation
import SealedPushGatewayHTTP
import SealedPushGatewayTestSupport
import Testing

/// A certificate that expires within ``GatewayTLSContext/expiryWarningDays`` is warned about at load and at each
/// reload (audit finding 6); the same judgement as `check`'s.
@Suite("TLS certificate expiry warning")
struct TLSExpiryWarningTests {
    typealias Dated = TLSCertificateValidityTests.DatedCertificate

    @Test func warnsAtLoadAndReloadWhenExpiringWithinFourteenDays() throws {
        let directory = try TLSCertificateValidityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let day = TLSCertificateValidityTests.day
        let soon = try Dated.make(
            in: directory, name: "soon", from: Date().addingTimeInterval(-day), until: Date().addingTimeInterval(5 * day))
        let logs = CapturedLogs()
        let context = try GatewayTLSContext(
            settings: GatewayTLSSettings(certificateFile: soon.certificate, keyFile: soon.key),
            logger: logs.logger(label: "tls"))
        #expect(logs.text.components(separatedBy: "TLS certificate expires soon").count - 1 == 1, "\(logs.text)")
        #expect(logs.text.contains(soon.certificate))
        try context.reload()
        #expect(logs.text.components(separatedBy: "TLS certificate expires soon").count - 1 == 2, "\(logs.text)")
        #expect(context.summary.daysLeft(at: Date()) == 4)
        #expect(context.summary.problem(at: Date()) == nil)
        #expect(context.summary.problem(at: Date().addingTimeInterval(6 * day))?.contains("expired") == true)
    }

    @Test func noWarningWithMonthsLeft() throws {
        let directory = try TLSCertificateValidityTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let day = TLSCertificateValidityTests.day
        let files = try Dated.make(
            in: directory, name: "fine", from: Date().addingTimeInterval(-day), until: Date().addingTimeInterval(90 * day))
        let logs = CapturedLogs()
        _ = try GatewayTLSContext(
            settings: GatewayTLSSettings(certificateFile: files.certificate, keyFile: files.key),
            logger: logs.logger(label: "tls"))
        #expect(!logs.text.contains("expires soon"), "\(logs.text)")
    }
}
