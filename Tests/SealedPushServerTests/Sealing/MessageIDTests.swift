import Foundation
import SealedPushCore
import Testing

@testable import SealedPushServer

/// `Specs/envelope-v1.md` §3: a message id is a 4-byte time prefix (milliseconds mod 2³², big-endian) and 12
/// random bytes.
@Suite struct MessageIDTests {
    /// The prefix is the given clock's low 32 bits, most significant byte first (worked out by hand here).
    @Test func thePrefixIsTheClockInMillisecondsBigEndian() {
        // 1,800,000,000,123 ms is 0x1A3_185C_507B: its low 32 bits are 0x185C507B.
        let id = MessageID.draw(milliseconds: 1_800_000_000_123)
        #expect(id.count == 16)
        #expect(Array(id.prefix(4)) == [0x18, 0x5C, 0x50, 0x7B])
        #expect(MessageID.draw(milliseconds: 0x1_0000_0001).prefix(4) == [0, 0, 0, 1], "the clock is taken mod 2^32")
    }

    /// The other 12 bytes come from the secure random source: 10,000 ids drawn in the same millisecond are all
    /// different, and every byte position takes many values.
    @Test func theRestIsRandom() {
        let ids = (0..<10_000).map { _ in MessageID.draw(milliseconds: 42) }
        #expect(Set(ids).count == ids.count)
        for position in 4..<16 {
            let values = Set(ids.map { $0[position] })
            #expect(values.count > 200, "byte \(position) took only \(values.count) values in 10,000 ids")
        }
    }

    /// Ids drawn one after another sort by time: what lets a store that indexes them append (the gateway's
    /// `job_messages`). Their hex text (how the gateway stores them) sorts the same way.
    @Test func idsDrawnInSequenceSortByTheirTime() throws {
        let ids = [1_000, 1_001, 1_002, 2_000, 70_000].map { MessageID.draw(milliseconds: $0) }
        #expect(ids.map { Hex.encode($0) } == ids.map { Hex.encode($0) }.sorted())
        let sealer = try Sealer(identity: ServerIdentity.generate(), topic: "com.example.app")
        let device = try DevicePublicKey(rawRepresentation: ServerIdentity.generate().publicKey)
        let before = MessageID.currentMilliseconds()
        let sealed = try sealer.seal(NotificationContent(body: "hi"), to: device)
        let after = MessageID.currentMilliseconds()
        let prefix = sealed.messageID.prefix(4).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        // Milliseconds since `before`, mod 2^32 as the prefix is: at most the seal's duration, even across a wrap.
        let elapsed = (prefix &- before) & 0xFFFF_FFFF
        #expect(elapsed <= after - before, "a seal draws its id from the clock at the time")
    }
}
