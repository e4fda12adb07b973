import NIOCore

/// On a provider connection's pipeline (APNs, FCM) between TLS and HTTP/2: passes a flush on only after the event
/// loop has run the tasks queued before it, so the requests that several tasks start in one turn of the loop leave in
/// one TLS record and one system call instead of one each.
///
/// The clients start each request in a loop task of its own; HTTP/2 flushes the connection for every stream that
/// flushes, except while it reads. A gateway hands jobs over one by one as sends are accepted, so without this each
/// request was its own `write` and the peer read each in a system call of its own. A flush waits at most for the
/// tasks already queued on the loop (NIO runs the tasks queued while a batch runs in the next batch, after this one).
package final class FlushCoalescingHandler: ChannelOutboundHandler, RemovableChannelHandler, @unchecked Sendable {
    package typealias OutboundIn = NIOAny
    package typealias OutboundOut = NIOAny

    /// Whether a flush is queued on the loop. Confined to the channel's event loop.
    private var flushQueued = false

    package init() {}

    package func flush(context: ChannelHandlerContext) {
        guard !flushQueued else { return }
        flushQueued = true
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            self.flushQueued = false
            bound.value.flush()
        }
    }
}
