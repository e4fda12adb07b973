import Foundation
import SealedPushCore
import SealedPushServer
import Testing

@testable import SealedPushAPNsEmulator

/// Apple's request rules as the emulator applies them, with tokens signed by the OpenSSL provider code and
/// verified by the emulator's swift-crypto code.
@Suite("Emulator rules")
struct EmulatorRulesTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let token = String(repeating: "ab", count: 32)
    static let gone = String(repeating: "cd", count: 32)
    static let goneSince = Date(timeIntervalSince1970: 1_790_000_000.5)

    let keyPEM: [UInt8]
    let issuer: ProviderTokenIssuer
    let validator: EmulatorRequestValidator
    /// One token for all requests of a test: a second token within 20 minutes would be answered 429.
    let authorization: String
    /// One connection's token state.
    let session = EmulatorTokenSession()

    init() throws {
        keyPEM = try APNsKeyGenerator.generatePEM()
        issuer = try ProviderTokenIssuer(
            key: try APNsSigningKey(pemBytes: keyPEM), keyID: "ABC123DEFG", teamID: "TEAM123456")
        authorization = try issuer.makeToken(issuedAt: Self.now).authorizationHeader
        var configuration = APNsEmulatorConfiguration(
            authKeyPEM: String(decoding: keyPEM, as: UTF8.self), keyID: "ABC123DEFG", teamID: "TEAM123456")
        configuration.unregisteredDeviceTokens = [Self.gone: Self.goneSince]
        configuration.clock = { Self.now }
        validator = EmulatorRequestValidator(
            configuration: configuration, tokens: try EmulatorTokenVerifier(configuration: configuration))
    }

    func request(
        method: String = "POST", path: String = "/3/device/" + EmulatorRulesTests.token,
        authorization: String?? = nil, body: [UInt8] = Array(#"{"aps":{"alert":"hi"}}"#.utf8),
        change: (inout [String: String]) -> Void = { _ in }
    ) throws -> EmulatorRequest {
        var headers = ["apns-topic": "com.example.app", "apns-push-type": "alert", "apns-priority": "10"]
        switch authorization {
        case .none: headers["authorization"] = self.authorization
        case .some(.some(let value)): headers["authorization"] = value
        case .some(.none): break
        }
        change(&headers)
        return EmulatorRequest(method: method, path: path, headers: headers, body: body, bodyTooLarge: false)
    }

    func reason(_ request: EmulatorRequest) -> String {
        switch validator.validate(request, apnsID: "id", session: session) {
        case .accept: return "200"
        case .reject(let status, let reason, _): return "\(status) \(reason)"
        }
    }

    @Test func acceptsAValidRequest() throws {
        guard case .accept(let record) = validator.validate(try request(), apnsID: "x", session: session) else {
            Issue.record("valid request rejected")
            return
        }
        #expect(record.deviceToken == Self.token)
        #expect(record.topic == "com.example.app")
        #expect(record.priority == 10)
    }

    @Test func methodAndPath() throws {
        #expect(reason(try request(method: "GET")) == "405 MethodNotAllowed")
        #expect(reason(try request(path: "/3/devices/" + Self.token)) == "404 BadPath")
        #expect(reason(try request(path: "/3/device/")) == "404 BadPath")
        #expect(reason(try request(path: "/3/device/" + Self.token + "/x")) == "404 BadPath")
    }

    @Test func deviceTokenFormat() throws {
        #expect(reason(try request(path: "/3/device/" + String(repeating: "a", count: 62))) == "400 BadDeviceToken")
        #expect(reason(try request(path: "/3/device/" + String(repeating: "a", count: 65))) == "400 BadDeviceToken")
        #expect(reason(try request(path: "/3/device/" + String(repeating: "z", count: 64))) == "400 BadDeviceToken")
        #expect(reason(try request(path: "/3/device/" + String(repeating: "A", count: 200))) == "200")
        #expect(reason(try request(path: "/3/device/" + String(repeating: "a", count: 202))) == "400 BadDeviceToken")
    }

    @Test func headers() throws {
        #expect(reason(try request { $0["apns-topic"] = nil }) == "400 MissingTopic")
        #expect(reason(try request { $0["apns-push-type"] = "loud" }) == "400 InvalidPushType")
        #expect(reason(try request { $0["apns-push-type"] = "" }) == "400 InvalidPushType")
        #expect(reason(try request { $0["apns-priority"] = "7" }) == "400 BadPriority")
        #expect(reason(try request { $0["apns-expiration"] = "soon" }) == "400 BadExpirationDate")
        #expect(
            reason(try request { $0["apns-collapse-id"] = String(repeating: "c", count: 65) }) == "400 BadCollapseId")
        #expect(reason(try request { $0["apns-collapse-id"] = String(repeating: "c", count: 64) }) == "200")
    }

    /// Apple documents `apns-push-type` as required for watchOS and recommended elsewhere; APNs accepts a request
    /// without it (aioapns sends none), so the emulator must too.
    @Test func acceptsARequestWithoutPushType() throws {
        #expect(reason(try request { $0["apns-push-type"] = nil }) == "200")
    }

    @Test func bodies() throws {
        #expect(reason(try request(body: [])) == "400 PayloadEmpty")
        #expect(reason(try request(body: Array("{not json".utf8))) == "400 BadPayload")
        #expect(reason(try request(body: Array("[1]".utf8))) == "400 BadPayload")
        let exact = Array(#"{"a":""#.utf8) + [UInt8](repeating: 0x61, count: 4088) + Array(#""}"#.utf8)
        #expect(exact.count == 4096)
        #expect(reason(try request(body: exact)) == "200")
        let over = Array(#"{"a":""#.utf8) + [UInt8](repeating: 0x61, count: 4089) + Array(#""}"#.utf8)
        #expect(reason(try request(body: over)) == "413 PayloadTooLarge")
        var truncated = try request()
        truncated.bodyTooLarge = true
        #expect(reason(truncated) == "413 PayloadTooLarge")
    }

    @Test func unregisteredCarriesTimestamp() throws {
        let verdict = validator.validate(try request(path: "/3/device/" + Self.gone), apnsID: "x", session: session)
        #expect(verdict == .reject(status: 410, reason: "Unregistered", timestamp: Self.goneSince))
    }

    @Test func providerTokens() throws {
        #expect(reason(try request(authorization: .some(nil))) == "403 MissingProviderToken")
        #expect(reason(try request(authorization: "bearer abc.def.ghi")) == "403 InvalidProviderToken")
        #expect(reason(try request(authorization: "basic xyz")) == "403 InvalidProviderToken")

        let otherKey = try APNsSigningKey(pemBytes: try APNsKeyGenerator.generatePEM())
        let forged = try ProviderTokenIssuer(key: otherKey, keyID: "ABC123DEFG", teamID: "TEAM123456")
        #expect(
            reason(try request(authorization: try forged.makeToken(issuedAt: Self.now).authorizationHeader))
                == "403 InvalidProviderToken")
        let otherTeam = try ProviderTokenIssuer(key: issuer.key, keyID: "ABC123DEFG", teamID: "TEAM000000")
        #expect(
            reason(try request(authorization: try otherTeam.makeToken(issuedAt: Self.now).authorizationHeader))
                == "403 InvalidProviderToken")
        let otherKid = try ProviderTokenIssuer(key: issuer.key, keyID: "ABC123DEFX", teamID: "TEAM123456")
        #expect(
            reason(try request(authorization: try otherKid.makeToken(issuedAt: Self.now).authorizationHeader))
                == "403 InvalidProviderToken")

        // A tampered claim: swap the claims of a valid token.
        let valid = try issuer.makeToken(issuedAt: Self.now).jwt.split(separator: ".")
        let other = try issuer.makeToken(issuedAt: Self.now.addingTimeInterval(-100)).jwt.split(separator: ".")
        #expect(
            reason(try request(authorization: "bearer \(valid[0]).\(other[1]).\(valid[2])"))
                == "403 InvalidProviderToken")

        let stale = try issuer.makeToken(issuedAt: Self.now.addingTimeInterval(-61 * 60))
        #expect(reason(try request(authorization: stale.authorizationHeader)) == "403 ExpiredProviderToken")
    }

    @Test func tokenUpdateIntervalPerConnection() throws {
        let first = try issuer.makeToken(issuedAt: Self.now.addingTimeInterval(-30 * 60))
        #expect(reason(try request(authorization: first.authorizationHeader)) == "200")
        // Re-using the same token is fine.
        #expect(reason(try request(authorization: first.authorizationHeader)) == "200")
        // A new token 10 minutes later on the same connection is too soon.
        let tooSoon = try issuer.makeToken(issuedAt: Self.now.addingTimeInterval(-20 * 60))
        #expect(reason(try request(authorization: tooSoon.authorizationHeader)) == "429 TooManyProviderTokenUpdates")
        // Another connection may use it.
        let otherConnection = validator.validate(
            try request(authorization: tooSoon.authorizationHeader), apnsID: "y", session: EmulatorTokenSession())
        #expect(otherConnection != .reject(status: 429, reason: "TooManyProviderTokenUpdates", timestamp: nil))
        // 21 minutes after the first is fine on the first connection.
        let later = try issuer.makeToken(issuedAt: Self.now.addingTimeInterval(-9 * 60))
        #expect(reason(try request(authorization: later.authorizationHeader)) == "200")
    }

    @Test func tokenUpdateIntervalPerKey() throws {
        var configuration = APNsEmulatorConfiguration(
            authKeyPEM: String(decoding: keyPEM, as: UTF8.self), keyID: "ABC123DEFG", teamID: "TEAM123456")
        configuration.clock = { Self.now }
        configuration.tokenUpdateScope = .key
        let perKey = EmulatorRequestValidator(
            configuration: configuration, tokens: try EmulatorTokenVerifier(configuration: configuration))
        let first = try issuer.makeToken(issuedAt: Self.now.addingTimeInterval(-30 * 60))
        let second = try issuer.makeToken(issuedAt: Self.now.addingTimeInterval(-25 * 60))
        let a = perKey.validate(try request(authorization: first.authorizationHeader), apnsID: "a", session: .init())
        let b = perKey.validate(try request(authorization: second.authorizationHeader), apnsID: "b", session: .init())
        guard case .accept = a else {
            Issue.record("first token rejected: \(a)")
            return
        }
        #expect(b == .reject(status: 429, reason: "TooManyProviderTokenUpdates", timestamp: nil))
    }

    @Test func faultPlanIsScriptedThenSeededRandom() throws {
        var configuration = APNsEmulatorConfiguration(
            authKeyPEM: String(decoding: keyPEM, as: UTF8.self), keyID: "ABC123DEFG", teamID: "TEAM123456")
        configuration.faults = EmulatorFaultPlan(
            script: [.goAway, nil, .tooManyRequests], random: [.init(.internalServerError, probability: 0.25)], seed: 7)
        let core = try EmulatorCore(configuration: configuration, logger: .init(label: "test"))
        #expect(core.nextFault() == .goAway)
        #expect(core.nextFault() == nil)
        #expect(core.nextFault() == .tooManyRequests)
        var hits = 0
        for _ in 0..<10_000 where core.nextFault() == .internalServerError { hits += 1 }
        #expect(hits > 2_250 && hits < 2_750)  // 25 % ± 10 % relative, far outside chance for a fair generator
    }

    @Test func refusesNonLoopbackHosts() throws {
        let configuration = APNsEmulatorConfiguration(
            authKeyPEM: String(decoding: keyPEM, as: UTF8.self), keyID: "ABC123DEFG", teamID: "TEAM123456",
            host: "0.0.0.0")
        #expect(throws: SealedPushError.self) { try APNsEmulator(configuration: configuration) }
    }
}
