import HummingbirdCore
import Logging
import NIOCore
import NIOSSL

/// A Hummingbird child channel that puts TLS in front of its base channel with the context
/// ``GatewayTLSContext/current`` holds when the connection is accepted (HummingbirdTLS's `TLSChannel` fixes its
/// context once, so a renewed certificate would need a restart).
struct ReloadableTLSChannel<BaseChannel: ServerChildChannel>: ServerChildChannel {
    typealias Value = BaseChannel.Value

    let base: BaseChannel
    let tls: GatewayTLSContext

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let context = tls.current
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
