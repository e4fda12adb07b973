/// What an app needs to reach Android devices through FCM: the Firebase project, the service-account file that
/// authenticates to it, and the Android application id its envelopes are bound to (`Specs/fcm-v1.md`: the topic).
///
/// Only the path of the service-account file is stored; the file (with its private key) stays mode 0600 where the
/// operator keeps it and is read when delivery first needs it.
public struct FCMAppCredentials: Sendable, Hashable {
    /// The Firebase project id (`projects/{projectID}/messages:send`).
    public var projectID: String
    /// Path of the service-account JSON file (mode 0600).
    public var serviceAccountPath: String
    /// The Android application id (package name): the topic an FCM device's envelopes are sealed to.
    public var applicationID: String

    /// Creates FCM credentials.
    /// - Parameters:
    ///   - projectID: The Firebase project id.
    ///   - serviceAccountPath: Path of the service-account file.
    ///   - applicationID: The Android application id.
    public init(projectID: String, serviceAccountPath: String, applicationID: String) {
        self.projectID = projectID
        self.serviceAccountPath = serviceAccountPath
        self.applicationID = applicationID
    }
}
