import Crypto
import Foundation
import FuzzSupport
@testable import SealedPushAPNsEmulatorRules

/// The APNs emulator's request handling (path, headers, provider token, body) on arbitrary requests. Its rules
/// module (`SealedPushAPNsEmulatorRules`, no NIO) exposes no public parsing entry, so this target uses
/// `@testable import` (the fuzz build passes `-enable-testing`) to reach `EmulatorRequestValidator.validate` and `EmulatorTokenVerifier.verify` — the code a
/// request's HEADERS + DATA frames reach once NIO has decoded them.
///
/// Input format (so seeds stay readable): `METHOD\nPATH\n` then `name: value` lines, an empty line, and the body.
/// A header value `$VALID` becomes `bearer <a valid ES256 token>`, `$VALID2` a second valid token issued 5 minutes
/// later, so the fuzzer gets past the signature check.
///
/// Checks: no crash; a rejection uses a status and reason from Apple's documented set; an acceptance meets the
/// rules APNs documents (POST, `/3/device/<64–200 even hex>`, a topic, a known push type, a 1–4,096-byte JSON
/// object body, a provider token) — checked here independently of the validator.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEmulatorRequest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let setup = Setup.shared else { return 0 }
    let request = setup.request(from: Fuzz.bytes(data, size))
    let verdict = setup.validator.validate(request, apnsID: "00000000-0000-0000-0000-000000000000",
                                           session: EmulatorTokenSession())
    switch verdict {
    case .accept(let notification):
        Fuzz.check(request.method == "POST", "accepted method \(request.method ?? "nil")")
        let path = request.path ?? ""
        Fuzz.check(path.hasPrefix("/3/device/"), "accepted path \(path)")
        let token = path.dropFirst("/3/device/".count).utf8
        Fuzz.check(token.count >= 64 && token.count <= 200 && token.count % 2 == 0
                   && token.allSatisfy { Array("0123456789abcdefABCDEF".utf8).contains($0) },
                   "accepted device token \(String(decoding: Array(token), as: UTF8.self))")
        Fuzz.check(!(request.headers["apns-topic"] ?? "").isEmpty, "accepted without a topic")
        Fuzz.check(request.headers["authorization"] != nil, "accepted without a provider token")
        Fuzz.check(!request.bodyTooLarge && (1...4096).contains(request.body.count),
                   "accepted a \(request.body.count)-byte body")
        Fuzz.check((try? JSONSerialization.jsonObject(with: Data(request.body))) is [String: Any],
                   "accepted a body that is not a JSON object")
        Fuzz.check(notification.body == request.body, "recorded a different body")
    case .reject(let status, let reason, _):
        Fuzz.check(Setup.documented[status]?.contains(reason) == true, "rejected with \(status) \(reason)")
    }
    // The token verifier alone, on the raw input as an authorization header.
    if size <= 2_048 {
        let text = String(decoding: Fuzz.bytes(data, size), as: UTF8.self)
        switch setup.verifier.verify(authorization: text, session: EmulatorTokenSession()) {
        case .accepted:
            Fuzz.check(text.lowercased().hasPrefix("bearer ") && setup.validTokens.contains(String(text.dropFirst(7))),
                       "accepted an authorization that is not one of the valid tokens")
        case .rejected(let status, let reason):
            Fuzz.check(Setup.documented[status]?.contains(reason) == true, "token rejected with \(status) \(reason)")
        }
    }
    return 0
}

/// The process entry: SwiftPM aliases `main` to this symbol; it hands the target to libFuzzer's driver.
@_cdecl("FuzzEmulatorRequest_main")
public func fuzzEmulatorRequestMain(
    _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    guard Setup.shared != nil else { return 2 }
    return Fuzz.run(argc, argv, fuzzEmulatorRequest)
}

private struct Setup: @unchecked Sendable {
    static let shared: Setup? = try? Setup()

    /// Apple's documented status/reason pairs (plus the emulator's 400 BadPayload for a non-object body, which
    /// Apple's table does not name).
    static let documented: [Int: Set<String>] = [
        400: ["BadCollapseId", "BadDeviceToken", "BadExpirationDate", "BadMessageId", "BadPriority", "BadTopic",
              "DeviceTokenNotForTopic", "DuplicateHeaders", "IdleTimeout", "InvalidPushType", "MissingDeviceToken",
              "MissingTopic", "PayloadEmpty", "TopicDisallowed", "BadPayload"],
        403: ["BadCertificate", "BadCertificateEnvironment", "ExpiredProviderToken", "Forbidden",
              "InvalidProviderToken", "MissingProviderToken", "UnrelatedKeyIdInToken", "BadEnvironmentKeyIdInToken"],
        404: ["BadPath"], 405: ["MethodNotAllowed"], 410: ["ExpiredToken", "Unregistered"],
        413: ["PayloadTooLarge"], 429: ["TooManyProviderTokenUpdates", "TooManyRequests"],
    ]
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    let validator: EmulatorRequestValidator
    let verifier: EmulatorTokenVerifier
    let validTokens: [String]

    init() throws {
        let key = try P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x42, count: 32))
        var configuration = APNsEmulatorConfiguration(authKeyPEM: key.pemRepresentation, keyID: "ABC123DEFG",
                                                      teamID: "TEAM123456")
        configuration.clock = { Setup.now }
        configuration.unregisteredDeviceTokens = [String(repeating: "ab", count: 32): Setup.now]
        verifier = try EmulatorTokenVerifier(configuration: configuration)
        validator = EmulatorRequestValidator(configuration: configuration, tokens: verifier)
        func token(_ iat: Int) throws -> String {
            let header = Data(#"{"alg":"ES256","kid":"ABC123DEFG"}"#.utf8)
            let claims = Data(#"{"iss":"TEAM123456","iat":\#(iat)}"#.utf8)
            func b64(_ data: Data) -> String {
                data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                    .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            }
            let input = b64(header) + "." + b64(claims)
            return input + "." + b64(try key.signature(for: Data(input.utf8)).rawRepresentation)
        }
        let now = Int(Setup.now.timeIntervalSince1970)
        validTokens = [try token(now - 10), try token(now + 290)]
    }

    func request(from bytes: [UInt8]) -> EmulatorRequest {
        var lines = [[UInt8]]()
        var body = [UInt8]()
        var start = 0
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x0A {
                let line = Array(bytes[start..<index])
                start = index + 1
                if lines.count >= 2 && line.isEmpty {
                    body = Array(bytes[start...])
                    break
                }
                lines.append(line)
            }
            index += 1
        }
        if index >= bytes.count, start < bytes.count { lines.append(Array(bytes[start...])) }
        var headers = [String: String]()
        for line in lines.dropFirst(2) {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            var value = String(decoding: line[(colon + 1)...], as: UTF8.self)
            if value.hasPrefix(" ") { value.removeFirst() }
            if value == "$VALID" { value = "bearer " + validTokens[0] }
            if value == "$VALID2" { value = "bearer " + validTokens[1] }
            headers[name] = value
        }
        let limit = EmulatorRequestValidator.maximumBodyBytes
        return EmulatorRequest(
            method: lines.first.map { String(decoding: $0, as: UTF8.self) },
            path: lines.count > 1 ? String(decoding: lines[1], as: UTF8.self) : nil,
            headers: headers, body: Array(body.prefix(limit + 1)), bodyTooLarge: body.count > limit + 1)
    }
}
