import Foundation
import FuzzSupport
import SealedPushCore
import SealedPushServer

/// Receipts (`Specs/control-v1.md` §4) on arbitrary bytes: what the gateway's receipt endpoint, which phones call
/// without an API key, parses. Keys, topic and time come from `Specs/vectors/control-v1.json` (path:
/// `SEALEDPUSH_CONTROL_VECTORS`, default relative to the repository root, where `scripts/fuzz.sh` runs); seeds are its
/// receipts, refused receipts and records.
///
/// Each input is tried three ways:
/// - **As a receipt envelope**, opened by the server library's `ReceiptOpener` with the vectors' server identity and
///   registered device key. The checks before the cryptography give the code an independent oracle computes from §4's
///   order (length, header, key ids, times); past them only `authenticationFailure` or `malformedContent`. It may
///   open only if it is byte for byte one of the vectors' receipts (anything else would be a forgery), to that
///   vector's record, with the header's receipt id, device key id and times.
/// - **As a record's JSON**, padded as a writer pads it, and **as a whole padded plaintext**, read by
///   `DeliveryReceipt(paddedPlaintext:)`: accepted exactly when §4's padding and member rules hold (an oracle on the
///   parsed tree); an accepted record's canonical padded form is 256 bytes and reads back to the same record; a
///   refusal is `malformedContent`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReceipt(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let setup = Setup.shared else { return 0 }
    let bytes = Fuzz.bytes(data, size)
    checkOpen(bytes, setup)
    if bytes.count <= 254 {
        let prefix = [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xff)]
        checkRecord(prefix + bytes + [UInt8](repeating: 0, count: 254 - bytes.count))
    }
    checkRecord(bytes)
    return 0
}

private func checkOpen(_ bytes: [UInt8], _ setup: Setup) {
    let expected = setup.expectedEarlyError(bytes)
    do {
        let opened = try setup.opener.open(
            bytes, devicePublicKey: { $0.bytes == setup.deviceKeyID ? setup.devicePublicKey : nil }, now: setup.now)
        Fuzz.check(expected == nil, "opened a receipt the spec refuses with \(expected ?? "")")
        guard let recordJSON = setup.validReceipts[bytes] else {
            Fuzz.check(false, "opened a receipt that is not one of the vectors': a forgery")
            return
        }
        var writer = JSONWriter()
        writer.value(.object(opened.receipt.jsonObject))
        Fuzz.check(writer.bytes == recordJSON, "opened a vector receipt to another record")
        Fuzz.check(opened.receiptID == Array(bytes[18..<34]), "the receipt id is not the header's messageId")
        Fuzz.check(opened.deviceKeyID.bytes == setup.deviceKeyID, "the device key id is not the header's")
        Fuzz.check(opened.issuedAt == Oracle.bigEndian(bytes[34..<42]), "issuedAt is not the header's")
        Fuzz.check(opened.expiresAt == Oracle.bigEndian(bytes[42..<50]), "expiresAt is not the header's")
    } catch let error as SealedPushError {
        if let expected {
            Fuzz.check(error.code.name == expected, "threw \(error.code) but §4's checks before HPKE give \(expected)")
        } else {
            Fuzz.check(error.code == .authenticationFailure || error.code == .malformedContent,
                       "threw \(error.code) after the checks before HPKE passed")
        }
    } catch {
        Fuzz.check(false, "unexpected error type: \(error)")
    }
}

private func checkRecord(_ padded: [UInt8]) {
    let valid = isValidPaddedRecord(padded)
    do {
        let record = try DeliveryReceipt(paddedPlaintext: padded)
        Fuzz.check(valid, "read a record §4 refuses")
        let canonical = try record.paddedPlaintext()
        Fuzz.check(canonical.count == 256, "the canonical padded record is \(canonical.count) bytes")
        Fuzz.check(isValidPaddedRecord(canonical), "the canonical padded record breaks §4")
        let again = try DeliveryReceipt(paddedPlaintext: canonical)
        Fuzz.check(again == record, "the canonical form reads back differently")
    } catch let error as SealedPushError {
        Fuzz.check(!valid, "refused a record §4 accepts: \(error)")
        Fuzz.check(error.code == .malformedContent, "a record refused with \(error.code)")
    } catch {
        Fuzz.check(false, "unexpected error type: \(error)")
    }
}

