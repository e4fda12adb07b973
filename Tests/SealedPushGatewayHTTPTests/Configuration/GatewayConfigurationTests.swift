import Foundation
import SealedPushGatewayHTTP
import Testing

/// The configuration file and its environment overrides, read from real files.
@Suite("Gateway configuration")
struct GatewayConfigurationTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-gw-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func write(_ json: String) throws -> String {
        let path = directory.appendingPathComponent("gateway.json").path
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func fileValuesWithRelativePathsResolved() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try write(
            #"{"database":"sqlite:db/gw.sqlite","listen":"0.0.0.0:9000","allowPlainHTTP":true,"maxBodyBytes":1000,"overflow":{"blobDirectory":"blobs","urlPrefix":"https://b.example/"},"metricsListen":"127.0.0.1:9464"}"#)
        let configuration = try GatewayConfiguration.load(path: path, environment: [:])
        #expect(configuration.database == "sqlite:" + directory.path + "/db/gw.sqlite")
        #expect(configuration.overflow?.blobDirectory == directory.path + "/blobs")
        let http = try configuration.httpConfiguration()
        #expect(http.host == "0.0.0.0")
        #expect(http.port == 9000)
        #expect(http.maxBodyBytes == 1000)
        #expect(configuration.logLevel == "info")
        #expect(configuration.metricsListen == "127.0.0.1:9464" && !http.metricsOnAPI)
    }

