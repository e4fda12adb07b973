import FuzzSupport
import SealedPushClient
import SealedPushCore

/// The device key ring file parser (`DeviceKeyRing(fileBytes:)`, `Specs/keyring-v1.md` §2) on arbitrary bytes.
///
/// Checks: it fails only with `keyStoreCorrupt`, and its message never echoes private key characters; a file it
/// accepts obeys the spec's rules (at least one key, unique key ids, exactly the last key current), and the
/// canonical form `fileBytes()` of what it accepted parses back to the same keys and times and re-serializes to
/// the same bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeyRing(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Fuzz.bytes(data, size)
    do {
        let ring = try DeviceKeyRing(fileBytes: bytes)
        let keys = ring.keys
        Fuzz.check(!keys.isEmpty, "accepted a key ring without keys")
        Fuzz.check(Set(keys.map(\.keyID)).count == keys.count, "accepted a duplicated key id")
        Fuzz.check(keys.last?.retiredAt == nil, "accepted a ring whose last key is retired")
        Fuzz.check(keys.dropLast().allSatisfy { $0.retiredAt != nil }, "accepted a current key before the last")
        let canonical = ring.fileBytes()
        do {
            let again = try DeviceKeyRing(fileBytes: canonical)
            Fuzz.check(again.keys.map(\.keyID) == keys.map(\.keyID), "canonical form changed the key ids")
            Fuzz.check(again.keys.map(\.createdAt) == keys.map(\.createdAt), "canonical form changed createdAt")
            Fuzz.check(again.keys.map(\.retiredAt) == keys.map(\.retiredAt), "canonical form changed retiredAt")
            Fuzz.check(again.fileBytes() == canonical, "canonical form is not stable")
        } catch {
            Fuzz.check(false, "rejected its own canonical form: \(error)")
        }
    } catch let error as SealedPushError {
        Fuzz.check(error.code == .keyStoreCorrupt, "threw \(error.code)")
        // Never echo key material: a run of 12 key characters after any "SPSK1:" must not appear in the message.
        // Runs of lowercase hex digits are exempt: messages name key ids derived from public keys (16 lowercase hex
        // digits), which an input may also place after "SPSK1:"; a real private key text is all-hex with
        // probability (22/64)^12, about 3e-6.
        let marker = Array("SPSK1:".utf8)
        var index = 0
        while index + marker.count + 12 <= bytes.count {
            if Array(bytes[index..<index + marker.count]) == marker {
                let run = Array(bytes[(index + marker.count)..<(index + marker.count + 12)])
                let lowercaseHex = Array("0123456789abcdef".utf8)
                if run.allSatisfy({ Oracle.value(of: $0) != nil }), !run.allSatisfy({ lowercaseHex.contains($0) }) {
                    Fuzz.check(!error.message.contains(String(decoding: run, as: UTF8.self)),
                               "error message echoes a private key")
                }
            }
            index += 1
        }
    } catch {
        Fuzz.check(false, "unexpected error type: \(error)")
    }
    return 0
}

/// The process entry: SwiftPM aliases `main` to this symbol; it hands the target to libFuzzer's driver.
@_cdecl("FuzzKeyRing_main")
public func fuzzKeyRingMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.run(argc, argv, fuzzKeyRing)
}
