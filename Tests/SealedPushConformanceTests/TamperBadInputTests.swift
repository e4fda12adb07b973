import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer
import Testing

/// Issue 5: truncations, extensions, wrong text encodings, oversize fields, deeply nested or huge JSON, duplicated
/// keys and non-UTF-8 strings each get their typed error (spec §8), with no crash. Inputs the server's `Sealer`
/// cannot produce (bad padding, malformed content) are sealed with the server's own HPKE primitives (package API),
/// so only the plaintext is hostile; the client opens everything.
@Suite struct TamperBadInputTests {
    // MARK: Helpers

    /// Seals an arbitrary padded plaintext into a valid envelope (header as the Sealer would write it).
    static func sealRaw(_ paddedPlaintext: [UInt8], seed: Int = 0) throws -> [UInt8] {
        let fixture = try TamperFixture.shared.get()
        let schedule = HPKEKeySchedule(mode: .auth, info: try EnvelopeV1.hpkeInfo(topic: TamperFixture.topic))
        let encapsulation = try DHKEMX25519.authEncap(
            recipientPublicKey: fixture.ring.current.publicKey, senderPrivateKey: TamperFixture.serverPrivateKey,
            ephemeralPrivateKey: TamperFixture.bytes(seed: seed, salt: 0xA1, count: 32))
        var context = try schedule.senderContext(sharedSecret: encapsulation.sharedSecret)
        let header = EnvelopeHeader(
            version: 1, suite: 1, recipientKeyID: fixture.device.keyID, senderKeyID: fixture.identity.keyID,
            messageID: TamperFixture.bytes(seed: seed, salt: 0xA2, count: 16), issuedAt: TamperFixture.issuedAt,
            expiresAt: TamperFixture.issuedAt + TamperFixture.ttl, enc: encapsulation.enc)
        let aad = header.encoded()
        return aad + (try context.seal(aad: aad, plaintext: paddedPlaintext))
    }

    /// Pads content text the spec's way (§5), written out here rather than through `Padding`.
    static func padded(_ content: [UInt8], to length: Int = 0) -> [UInt8] {
        let bucket = length > 0 ? length : [128, 256, 512, 1024, 1536, 2048, 2560, 2912].first { $0 >= content.count + 2 }!
        return [UInt8(content.count >> 8), UInt8(content.count & 0xFF)] + content
            + [UInt8](repeating: 0, count: bucket - 2 - content.count)
    }

    static func body(_ sp: String, before: String = #"{"aps":{"alert":{"body":"New notification"},"mutable-content":1},"#)
        -> [UInt8]
    {
        Array((before + #""sp":""# + sp + #""}"#).utf8)
    }

    static func b64(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes) }

    static func original() throws -> [UInt8] { try TamperFixture.shared.get().envelopes[1] }

    // MARK: Truncations and extensions

    @Test func everyTruncationOfAnEnvelope() throws {
        let fixture = try TamperFixture.shared.get()
        for original in [fixture.envelopes[1], fixture.envelopes[50]] {   // 128- and 512-byte buckets
            for length in 0..<original.count {
                let cut = Array(original.prefix(length))
                let expected = length < 226 ? "truncated" : "authenticationFailure"
                #expect(fixture.outcome(opening: cut) == expected, "length \(length)")
                #expect(fixture.outcome(openingBody: Self.body(Self.b64(cut))) == expected, "body, length \(length)")
            }
        }
    }

    @Test func everyTruncationOfABody() throws {
        let fixture = try TamperFixture.shared.get()
        let body = Self.body(Self.b64(try Self.original()))
        for length in 0..<body.count {
            #expect(fixture.outcome(openingBody: Array(body.prefix(length))) == "malformedPayload", "length \(length)")
        }
        // The sp text cut at every length and closed again: non-canonical lengths/bits, then a short envelope.
        let text = Array(Self.b64(try Self.original()).utf8)
        for length in 0..<text.count {
            let cut = Array(text.prefix(length))
            let lastBits = cut.last.map { Self.sextet($0) } ?? 0
            let canonical = length % 4 != 1
                && (length % 4 != 2 || lastBits & 0x0F == 0) && (length % 4 != 3 || lastBits & 0x03 == 0)
            let expected = !canonical ? "badEncoding" : (length * 3 / 4 < 226 ? "truncated" : "authenticationFailure")
            #expect(fixture.outcome(openingBody: Self.body(String(decoding: cut, as: UTF8.self))) == expected,
                    "sp length \(length)")
        }
    }

    static func sextet(_ char: UInt8) -> UInt8 {
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8).firstIndex(of: char)
            .map { UInt8($0) } ?? 0xFF
    }

