import NIOCore

/// How a ``BlobServer`` listens, how long it waits for clients and when it deletes old blobs.
public struct BlobServerConfiguration: Sendable {
    /// When stored blobs expire: a blob last modified more than ``maxAge`` ago is deleted by a sweep that runs every
    /// ``sweepInterval``.
    public struct Expiry: Sendable, Hashable {
        /// How old a blob may get. Use at least the longest envelope lifetime plus a margin (`Specs/blob-v1.md` §7).
        public var maxAge: Duration
        /// How often to sweep.
        public var sweepInterval: Duration

        /// Creates an expiry policy.
        ///
        /// - Parameters:
        ///   - maxAge: How old a blob may get before it is deleted.
        ///   - sweepInterval: How often to look for expired blobs; by default a tenth of `maxAge`, from 1 second
        ///     to 1 hour.
        public init(maxAge: Duration, sweepInterval: Duration? = nil) {
            self.maxAge = maxAge
            self.sweepInterval = sweepInterval ?? min(max(maxAge / 10, .seconds(1)), .seconds(3600))
        }
    }

    /// The address to bind, for example `127.0.0.1` or `0.0.0.0`.
    public var host: String
    /// The port to bind; 0 picks a free port (read it from ``BlobServer/port`` after ``BlobServer/start()``).
    public var port: Int
    /// The most connections served at once; a connection accepted beyond it is closed at once.
    public var maxConnections: Int
    /// How long a client may take to send a whole request (from the connection's start, or the end of the previous
    /// response) before the connection is closed.
    public var requestTimeout: TimeAmount
    /// How long a connection may go without reading or writing a byte (an idle keep-alive connection, or a
    /// client that stopped reading a body) before it is closed.
    public var idleTimeout: TimeAmount
    /// How long ``BlobServer/stop()`` lets responses in flight finish before it closes their connections.
    public var shutdownGracePeriod: Duration
    /// How many bytes are read from the store and written to a connection at a time.
    public var chunkSize: Int
    /// Event-loop threads.
    public var threads: Int
    /// When blobs expire, or `nil` to keep them until deleted otherwise.
    public var expiry: Expiry?

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - host: The address to bind (default loopback).
    ///   - port: The port (default 0, any free port).
    ///   - expiry: When blobs expire (default: never).
    public init(host: String = "127.0.0.1", port: Int = 0, expiry: Expiry? = nil) {
        self.host = host
        self.port = port
        self.maxConnections = 512
        self.requestTimeout = .seconds(10)
        self.idleTimeout = .seconds(30)
        self.shutdownGracePeriod = .seconds(10)
        self.chunkSize = 64 * 1024
        self.threads = 1
        self.expiry = expiry
    }
}
