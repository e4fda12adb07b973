import Crypto
import Foundation
import SealedPushCore
import Testing

@testable import SealedPushClient

func errorCode<T>(_ body: () throws -> T) -> SealedPushError.Code? {
    do {
        _ = try body()
        return nil
    } catch let error as SealedPushError {
        return error.code
    } catch {
        return SealedPushError.Code.io  // not expected: any non-SealedPushError fails the comparison below
    }
}

@Suite("EnvelopeOpener: spec §8 steps 1-12")
struct EnvelopeOpenerTests {
    let sealer = TestSealer()
    let device = Curve25519.KeyAgreement.PrivateKey()
    var devicePublic: [UInt8] { Array(device.publicKey.rawRepresentation) }
    let now: UInt64 = 1_800_000_000

    func opener(topic: String = "com.example.sealedpush", extraDevice: [[UInt8]] = []) throws -> EnvelopeOpener {
        try EnvelopeOpener(
            devicePrivateKeys: [Array(device.rawRepresentation)] + extraDevice,
            serverPublicKeys: [sealer.serverPublicKey],
            topic: topic
        )
    }

    func envelope(
        _ json: String = #"{"title":"Hi","body":"Secret"}"#,
        issuedAt: UInt64? = nil,
        expiresAt: UInt64? = nil,
        padded: [UInt8]? = nil,
        topic: String? = nil
    ) throws -> [UInt8] {
        try sealer.sealEnvelope(
            contentJSON: json,
            to: devicePublic,
            issuedAt: issuedAt ?? now,
            expiresAt: expiresAt ?? now + 3600,
            topic: topic,
            paddedOverride: padded
        )
    }

