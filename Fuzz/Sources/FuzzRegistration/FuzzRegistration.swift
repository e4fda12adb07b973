import Foundation
import FuzzSupport
import SealedPushCore

/// `DeviceRegistration` JSON decoding on arbitrary bytes (including Foundation's ISO 8601 parsing of any string):
/// no crash, only `DecodingError` or `SealedPushError`; an accepted record is version 1 and its encoding decodes back
/// to the same record after one normalization (fractional seconds are dropped by the writer).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRegistration(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Fuzz.bytes(data, size)
    let decoder = JSONDecoder()
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    do {
        let record = try decoder.decode(DeviceRegistration.self, from: Data(bytes))
        Fuzz.check(record.version == 1, "accepted version \(record.version)")
        let once = try encoder.encode(record)
        let normalized = try decoder.decode(DeviceRegistration.self, from: once)
        Fuzz.check(normalized.publicKey == record.publicKey && normalized.keyId == record.keyId,
                   "strings changed in a round trip")
        Fuzz.check(abs(normalized.createdAt.timeIntervalSince(record.createdAt)) < 1, "createdAt moved by ≥ 1 s")
        let twice = try encoder.encode(normalized)
        Fuzz.check(once == twice, "encoding is not a fixed point after one normalization")
    } catch is DecodingError {
    } catch let error as SealedPushError {
        Fuzz.check(error.code == .invalidArgument || error.code == .invalidKey, "threw \(error.code)")
    } catch {
        Fuzz.check(false, "unexpected error type: \(type(of: error)) \(error)")
    }
    // The date parser alone, on the input as text (what a registration's date fields reach).
    if bytes.count <= 64 {
        let text = String(decoding: bytes, as: UTF8.self)
        if let date = try? DeviceRegistration.parseDate(text) {
            let formatted = DeviceRegistration.formatDate(date)
            Fuzz.check((try? DeviceRegistration.parseDate(formatted)) != nil, "formatDate output does not parse")
        }
    }
    return 0
}

/// The process entry: SwiftPM aliases `main` to this symbol; it hands the target to libFuzzer's driver.
@_cdecl("FuzzRegistration_main")
public func fuzzRegistrationMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.run(argc, argv, fuzzRegistration)
}