    @Test func extensions() throws {
        let fixture = try TamperFixture.shared.get()
        let original = try Self.original()
        for extra in 1...64 {
            let longer = original + TamperFixture.bytes(seed: extra, salt: 0xE7, count: extra)
            #expect(fixture.outcome(opening: longer) == "authenticationFailure", "+\(extra) bytes")
        }
        #expect(fixture.outcome(opening: original + [0]) == "authenticationFailure")
        let largest = original + [UInt8](repeating: 0, count: 4194 - original.count)
        #expect(fixture.outcome(opening: largest) == "authenticationFailure")
        #expect(fixture.outcome(opening: largest + [0]) == "malformedEnvelope")
        #expect(fixture.outcome(opening: original + [UInt8](repeating: 0xFF, count: 100_000)) == "malformedEnvelope")

        let body = Self.body(Self.b64(original))
        #expect(fixture.outcome(openingBody: body) == "opened")
        #expect(fixture.outcome(openingBody: body + Array(" \n\t\r".utf8)) == "opened", "JSON allows trailing space")
        #expect(fixture.outcome(openingBody: body + Array("x".utf8)) == "malformedPayload")
        #expect(fixture.outcome(openingBody: body + Array("{}".utf8)) == "malformedPayload")
        #expect(fixture.outcome(openingBody: body + [0]) == "malformedPayload")
        let spaced = body + [UInt8](repeating: 0x20, count: 4096 - body.count)
        #expect(fixture.outcome(openingBody: spaced) == "opened", "exactly 4,096 bytes")
        #expect(fixture.outcome(openingBody: spaced + [0x20]) == "payloadTooLarge")
        #expect(fixture.outcome(openingBody: [UInt8](repeating: 0x20, count: 1_000_000)) == "payloadTooLarge")
    }

    // MARK: Text encodings