/// §4's record, written from the spec: exactly 256 bytes of envelope-spec §5 padding around a JSON object with
/// `message-id` (32 lowercase hex digits), `outcome` (`decrypted`, `duplicate` or `fallback`), `reason` exactly with
/// `fallback` (1 to 32 characters U+0021 ... U+007E), `attachments` (`delivered` and `failed`, each a whole number 0
/// ... 8, nothing else) and `device-time` (a whole number 0 ... 2^53 − 1), and no other member.
private func isValidPaddedRecord(_ padded: [UInt8]) -> Bool {
    guard padded.count == 256, let json = Oracle.unpad(padded),
        case .object(let members)? = try? JSONParser.parse(json, maxDepth: 32, errorCode: .malformedContent)
    else { return false }
    guard Set(members.map(\.key)).isSubset(of: ["message-id", "outcome", "reason", "attachments", "device-time"]) else {
        return false
    }
    guard case .string(let id)? = members["message-id"], id.utf8.count == 32,
        id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
    else { return false }
    guard case .string(let outcome)? = members["outcome"], ["decrypted", "duplicate", "fallback"].contains(outcome)
    else { return false }
    if outcome == "fallback" {
        guard case .string(let reason)? = members["reason"], (1...32).contains(reason.unicodeScalars.count),
            reason.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) })
        else { return false }
    } else if members["reason"] != nil {
        return false
    }
    func whole(_ value: JSONValue?, max: Double) -> Bool {
        guard case .number(let number)? = value else { return false }
        return number >= 0 && number <= max && number == number.rounded(.towardZero)
    }
    guard case .object(let attachments)? = members["attachments"], attachments.count == 2,
        whole(attachments["delivered"], max: 8), whole(attachments["failed"], max: 8)
    else { return false }
    return whole(members["device-time"], max: 9_007_199_254_740_991)
}

/// The process entry: SwiftPM aliases `main` to this symbol; it hands the target to libFuzzer's driver.
@_cdecl("FuzzReceipt_main")
public func fuzzReceiptMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    guard Setup.shared != nil else {
        var text = "FuzzReceipt: cannot load the control vectors (set SEALEDPUSH_CONTROL_VECTORS)\n"
        text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
        return 2
    }
    return Fuzz.run(argc, argv, fuzzReceipt)
}

/// The server identity, the registered device key, the time and the known-good receipts, loaded once.
private struct Setup: Sendable {
    static let shared: Setup? = try? Setup()

    let opener: ReceiptOpener
    let serverKeyID: [UInt8]
    let deviceKeyID: [UInt8]
    let devicePublicKey: [UInt8]
    let now: UInt64
    /// Each vector receipt and its record's canonical JSON (plain buffers, which LeakSanitizer can trace at exit).
    let validReceipts: [[UInt8]: [UInt8]]

    init() throws {
        let path = ProcessInfo.processInfo.environment["SEALEDPUSH_CONTROL_VECTORS"] ?? "Specs/vectors/control-v1.json"
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let receipts = root["receipts"] as? [[String: Any]], let first = receipts.first,
            let serverPrivate = first["serverPrivateKey"] as? String,
            let devicePublic = first["devicePublicKey"] as? String, let topic = first["topic"] as? String,
            let now = first["now"] as? Int, let receipt = first["receipt"] as? String
        else { throw SealedPushError(.invalidArgument, "unexpected control vector file shape") }
        opener = try ReceiptOpener(identity: ServerIdentity(privateKey: try Hex.decode(serverPrivate)), topic: topic)
        devicePublicKey = try Hex.decode(devicePublic)
        // The key ids as the vectors' receipts name them (recipient: the server identity, sender: the device).
        let header = try Hex.decode(receipt)
        serverKeyID = Array(header[2..<10])
        deviceKeyID = Array(header[10..<18])
        self.now = UInt64(now)
        var valid = [[UInt8]: [UInt8]]()
        for vector in receipts {
            guard let bytes = vector["receipt"] as? String, let json = vector["recordJSON"] as? String,
                vector["serverPrivateKey"] as? String == serverPrivate,
                vector["devicePublicKey"] as? String == devicePublic, vector["topic"] as? String == topic,
                vector["now"] as? Int == now
            else { throw SealedPushError(.invalidArgument, "the vectors' receipts do not share keys, topic and time") }
            valid[try Hex.decode(bytes)] = Array(json.utf8)
        }
        validReceipts = valid
    }

    /// §4's checks before the cryptography, in its order, computed from the bytes alone.
    func expectedEarlyError(_ bytes: [UInt8]) -> String? {
        guard bytes.count == 82 + 256 + 16 else { return "malformedEnvelope" }
        if bytes[0] != 0x01 { return "unsupportedVersion" }
        if bytes[1] != 0x01 { return "unsupportedSuite" }
        let issuedAt = Oracle.bigEndian(bytes[34..<42])
        let expiresAt = Oracle.bigEndian(bytes[42..<50])
        if issuedAt > expiresAt || expiresAt - issuedAt > 604_800 { return "malformedEnvelope" }
        if Array(bytes[2..<10]) != serverKeyID { return "unknownRecipientKey" }
        if Array(bytes[10..<18]) != deviceKeyID { return "unknownSenderKey" }
        if !(now < expiresAt) { return "expired" }
        if issuedAt > now + 600 { return "notYetValid" }
        return nil
    }
}
