import Foundation

/// One app served by the gateway, with references to its keys: APNs (its topic, team and `.p8` key) for iPhones
/// and, when it has Android devices, FCM (``FCMAppCredentials``).
///
/// Only paths are stored: the APNs `.p8` key, the FCM service-account file and the server identity stay in 0600
/// files the gateway reads when it needs them; private keys are never written to the database.
public struct GatewayApp: Sendable, Hashable {
    /// The app's id in this gateway (the `{appId}` of the HTTP API).
    public var id: String
    /// The APNs topic (the app's bundle id).
    public var topic: String
    /// The Apple developer team id that signs provider tokens.
    public var teamID: String
    /// The id of the APNs signing key.
    public var apnsKeyID: String
    /// Path of the APNs `.p8` key file (mode 0600).
    public var apnsKeyPath: String
    /// Path of the server identity file (`SPSK1:` private key, mode 0600).
    public var serverIdentityPath: String
    /// Paths of server identities that sealed for this app before ``serverIdentityPath`` (`identity rotate`), oldest
    /// first. They seal nothing any more; the gateway still opens receipts sealed to them (a device answers with
    /// the identity that sealed its notification, and apps in the field still pin them) until `identity retire`.
    public var previousIdentityPaths: [String]
    /// FCM credentials, for an app with Android devices; nil for an iOS-only app.
    public var fcm: FCMAppCredentials?

    /// Creates an app record.
    /// - Parameters:
    ///   - id: The app's id in the gateway.
    ///   - topic: The APNs topic.
    ///   - teamID: The developer team id.
    ///   - apnsKeyID: The APNs key id.
    ///   - apnsKeyPath: Path of the `.p8` file.
    ///   - serverIdentityPath: Path of the server identity file.
    ///   - previousIdentityPaths: Identities rotated out that still open receipts, oldest first.
    ///   - fcm: FCM credentials, if the app has Android devices.
    public init(
        id: String, topic: String, teamID: String, apnsKeyID: String, apnsKeyPath: String, serverIdentityPath: String,
        previousIdentityPaths: [String] = [], fcm: FCMAppCredentials? = nil
    ) {
        self.id = id
        self.topic = topic
        self.teamID = teamID
        self.apnsKeyID = apnsKeyID
        self.apnsKeyPath = apnsKeyPath
        self.serverIdentityPath = serverIdentityPath
        self.previousIdentityPaths = previousIdentityPaths
        self.fcm = fcm
    }
}

extension GatewayApp {
    /// The `apps.previous_identity_paths` column: a JSON array of paths.
    var previousIdentityPathsColumn: String {
        let data = (try? JSONEncoder().encode(previousIdentityPaths)) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Paths from the `apps.previous_identity_paths` column (an unreadable column reads as none).
    static func previousIdentityPaths(column: String?) -> [String] {
        guard let column else { return [] }
        return (try? JSONDecoder().decode([String].self, from: Data(column.utf8))) ?? []
    }
}