    func body(_ envelope: [UInt8]) -> [UInt8] {
        Array(#"{"aps":{"alert":{"body":"New notification"},"mutable-content":1},"sp":""#.utf8)
            + Array(Base64URL.encode(envelope).utf8) + Array(#""}"#.utf8)
    }

    @Test("a sealed body opens with the content and authenticated header fields")
    func opensBody() throws {
        let messageID = TestSealer.randomMessageID()
        let sealed = try sealer.sealBody(
            contentJSON: #"{"title":"Hi","subtitle":"S","body":"Geheim 🙂 \u00e9","badge":7,"thread-id":"t1"}"#,
            to: devicePublic,
            issuedAt: now - 10,
            expiresAt: now + 100,
            messageID: messageID
        )
        let opened = try opener().open(body: sealed, now: now)
        #expect(opened.content.title == "Hi")
        #expect(opened.content.subtitle == "S")
        #expect(opened.content.body == "Geheim 🙂 é")
        #expect(opened.content.badge == 7)
        #expect(opened.messageID == messageID)
        #expect(opened.issuedAt == now - 10)
        #expect(opened.expiresAt == now + 100)
        #expect(opened.recipientKeyID.bytes == TestSealer.keyID(devicePublic))
        #expect(opened.senderKeyID.bytes == TestSealer.keyID(sealer.serverPublicKey))
    }

    @Test("userInfo path opens; the device key is looked up among several")
    func opensUserInfo() throws {
        let other = Curve25519.KeyAgreement.PrivateKey()
        let sealed = body(try envelope())
        let object = try JSONSerialization.jsonObject(with: Data(sealed))
        let userInfo = try #require(object as? [String: Any])
        let opened = try opener(extraDevice: [Array(other.rawRepresentation)]).open(userInfo: userInfo, now: now)
        #expect(opened.content.body == "Secret")
        #expect(errorCode { try opener().open(userInfo: ["aps": ["alert": "x"]], now: now) } == .malformedPayload)
    }

    @Test("expiry boundary: now == expiresAt is expired, expiresAt - 1 opens")
    func expiryBoundary() throws {
        let sealed = try envelope(issuedAt: now - 100, expiresAt: now + 50)
        #expect(errorCode { try opener().open(envelope: sealed, now: now + 50) } == .expired)
        #expect(errorCode { try opener().open(envelope: sealed, now: now + 51) } == .expired)
        let opened = try opener().open(envelope: sealed, now: now + 49)
        #expect(opened.content.title == "Hi")
    }

    @Test("steps 1-3: size, JSON, base64url")
    func payloadSteps() throws {
        let big = Array(#"{"pad":""#.utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 4090) + Array(#""}"#.utf8)
        #expect(errorCode { try opener().open(body: big, now: now) } == .payloadTooLarge)
        #expect(errorCode { try opener().open(body: Array(#"{"aps":{}}"#.utf8), now: now) } == .malformedPayload)
        #expect(errorCode { try opener().open(body: Array("[1]".utf8), now: now) } == .malformedPayload)
        #expect(errorCode { try opener().open(body: Array(#"{"sp":1}"#.utf8), now: now) } == .malformedPayload)
        #expect(errorCode { try opener().open(body: Array(#"{"sp":"AAA="}"#.utf8), now: now) } == .badEncoding)
        #expect(errorCode { try opener().open(body: Array(#"{"sp":"AA+/"}"#.utf8), now: now) } == .badEncoding)
    }

    @Test("steps 4-7 come before key lookup; 8 and 9 before expiry")
    func stepOrder() throws {
        let good = try envelope()
        #expect(errorCode { try opener().open(envelope: Array(good.prefix(82 + 16 + 127)), now: now) } == .truncated)
        #expect(errorCode { try opener().open(envelope: good + [UInt8](repeating: 0, count: 4000), now: now) }
            == .malformedEnvelope)

        var badVersion = good
        badVersion[0] = 2
        badVersion[2] ^= 0xff  // also an unknown recipient: version must win
        #expect(errorCode { try opener().open(envelope: badVersion, now: now) } == .unsupportedVersion)

        var badSuite = good
        badSuite[1] = 2
        badSuite[2] ^= 0xff
        #expect(errorCode { try opener().open(envelope: badSuite, now: now) } == .unsupportedSuite)

        let inverted = try envelope(issuedAt: now + 10, expiresAt: now + 9)
        #expect(errorCode { try opener().open(envelope: inverted, now: now) } == .malformedEnvelope)
        let tooLong = try envelope(issuedAt: now, expiresAt: now + 2_419_201)
        #expect(errorCode { try opener().open(envelope: tooLong, now: now) } == .malformedEnvelope)
        let longest = try envelope(issuedAt: now, expiresAt: now + 2_419_200)
        #expect(try opener().open(envelope: longest, now: now).content.title == "Hi")

        // Unknown recipient wins over unknown sender and expiry.
        var unknownRecipient = try envelope(issuedAt: now - 100, expiresAt: now - 1)
        unknownRecipient[5] ^= 1
        unknownRecipient[12] ^= 1
        #expect(errorCode { try opener().open(envelope: unknownRecipient, now: now) } == .unknownRecipientKey)

        // Unknown sender wins over expiry.
        var unknownSender = try envelope(issuedAt: now - 100, expiresAt: now - 1)
        unknownSender[12] ^= 1
        #expect(errorCode { try opener().open(envelope: unknownSender, now: now) } == .unknownSenderKey)
        let otherServer = try EnvelopeOpener(
            devicePrivateKeys: [Array(device.rawRepresentation)],
            serverPublicKeys: [Array(Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation)],
            topic: "com.example.sealedpush"
        )
        #expect(errorCode { try otherServer.open(envelope: good, now: now) } == .unknownSenderKey)
    }

    @Test("step 11: every cryptographic failure is the same authenticationFailure")
    func authenticationFailures() throws {
        let good = try envelope()
        #expect(errorCode { try opener(topic: "com.example.other").open(envelope: good, now: now) }
            == .authenticationFailure)

        var ciphertext = good
        ciphertext[ciphertext.count - 1] ^= 0x80
        #expect(errorCode { try opener().open(envelope: ciphertext, now: now) } == .authenticationFailure)

        var messageID = good
        messageID[20] ^= 1
        #expect(errorCode { try opener().open(envelope: messageID, now: now) } == .authenticationFailure)

        var issued = good
        issued[41] ^= 1  // issuedAt lowest byte: still a valid lifetime
        #expect(errorCode { try opener().open(envelope: issued, now: now) } == .authenticationFailure)

        var zeroEnc = good
        for index in 50..<82 { zeroEnc[index] = 0 }  // a low-order point: all-zero DH result
        #expect(errorCode { try opener().open(envelope: zeroEnc, now: now) } == .authenticationFailure)

        // A different server identity sealing while claiming the pinned key's id.
        let impostor = TestSealer(serverKey: .init())
        var forged = try impostor.sealEnvelope(
            contentJSON: "{}", to: devicePublic, issuedAt: now, expiresAt: now + 10
        )
        let pinnedID = TestSealer.keyID(sealer.serverPublicKey)
        forged.replaceSubrange(10..<18, with: pinnedID)
        #expect(errorCode { try opener().open(envelope: forged, now: now) } == .authenticationFailure)
    }

    @Test("every single-byte change of a sealed envelope is rejected")
    func everyByteChangeRejected() throws {
        let good = try envelope(#"{"body":"x"}"#)
        #expect(good.count == 82 + 16 + 128)
        let opener = try opener()
        for index in good.indices {
            var changed = good
            changed[index] ^= 0x01
            #expect(errorCode { try opener.open(envelope: changed, now: now) } != nil, "byte \(index)")
        }
        #expect(try opener.open(envelope: good, now: now).content.body == "x")
    }

    @Test("step 12: bad padding and bad content are malformedContent")
    func malformedContent() throws {
        #expect(errorCode { try opener().open(envelope: try envelope("not json"), now: now) } == .malformedContent)
        #expect(errorCode { try opener().open(envelope: try envelope("[1]"), now: now) } == .malformedContent)
        #expect(errorCode { try opener().open(envelope: try envelope(#"{"badge":"7"}"#), now: now) }
            == .malformedContent)

        var nonZeroPadding = [UInt8](repeating: 0, count: 128)
        let json = Array("{}".utf8)
        nonZeroPadding[1] = UInt8(json.count)
        nonZeroPadding.replaceSubrange(2..<4, with: json)
        nonZeroPadding[127] = 1
        #expect(errorCode { try opener().open(envelope: try envelope(padded: nonZeroPadding), now: now) }
            == .malformedContent)

        var overlong = [UInt8](repeating: 0, count: 128)
        overlong[0] = 0
        overlong[1] = 127  // 2 + 127 > 128
        #expect(errorCode { try opener().open(envelope: try envelope(padded: overlong), now: now) }
            == .malformedContent)