    /// An outside audit: a setting given twice took its last value without a word, a value of the wrong kind was
    /// "not valid JSON" without naming the setting, and a directory was "not readable (check its permissions)".
    @Test(arguments: [
        (#"{"database":"sqlite:a.sqlite","database":"sqlite:b.sqlite"}"#, "a duplicated member name"),
        (#"{"database":"sqlite:gw.sqlite","maxBodyBytes":1.5}"#, "setting \"maxBodyBytes\" is 1.5"),
        (#"{"database":"sqlite:gw.sqlite","delivery":{"leaseSeconds":"90"}}"#, "setting \"delivery.leaseSeconds\" must be a number"),
        (#"{"database":"sqlite:gw.sqlite","allowPlainHTTP":"yes"}"#, "setting \"allowPlainHTTP\" must be true or false"),
        (#"{"database":7}"#, "setting \"database\" must be a string"),
    ])
    func badValuesNameTheirSetting(json: String, expected: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try write(json)
        do {
            _ = try GatewayConfiguration.load(path: path, environment: [:])
            Issue.record("\(json) was accepted")
        } catch let error as GatewayConfigurationError {
            #expect(error.message.contains(expected), "\(error.message)")
            #expect(error.message.contains(path))
        }
    }

    @Test func aDirectoryIsNamedAsOne() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            _ = try GatewayConfiguration.load(path: directory.path, environment: [:])
            Issue.record("a directory was read")
        } catch let error as GatewayConfigurationError {
            #expect(error.message.contains("is a directory"), "\(error.message)")
        }
    }

    @Test func environmentOverridesTheFile() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try write(#"{"database":"sqlite:gw.sqlite"}"#)
        let configuration = try GatewayConfiguration.load(
            path: path,
            environment: [
                "SEALEDPUSH_GATEWAY_LISTEN": "127.0.0.1:0",
                "SEALEDPUSH_GATEWAY_DATABASE": "postgres://gw@db.internal:5432/gateway",
                "SEALEDPUSH_GATEWAY_MAX_BODY_BYTES": "4096",
                "SEALEDPUSH_GATEWAY_LOG_LEVEL": "debug",
                "SEALEDPUSH_GATEWAY_BLOB_DIR": "/var/blobs",
                "SEALEDPUSH_GATEWAY_BLOB_URL_PREFIX": "https://blobs.example/",
            ])
        #expect(configuration.listen == "127.0.0.1:0")
        #expect(configuration.database == "postgres://gw@db.internal:5432/gateway")
        #expect(configuration.maxBodyBytes == 4096)
        #expect(configuration.logLevel == "debug")
        #expect(configuration.overflow == .init(blobDirectory: "/var/blobs", urlPrefix: "https://blobs.example/"))
        // An empty variable is no override.
        let unchanged = try GatewayConfiguration.load(path: path, environment: ["SEALEDPUSH_GATEWAY_LISTEN": ""])
        #expect(unchanged.listen == "127.0.0.1:8080")
    }

    @Test func badSettingsAreNamed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try write(#"{"database":"sqlite:gw.sqlite"}"#)
        func message(_ environment: [String: String]) -> String? {
            do {
                _ = try GatewayConfiguration.load(path: path, environment: environment)
                return nil
            } catch let error as GatewayConfigurationError {
                return error.message
            } catch {
                return "\(error)"
            }
        }
        #expect(message(["SEALEDPUSH_GATEWAY_LISTEN": "8080"])?.contains("listen") == true)
        #expect(message(["SEALEDPUSH_GATEWAY_LISTEN": "127.0.0.1:99999"])?.contains("port 99999 is out of range") == true)
        #expect(message(["SEALEDPUSH_GATEWAY_LISTEN": "127.0.0.1:http"])?.contains("(got \"127.0.0.1:http\")") == true)
        #expect(message(["SEALEDPUSH_GATEWAY_MAX_BODY_BYTES": "-1"])?.contains("SEALEDPUSH_GATEWAY_MAX_BODY_BYTES") == true)
        #expect(message(["SEALEDPUSH_GATEWAY_DATABASE": "mysql://x"])?.contains("database") == true)
        #expect(message(["SEALEDPUSH_GATEWAY_LOG_LEVEL": "loud"])?.contains("logLevel") == true)
        #expect(message(["SEALEDPUSH_GATEWAY_BLOB_DIR": "/b"])?.contains("SEALEDPUSH_GATEWAY_BLOB_URL_PREFIX") == true)
        #expect(message([:]) == nil)
        #expect(message(["SEALEDPUSH_GATEWAY_LOG_FORMAT": "xml"])?.contains("logFormat must be text or json") == true)
        #expect(try GatewayConfiguration.load(path: path, environment: ["SEALEDPUSH_GATEWAY_LOG_FORMAT": "json"]).logFormat == "json")
        #expect(try GatewayConfiguration.load(path: path, environment: [:]).logFormat == "text")
        #expect(message(["SEALEDPUSH_GATEWAY_METRICS_LISTEN": "9464"])?.contains("metricsListen") == true)
        #expect(message(["SEALEDPUSH_GATEWAY_METRICS_LISTEN": "127.0.0.1:8080"])?.contains("metricsListen must differ from listen") == true)
        let moved = try GatewayConfiguration.load(path: path, environment: ["SEALEDPUSH_GATEWAY_METRICS_LISTEN": "10.0.0.5:9464"])
        #expect(try moved.metricsListenAddress()! == ("10.0.0.5", 9464))
        #expect(try moved.httpConfiguration().metricsOnAPI == false)
        #expect(try GatewayConfiguration.load(path: path, environment: [:]).httpConfiguration().metricsOnAPI)
        // A file that is not there is named as such.
        do {
            _ = try GatewayConfiguration.load(path: directory.appendingPathComponent("none.json").path, environment: [:])
            Issue.record("a missing configuration file was loaded")
        } catch let error as GatewayConfigurationError {
            #expect(error.message.hasSuffix("none.json: no such file"), "\(error.message)")
        }
        let missing = try write(#"{"listen":"127.0.0.1:1"}"#)
        #expect(throws: GatewayConfigurationError.self) { try GatewayConfiguration.load(path: missing, environment: [:]) }
    }

    /// Regression (issue 17, point 6): misspelled keys used to start `serve` with the defaults.
    @Test(arguments: [
        (#"{"database":"sqlite:gw.sqlite","maxBodyByte":1000}"#, "\"maxBodyByte\"", "\"maxBodyBytes\""),
        (#"{"database":"sqlite:gw.sqlite","delivery":{"leaseSecond":90}}"#, "\"delivery.leaseSecond\"", "\"delivery.leaseSeconds\""),
        (#"{"database":"sqlite:gw.sqlite","overflow":{"blobDirectory":"b","urlPrefix":"https://b.example/","fetchAllowedHost":["a.example"]}}"#,
            "\"overflow.fetchAllowedHost\"", "\"overflow.fetchAllowedHosts\""),
        (#"{"database":"sqlite:gw.sqlite","delivery":{"webhook":{"url":"https://h.example/","secretFile":"s","secretfiles":"t"}}}"#,
            "\"delivery.webhook.secretfiles\"", "\"delivery.webhook.secretFile\""),
        (#"{"database":"sqlite:gw.sqlite","Listen":"127.0.0.1:1"}"#, "\"Listen\"", "\"listen\""),
    ])
    func unknownKeysAreRefusedWithTheNearestKnownOne(json: String, key: String, nearest: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try write(json)
        do {
            _ = try GatewayConfiguration.load(path: path, environment: [:])
            Issue.record("\(key) was accepted")
        } catch let error as GatewayConfigurationError {
            #expect(error.message.contains("unknown setting \(key)"), "\(error.message)")
            #expect(error.message.contains("did you mean \(nearest)"), "\(error.message)")
        }
    }

    /// Issue 17, point 10 (first part): a plain-HTTP listener beyond loopback, or an http:// webhook, is refused
    /// unless `allowPlainHTTP` says so.
    @Test func plainHTTPBeyondLoopbackNeedsAllowPlainHTTP() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let exposed = try write(#"{"database":"sqlite:gw.sqlite","listen":"0.0.0.0:8080"}"#)
        #expect {
            try GatewayConfiguration.load(path: exposed, environment: [:])
        } throws: { error in
            (error as? GatewayConfigurationError)?.message.contains("allowPlainHTTP") == true
        }
        #expect(throws: GatewayConfigurationError.self) {
            try GatewayConfiguration.load(path: exposed, environment: ["SEALEDPUSH_GATEWAY_LISTEN": "10.0.0.5:80"])
        }
        let loopback = try GatewayConfiguration.load(
            path: exposed, environment: ["SEALEDPUSH_GATEWAY_LISTEN": "127.0.0.1:8080"])
        #expect(!loopback.plainHTTPBeyondLoopback)
        let allowed = try write(#"{"database":"sqlite:gw.sqlite","listen":"0.0.0.0:8080","allowPlainHTTP":true}"#)
        #expect(try GatewayConfiguration.load(path: allowed, environment: [:]).plainHTTPBeyondLoopback)
        let webhook = try write(
            #"{"database":"sqlite:gw.sqlite","delivery":{"webhook":{"url":"http://hooks.example/x","secretFile":"s"}}}"#)
        #expect {
            try GatewayConfiguration.load(path: webhook, environment: [:])
        } throws: { error in
            (error as? GatewayConfigurationError)?.message.contains("delivery.webhook.url must be https") == true
        }
    }

    /// Issue 17, point 10: with a `tls` section the API is HTTPS, so any address may be listened on without
    /// `allowPlainHTTP`; its paths resolve against the file's directory; its keys are checked like the others'; the
    /// environment gives both files or neither.
    @Test func tlsSectionAllowsAnyAddress() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try write(
            #"{"database":"sqlite:gw.sqlite","listen":"0.0.0.0:8443","tls":{"certificateFile":"tls/c.pem","keyFile":"/etc/k.pem"}}"#)
        let configuration = try GatewayConfiguration.load(path: path, environment: [:])
        #expect(configuration.tls?.certificateFile == directory.path + "/tls/c.pem")
        #expect(configuration.tls?.keyFile == "/etc/k.pem")
        #expect(!configuration.plainHTTPBeyondLoopback)

        let fromEnvironment = try GatewayConfiguration.load(
            path: try write(#"{"database":"sqlite:gw.sqlite","listen":"0.0.0.0:8443"}"#),
            environment: ["SEALEDPUSH_GATEWAY_TLS_CERTIFICATE": "/c.pem", "SEALEDPUSH_GATEWAY_TLS_KEY": "/k.pem"])
        #expect(fromEnvironment.tls == GatewayTLSSettings(certificateFile: "/c.pem", keyFile: "/k.pem"))
        #expect {
            try GatewayConfiguration.load(path: path, environment: ["SEALEDPUSH_GATEWAY_TLS_KEY": "/k.pem"])
        } throws: { error in
            (error as? GatewayConfigurationError)?.message.contains("SEALEDPUSH_GATEWAY_TLS_CERTIFICATE") == true
        }
        let misspelled = try write(#"{"database":"sqlite:gw.sqlite","tls":{"certificateFile":"c.pem","keyFiles":"k.pem"}}"#)
        #expect {
            try GatewayConfiguration.load(path: misspelled, environment: [:])
        } throws: { error in
            let message = (error as? GatewayConfigurationError)?.message ?? ""
            return message.contains("keyFiles") && message.contains("keyFile")
        }
    }
}
