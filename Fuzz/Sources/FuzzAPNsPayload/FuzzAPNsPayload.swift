import FuzzSupport
import SealedPushCore

/// `APNsPayload.extractEnvelope(fromBody:)` on arbitrary bytes (spec §8 steps 1–3): bodies over 4,096 bytes are
/// `payloadTooLarge`; otherwise only `malformedPayload` / `badEncoding`; an accepted body's `sp` text (found again by
/// an independent walk of the parsed tree) is canonical base64url and re-encodes to the same text. The userInfo path
/// must agree with the body path on the same `sp` string. The string members of a JSON object input also make an FCM
/// data map for `FCMPayload.extractEnvelope(fromData:)` (`Specs/fcm-v1.md` §4 steps 2–3): no `sp` is
/// `malformedPayload`, a text over 5,595 UTF-8 bytes `malformedEnvelope`, a non-canonical one `badEncoding`, else the
/// oracle's decoding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAPNsPayload(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Fuzz.bytes(data, size)
    checkFCMData(bytes)
    do {
        let envelope = try APNsPayload.extractEnvelope(fromBody: bytes)
        Fuzz.check(bytes.count <= 4096, "accepted a \(bytes.count)-byte body")
        let tree = try? JSONParser.parse(bytes, maxDepth: 32, errorCode: .malformedPayload)
        guard case .object(let members)? = tree, case .string(let text)? = members["sp"] else {
            Fuzz.check(false, "accepted a body without a top-level \"sp\" string")
            return 0
        }
        Fuzz.check(Oracle.isCanonicalBase64URL(Array(text.utf8)), "accepted non-canonical base64url \(text)")
        Fuzz.check(Base64URL.encode(envelope) == text, "decoded envelope does not re-encode to the sp text")
        let viaUserInfo = try? APNsPayload.extractEnvelope(fromUserInfo: ["sp": text, "aps": ["mutable-content": 1]])
        Fuzz.check(viaUserInfo == envelope, "userInfo path disagrees with the body path")
    } catch let error as SealedPushError {
        if bytes.count > 4096 {
            Fuzz.check(error.code == .payloadTooLarge, "a \(bytes.count)-byte body threw \(error.code)")
        } else {
            // The first failing step decides: a JSON object with an sp string → badEncoding, else malformedPayload.
            var spText: String?
            if case .object(let members)? = try? JSONParser.parse(bytes, maxDepth: 32),
                case .string(let text)? = members["sp"]
            {
                spText = text
            }
            if let spText {
                Fuzz.check(error.code == .badEncoding, "threw \(error.code) for a body with an sp string")
                Fuzz.check(!Oracle.isCanonicalBase64URL(Array(spText.utf8)), "rejected canonical sp \(spText)")
            } else {
                Fuzz.check(error.code == .malformedPayload, "threw \(error.code) for a body without an sp string")
            }
        }
    } catch {
        Fuzz.check(false, "unexpected error type: \(error)")
    }
    return 0
}

/// fcm-v1 §4 steps 2–3 on the data map made of the input's string members (FCM data is strings only).
private func checkFCMData(_ bytes: [UInt8]) {
    guard case .object(let members)? = try? JSONParser.parse(bytes, maxDepth: 32) else { return }
    var map: [String: String] = [:]
    for (name, value) in members { if case .string(let text) = value { map[name] = text } }
    let text = members["sp"]?.stringValue  // by code points, as FCM's map keys compare
    let expected: String? =
        if let text {
            if text.utf8.count > 5_595 { "malformedEnvelope" }
            else if !Oracle.isCanonicalBase64URL(Array(text.utf8)) { "badEncoding" }
            else { nil }
        } else { "malformedPayload" }
    do {
        let envelope = try FCMPayload.extractEnvelope(fromData: map)
        Fuzz.check(expected == nil, "the FCM path accepted a map fcm-v1 §4 refuses with \(expected ?? "")")
        Fuzz.check(envelope == Oracle.decodeBase64URL(Array((text ?? "").utf8)), "the FCM path decoded other bytes")
    } catch let error as SealedPushError {
        Fuzz.check(
            error.code.name == expected, "the FCM path threw \(error.code), fcm-v1 §4 gives \(expected ?? "success")")
    } catch {
        Fuzz.check(false, "unexpected error type: \(error)")
    }
}

/// The process entry: SwiftPM aliases `main` to this symbol; it hands the target to libFuzzer's driver.
@_cdecl("FuzzAPNsPayload_main")
public func fuzzAPNsPayloadMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.run(argc, argv, fuzzAPNsPayload)
}
