import Foundation
import Logging
import SealedPushAPNsEmulator
import SealedPushCore
import SealedPushServer

/// What the emulator does with one request.
enum FCMEmulatorAction: Sendable {
    case respond(status: Int, headers: [(String, String)], body: [UInt8])
    case closeConnection
    case noResponse
    case stallConnection
    case delayed(milliseconds: Int, then: @Sendable () -> FCMEmulatorAction)
}

/// A parsed request.
struct FCMEmulatorRequest: Sendable {
    var method: String
    var path: String
    var authorization: String?
    var body: [UInt8]
    var bodyTooLarge: Bool
}

/// The emulator's state shared by every connection: accounts, issued access tokens, unregistered tokens, the fault
/// plan's generator and the recorder.
final class FCMEmulatorCore: @unchecked Sendable {
    let configuration: FCMEmulatorConfiguration
    let recorder: FCMEmulatorRecorder
    let logger: Logger
    private let verifiers: [String: (verifier: RS256Verifier, projectID: String)]
    private let lock = NSLock()
    private var accessTokens: [String: (expiresAt: Date, projectID: String)] = [:]
    private var unregistered: Set<String>
    private var requestIndex = 0
    private var random: SplitMix64
    var port = 0

    init(configuration: FCMEmulatorConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.recorder = FCMEmulatorRecorder(configuration: configuration)
        self.logger = logger
        var verifiers: [String: (RS256Verifier, String)] = [:]
        for account in configuration.accounts {
            verifiers[account.clientEmail] = (try RS256Verifier(pem: account.publicKeyPEM), account.projectID)
        }
        self.verifiers = verifiers
        self.unregistered = configuration.unregisteredTokens
        self.random = SplitMix64(seed: configuration.faults.seed)
    }

    /// Every token endpoint URL an assertion may name as `aud`: this emulator's own token URL (the service-account
    /// file's `token_uri`, which SealedPushFCM names), and Google's token endpoint, which Google's own libraries
    /// always name whatever the file's `token_uri` says (google-auth's `_GOOGLE_OAUTH2_TOKEN_ENDPOINT`).
    var audiences: Set<String> {
        let path = configuration.tokenPath
        return ["https://\(configuration.host):\(port)\(path)", "https://localhost:\(port)\(path)",
                "https://127.0.0.1:\(port)\(path)", Self.googleTokenEndpoint]
    }

    /// The audience Google's token endpoint accepts from every client.
    static let googleTokenEndpoint = "https://oauth2.googleapis.com/token"

    static let cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

    static let jsonHeaders = [("content-type", "application/json; charset=UTF-8")]

    func handle(_ request: FCMEmulatorRequest) -> FCMEmulatorAction {
        let path = request.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.path
        if request.method == "POST", path == configuration.tokenPath {
            return tokenEndpoint(request)
        }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        // "", "v1", "projects", P, "messages:send"
        if parts.count == 5, parts[1] == "v1", parts[2] == "projects", parts[4] == "messages:send", !parts[3].isEmpty {
            guard request.method == "POST" else {
                return respond(405, FCMErrorBody.status(405, status: "UNIMPLEMENTED", message: "Method not allowed."))
            }
            return send(request, project: String(parts[3]))
        }
        return respond(404, FCMErrorBody.status(404, status: "NOT_FOUND", message: "The requested URL was not found."))
    }

    private func respond(_ status: Int, _ body: [UInt8], extra: [(String, String)] = []) -> FCMEmulatorAction {
        .respond(status: status, headers: Self.jsonHeaders + extra, body: body)
    }

    // MARK: The token endpoint

