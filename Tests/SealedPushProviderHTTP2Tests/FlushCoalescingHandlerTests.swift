import NIOCore
import NIOEmbedded
import Testing

import SealedPushProviderHTTP2

/// `FlushCoalescingHandler`: the flushes asked for in one turn of the event loop reach the transport as one, after
/// the writes they cover, and none is lost.
@Suite struct FlushCoalescingHandlerTests {
    /// Stands where TLS is on a provider connection: counts the flushes that reach it and what was written before each.
    final class TransportProbe: ChannelOutboundHandler, @unchecked Sendable {
        typealias OutboundIn = ByteBuffer
        var pending: [String] = []
        var flushed: [[String]] = []

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            pending.append(String(buffer: unwrapOutboundIn(data)))
            context.write(data, promise: promise)
        }

        func flush(context: ChannelHandlerContext) {
            flushed.append(pending)
            pending = []
            context.flush()
        }
    }

    private func channel() throws -> (EmbeddedChannel, TransportProbe) {
        let probe = TransportProbe()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(probe)
        try channel.pipeline.syncOperations.addHandler(FlushCoalescingHandler())
        return (channel, probe)
    }

    @Test func threeRequestsInOneTurnAreOneFlush() throws {
        let (channel, probe) = try channel()
        for name in ["a", "b", "c"] {
            channel.write(ByteBuffer(string: name), promise: nil)
            channel.flush()
        }
        #expect(probe.flushed.isEmpty, "the flush waits for the loop's queued tasks")
        channel.embeddedEventLoop.run()
        #expect(probe.flushed == [["a", "b", "c"]])
        #expect(try channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) } == "a")
        _ = try channel.finish()
    }

    @Test func aFlushAfterTheQueuedOneIsNotLost() throws {
        let (channel, probe) = try channel()
        channel.write(ByteBuffer(string: "a"), promise: nil)
        channel.flush()
        channel.embeddedEventLoop.run()
        channel.write(ByteBuffer(string: "b"), promise: nil)
        channel.flush()
        channel.embeddedEventLoop.run()
        #expect(probe.flushed == [["a"], ["b"]])
        _ = try channel.finish()
    }

    /// A flush asked for from inside the loop's task that passes the queued one on (a request started by a task that
    /// ran in the same batch) gets its own flush in the next batch.
    @Test func aFlushAskedWhileTheQueuedOneRunsGetsItsOwn() throws {
        let (channel, probe) = try channel()
        channel.write(ByteBuffer(string: "a"), promise: nil)
        channel.flush()
        channel.embeddedEventLoop.execute {
            channel.write(ByteBuffer(string: "b"), promise: nil)
            channel.flush()
        }
        channel.embeddedEventLoop.run()
        #expect(probe.flushed.flatMap { $0 } == ["a", "b"])
        _ = try channel.finish()
    }
}
