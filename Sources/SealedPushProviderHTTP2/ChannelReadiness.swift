import NIOCore

/// Waiting for a new provider connection's opening exchange (TLS, ALPN, HTTP/2 SETTINGS) to finish.
package enum ChannelReadiness {
    /// Waits for `ready`, closing `channel` if it does not succeed within `timeout`.
    /// - Parameters:
    ///   - ready: Succeeded by the connection's handler once the exchange is over; failed if it fails or closes.
    ///   - channel: The connection; closed when `ready` fails or the time runs out (which fails `ready`).
    ///   - timeout: How long the exchange may take.
    /// - Throws: `ready`'s error.
    package static func wait(for ready: EventLoopFuture<Void>, on channel: Channel, timeout: TimeAmount) async throws {
        let timer = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
        do {
            try await ready.get()
            timer.cancel()
        } catch {
            timer.cancel()
            channel.close(promise: nil)
            throw error
        }
    }
}
