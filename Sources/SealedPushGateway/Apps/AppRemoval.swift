/// What ``GatewayStore/removeApp(id:)`` removed with an app.
public struct AppRemoval: Sendable, Hashable {
    /// The app removed.
    public var appID: String
    /// Its devices (registered or not).
    public var devices: Int
    /// Its API keys.
    public var apiKeys: Int
    /// Its notifications (each with its jobs).
    public var notifications: Int
    /// Jobs still queued or claimed: notifications that will not be delivered.
    public var openJobs: Int

    /// Creates a record of a removal.
    /// - Parameters:
    ///   - appID: The app removed.
    ///   - devices: Its devices.
    ///   - apiKeys: Its API keys.
    ///   - notifications: Its notifications.
    ///   - openJobs: Jobs still queued or claimed.
    public init(appID: String, devices: Int, apiKeys: Int, notifications: Int, openJobs: Int) {
        self.appID = appID
        self.devices = devices
        self.apiKeys = apiKeys
        self.notifications = notifications
        self.openJobs = openJobs
    }
}
