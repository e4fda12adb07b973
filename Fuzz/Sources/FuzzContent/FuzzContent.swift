import Foundation
import FuzzSupport
import SealedPushCore

/// `NotificationContent(json:)` and `Padding` on arbitrary bytes.
/// - Content: accepted exactly when spec §4's type and range rules hold on the parsed tree (an independent check);
///   an accepted content's canonical JSON parses back to the same content and is a fixed point.
/// - Padding: `unpad` agrees with spec §5 (independent oracle); `pad` then `unpad` gives the input back and lands on
///   a bucket.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContent(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Fuzz.bytes(data, size)
    checkUnpad(bytes)
    checkContent(bytes)
    return 0
}

private func checkUnpad(_ bytes: [UInt8]) {
    let expected = Oracle.unpad(bytes)
    do {
        let content = try Padding.unpad(bytes)
        Fuzz.check(content == expected, "unpad accepted padding the spec rejects or returned other bytes")
    } catch let error as SealedPushError {
        Fuzz.check(expected == nil, "unpad rejected valid padding: \(error)")
        Fuzz.check(error.code == .malformedContent, "unpad threw \(error.code)")
    } catch {
        Fuzz.check(false, "unexpected error type: \(error)")
    }
}

private func checkContent(_ bytes: [UInt8]) {
    let tree = try? JSONParser.parse(bytes, maxDepth: 32, errorCode: .malformedContent)
    let valid = tree.map(isValidContent) ?? false
    do {
        let content = try NotificationContent(json: bytes)
        Fuzz.check(valid, "accepted content that spec §4 rejects")
        let canonical = try content.canonicalJSON()
        let again = try NotificationContent(json: canonical)
        Fuzz.check(again == content, "canonical JSON does not parse back to the same content")
        let canonicalAgain = try again.canonicalJSON()
        Fuzz.check(canonicalAgain == canonical, "canonical JSON is not a fixed point")
        Fuzz.check(whitespaceOnlyInStrings(canonical), "canonical JSON has whitespace outside strings")
        if canonical.count <= 2910 {
            let padded = try Padding.pad(canonical)
            Fuzz.check([128, 256, 512, 1024, 1536, 2048, 2560, 2912].contains(padded.count), "padded off-bucket")
            Fuzz.check(padded.count >= canonical.count + 2, "padded too short")
            Fuzz.check(Oracle.unpad(padded) == canonical, "pad does not invert")
        } else {
            do {
                _ = try Padding.pad(canonical)
                Fuzz.check(false, "padded \(canonical.count) bytes of content")
            } catch let error as SealedPushError {
                Fuzz.check(error.code == .contentTooLarge, "pad threw \(error.code)")
            }
        }
    } catch let error as SealedPushError {
        Fuzz.check(!valid, "rejected content that spec §4 accepts: \(error)")
        Fuzz.check(error.code == .malformedContent, "threw \(error.code)")
        Fuzz.check(!echoesInput(error.message, bytes), "the error message repeats input text: \(error.message)")
    } catch {
        Fuzz.check(false, "unexpected error type: \(error)")
    }
}

/// Whether every space/newline in the JSON text sits inside a string (a cheap scan that respects escapes).
private func whitespaceOnlyInStrings(_ json: [UInt8]) -> Bool {
    var inString = false
    var escaped = false
    for byte in json {
        if inString {
            if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == 0x22 {
                inString = false
            }
        } else if byte == 0x22 {
            inString = true
        } else if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
            return false
        }
    }
    return true
}

