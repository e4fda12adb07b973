import Foundation
import FuzzSupport
import SealedPushClient
import SealedPushCore

/// The full client open path (`EnvelopeOpener.open(body:now:)`, spec §8 steps 1–12) on arbitrary bytes, with the
/// device and server keys of `Specs/vectors/envelope-v1.json` (path: `SEALEDPUSH_VECTORS`, default relative to the
/// repository root, where `scripts/fuzz.sh` runs). Seeds are the vectors' positive and negative payloads.
///
/// Checks: only `SealedPushError` with a §8 code; for steps 1–10 the code is the one an independent oracle computes
/// from the bytes, the vector key ids and `now`; an input that passes steps 1–10 fails only with
/// `authenticationFailure` or `malformedContent`, or opens — and it may open only if its envelope is byte for byte a
/// positive vector's envelope (anything else would be a forgery), giving that vector's content.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzClientOpen(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let setup = Setup.shared else { return 0 }
    let bytes = Fuzz.bytes(data, size)
    let expected = setup.expectedEarlyError(bytes)
    do {
        let opened = try setup.opener.open(body: bytes, now: setup.now)
        Fuzz.check(expected == nil, "opened a body the spec rejects with \(expected ?? "")")
        let envelope = (try? APNsPayload.extractEnvelope(fromBody: bytes)) ?? []
        guard let contentJSON = setup.validEnvelopes[envelope] else {
            Fuzz.check(false, "opened an envelope that is not a positive vector: a forgery")
            return 0
        }
        Fuzz.check((try? opened.content.canonicalJSON()) == contentJSON, "opened a vector envelope to other content")
    } catch let error as SealedPushError {
        if let expected {
            Fuzz.check(error.code.name == expected, "threw \(error.code) but steps 1-10 give \(expected)")
        } else {
            Fuzz.check(error.code == .authenticationFailure || error.code == .malformedContent,
                       "threw \(error.code) after steps 1-10 passed")
        }
    } catch {
        Fuzz.check(false, "unexpected error type: \(error)")
    }
    return 0
}

/// The process entry: SwiftPM aliases `main` to this symbol; it hands the target to libFuzzer's driver.
@_cdecl("FuzzClientOpen_main")
public func fuzzClientOpenMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    guard Setup.shared != nil else {
        var text = "FuzzClientOpen: cannot load the vectors (set SEALEDPUSH_VECTORS)\n"
        text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
        return 2
    }
    return Fuzz.run(argc, argv, fuzzClientOpen)
}

/// Keys, ids, time and the known-good envelopes, loaded once from the vector file.
private struct Setup: Sendable {
    static let shared: Setup? = try? Setup()

    let opener: EnvelopeOpener
    let deviceKeyID: [UInt8]
    let serverKeyID: [UInt8]
    let now: UInt64
    /// Each positive vector's envelope and its canonical content JSON (bytes, not `NotificationContent`: values
    /// held in a global for the process's life must be plain buffers LeakSanitizer can trace at exit).
    let validEnvelopes: [[UInt8]: [UInt8]]

    init() throws {
        let path = ProcessInfo.processInfo.environment["SEALEDPUSH_VECTORS"] ?? "Specs/vectors/envelope-v1.json"
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let topic = root["topic"] as? String,
            let devicePrivate = root["devicePrivateKey"] as? String,
            let serverPublic = root["serverPublicKey"] as? String,
            let deviceKeyID = root["deviceKeyId"] as? String,
            let serverKeyID = root["serverKeyId"] as? String,
            let positive = root["positive"] as? [[String: Any]], let first = positive.first,
            let now = first["now"] as? Int
        else { throw SealedPushError(.invalidArgument, "unexpected vector file shape") }
        opener = try EnvelopeOpener(
            devicePrivateKeys: [try Hex.decode(devicePrivate)], serverPublicKeys: [try KeyText.decodePublicKey(serverPublic)],
            topic: topic)
        self.deviceKeyID = try Hex.decode(deviceKeyID)
        self.serverKeyID = try Hex.decode(serverKeyID)
        self.now = UInt64(now)
        var valid = [[UInt8]: [UInt8]]()
        for vector in positive {
            guard let envelope = vector["envelope"] as? String, let json = vector["contentJSON"] as? String
            else { continue }
            valid[try Hex.decode(envelope)] = Array(json.utf8)
        }
        validEnvelopes = valid
    }

    /// Spec §8 steps 1–10, computed independently of SealedPush's parsers (JSON aside: the strict parser is fuzzed
    /// against Foundation by FuzzJSON).
    func expectedEarlyError(_ body: [UInt8]) -> String? {
        if body.count > 4096 { return "payloadTooLarge" }
        guard case .object(let members)? = try? JSONParser.parse(body, maxDepth: 32, errorCode: .malformedPayload),
            case .string(let text)? = members["sp"]
        else { return "malformedPayload" }
        let chars = Array(text.utf8)
        guard Oracle.isCanonicalBase64URL(chars) else { return "badEncoding" }
        let envelope = Oracle.decodeBase64URL(chars)
        if let error = Oracle.envelopeError(envelope) { return error }
        if Array(envelope[2..<10]) != deviceKeyID { return "unknownRecipientKey" }
        if Array(envelope[10..<18]) != serverKeyID { return "unknownSenderKey" }
        if !(now < Oracle.bigEndian(envelope[42..<50])) { return "expired" }
        if Oracle.bigEndian(envelope[34..<42]) > now + 600 { return "notYetValid" }  // step 10a
        return nil
    }
}
