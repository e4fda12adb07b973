import Foundation

/// A request as the emulator received it.
package struct EmulatorRequest: Sendable {
    package var method: String?
    package var path: String?
    package var headers: [String: String]
    package var body: [UInt8]
    /// The body exceeded the limit; `body` holds only its first bytes.
    package var bodyTooLarge: Bool

    package init(method: String?, path: String?, headers: [String: String], body: [UInt8], bodyTooLarge: Bool) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.bodyTooLarge = bodyTooLarge
    }
}

/// What to answer.
package enum EmulatorVerdict: Sendable, Equatable {
    case accept(RecordedNotification)
    case reject(status: Int, reason: String, timestamp: Date?)
}

/// Apple's request rules, in the order APNs applies them (method, path, provider token, headers, body, device).
package struct EmulatorRequestValidator: Sendable {
    package static let maximumBodyBytes = 4096
    static let maximumCollapseIDBytes = 64
    static let pushTypes: Set<String> = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity",
        "pushtotalk", "widgets", "controls",
    ]

    let configuration: APNsEmulatorConfiguration
    let tokens: EmulatorTokenVerifier

    package init(configuration: APNsEmulatorConfiguration, tokens: EmulatorTokenVerifier) {
        self.configuration = configuration
        self.tokens = tokens
    }

    /// Device tokens: even-length hex, 64 to 200 characters.
    static func isWellFormedDeviceToken(_ token: Substring) -> Bool {
        token.utf8.count >= 64 && token.utf8.count <= 200 && token.utf8.count % 2 == 0
            && token.utf8.allSatisfy { isHexDigit($0) }
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// - Parameters:
    ///   - request: The request.
    ///   - apnsID: Its `apns-id` (given or assigned).
    ///   - session: The connection's provider-token state.
    package func validate(_ request: EmulatorRequest, apnsID: String, session: EmulatorTokenSession) -> EmulatorVerdict {
        func reject(_ status: Int, _ reason: String, _ timestamp: Date? = nil) -> EmulatorVerdict {
            .reject(status: status, reason: reason, timestamp: timestamp)
        }
        guard request.method == "POST" else { return reject(405, "MethodNotAllowed") }
        let prefix = "/3/device/"
        guard let path = request.path, path.hasPrefix(prefix) else { return reject(404, "BadPath") }
        let token = path.dropFirst(prefix.count)
        guard !token.isEmpty, !token.contains("/"), !token.contains("?") else { return reject(404, "BadPath") }

        switch tokens.verify(authorization: request.headers["authorization"], session: session) {
        case .accepted: break
        case .rejected(let status, let reason): return reject(status, reason)
        }

        guard Self.isWellFormedDeviceToken(token) else { return reject(400, "BadDeviceToken") }
        let deviceToken = token.lowercased()

        guard let topic = request.headers["apns-topic"], !topic.isEmpty else { return reject(400, "MissingTopic") }
        if let allowed = configuration.allowedTopics, !allowed.contains(topic) { return reject(400, "TopicDisallowed") }
        // Apple requires apns-push-type for watchOS and recommends it elsewhere; APNs accepts a request without
        // it (the recorder counts those) but rejects a value it does not know.
        let pushType = request.headers["apns-push-type"]
        if let pushType, !Self.pushTypes.contains(pushType) { return reject(400, "InvalidPushType") }
        var priority: Int?
        if let text = request.headers["apns-priority"] {
            guard let value = Int(text), [1, 5, 10].contains(value) else { return reject(400, "BadPriority") }
            priority = value
        }
        var expiration: Int64?
        if let text = request.headers["apns-expiration"] {
            guard let value = Int64(text), value >= 0 else { return reject(400, "BadExpirationDate") }
            expiration = value
        }
        let collapseID = request.headers["apns-collapse-id"]
        if let collapseID, collapseID.utf8.count > Self.maximumCollapseIDBytes { return reject(400, "BadCollapseId") }

        if request.bodyTooLarge || request.body.count > Self.maximumBodyBytes { return reject(413, "PayloadTooLarge") }
        guard !request.body.isEmpty else { return reject(400, "PayloadEmpty") }
        guard (try? JSONSerialization.jsonObject(with: Data(request.body))) is [String: Any] else {
            return reject(400, "BadPayload")
        }

        if let since = configuration.unregisteredDeviceTokens[deviceToken] { return reject(410, "Unregistered", since) }
        if let known = configuration.knownDeviceTokens, !known.contains(deviceToken) {
            return reject(400, "BadDeviceToken")
        }
        return .accept(
            RecordedNotification(
                deviceToken: deviceToken, apnsID: apnsID, topic: topic, pushType: pushType, priority: priority,
                expiration: expiration, collapseID: collapseID, body: request.body, acceptedAt: configuration.clock()))
    }
}
