import Foundation
import SealedPushGatewayHTTP
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The API certificate's validity dates and serial number (audit findings 6 and 12): a certificate expired or not
/// yet valid is refused at load and at reload (the previous one stays), and the serial number is printed as
/// `openssl x509 -serial` prints it.
@Suite("TLS certificate validity")
struct TLSCertificateValidityTests {
    /// A self-signed certificate with chosen dates and serial, made by `openssl ca` (the only way OpenSSL 3.0's
    /// tools set a `notBefore` other than now), and its key (0600).
    struct DatedCertificate {
        let certificate: String
        let key: String

        /// - Parameters:
        ///   - directory: Where the files go.
        ///   - name: Their base name.
        ///   - from: `notBefore`.
        ///   - until: `notAfter`.
        ///   - serial: The serial number, hex.
        static func make(
            in directory: URL, name: String, from: Date, until: Date, serial: String = "1A00050F"
        ) throws -> DatedCertificate {
            let work = directory.appendingPathComponent("ca-\(name)")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            try """
                [ ca ]
                default_ca = d
                [ d ]
                database = index.txt
                new_certs_dir = .
                serial = serial
                default_md = sha256
                policy = p
                unique_subject = no
                [ p ]
                commonName = supplied
                """.write(to: work.appendingPathComponent("ca.cnf"), atomically: true, encoding: .utf8)
            try "".write(to: work.appendingPathComponent("index.txt"), atomically: true, encoding: .utf8)
            try "\(serial)\n".write(to: work.appendingPathComponent("serial"), atomically: true, encoding: .utf8)
            let dates = DateFormatter()
            dates.locale = Locale(identifier: "en_US_POSIX")
            dates.timeZone = TimeZone(identifier: "UTC")
            dates.dateFormat = "yyyyMMddHHmmss'Z'"
            try openssl(
                ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "key.pem",
                 "-out", "req.csr", "-subj", "/CN=localhost"], in: work)
            try openssl(
                ["ca", "-batch", "-config", "ca.cnf", "-selfsign", "-keyfile", "key.pem", "-in", "req.csr", "-out",
                 "cert.pem", "-notext", "-startdate", dates.string(from: from), "-enddate", dates.string(from: until)],
                in: work)
            let certificate = directory.appendingPathComponent("\(name).crt").path
            let key = directory.appendingPathComponent("\(name).key").path
            try? FileManager.default.removeItem(atPath: certificate)
            try? FileManager.default.removeItem(atPath: key)
            try FileManager.default.copyItem(atPath: work.appendingPathComponent("cert.pem").path, toPath: certificate)
            try FileManager.default.copyItem(atPath: work.appendingPathComponent("key.pem").path, toPath: key)
            chmod(key, 0o600)
            return DatedCertificate(certificate: certificate, key: key)
        }

        private static func openssl(_ arguments: [String], in directory: URL) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = arguments
            process.currentDirectoryURL = directory
            process.standardOutput = FileHandle.nullDevice
            let err = Pipe()
            process.standardError = err
            try process.run()
            let message = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw TestFailure("openssl \(arguments.first ?? ""): \(String(decoding: message, as: UTF8.self))")
            }
        }
    }

    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sp-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static let day: TimeInterval = 86_400

    @Test func refusesAnExpiredCertificateNamingTheFileAndDates() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let expired = try DatedCertificate.make(
            in: directory, name: "expired", from: Date(timeIntervalSince1970: 1_577_836_800),  // 2020-01-01
            until: Date(timeIntervalSince1970: 1_580_515_200))  // 2020-02-01
        #expect {
            _ = try GatewayTLSContext(settings: GatewayTLSSettings(certificateFile: expired.certificate, keyFile: expired.key))
        } throws: { error in
            let text = "\(error)"
            return text.contains(expired.certificate) && text.contains("expired") && text.contains("2020-02-01")
        }
    }

    @Test func refusesACertificateNotYetValid() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let future = try DatedCertificate.make(
            in: directory, name: "future", from: Date().addingTimeInterval(10 * Self.day),
            until: Date().addingTimeInterval(100 * Self.day))
        #expect {
            _ = try GatewayTLSContext(settings: GatewayTLSSettings(certificateFile: future.certificate, keyFile: future.key))
        } throws: { error in
            "\(error)".contains(future.certificate) && "\(error)".contains("not valid before")
        }
    }

    @Test func reloadOfAnExpiredCertificateKeepsThePreviousOne() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = try DatedCertificate.make(
            in: directory, name: "good", from: Date().addingTimeInterval(-Self.day),
            until: Date().addingTimeInterval(60 * Self.day), serial: "0102")
        let expired = try DatedCertificate.make(
            in: directory, name: "expired", from: Date().addingTimeInterval(-10 * Self.day),
            until: Date().addingTimeInterval(-Self.day), serial: "0A0B")
        let served = GatewayTLSSettings(
            certificateFile: directory.appendingPathComponent("served.crt").path,
            keyFile: directory.appendingPathComponent("served.key").path)
        func install(_ files: DatedCertificate) throws {
            for (from, to) in [(files.certificate, served.certificateFile), (files.key, served.keyFile)] {
                try? FileManager.default.removeItem(atPath: to)
                try FileManager.default.copyItem(atPath: from, toPath: to)
                chmod(to, 0o600)
            }
        }
        try install(good)
        let context = try GatewayTLSContext(settings: served)
        let before = context.summary
        try install(expired)
        #expect {
            try context.reload()
        } throws: { error in
            "\(error)".contains(served.certificateFile) && "\(error)".contains("expired")
        }
        #expect(context.summary == before, "the expired certificate replaced the one in use")
    }

    /// `openssl x509 -serial` prints `1A00050F`; NIOSSL's own description prints each byte without zero padding
    /// (`1a05f`).
    @Test func serialNumberIsPrintedAsFullHex() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try DatedCertificate.make(
            in: directory, name: "serial", from: Date().addingTimeInterval(-Self.day),
            until: Date().addingTimeInterval(60 * Self.day), serial: "1A00050F")
        let context = try GatewayTLSContext(settings: GatewayTLSSettings(certificateFile: files.certificate, keyFile: files.key))
        let text = "\(context.summary)"
        #expect(text.contains("1A00050F"), "\(text)")
        #expect(!text.contains("1a05f"), "\(text)")
    }
}
