import Foundation
import SealedPushGateway
import SealedPushServer

/// What `app list` and `app show` say of an app: its settings and file references, and the server identity's public
/// key (what the app pins). Never a private key or a secret.
struct AppDescription: Encodable {
    struct FCM: Encodable {
        let projectId: String
        let applicationId: String
        let serviceAccountPath: String
    }

    let id: String
    let topic: String
    let teamId: String
    let apnsKeyId: String
    let apnsKeyPath: String?
    let serverIdentityPath: String
    /// The identity's public key (`SPK1:…`), or nil when its file cannot be read (``identityProblem`` says why).
    let serverPublicKey: String?
    let identityProblem: String?
    /// Identities rotated out that still open receipts (`identity list` shows their keys).
    let previousIdentityPaths: [String]
    let fcm: FCM?

    init(_ app: GatewayApp) {
        id = app.id
        topic = app.topic
        teamId = app.teamID
        apnsKeyId = app.apnsKeyID
        apnsKeyPath = app.apnsKeyPath.isEmpty ? nil : app.apnsKeyPath
        serverIdentityPath = app.serverIdentityPath
        do {
            serverPublicKey = try ServerIdentity(contentsOfFile: app.serverIdentityPath).publicKeyText
            identityProblem = nil
        } catch {
            serverPublicKey = nil
            identityProblem = "cannot read \(app.serverIdentityPath): \(error)"
        }
        previousIdentityPaths = app.previousIdentityPaths
        fcm = app.fcm.map {
            FCM(projectId: $0.projectID, applicationId: $0.applicationID, serviceAccountPath: $0.serviceAccountPath)
        }
    }

    /// One line for `app list`.
    var line: String {
        let apns = apnsKeyPath == nil ? "no APNs key" : "APNs key \(apnsKeyId) (team \(teamId))"
        let android = fcm.map { "FCM project \($0.projectId), Android app \($0.applicationId)" } ?? "no FCM"
        return "\(id): topic \(topic), \(apns), \(android)"
    }

    /// The lines of `app show`.
    var lines: [String] {
        var lines = [
            "app \(id)",
            "  APNs topic:          \(topic)",
            "  APNs team / key id:  \(teamId) / \(apnsKeyId)",
            "  APNs key file:       \(apnsKeyPath ?? "(none)")",
            "  server identity:     \(serverIdentityPath)",
            "  server public key:   \(serverPublicKey ?? "(\(identityProblem ?? "unreadable"))")",
        ]
        for path in previousIdentityPaths.reversed() {
            lines.append("  previous identity:   \(path) (opens receipts; `identity retire` ends it)")
        }
        if let fcm {
            lines += [
                "  FCM project:         \(fcm.projectId)",
                "  Android app id:      \(fcm.applicationId)",
                "  service account:     \(fcm.serviceAccountPath)",
            ]
        } else {
            lines.append("  FCM:                 (none: `app set-fcm` gives it credentials)")
        }
        return lines
    }

    /// JSON text (sorted keys, pretty) of a value, for `--json`.
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
