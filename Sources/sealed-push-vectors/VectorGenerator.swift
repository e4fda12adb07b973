import Foundation
import SealedPushCore
import SealedPushServer
import SealedPushTestSupport

/// Regenerates `Specs/vectors/envelope-v1.json` with the libsodium sealer and fixed inputs.
///
/// Run: `swift run sealed-push-vectors Specs/vectors/envelope-v1.json`. The output changes only if the format does.
/// `swift run sealed-push-vectors blob Specs/vectors/blob-v1.json` regenerates the blob vectors instead
/// (``BlobVectorGenerator``); `swift run sealed-push-vectors fcm Specs/vectors/fcm-v1.json` the FCM vectors
/// (``FCMVectorGenerator``); `swift run sealed-push-vectors keyring Specs/vectors/keyring-v1.json` the key ring
/// files (``KeyRingVectorGenerator``); `swift run sealed-push-vectors control Specs/vectors/control-v1.json` the control
/// message and receipt vectors (``ControlVectorGenerator``). `sealed-push-vectors content-verdicts IN OUT` judges
/// content inputs for the differential test against the Java library (``ContentVerdicts``);
/// `sealed-push-vectors envelope-verdicts TOPIC DEVICE_PRIVATE_HEX SERVER_PUBLIC IN OUT` opens APNs bodies for the same (``EnvelopeVerdicts``).
@main
enum VectorGenerator {
    static let topic = "com.example.sealedpush"
    static let issuedAt: UInt64 = 1_800_000_000  // 2027-01-15T08:00:00Z
    static let expiresAt: UInt64 = issuedAt + 86_400

    static func key(_ byte: UInt8) -> [UInt8] { (0..<32).map { UInt8(truncatingIfNeeded: Int(byte) &* 31 &+ $0 &* 7) } }

