import SealedPushCore
import Testing

/// `Specs/control-v1.md` §4's receipt record: the canonical JSON written out here from the spec's table, the fixed
/// 256-byte padding, and what a reader refuses.
@Suite("Delivery receipt record (control-v1 §4)")
struct DeliveryReceiptTests {
    let id: [UInt8] = Array(0..<16)

    func padded(_ json: String) -> [UInt8] {
        let bytes = Array(json.utf8)
        return [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xff)] + bytes + [UInt8](repeating: 0, count: 254 - bytes.count)
    }

    @Test func canonicalPaddedForm() throws {
        let receipt = DeliveryReceipt(messageID: id, outcome: .fallback(reason: "timedOut"), attachmentsDelivered: 1,
                                      attachmentsFailed: 2, deviceTime: 1_800_000_000)
        let expected = #"{"attachments":{"delivered":1,"failed":2},"device-time":1800000000,"message-id":"#
            + #""000102030405060708090a0b0c0d0e0f","outcome":"fallback","reason":"timedOut"}"#
        #expect(try receipt.paddedPlaintext() == padded(expected))
        #expect(try DeliveryReceipt(paddedPlaintext: padded(expected)) == receipt)
        let decrypted = DeliveryReceipt(messageID: id, outcome: .decrypted, deviceTime: 5)
        #expect(try DeliveryReceipt(paddedPlaintext: decrypted.paddedPlaintext()) == decrypted)
        #expect(try decrypted.paddedPlaintext().count == 256)
    }

    @Test(arguments: [
        #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"000102030405060708090a0b0c0d0e0f","outcome":"decrypted","extra":1}"#,
        #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"000102030405060708090A0B0C0D0E0F","outcome":"decrypted"}"#,
        #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"0001","outcome":"decrypted"}"#,
        #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"000102030405060708090a0b0c0d0e0f","outcome":"shown"}"#,
        #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"000102030405060708090a0b0c0d0e0f","outcome":"fallback"}"#,
        #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"000102030405060708090a0b0c0d0e0f","outcome":"decrypted","reason":"x"}"#,
        #"{"attachments":{"delivered":9,"failed":0},"device-time":1,"message-id":"000102030405060708090a0b0c0d0e0f","outcome":"decrypted"}"#,
        #"{"attachments":{"delivered":0},"device-time":1,"message-id":"000102030405060708090a0b0c0d0e0f","outcome":"decrypted"}"#,
        #"{"attachments":{"delivered":0,"failed":0},"device-time":-1,"message-id":"000102030405060708090a0b0c0d0e0f","outcome":"decrypted"}"#,
        #"["decrypted"]"#,
        // §4: a fallback's reason is 1 to 32 characters U+0021 ... U+007E (the reader refused none of these before).
        #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"000102030405060708090a0b0c0d0e0f","outcome":"fallback","reason":""}"#,
        #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"000102030405060708090a0b0c0d0e0f","outcome":"fallback","reason":"timed out"}"#,
        #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"000102030405060708090a0b0c0d0e0f","outcome":"fallback","reason":"abcdefghijklmnopqrstuvwxyz0123456"}"#,
        #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"000102030405060708090a0b0c0d0e0f","outcome":"fallback","reason":"d\u00e9j\u00e0"}"#,
        #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"000102030405060708090a0b0c0d0e0f","outcome":"fallback","reason":"a\nb"}"#,
        #"{"attachments":{"delivered":0,"failed":0},"device-time":1,"message-id":"000102030405060708090a0b0c0d0e0f","outcome":"fallback","reason":7}"#,
    ])
    func refusals(_ json: String) {
        #expect(throws: SealedPushError.self) { try DeliveryReceipt(paddedPlaintext: padded(json)) }
    }

    @Test func reasonAtItsBounds() throws {
        // Written out by hand: 1 and 32 characters, and the printable ASCII a JSON string escapes.
        for (escaped, reason) in [("x", "x"), ("abcdefghijklmnopqrstuvwxyz012345", "abcdefghijklmnopqrstuvwxyz012345"),
                                  (#"!~{}[]:,\"azAZ09"#, #"!~{}[]:,"azAZ09"#)] {
            let json = #"{"attachments":{"delivered":0,"failed":0},"device-time":3,"message-id":"000102030405060708090a0b0c0d0e0f","outcome":"fallback","reason":""#
                + escaped + #""}"#
            #expect(try DeliveryReceipt(paddedPlaintext: padded(json))
                == DeliveryReceipt(messageID: id, outcome: .fallback(reason: reason), deviceTime: 3))
        }
    }

    @Test func paddingAndLengthRules() throws {
        let good = try DeliveryReceipt(messageID: id, outcome: .duplicate, deviceTime: 9).paddedPlaintext()
        var nonZeroPadding = good
        nonZeroPadding[255] = 1
        #expect(throws: SealedPushError.self) { try DeliveryReceipt(paddedPlaintext: nonZeroPadding) }
        #expect(throws: SealedPushError.self) { try DeliveryReceipt(paddedPlaintext: Array(good.prefix(255))) }
        #expect(throws: SealedPushError.self) {
            try DeliveryReceipt(messageID: id, outcome: .fallback(reason: "with space"), deviceTime: 1).paddedPlaintext()
        }
        #expect(try DeliveryReceipt.hpkeInfo(topic: "com.example") == Array("SealedPush receipt v1".utf8) + [0] + Array("com.example".utf8))
    }
}