    private func tokenEndpoint(_ request: FCMEmulatorRequest) -> FCMEmulatorAction {
        var components = URLComponents()
        components.percentEncodedQuery = String(decoding: request.body, as: UTF8.self).replacingOccurrences(of: "+", with: "%20")
        let items = components.queryItems ?? []
        func item(_ name: String) -> String? { items.first { $0.name == name }?.value }
        func refuse(_ error: String, _ description: String) -> FCMEmulatorAction {
            recorder.countTokenRequest(granted: false)
            logger.debug("FCM emulator refused an assertion", metadata: ["reason": "\(description)"])
            return respond(400, FCMErrorBody.oauth(error, description))
        }
        guard item("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer" else {
            return refuse("unsupported_grant_type", "Invalid grant_type: \(item("grant_type") ?? "")")
        }
        guard let assertion = item("assertion") else { return refuse("invalid_request", "Missing required parameter: assertion") }
        let pieces = assertion.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard pieces.count == 3, let headerBytes = try? Base64URL.decode(pieces[0]),
            let claimBytes = try? Base64URL.decode(pieces[1]), let signature = try? Base64URL.decode(pieces[2]),
            case .object(let header)? = try? JSONParser.parse(headerBytes),
            case .object(let claims)? = try? JSONParser.parse(claimBytes)
        else { return refuse("invalid_grant", "Invalid JWT: the assertion is not a JWS compact serialization.") }
        guard header["alg"]?.stringValue == "RS256" else { return refuse("invalid_grant", "Invalid JWT Signature.") }
        guard let issuer = claims["iss"]?.stringValue, let account = verifiers[issuer] else {
            return refuse("invalid_grant", "Invalid grant: account not found")
        }
        guard account.verifier.verify(signature: signature, message: Array((pieces[0] + "." + pieces[1]).utf8)) else {
            return refuse("invalid_grant", "Invalid JWT Signature.")
        }
        guard let audience = claims["aud"]?.stringValue, audiences.contains(audience) else {
            return refuse("invalid_grant", "Invalid JWT: Failed audience check.")
        }
        let scopes = (claims["scope"]?.stringValue ?? "").split(separator: " ").map(String.init)
        // FCM accepts its own scope or cloud-platform (which Google's Admin SDKs ask for).
        guard scopes.contains(FCMServiceAccount.scope) || scopes.contains(Self.cloudPlatformScope) else {
            return refuse(
                "invalid_scope",
                "The assertion's scope includes neither \(FCMServiceAccount.scope) nor \(Self.cloudPlatformScope).")
        }
        let now = configuration.clock().timeIntervalSince1970
        guard let iat = claims["iat"]?.numberValue, let exp = claims["exp"]?.numberValue, exp > iat, exp - iat <= 3600,
            iat <= now + 300, exp > now
        else {
            return refuse(
                "invalid_grant",
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your "
                    + "iat and exp values in the JWT claim.")
        }
        var bytes = [UInt8](repeating: 0, count: 24)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        let token = "ya29.emu-" + Base64URL.encode(bytes)
        let lifetime = max(1, configuration.accessTokenLifetime)
        lock.withLock {
            if accessTokens.count >= configuration.maximumAccessTokens {
                let current = configuration.clock()
                accessTokens = accessTokens.filter { $0.value.expiresAt > current }
                while accessTokens.count >= max(1, configuration.maximumAccessTokens),
                    let oldest = accessTokens.min(by: { $0.value.expiresAt < $1.value.expiresAt })?.key
                {
                    accessTokens[oldest] = nil
                }
            }
            accessTokens[token] = (configuration.clock().addingTimeInterval(TimeInterval(lifetime)), account.projectID)
        }
        recorder.countTokenRequest(granted: true)
        var writer = JSONWriter()
        writer.raw("{\"access_token\":")
        writer.string(token)
        writer.raw(",\"expires_in\":")
        writer.number(Double(lifetime))
        writer.raw(",\"token_type\":\"Bearer\"}")
        return respond(200, writer.bytes)
    }

    // MARK: The send endpoint

    private func send(_ request: FCMEmulatorRequest, project: String) -> FCMEmulatorAction {
        recorder.countRequest()
        let token = request.authorization.flatMap { value -> String? in
            value.lowercased().hasPrefix("bearer ") ? String(value.dropFirst(7)) : nil
        }
        let grant = token.flatMap { token in lock.withLock { accessTokens[token] } }
        guard let grant, grant.expiresAt > configuration.clock() else {
            recorder.countStatus(401)
            return respond(401, FCMErrorBody.unauthenticated(), extra: [("www-authenticate", "Bearer realm=\"https://accounts.google.com/\"")])
        }
        guard grant.projectID == project else {
            recorder.countStatus(403)
            return respond(
                403,
                FCMErrorBody.status(
                    403, status: "PERMISSION_DENIED",
                    message: "Permission 'cloudmessaging.messages.create' denied on resource "
                        + "'//cloudresourcemanager.googleapis.com/projects/\(project)' (or it may not exist)."))
        }
        if let fault = nextFault() {
            recorder.countFault(fault.description)
            switch fault {
            case .status(let status, _):
                recorder.countStatus(status)
                let retry = status == 429 || status == 503 ? [("retry-after", "\(configuration.retryAfterSeconds)")] : []
                return respond(status, FCMErrorBody.forStatus(status), extra: retry)
            case .connectionReset, .goAway: return .closeConnection
            case .noResponse: return .noResponse
            case .stallConnection: return .stallConnection
            case .slow(let milliseconds):
                return .delayed(milliseconds: milliseconds) { [self] in self.process(request, project: project) }
            }
        }
        return process(request, project: project)
    }

    private func process(_ request: FCMEmulatorRequest, project: String) -> FCMEmulatorAction {
        guard !request.bodyTooLarge else {
            recorder.countStatus(400)
            return respond(400, FCMErrorBody.invalidArgument("Request payload size exceeds the limit."))
        }
        let draw = lock.withLock { configuration.unregisterProbability > 0 ? Double.random(in: 0..<1, using: &random) : 1 }
        let outcome = FCMMessageValidator.validate(body: request.body) { token in
            lock.withLock {
                if draw < configuration.unregisterProbability, FCMRegistrationToken.isWellFormed(token) {
                    unregistered.insert(token)
                }
                return unregistered.contains(token)
            }
        }
        switch outcome {
        case .rejected(let status, let body):
            recorder.countStatus(status)
            return respond(status, body)
        case .accepted(let message, let validateOnly):
            recorder.countStatus(200)
            var id = "fake_message_id"
            if !validateOnly {
                recorder.record(message)
                id = "0:\(Int64(configuration.clock().timeIntervalSince1970 * 1000))%\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
            }
            var writer = JSONWriter()
            writer.raw("{\"name\":")
            writer.string("projects/\(project)/messages/\(id)")
            writer.raw("}")
            return respond(200, writer.bytes)
        }
    }

    /// Marks a registration token as gone (404 `UNREGISTERED` from now on).
    func unregister(_ token: String) { lock.withLock { _ = unregistered.insert(token) } }

    private func nextFault() -> EmulatorFault? {
        lock.withLock {
            defer { requestIndex += 1 }
            let plan = configuration.faults
            if requestIndex < plan.script.count { return plan.script[requestIndex] }
            guard !plan.random.isEmpty else { return nil }
            var draw = Double.random(in: 0..<1, using: &random)
            for weighted in plan.random {
                if draw < weighted.probability { return weighted.fault }
                draw -= weighted.probability
            }
            return nil
        }
    }
}
