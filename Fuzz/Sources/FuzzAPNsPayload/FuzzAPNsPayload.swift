import FuzzSupport
import SealedPushCore

/// `APNsPayload.extractEnvelope(fromBody:)` on arbitrary bytes (spec §8 steps 1–3): bodies over 4,096 bytes are
/// `payloadTooLarge`; otherwise only `malformedPayload` / `badEncoding`; an accepted body's `sp` text (found again by
/// an independent walk of the parsed tree) is canonical base64url and re-encodes to the same text. The userInfo path
/// must agree with the body path on the same `sp` string.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAPNsPayload(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Fuzz.bytes(data, size)
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

/// The process entry: SwiftPM aliases `main` to this symbol; it hands the target to libFuzzer's driver.
@_cdecl("FuzzAPNsPayload_main")
public func fuzzAPNsPayloadMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.run(argc, argv, fuzzAPNsPayload)
}
