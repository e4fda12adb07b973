import SealedPushCore
import SealedPushServer

/// How an ``FCMClient`` reaches FCM and how hard it tries.
public struct FCMClientConfiguration: Sendable {
    /// The service account (its key signs the OAuth assertions; its `token_uri` issues the access tokens).
    public var serviceAccount: FCMServiceAccount
    /// The FCM project messages are sent for (default the account's `project_id`).
    public var projectID: String
    /// Where FCM is (default `fcm.googleapis.com:443`).
    public var endpoint: FCMEndpoint
    /// A certificate to trust for the token endpoint instead of the system roots (an emulator's); nil = system.
    public var tokenEndpointTrustedCertificatePEM: String?
    /// The deadline of each request (default 10 s).
    public var requestTimeout: Duration
    /// The deadline of each connection attempt, TLS included (default 10 s); through a ``proxy``, its answer to
    /// `CONNECT` too.
    public var connectTimeout: Duration
    /// An HTTP proxy to reach FCM and the token endpoint through (`CONNECT`), or nil (default) to connect directly.
    public var proxy: ProviderProxy?
    /// Retries.
    public var retry: FCMRetryPolicy
    /// Event-loop threads (default 1).
    public var threads: Int

    /// Creates a configuration.
    /// - Parameters:
    ///   - serviceAccount: The service account.
    ///   - endpoint: Where FCM is (default production).
    ///   - projectID: Default the account's project.
    public init(serviceAccount: FCMServiceAccount, endpoint: FCMEndpoint = .production, projectID: String? = nil) {
        self.serviceAccount = serviceAccount
        self.projectID = projectID ?? serviceAccount.projectID
        self.endpoint = endpoint
        self.tokenEndpointTrustedCertificatePEM = endpoint.trustedCertificatePEM
        self.requestTimeout = .seconds(10)
        self.connectTimeout = .seconds(10)
        self.proxy = nil
        self.retry = FCMRetryPolicy()
        self.threads = 1
    }
}
