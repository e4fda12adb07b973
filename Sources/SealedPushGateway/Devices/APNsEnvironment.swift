/// The APNs environment a device token belongs to.
public enum APNsEnvironment: String, Sendable, Hashable, CaseIterable {
    /// `api.push.apple.com`: App Store, TestFlight and ad-hoc builds.
    case production
    /// `api.sandbox.push.apple.com`: development builds.
    case sandbox
}
