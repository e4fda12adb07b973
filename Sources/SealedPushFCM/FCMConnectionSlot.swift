import NIOCore
import NIOSSL
import SealedPushCore

/// One reused HTTP/2 connection to one endpoint: made on first use, remade (one attempt in flight) when it closed or
/// was retired (``FCMConnectionStreams``).
actor FCMConnectionSlot {
    let endpoint: FCMEndpoint
    private let sslContext: NIOSSLContext
    private let group: EventLoopGroup
    private let connectTimeout: Duration
    private let proxy: ProviderProxy?
    private var connection: FCMHTTP2Connection?
    private var connecting: Task<FCMHTTP2Connection, any Error>?
    private(set) var connectionsMade = 0

    init(endpoint: FCMEndpoint, group: EventLoopGroup, connectTimeout: Duration, proxy: ProviderProxy?) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["h2"]
        if let pem = endpoint.trustedCertificatePEM {
            tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem)])
        }
        self.sslContext = try NIOSSLContext(configuration: tls)
        self.endpoint = endpoint
        self.group = group
        self.connectTimeout = connectTimeout
        self.proxy = proxy
    }

    /// The live connection, connecting if there is none.
    func get() async throws -> FCMHTTP2Connection {
        if let connection, connection.isUsable { return connection }
        if let connecting { return try await connecting.value }
        let task = Task { [endpoint, sslContext, group, connectTimeout, proxy] in
            try await FCMHTTP2Connection.connect(
                endpoint: endpoint, sslContext: sslContext, group: group, timeout: connectTimeout, proxy: proxy)
        }
        connecting = task
        defer { connecting = nil }
        let made = try await task.value
        connection = made
        connectionsMade += 1
        return made
    }

    /// Closes the connection.
    func close() {
        connection?.close()
        connection = nil
    }
}
