import Foundation
import FuzzSupport
import SealedPushCore

/// The strict `JSONParser` on arbitrary bytes: it fails only with the requested code; anything it accepts is also
/// valid JSON to Foundation's `JSONSerialization` (strict ⊂ permissive) and is valid UTF-8; `JSONWriter` output of an
/// accepted value parses back to the same value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Fuzz.bytes(data, size)
    do {
        let value = try JSONParser.parse(bytes, maxDepth: 32, errorCode: .malformedPayload)
        Fuzz.check(String(validating: bytes, as: UTF8.self) != nil, "accepted invalid UTF-8")
        Fuzz.check(depth(of: value) <= 32, "accepted nesting deeper than 32")
        var writer = JSONWriter()
        writer.value(value)
        let again = try JSONParser.parse(writer.bytes, maxDepth: 32, errorCode: .malformedContent)
        Fuzz.check(again == value, "writer output parses to a different value")
        let foundation = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        Fuzz.check(foundation != nil, "JSONSerialization rejects JSON the strict parser accepts")
    } catch let error as SealedPushError {
        Fuzz.check(error.code == .malformedPayload, "threw \(error.code) instead of the requested code")
    } catch {
        Fuzz.check(false, "unexpected error type: \(error)")
    }
    return 0
}

private func depth(of value: JSONValue) -> Int {
    switch value {
    case .array(let elements): 1 + (elements.map(depth).max() ?? 0)
    case .object(let members): 1 + (members.values.map(depth).max() ?? 0)
    default: 0
    }
}

/// The process entry: SwiftPM aliases `main` to this symbol; it hands the target to libFuzzer's driver.
@_cdecl("FuzzJSON_main")
public func fuzzJSONMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.run(argc, argv, fuzzJSON)
}