    static func main() throws {
        if CommandLine.arguments.dropFirst().first == "blob" {
            try BlobVectorGenerator.run(outPath: CommandLine.arguments.dropFirst(2).first ?? "Specs/vectors/blob-v1.json")
            return
        }
        if CommandLine.arguments.dropFirst().first == "control" {
            try ControlVectorGenerator.run(
                outPath: CommandLine.arguments.dropFirst(2).first ?? "Specs/vectors/control-v1.json")
            return
        }
        if CommandLine.arguments.dropFirst().first == "content-verdicts" {
            guard CommandLine.arguments.count == 4 else {
                throw SealedPushError(.invalidArgument, "usage: sealed-push-vectors content-verdicts IN OUT")
            }
            try ContentVerdicts.run(input: CommandLine.arguments[2], output: CommandLine.arguments[3])
            return
        }
        if CommandLine.arguments.dropFirst().first == "envelope-verdicts" {
            let arguments = CommandLine.arguments
            guard arguments.count == 7 else {
                throw SealedPushError(
                    .invalidArgument,
                    "usage: sealed-push-vectors envelope-verdicts TOPIC DEVICE_PRIVATE_HEX SERVER_PUBLIC IN OUT")
            }
            try EnvelopeVerdicts.run(
                topic: arguments[2], devicePrivateKeyHex: arguments[3], serverPublicKey: arguments[4],
                input: arguments[5], output: arguments[6])
            return
        }
        if CommandLine.arguments.dropFirst().first == "keyring" {
            try KeyRingVectorGenerator.run(outPath: CommandLine.arguments.dropFirst(2).first ?? "Specs/vectors/keyring-v1.json")
            return
        }
        if CommandLine.arguments.dropFirst().first == "fcm" {
            try FCMVectorGenerator.run(outPath: CommandLine.arguments.dropFirst(2).first ?? "Specs/vectors/fcm-v1.json")
            return
        }
        let outPath = CommandLine.arguments.dropFirst().first ?? "Specs/vectors/envelope-v1.json"
        let server = try ServerIdentity(privateKey: key(0xA1))
        let otherServer = try ServerIdentity(privateKey: key(0xB2))
        let device = try ServerIdentity(privateKey: key(0xC3))  // an X25519 key pair; only its public half seals
        let otherDevice = try ServerIdentity(privateKey: key(0xD4))
        let devicePublic = try DevicePublicKey(rawRepresentation: device.publicKey)

        var positives: [EnvelopeVectorFile.Positive] = []
        func positive(
            _ name: String, _ content: NotificationContent, placeholder: Placeholder = .default,
            now: UInt64 = issuedAt + 60
        ) throws -> EnvelopeVectorFile.Positive {
            let index = UInt8(positives.count + 1)
            let ephemeral = key(index)
            let messageID = (0..<16).map { UInt8(truncatingIfNeeded: Int(index) << 4 | $0) }
            let sealer = try Sealer(identity: server, topic: topic, placeholder: placeholder)
            let sealed = try sealer.seal(
                content, to: devicePublic, ephemeralPrivateKey: ephemeral, messageID: messageID, issuedAt: issuedAt,
                expiresAt: expiresAt)
            let contentJSON = try content.canonicalJSON()
            let vector = EnvelopeVectorFile.Positive(
                name: name, content: try JSONParser.parse(contentJSON), contentJSON: String(decoding: contentJSON, as: UTF8.self),
                placeholder: placeholder, ephemeralPrivateKey: Hex.encode(ephemeral), messageId: Hex.encode(messageID),
                issuedAt: issuedAt, expiresAt: expiresAt, paddedPlaintext: Hex.encode(try Padding.pad(contentJSON)),
                envelope: Hex.encode(sealed.envelope), payload: String(decoding: sealed.payload, as: UTF8.self), now: now)
            positives.append(vector)
            return vector
        }

        let base = try positive("minimal-body", NotificationContent(body: "Your code is 271828"))
        _ = try positive(
            "full-content-unicode",
            NotificationContent(
                title: "Ünïcödé ✉️ \"quoted\"", subtitle: "日本語のサブタイトル", body: "Line 1\nLine 2\t👩‍👩‍👧‍👦 / \\ \u{01}",
                badge: 42, sound: "chime.caf", threadID: "thread-7", category: "MESSAGE",
                interruptionLevel: .timeSensitive, relevanceScore: 0.75, targetContentID: "conversation/7",
                data: .object([
                    "conversation": .number(7), "ids": .array([.number(1), .number(2.5), .null, .bool(true)]),
                    "nested": .object(["ok": .bool(false), "é": .string("ß")]),
                ])))
        _ = try positive("empty-content", NotificationContent())
        _ = try positive(
            "localized-placeholder-with-sound", NotificationContent(title: "Alice", body: "Lunch?"),
            placeholder: .localized(key: "NEW_MESSAGE", args: ["1"], sound: "default"))
        _ = try positive(
            "titled-placeholder", NotificationContent(body: "Meeting moved to 3pm"),
            placeholder: .text(title: "Calendar", body: "You have an update"))
        _ = try positive(
            "opens-one-second-before-expiry", NotificationContent(body: "boundary"), now: expiresAt - 1)
        // Canonical JSON {"body":"xxx…"} is 11 bytes + the string: 126 bytes fill the 128 bucket exactly.
        _ = try positive("bucket-128-full", NotificationContent(body: String(repeating: "a", count: 115)))
        _ = try positive("bucket-256-first", NotificationContent(body: String(repeating: "b", count: 116)))
        // 2,910 bytes of content fill the largest bucket; the body is then 4,087 bytes (spec §6.1).
        _ = try positive("largest-bucket", NotificationContent(body: String(repeating: "z", count: 2899)))
        // Spec §4: `data` may be null (kept, distinct from absent); unknown members travel end to end after the
        // known ones; a receiver that does not process attachments checks only that they are objects.
        _ = try positive("data-null", NotificationContent(body: "n", data: .null))
        var future = NotificationContent(body: "future")
        future.additionalMembers = ["x-later": .object(["b": .number(2), "a": .array([.string("z")])]), "ab": .bool(true)]
        _ = try positive("unknown-members-kept", future)
        _ = try positive(
            "attachments-not-processed",
            NotificationContent(body: "photo", attachments: [
                .object(["url": .string("https://example.com/b/1")]),
                .object(["url": .string("https://example.com/b/2"), "type": .string("application/x-future"), "x": .null]),
            ]))
        // Spec §4.1 numbers: plain integers below 2^53, shortest round-trip digits otherwise, exponent form for
        // integers at or above 2^53 and for E < -4; zero of either sign is 0.
        _ = try positive(
            "data-numbers",
            NotificationContent(data: .object([
                "a-max-exact": .number(9_007_199_254_740_991), "b-two-53": .number(9_007_199_254_740_992),
                "c-1e16": .number(1e16), "d-small": .number(0.0001), "e-smaller": .number(0.00001),
                "f-frac": .number(-123.456), "g-neg-zero": .number(-0.0), "h-big": .number(1.2345678901234568e+20),
                "i-tiny": .number(.leastNonzeroMagnitude),  // 5e-324
            ])))
        _ = try positive("opens-at-clock-skew-limit", NotificationContent(body: "early"), now: issuedAt - EnvelopeV1.maxClockSkew)

        var negatives: [EnvelopeVectorFile.Negative] = []
        let envelope = try Hex.decode(base.envelope)
        func negative(_ name: String, _ error: SealedPushError.Code, payload: String, topic: String = topic,
                      now: UInt64 = issuedAt + 60) {
            negatives.append(.init(name: name, payload: payload, topic: topic, now: now, expectedError: error.name))
        }
        func altered(
            _ name: String, _ error: SealedPushError.Code, from source: [UInt8]? = nil, _ change: (inout [UInt8]) -> Void
        ) {
            var bytes = source ?? envelope
            change(&bytes)
            negative(name, error, payload: String(decoding: APNsPayload.encode(placeholder: .default, envelope: bytes), as: UTF8.self))
        }
        altered("version-altered", .unsupportedVersion) { $0[0] = 2 }
        altered("suite-altered", .unsupportedSuite) { $0[1] = 2 }
        altered("recipient-key-id-altered", .unknownRecipientKey) { $0[2] ^= 0x01 }
        altered("sender-key-id-altered", .unknownSenderKey) { $0[17] ^= 0x80 }
        altered("message-id-altered", .authenticationFailure) { $0[18] ^= 0x01 }
        altered("issued-at-altered", .authenticationFailure) { $0[41] ^= 0x01 }
        altered("expires-at-altered", .authenticationFailure) { $0[49] ^= 0x01 }
        altered("lifetime-over-28-days", .malformedEnvelope) { bytes in
            let tooLate = issuedAt + EnvelopeV1.maxLifetime + 1
            for position in 0..<8 { bytes[42 + position] = UInt8(truncatingIfNeeded: tooLate >> UInt64(56 - 8 * position)) }
        }
        // Step 7's other half: issued after it expires (one second later than expiresAt).
        altered("issued-after-expiry", .malformedEnvelope) { bytes in
            let late = expiresAt + 1
            for position in 0..<8 { bytes[34 + position] = UInt8(truncatingIfNeeded: late >> UInt64(56 - 8 * position)) }
        }
        altered("enc-altered", .authenticationFailure) { $0[50] ^= 0x01 }
        // A low-order enc (u = 0): DH(skR, enc) is all zeros, which every receiver MUST reject (spec §2).
        altered("enc-low-order-zero", .authenticationFailure) { bytes in
            for position in 50..<82 { bytes[position] = 0 }
        }
        altered("ciphertext-altered", .authenticationFailure) { $0[82] ^= 0x01 }
        altered("tag-altered", .authenticationFailure) { $0[$0.count - 1] ^= 0x01 }
        // The minimal vector is the smallest envelope (226 bytes): shorten a larger one so it stays over the minimum.
        altered("ciphertext-shortened", .authenticationFailure, from: try Hex.decode(positives[1].envelope)) {
            $0.removeLast()
        }
        altered("truncated", .truncated) { $0.removeLast($0.count - 225) }
        negative("wrong-topic", .authenticationFailure, payload: base.payload, topic: "com.example.other")
        negative("expired", .expired, payload: base.payload, now: expiresAt)
        negative("expired-long-ago", .expired, payload: base.payload, now: expiresAt + 86_400 * 365)
        // Step 10a: issuedAt more than 600 s ahead of the receiver's clock.
        negative("not-yet-valid", .notYetValid, payload: base.payload, now: issuedAt - EnvelopeV1.maxClockSkew - 1)
        negative("not-yet-valid-years-ahead", .notYetValid, payload: base.payload, now: issuedAt - 5 * 365 * 86_400)
        // Step 4's upper bound: only reachable when the body arrives parsed (userInfo), as step 1 caps raw bodies.
        let oversizeEnvelope = envelope + [UInt8](repeating: 0, count: EnvelopeV1.maximumLength + 1 - envelope.count)
        negatives.append(.init(
            name: "envelope-over-maximum", payload: #"{"sp":""# + Base64URL.encode(oversizeEnvelope) + #""}"#,
            topic: topic, now: issuedAt + 60, expectedError: SealedPushError.Code.malformedEnvelope.name,
            parsedBody: true))

        // Step 3a before step 3: an over-long text handed over parsed is malformedEnvelope whatever its characters
        // (5,600 characters, the last a padding '=').
        negatives.append(.init(
            name: "envelope-over-maximum-bad-encoding",
            payload: #"{"sp":""# + String(repeating: "A", count: 5_599) + #"="}"#,
            topic: topic, now: issuedAt + 60, expectedError: SealedPushError.Code.malformedEnvelope.name,
            parsedBody: true))

        let foreignSealer = try Sealer(identity: otherServer, topic: topic)
        let foreign = try foreignSealer.seal(
            NotificationContent(body: "x"), to: devicePublic, ephemeralPrivateKey: key(0x61),
            messageID: [UInt8](repeating: 0x61, count: 16), issuedAt: issuedAt, expiresAt: expiresAt)
        negative("unknown-sender", .unknownSenderKey, payload: String(decoding: foreign.payload, as: UTF8.self))
        let sealer = try Sealer(identity: server, topic: topic)
        let otherKey = try sealer.seal(
            NotificationContent(body: "x"), to: DevicePublicKey(rawRepresentation: otherDevice.publicKey),
            ephemeralPrivateKey: key(0x62), messageID: [UInt8](repeating: 0x62, count: 16), issuedAt: issuedAt,
            expiresAt: expiresAt)
        negative("unknown-recipient-key-id", .unknownRecipientKey, payload: String(decoding: otherKey.payload, as: UTF8.self))

        // Authentic envelopes whose plaintext breaks spec §5 or §4: the receiver fails after opening.
        func rawSealed(_ name: String, _ plaintext: [UInt8], ephemeral: UInt8) throws {
            let sealed = try sealer.seal(
                rawPlaintext: plaintext, to: devicePublic, ephemeralPrivateKey: key(ephemeral),
                messageID: [UInt8](repeating: ephemeral, count: 16), issuedAt: issuedAt, expiresAt: expiresAt)
            negative(name, .malformedContent, payload: String(decoding: sealed.payload, as: UTF8.self))
        }
        var nonZeroPadding = try Padding.pad(Array(#"{"body":"x"}"#.utf8))
        nonZeroPadding[nonZeroPadding.count - 1] = 1
        try rawSealed("padding-not-zero", nonZeroPadding, ephemeral: 0x63)
        var overlong = try Padding.pad(Array(#"{"body":"x"}"#.utf8))
        overlong[0] = 0x01  // states 256 + 12 bytes of content in a 128-byte plaintext
        try rawSealed("content-length-beyond-plaintext", overlong, ephemeral: 0x64)
        try rawSealed("content-not-json", Padding.pad(Array("body=x".utf8)), ephemeral: 0x65)
        try rawSealed("content-not-an-object", Padding.pad(Array(#"["x"]"#.utf8)), ephemeral: 0x66)
        try rawSealed("content-duplicated-member", Padding.pad(Array(#"{"body":"a","body":"b"}"#.utf8)), ephemeral: 0x67)
        try rawSealed("content-badge-out-of-range", Padding.pad(Array(#"{"badge":-1}"#.utf8)), ephemeral: 0x68)
        try rawSealed("content-invalid-utf8", Padding.pad([0x7B, 0x22, 0x62, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D]), ephemeral: 0x69)
        try rawSealed("content-number-overflows-double", Padding.pad(Array(#"{"data":1e400}"#.utf8)), ephemeral: 0x6A)
        try rawSealed("content-integer-beyond-2-53", Padding.pad(Array(#"{"data":9007199254740993}"#.utf8)), ephemeral: 0x6B)
        try rawSealed("content-lone-escaped-surrogate", Padding.pad(Array(#"{"body":"\ud800"}"#.utf8)), ephemeral: 0x6C)
        try rawSealed("content-byte-order-mark", Padding.pad([0xEF, 0xBB, 0xBF] + Array(#"{"body":"x"}"#.utf8)), ephemeral: 0x6D)
        try rawSealed("content-known-member-null", Padding.pad(Array(#"{"title":null}"#.utf8)), ephemeral: 0x6E)
        try rawSealed("content-attachments-not-array", Padding.pad(Array(#"{"attachments":{"url":"x"}}"#.utf8)), ephemeral: 0x6F)
        try rawSealed("content-attachment-not-object", Padding.pad(Array(#"{"attachments":["https://x"]}"#.utf8)), ephemeral: 0x70)
        try rawSealed("content-attachment-without-url", Padding.pad(Array(#"{"attachments":[{"uri":"https://x"}]}"#.utf8)), ephemeral: 0x75)
        // §4: known members have their type and range.
        try rawSealed("content-relevance-score-out-of-range", Padding.pad(Array(#"{"relevance-score":1.5}"#.utf8)), ephemeral: 0x79)
        try rawSealed("content-interruption-level-unknown", Padding.pad(Array(#"{"interruption-level":"urgent"}"#.utf8)), ephemeral: 0x7A)
        try rawSealed("content-known-member-wrong-type", Padding.pad(Array(#"{"title":1}"#.utf8)), ephemeral: 0x7B)
        try rawSealed("content-broken-surrogate-pair", Padding.pad(Array(#"{"body":"\ud83d\u0041"}"#.utf8)), ephemeral: 0x7C)
        try rawSealed("content-raw-control-character", Padding.pad([0x7B, 0x22, 0x62, 0x6F, 0x64, 0x79, 0x22, 0x3A, 0x22, 0x01, 0x22, 0x7D]), ephemeral: 0x7D)
        // §4.3: content-ref, when present, is an object with a url string.
        try rawSealed("content-ref-not-object", Padding.pad(Array(#"{"body":"x","content-ref":"https://x"}"#.utf8)), ephemeral: 0x76)
        try rawSealed("content-ref-without-url", Padding.pad(Array(#"{"body":"x","content-ref":{"key":"x"}}"#.utf8)), ephemeral: 0x77)
        try rawSealed("content-nested-too-deep", Padding.pad(Array(("{\"data\":" + String(repeating: "[", count: 32)
            + String(repeating: "]", count: 32) + "}").utf8)), ephemeral: 0x71)

        let b64 = Base64URL.encode(envelope)
        let standard = Data(envelope).base64EncodedString()
        negative("standard-base64-with-padding", .badEncoding, payload: #"{"aps":{},"sp":""# + standard + #""}"#)
        negative("base64-padding-appended", .badEncoding, payload: #"{"sp":""# + b64 + #"=="}"#)
        negative("base64-space", .badEncoding, payload: #"{"sp":" "# + b64 + #""}"#)
        negative("base64-length-1-mod-4", .badEncoding, payload: #"{"sp":""# + b64 + (b64.count % 4 == 0 ? "A" : String(repeating: "A", count: (5 - b64.count % 4) % 4)) + #""}"#)
        // §6: the unused low bits of the last character must be zero (here the lowest bit set instead).
        // The base envelope's length is not a multiple of 3, so its text's last character has unused bits.
        precondition(b64.count % 4 != 0, "the base envelope's text has no unused bits")
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        let last = alphabet.firstIndex(of: b64.utf8.last!)!
        let unusedBits = String(b64.dropLast()) + String(UnicodeScalar(alphabet[last | 1]))
        negative("base64-unused-bits-set", .badEncoding, payload: #"{"sp":""# + unusedBits + #""}"#)
        negative("missing-envelope", .malformedPayload, payload: #"{"aps":{"alert":{"body":"x"},"mutable-content":1}}"#)
        negative("envelope-not-a-string", .malformedPayload, payload: #"{"sp":12345}"#)
        negative("duplicated-envelope-member", .malformedPayload, payload: #"{"sp":""# + b64 + #"","sp":""# + b64 + #""}"#)
        negative("duplicated-member-outside-envelope", .malformedPayload, payload: #"{"aps":{},"aps":{},"sp":""# + b64 + #""}"#)
        negative("duplicated-member-nested", .malformedPayload,
                 payload: #"{"aps":{"alert":{"body":"a","body":"b"}},"sp":""# + b64 + #""}"#)
        negative("body-byte-order-mark", .malformedPayload, payload: "\u{FEFF}" + base.payload)
        negative("not-json", .malformedPayload, payload: "sp=" + b64)
        negative("top-level-array", .malformedPayload, payload: #"[""# + b64 + #""]"#)
        negative("oversize-body", .payloadTooLarge,
                 payload: #"{"aps":{},"pad":""# + String(repeating: "p", count: 4000) + #"","sp":""# + b64 + #""}"#)

        // Bodies a receiver must open although a sender would not emit them byte for byte.
        var accepted: [EnvelopeVectorFile.Accepted] = []
        func accept(_ name: String, _ payload: String, contentJSON: String) {
            accepted.append(.init(name: name, payload: payload, now: issuedAt + 60, contentJSON: contentJSON))
        }
        // §6: the alphabet check applies to the decoded JSON string, so escapes of alphabet characters are fine.
        let escaped = String(format: "\\u%04x", Int(b64.utf8.first!)) + String(b64.dropFirst())
        accept("envelope-with-json-escapes", #"{"sp":""# + escaped + #""}"#, contentJSON: base.contentJSON)
        accept("other-members-any-order", #"{"sp":""# + b64 + #"","x":[1,{"y":null}],"aps":{"mutable-content":1}}"#,
               contentJSON: base.contentJSON)
        // §5/§8 step 4: bucket sizes are a sender rule; a receiver accepts any padded length within the bounds.
        for (name, length, tag) in [("padding-not-a-bucket", 300, UInt8(0x72)), ("padding-beyond-largest-bucket", 2916, 0x73)] {
            let content = Array(#"{"body":"odd padding"}"#.utf8)
            let padded = [UInt8(content.count >> 8), UInt8(content.count & 0xFF)] + content
                + [UInt8](repeating: 0, count: length - 2 - content.count)
            let sealed = try sealer.seal(
                rawPlaintext: padded, to: devicePublic, ephemeralPrivateKey: key(tag),
                messageID: [UInt8](repeating: tag, count: 16), issuedAt: issuedAt, expiresAt: expiresAt)
            let minimal = #"{"sp":""# + Base64URL.encode(sealed.envelope) + #""}"#
            accept(name, minimal, contentJSON: String(decoding: content, as: UTF8.self))
        }
        // §4: any valid JSON, so a number literal of any length (a sender's decimal type) reads as its double.
        let longNumber = try sealer.seal(
            rawPlaintext: Padding.pad(Array((#"{"body":"n","data":1."# + String(repeating: "0", count: 100) + "}").utf8)),
            to: devicePublic, ephemeralPrivateKey: key(0x78), messageID: [UInt8](repeating: 0x78, count: 16),
            issuedAt: issuedAt, expiresAt: expiresAt)
        accept("content-long-number", String(decoding: longNumber.payload, as: UTF8.self), contentJSON: #"{"body":"n","data":1}"#)
        // RFC 8259 §8.3: names compare by code points, so NFC "\u{e9}" and NFD "e\u{301}" are two members.
        let normalization = NotificationContent(data: .object(["\u{e9}": .number(1), "e\u{301}": .number(2)]))
        let normalized = try sealer.seal(
            normalization, to: devicePublic, ephemeralPrivateKey: key(0x74),
            messageID: [UInt8](repeating: 0x74, count: 16), issuedAt: issuedAt, expiresAt: expiresAt)
        accept("nfc-and-nfd-names-are-distinct", String(decoding: normalized.payload, as: UTF8.self),
               contentJSON: String(decoding: try normalization.canonicalJSON(), as: UTF8.self))

        let numbers: [Double] = [
            0, -0.0, 1, -1, 42, 9_007_199_254_740_991, -9_007_199_254_740_991, 9_007_199_254_740_992,
            9_007_199_254_740_994, 1e15 + 0.5, 1e16, 1e21, 1e300, .greatestFiniteMagnitude, 0.5, 0.1, 0.0001, 0.00001,
            1.5e-5, 123.456, -0.000123, 1.2345678901234568e+20, .leastNonzeroMagnitude, 2.2250738585072014e-308, 4503599627370495.5,
            // Powers of two, whose lower rounding interval is half the upper one: the shortest digits that read back
            // are not always the exact value rounded to that many digits (2^-24 is 5.960464477539063e-08).
            0x1p-24, 0x1p-44, 0x1p89, 0x1p122, 0x1p-1022, 0x1p1023,
        ]
        let canonicalNumbers = numbers.map { value in
            EnvelopeVectorFile.CanonicalNumber(
                bits: String(format: "%016llx", value.bitPattern), text: JSONWriter.canonicalNumber(value))
        }
        var highBit = device.publicKey
        highBit[31] |= 0x80
        let invalidPublicKeys: [EnvelopeVectorFile.InvalidPublicKey] = [
            .init(name: "bit-255-set", text: KeyText.encodePublicKey(highBit)),
            .init(name: "p-itself", text: KeyText.encodePublicKey([0xED] + [UInt8](repeating: 0xFF, count: 30) + [0x7F])),
            .init(name: "p-plus-1", text: KeyText.encodePublicKey([0xEE] + [UInt8](repeating: 0xFF, count: 30) + [0x7F])),
            .init(name: "all-ones", text: KeyText.encodePublicKey([UInt8](repeating: 0xFF, count: 32))),
            .init(name: "wrong-prefix", text: "SPK2:" + String(device.publicKeyText.dropFirst(5))),
            .init(name: "too-short", text: String(device.publicKeyText.dropLast())),
            .init(name: "non-canonical-last-character", text: String(device.publicKeyText.dropLast()) + "B"),
        ]

        let file = EnvelopeVectorFile(
            generator: "swift run sealed-push-vectors Specs/vectors/envelope-v1.json", topic: topic,
            serverPrivateKey: Hex.encode(key(0xA1)), serverPublicKey: server.publicKeyText, serverKeyId: server.keyID.hex,
            devicePrivateKey: Hex.encode(key(0xC3)), devicePublicKey: device.publicKeyText, deviceKeyId: device.keyID.hex,
            positive: positives, negative: negatives, accepted: accepted, canonicalNumbers: canonicalNumbers,
            invalidPublicKeys: invalidPublicKeys)
        try file.encoded().write(to: URL(fileURLWithPath: outPath), options: .atomic)
        print("wrote \(positives.count) positive, \(negatives.count) negative and \(accepted.count) accepted vectors, "
              + "\(canonicalNumbers.count) numbers and \(invalidPublicKeys.count) invalid keys to \(outPath)")
    }
}
