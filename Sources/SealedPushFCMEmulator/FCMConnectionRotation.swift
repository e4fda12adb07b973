import NIOCore
import NIOHTTP2

/// Counts one HTTP/2 connection's streams and, at ``FCMEmulatorConfiguration/streamsPerConnection``, sends GOAWAY
/// (`NO_ERROR`, that stream the last the emulator will answer) without closing the connection — as Google's front
/// ends rotate connections. Confined to the connection's event loop (its streams share it).
final class FCMConnectionRotation: @unchecked Sendable {
    private let streamsPerConnection: Int?
    private var opened = 0

    init(streamsPerConnection: Int?) {
        self.streamsPerConnection = streamsPerConnection
    }

    /// Called as each stream of the connection is set up.
    /// - Parameter stream: The new stream's channel (its parent is the connection).
    func streamOpened(_ stream: any Channel) {
        guard let limit = streamsPerConnection, let connection = stream.parent, connection.parent != nil else { return }
        opened += 1
        guard opened == limit, let id = try? stream.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID) else {
            return
        }
        let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: id, errorCode: .noError, opaqueData: nil))
        connection.writeAndFlush(goAway, promise: nil)
    }
}