/// Spec §4 (with control-v1 §1–§2), written independently: known members with the wrong type or range make content
/// invalid, and so does a control message that breaks its own rules.
private func isValidContent(_ tree: JSONValue) -> Bool {
    guard case .object(let members) = tree else { return false }
    // Envelope spec §4.3: `content-ref`, when present, is an object with a `url` string.
    if let value = members["content-ref"] {
        guard value.objectValue?["url"]?.stringValue != nil else { return false }
    }
    // control-v1 §1: 1 to 64 bytes of UTF-8, no code point below U+0020.
    if let value = members["notification-id"] {
        guard let id = value.stringValue, isNotificationID(id) else { return false }
    }
    if let value = members["control"] {
        guard isValidControl(value, members) else { return false }
    }
    for key in ["title", "subtitle", "body", "sound", "thread-id", "category", "target-content-id"] {
        if let value = members[key], value.stringValue == nil { return false }
    }
    if let value = members["badge"] {
        guard let number = value.numberValue, number >= 0, number <= 2_147_483_647, number.rounded(.towardZero) == number
        else { return false }
    }
    if let value = members["interruption-level"] {
        guard let text = value.stringValue, ["passive", "active", "time-sensitive", "critical"].contains(text)
        else { return false }
    }
    if let value = members["relevance-score"] {
        guard let number = value.numberValue, number >= 0, number <= 1 else { return false }
    }
    // §4.2: a receiver that does not process attachments checks only objects with a `url` string.
    if let value = members["attachments"] {
        guard let elements = value.arrayValue,
            elements.allSatisfy({ $0.objectValue?["url"]?.stringValue != nil })
        else { return false }
    }
    return true
}

/// control-v1 §1: a notification id.
private func isNotificationID(_ id: String) -> Bool {
    (1...64).contains(id.utf8.count) && id.unicodeScalars.allSatisfy { $0.value >= 0x20 }
}

/// control-v1 §2: `control` and the members beside it. Ids compare code point by code point (not as Swift's
/// canonically equivalent `String`s).
private func isValidControl(_ value: JSONValue, _ members: JSONObject) -> Bool {
    guard let control = value.objectValue, let action = control["action"]?.stringValue else { return false }
    let names = Set(control.map { Array($0.key.unicodeScalars.map(\.value)) })
    func only(_ allowed: [String]) -> Bool {
        names.isSubset(of: Set(allowed.map { Array($0.unicodeScalars.map(\.value)) }))
    }
    // What a remove or badge message may carry beside `control`: `notification-id`, `badge` and unknown members.
    let known = ["title", "subtitle", "body", "sound", "thread-id", "category", "interruption-level",
                 "relevance-score", "target-content-id", "data", "attachments", "content-ref"]
    let quiet = !members.contains { known.contains($0.key) }
    switch action {
    case "remove":
        guard only(["action", "ids", "thread-id"]), quiet else { return false }
        let ids = control["ids"]
        let thread = control["thread-id"]
        guard ids != nil || thread != nil else { return false }
        if let ids {
            guard let elements = ids.arrayValue, (1...64).contains(elements.count) else { return false }
            var seen = Set<[UInt32]>()
            for element in elements {
                guard let id = element.stringValue, isNotificationID(id),
                    seen.insert(id.unicodeScalars.map(\.value)).inserted
                else { return false }
            }
        }
        if let thread {
            guard let text = thread.stringValue, (1...255).contains(text.utf8.count) else { return false }
        }
        return true
    case "update":
        guard only(["action", "id"]), let id = control["id"]?.stringValue, isNotificationID(id) else { return false }
        if let own = members["notification-id"]?.stringValue {
            return own.unicodeScalars.map(\.value) == id.unicodeScalars.map(\.value)
        }
        return true
    case "badge":
        guard only(["action", "count"]), quiet, let count = control["count"]?.numberValue,
            count >= 0, count <= 2_147_483_647, count.rounded(.towardZero) == count
        else { return false }
        return true
    default:
        return false
    }
}

/// Whether `message` repeats a run of 12 or more bytes of `input` (decrypted content must never reach a message);
/// the spec's own member names, which messages may name, are exempt.
private func echoesInput(_ message: String, _ input: [UInt8]) -> Bool {
    var text = message
    // The spec's own words a message may name: member names and the interruption levels.
    for name in ["relevance-score", "interruption-level", "target-content-id", "attachments", "additional member",
                 "time-sensitive", "critical", "passive", "active", "content-ref", "notification-id"] {
        text = text.replacingOccurrences(of: name, with: "")
    }
    let haystack = Array(text.utf8)
    let run = 12
    guard input.count >= run, haystack.count >= run else { return false }
    var seen = Set<ArraySlice<UInt8>>()
    for start in 0...(haystack.count - run) { seen.insert(haystack[start..<(start + run)]) }
    for start in 0...(input.count - run) where seen.contains(input[start..<(start + run)]) { return true }
    return false
}

/// The process entry: SwiftPM aliases `main` to this symbol; it hands the target to libFuzzer's driver.
@_cdecl("FuzzContent_main")
public func fuzzContentMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.run(argc, argv, fuzzContent)
}