        var valid = [UInt8](repeating: 0, count: 128)
        valid[1] = UInt8(json.count)
        valid.replaceSubrange(2..<4, with: json)
        #expect(try opener().open(envelope: try envelope(padded: valid), now: now).content == NotificationContent())
    }

    @Test("construction rejects bad keys and topics")
    func construction() throws {
        #expect(errorCode {
            try EnvelopeOpener(devicePrivateKeys: [[1, 2]], serverPublicKeys: [sealer.serverPublicKey], topic: "t")
        } == .invalidKey)
        #expect(errorCode {
            try EnvelopeOpener(devicePrivateKeys: [Array(device.rawRepresentation)], serverPublicKeys: [], topic: "t")
        } == .invalidKey)
        #expect(errorCode {
            try EnvelopeOpener(devicePrivateKeys: [], serverPublicKeys: [sealer.serverPublicKey], topic: "t")
        } == .invalidKey)
        let deviceKey = [Array(device.rawRepresentation)]
        #expect(errorCode {
            try EnvelopeOpener(devicePrivateKeys: deviceKey, serverPublicKeys: [sealer.serverPublicKey], topic: "")
        } == .invalidTopic)
        #expect(errorCode {
            try EnvelopeOpener(devicePrivateKeys: deviceKey, serverPublicKeys: [sealer.serverPublicKey], topic: "a\u{0}b")
        } == .invalidTopic)
        #expect(errorCode {
            try EnvelopeOpener(
                devicePrivateKeys: deviceKey, serverPublicKeys: [sealer.serverPublicKey],
                topic: String(repeating: "x", count: 256)
            )
        } == .invalidTopic)
        #expect(errorCode {
            try SealedPushReceiver(
                keyStore: InMemoryKeyStore(), replayGuard: nil, serverPublicKeys: [sealer.serverPublicKey], topic: ""
            )
        } == .invalidTopic)
        #expect(errorCode {
            try SealedPushReceiver(keyStore: InMemoryKeyStore(), replayGuard: nil, serverPublicKeys: [[0]], topic: "t")
        } == .invalidKey)
    }
}