    @Test func wrongTextEncodings() throws {
        let fixture = try TamperFixture.shared.get()
        // An envelope whose base64url uses both '-' and '_', so the standard alphabet differs from it.
        let envelope = try #require(fixture.envelopes.first {
            let text = Self.b64($0)
            return text.contains("-") && text.contains("_")
        })
        let text = Self.b64(envelope)
        let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        #expect(fixture.outcome(openingBody: Self.body(standard)) == "badEncoding")
        let paddedText = text + String(repeating: "=", count: (4 - text.count % 4) % 4)
        if paddedText != text { #expect(fixture.outcome(openingBody: Self.body(paddedText)) == "badEncoding") }
        #expect(fixture.outcome(openingBody: Self.body(text + "==")) == "badEncoding")
        // MIME-style line breaks: raw (invalid JSON) and escaped (a JSON string with newlines in it).
        var lines = text
        lines.insert("\n", at: lines.index(lines.startIndex, offsetBy: 76))
        #expect(fixture.outcome(openingBody: Self.body(lines)) == "malformedPayload")
        let escaped = text.prefix(76) + #"\n"# + text.dropFirst(76)
        #expect(fixture.outcome(openingBody: Self.body(String(escaped))) == "badEncoding")
        #expect(fixture.outcome(openingBody: Self.body(" " + text)) == "badEncoding")
        #expect(fixture.outcome(openingBody: Self.body(text + " ")) == "badEncoding")
        // Unused trailing bits set: the last character of a 2-or-3-remainder encoding, made non-canonical.
        let remainder = text.count % 4
        #expect(remainder != 0, "fixture envelopes are not a multiple of 3 bytes")
        var chars = Array(text.utf8)
        let lastValue = Self.sextet(chars[chars.count - 1]) | 0x01   // bit 0 is unused for remainders 2 and 3
        chars[chars.count - 1] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)[
            Int(lastValue)]
        #expect(fixture.outcome(openingBody: Self.body(String(decoding: chars, as: UTF8.self))) == "badEncoding")
        // Hex instead of base64url: valid alphabet, wrong bytes; the decoded "envelope" fails structurally.
        let hex = Hex.encode(envelope)
        #expect(fixture.outcome(openingBody: Self.body(hex)) != "opened")

        // The whole body in other encodings.
        let body = Self.body(text)
        let string = String(decoding: body, as: UTF8.self)
        #expect(fixture.outcome(openingBody: Array(string.data(using: .utf16LittleEndian)!)) == "malformedPayload")
        #expect(fixture.outcome(openingBody: Array(string.data(using: .utf16BigEndian)!)) == "malformedPayload")
        #expect(fixture.outcome(openingBody: Array(string.data(using: .utf32)!)) == "malformedPayload")
        #expect(fixture.outcome(openingBody: [0xEF, 0xBB, 0xBF] + body) == "malformedPayload", "UTF-8 BOM")
        let latin1 = Array(#"{"aps":{"alert":{"body":"Caf"#.utf8) + [0xE9] + Array(#""}},"sp":""#.utf8)
            + Array(text.utf8) + Array(#""}"#.utf8)
        #expect(fixture.outcome(openingBody: latin1) == "malformedPayload", "ISO 8859-1 é")
        // JSON escapes are JSON: "\u0041" is "A", so an escaped but equal sp string opens.
        let first = text.prefix(1)
        let escapedFirst = String(format: "\\u%04x", first.unicodeScalars.first!.value) + text.dropFirst()
        #expect(fixture.outcome(openingBody: Self.body(escapedFirst)) == "opened")
    }

    // MARK: Oversize fields

    @Test func oversizeFields() throws {
        let fixture = try TamperFixture.shared.get()
        // Content over 2,910 bytes of canonical JSON cannot be sealed; 2,910 fits the 4,096-byte body exactly.
        let tooLong = NotificationContent(body: String(repeating: "a", count: 2_910 - #"{"body":""}"#.count + 1))
        #expect(try tooLong.canonicalJSON().count == 2_911)
        #expect(Self.sealError(tooLong, placeholder: .default) == "contentTooLarge")
        let longest = NotificationContent(body: String(repeating: "a", count: 2_910 - #"{"body":""}"#.count))
        let sealed = try fixture.sealer.seal(longest, to: fixture.device, now: TamperFixture.now)
        #expect(sealed.payload.count == 4_087)
        #expect(try fixture.opener.open(body: sealed.payload, now: TamperFixture.now).content == longest)
        // A longer placeholder leaves less room: the same content no longer fits.
        let verbose = Placeholder.text(title: String(repeating: "T", count: 40), body: String(repeating: "B", count: 40))
        #expect(Self.sealError(longest, placeholder: verbose) == "payloadTooLarge")

        // The userInfo path has no raw body (step 1 does not apply); its envelope text is bounded by the longest
        // envelope's encoding instead: step 4's malformedEnvelope, before decoding.
        let hugeText = String(repeating: "A", count: 8_000)
        #expect(TamperFixture.outcome { _ = try fixture.opener.open(userInfo: ["sp": hugeText], now: TamperFixture.now) }
            == "malformedEnvelope")
        #expect(TamperFixture.outcome { _ = try fixture.opener.open(userInfo: ["sp": 42], now: TamperFixture.now) }
            == "malformedPayload")
        #expect(TamperFixture.outcome { _ = try fixture.opener.open(userInfo: [:], now: TamperFixture.now) }
            == "malformedPayload")

        // A padded plaintext that is not a bucket but is well formed: the spec checks only length and zeros.
        let content = Array(#"{"body":"odd size"}"#.utf8)
        #expect(fixture.outcome(opening: try Self.sealRaw(Self.padded(content, to: 4_096))) == "opened")
        #expect(fixture.outcome(opening: try Self.sealRaw(Self.padded(content, to: 4_097))) == "malformedEnvelope")
        // Length prefixes that overrun the plaintext.
        var overrun = Self.padded(content)
        overrun[0] = 0xFF
        overrun[1] = 0xFF
        #expect(fixture.outcome(opening: try Self.sealRaw(overrun)) == "malformedContent")
        overrun[0] = 0
        overrun[1] = 127
        #expect(fixture.outcome(opening: try Self.sealRaw(overrun)) == "malformedContent", "2 + 127 > 128")
        var dirty = Self.padded(content)
        dirty[dirty.count - 1] = 1
        #expect(fixture.outcome(opening: try Self.sealRaw(dirty)) == "malformedContent", "non-zero padding")
        #expect(fixture.outcome(opening: try Self.sealRaw(Self.padded([], to: 128))) == "malformedContent", "empty")
    }

    static func sealError(_ content: NotificationContent, placeholder: Placeholder) -> String {
        TamperFixture.outcome {
            let fixture = try TamperFixture.shared.get()
            let sealer = try Sealer(identity: fixture.identity, topic: TamperFixture.topic, placeholder: placeholder)
            _ = try sealer.seal(content, to: fixture.device, now: TamperFixture.now)
        }
    }

    // MARK: Nesting and size

    @Test func deeplyNestedAndHugeJSON() throws {
        let fixture = try TamperFixture.shared.get()
        let text = Self.b64(try Self.original())
        func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        // Top-level object = level 1, so 31 arrays inside reach the limit of 32 and 32 exceed it.
        #expect(fixture.outcome(openingBody: Self.body(text, before: #"{"x":"# + nested(31) + ",")) == "opened")
        #expect(fixture.outcome(openingBody: Self.body(text, before: #"{"x":"# + nested(32) + ",")) == "malformedPayload")
        #expect(fixture.outcome(openingBody: Array(String(repeating: "[", count: 4_096).utf8)) == "malformedPayload")
        #expect(fixture.outcome(openingBody: Array(String(repeating: #"{"a":"#, count: 800).utf8)) == "malformedPayload")
        // Many members, just under the limit.
        var members = ""
        var index = 0
        while members.utf8.count + text.utf8.count < 3_900 {
            members += #""m\#(index)":\#(index),"#
            index += 1
        }
        #expect(fixture.outcome(openingBody: Self.body(text, before: "{" + members)) == "opened")
        #expect(fixture.outcome(openingBody: Self.body(text, before: #"{"n":1e99999,"#)) == "malformedPayload")
        #expect(fixture.outcome(openingBody: Self.body(text, before: #"{"n":-,"#)) == "malformedPayload")
        #expect(fixture.outcome(openingBody: Self.body(text, before: #"{"n":01,"#)) == "malformedPayload")

        // Inside the ciphertext: the content's nesting limit is 32 too.
        func content(_ depth: Int) -> [UInt8] { Array((#"{"data":"# + nested(depth) + "}").utf8) }
        #expect(fixture.outcome(opening: try Self.sealRaw(Self.padded(content(31)))) == "opened")
        #expect(fixture.outcome(opening: try Self.sealRaw(Self.padded(content(32)))) == "malformedContent")
        #expect(fixture.outcome(opening: try Self.sealRaw(Self.padded(Array(repeating: 0x5B, count: 2_910))))
            == "malformedContent")
        // Huge but valid content in the largest bucket opens.
        var numbers = #"{"data":[0"#
        while numbers.utf8.count < 2_900 { numbers += ",1" }
        numbers += "]}"
        #expect(fixture.outcome(opening: try Self.sealRaw(Self.padded(Array(numbers.utf8)))) == "opened")
    }

    /// A sender must not seal content every receiver is required to reject (spec §4: nesting over 32 levels).
    @Test func senderRefusesContentReceiversMustReject() throws {
        var value = JSONValue.null
        for _ in 0..<40 { value = .array([value]) }
        #expect(Self.sealError(NotificationContent(data: value), placeholder: .default) == "malformedContent")
    }

    // MARK: Duplicates, encodings of strings, types

    @Test func duplicatedKeys() throws {
        let fixture = try TamperFixture.shared.get()
        let text = Self.b64(try Self.original())
        #expect(fixture.outcome(openingBody: Array((#"{"sp":""# + text + #"","sp":""# + text + #""}"#).utf8))
            == "malformedPayload")
        #expect(fixture.outcome(openingBody: Self.body(text, before: #"{"aps":{},"aps":{},"#)) == "malformedPayload")
        #expect(fixture.outcome(openingBody: Self.body(text, before: #"{"aps":{"alert":{"body":"a","body":"b"}},"#))
            == "malformedPayload")
        #expect(fixture.outcome(openingBody: Self.body(text, before: #"{"s\u0070":"x","#)) == "malformedPayload",
                "escaped duplicate of sp")
        for json in [
            #"{"title":"a","title":"b"}"#, #"{"data":{"k":1,"k":2}}"#, #"{"title":"a","\u0074itle":"b"}"#,
            #"{"data":[{"x":{"y":1,"y":1}}]}"#,
        ] {
            #expect(fixture.outcome(opening: try Self.sealRaw(Self.padded(Array(json.utf8)))) == "malformedContent",
                    "\(json)")
        }
    }

    @Test func nonUTF8Strings() throws {
        let fixture = try TamperFixture.shared.get()
        let text = Self.b64(try Self.original())
        let invalid: [[UInt8]] = [
            [0xC3, 0x28], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0x80], [0xBF], [0xFE], [0xFF], [0xF0, 0x9F, 0x98], [0xE2, 0x82],
        ]
        for bytes in invalid {
            let body = Array(#"{"aps":{"alert":{"body":""#.utf8) + bytes + Array(#""}},"sp":""#.utf8)
                + Array(text.utf8) + Array(#""}"#.utf8)
            #expect(fixture.outcome(openingBody: body) == "malformedPayload", "\(bytes)")
            let content = Array(#"{"body":"x"#.utf8) + bytes + Array(#""}"#.utf8)
            #expect(fixture.outcome(opening: try Self.sealRaw(Self.padded(content))) == "malformedContent", "\(bytes)")
            let key = Array(#"{"data":{""#.utf8) + bytes + Array(#"":1}}"#.utf8)
            #expect(fixture.outcome(opening: try Self.sealRaw(Self.padded(key))) == "malformedContent", "key \(bytes)")
        }
        for escape in [#"\ud800"#, #"\udc00"#, #"\ud800\u0041"#, #"\ud83d"#] {
            let content = Array((#"{"body":""# + escape + #""}"#).utf8)
            #expect(fixture.outcome(opening: try Self.sealRaw(Self.padded(content))) == "malformedContent", "\(escape)")
        }
        let emoji = Array(#"{"body":"\ud83d\ude00 ✓"}"#.utf8)
        #expect(fixture.outcome(opening: try Self.sealRaw(Self.padded(emoji))) == "opened")
    }

    @Test func wrongContentTypesAndRanges() throws {
        let fixture = try TamperFixture.shared.get()
        for json in [
            "[]", #""body""#, "null", "{", #"{"title":5}"#, #"{"badge":"3"}"#, #"{"badge":1.5}"#, #"{"badge":-1}"#,
            #"{"badge":2147483648}"#, #"{"relevance-score":1.5}"#, #"{"relevance-score":-0.1}"#,
            #"{"interruption-level":"loud"}"#, #"{"attachments":["https://x"]}"#, #"{"attachments":{}}"#,
            #"{"attachments":[{"uri":"x"}]}"#,
            #"{"title":null}"#, #"{"data":1e400}"#, #"{"data":9007199254740993}"#,
            #"{"sound":true}"#, #"{"body":"x"} {}"#, #"{"body":"x",}"#, "{\"body\":\"tab\there\"}",
        ] {
            #expect(fixture.outcome(opening: try Self.sealRaw(Self.padded(Array(json.utf8)))) == "malformedContent",
                    "\(json)")
        }
        for json in [#"{"badge":2147483647,"relevance-score":1}"#, #"{"future":[1,{"x":null}]}"#, "{}",
                     #"{"attachments":[{"url":"x","type":"?"}]}"#, #"{"data":null}"#, #"{"data":{"\u00e9":1,"e\u0301":2}}"#] {
            #expect(fixture.outcome(opening: try Self.sealRaw(Self.padded(Array(json.utf8)))) == "opened", "\(json)")
        }
    }

    /// Each failure class reaches the extension step as a placeholder with the reason the spec error maps to.
    @Test func badInputThroughTheExtensionStep() async throws {
        let fixture = try TamperFixture.shared.get()
        let fallback = Placeholder.localized(key: "SEALEDPUSH_FALLBACK")
        let step = try fixture.extensionStep(fallback: fallback)
        let text = Self.b64(try Self.original())
        let cases: [(String, [UInt8], FallbackReason)] = [
            ("truncated body", Array(Self.body(text).dropLast(3)), .malformed),
            ("padding =", Self.body(text + "="), .malformed),
            ("oversize body", Self.body(text) + [UInt8](repeating: 0x20, count: 4_000), .malformed),
            ("nested", Array(String(repeating: "[", count: 4_096).utf8), .malformed),
            ("duplicate sp", Array((#"{"sp":"AA","sp":"AA"}"#).utf8), .malformed),
            ("non-UTF-8", [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D], .malformed),
            ("malformed content", Self.body(Self.b64(try Self.sealRaw(Self.padded(Array("[]".utf8))))), .malformed),
            ("bad padding", Self.body(Self.b64(try Self.sealRaw(Self.padded([], to: 128).map { _ in 1 })))
                , .malformed),
            ("extended", Self.body(Self.b64(try Self.original() + [0])), .authenticationFailure),
        ]
        for (name, body, reason) in cases {
            let delivery = await TamperBitFlipTests.deliver(step, body)
            #expect(delivery.content == .placeholder(fallback), "\(name)")
            #expect(delivery.outcome == .fallback(reason), "\(name)")
        }
    }
}
