import Foundation
import SealedPushCore
import SealedPushServer

/// Regenerates `Specs/vectors/keyring-v1.json` (`Specs/keyring-v1.md` §2): key ring files a reader must accept, with
/// the keys it reads from them, and files it must reject as `keyStoreCorrupt`, from fixed keys:
/// `swift run sealed-push-vectors keyring Specs/vectors/keyring-v1.json`.
enum KeyRingVectorGenerator {
    /// One key ring entry's members, as text spliced into a file.
    struct Entry {
        var keyID: String
        var publicKey: String
        var privateKey: String
        var createdAt: String
        var retiredAt: String?
        var extra = ""

        func json() -> String {
            var text = #"{"keyId": "\#(keyID)", "publicKey": "\#(publicKey)", "privateKey": "\#(privateKey)", "createdAt": \#(createdAt)"#
            if let retiredAt { text += #", "retiredAt": \#(retiredAt)"# }
            return text + extra + "}"
        }
    }

    static func run(outPath: String) throws {
        let key = VectorGenerator.key
        let old = try ServerIdentity(privateKey: key(0x31))
        let current = try ServerIdentity(privateKey: key(0x42))
        // A key whose text form has a "K" after its prefix, for the KELVIN SIGN case: the first fixed key from 0x50.
        var kelvinByte: UInt8 = 0x50
        while !(try ServerIdentity(privateKey: key(kelvinByte))).publicKeyText.dropFirst(5).contains("K") { kelvinByte += 1 }
        let kelvinRaw = key(kelvinByte)
        let kelvinIdentity = try ServerIdentity(privateKey: kelvinRaw)
        func entry(_ identity: ServerIdentity, createdAt: String, retiredAt: String?) -> Entry {
            let raw = identity.keyID == old.keyID ? key(0x31) : identity.keyID == current.keyID ? key(0x42) : kelvinRaw
            let privateKey = String(decoding: KeyText.encodePrivateKeyFile(raw).dropLast(), as: UTF8.self)
            return Entry(
                keyID: identity.keyID.hex, publicKey: identity.publicKeyText, privateKey: privateKey,
                createdAt: createdAt, retiredAt: retiredAt)
        }
        let oldEntry = entry(old, createdAt: "1800000000", retiredAt: "1800086400")
        let currentEntry = entry(current, createdAt: "1800086400", retiredAt: nil)
        func file(_ entries: [Entry], format: String = "SealedPush keyring v1", extra: String = "") -> String {
            "{\n  \"format\": \"\(format)\",\(extra)\n  \"keys\": [\n    "
                + entries.map { $0.json() }.joined(separator: ",\n    ") + "\n  ]\n}\n"
        }

        var accepted: [[String: Any]] = []
        func accept(_ name: String, _ text: String, keys: [(ServerIdentity, UInt64, UInt64?)], note: String) {
            accepted.append([
                "name": name, "file": text, "note": note,
                "keys": keys.map { identity, createdAt, retiredAt in
                    var key: [String: Any] = ["keyId": identity.keyID.hex, "createdAt": createdAt]
                    if let retiredAt { key["retiredAt"] = retiredAt }
                    return key
                },
            ])
        }
        let both: [(ServerIdentity, UInt64, UInt64?)] = [(old, 1_800_000_000, 1_800_086_400), (current, 1_800_086_400, nil)]
        accept("two-keys", file([oldEntry, currentEntry]), keys: both, note: "a retired key, then the current one")
        var nullRetired = currentEntry
        nullRetired.retiredAt = "null"
        accept("current-retired-at-null", file([oldEntry, nullRetired]), keys: both, note: "absent or null on the last key")
        var whole = oldEntry
        whole.createdAt = "1800000000.0"
        whole.retiredAt = "18000864e2"
        accept("integers-written-as-whole-numbers", file([whole, currentEntry]), keys: both,
               note: "an integer is a JSON number whose value is whole")
        var unknown = currentEntry
        unknown.extra = #", "label": "phone", "x": {"y": [null, true, 1.5]}"#
        accept("unknown-members", file([oldEntry, unknown], extra: #" "comment": "kept by no reader","#), keys: both,
               note: "readers ignore unknown members")
        let nested31 = String(repeating: "[", count: 31) + String(repeating: "]", count: 31)
        accept("unknown-member-nested-32-levels", file([oldEntry, currentEntry], extra: " \"deep\": \(nested31),"),
               keys: both, note: "the root object is level 1: 31 arrays inside it are 32 levels")
        let reordered = "{\"keys\":[" + [oldEntry, currentEntry].map { $0.json() }.joined(separator: ",")
            + "],\"format\":\"SealedPush keyring v1\"}"
        accept("members-in-any-order-without-whitespace", reordered, keys: both, note: "JSON: member order and spacing are free")

        var rejected: [[String: Any]] = []
        func reject(_ name: String, _ text: String, note: String) {
            rejected.append(["name": name, "file": text, "note": note, "expectedError": "keyStoreCorrupt"])
        }
        let nested32 = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        reject("unknown-member-nested-33-levels", file([oldEntry, currentEntry], extra: " \"deep\": \(nested32),"),
               note: "deeper than 32 levels")
        reject("unknown-member-integer-beyond-2-53", file([oldEntry, currentEntry], extra: " \"n\": 9007199254740993,"),
               note: "the envelope spec's number rules apply to unknown members too")
        var newline = currentEntry
        newline.privateKey += "\\n"
        reject("private-key-with-newline", file([oldEntry, newline]), note: "the key file's final newline is not part of privateKey")
        var kelvin = entry(kelvinIdentity, createdAt: "1800000000", retiredAt: nil)
        kelvin.publicKey = "SPK1:" + kelvin.publicKey.dropFirst(5).replacingOccurrences(of: "K", with: "\u{212A}")
        reject("public-key-kelvin-sign", file([kelvin]), note: "U+212A KELVIN SIGN is not K: texts compare as bytes")
        var upper = currentEntry
        upper.keyID = upper.keyID.uppercased()
        precondition(upper.keyID != currentEntry.keyID, "the key id has no letter")
        reject("key-id-upper-case", file([oldEntry, upper]), note: "key ids are 16 lowercase hex digits")
        var mismatch = currentEntry
        mismatch.publicKey = oldEntry.publicKey
        reject("public-key-of-another-key", file([oldEntry, mismatch]), note: "publicKey is X25519(privateKey, 9)")
        var otherID = currentEntry
        otherID.keyID = oldEntry.keyID
        reject("key-id-of-another-key", file([oldEntry, otherID]), note: "keyId is the key id of publicKey")
        reject("key-twice", file([oldEntry, { var e = oldEntry; e.retiredAt = nil; return e }()]), note: "no keyId twice")
        var lastRetired = currentEntry
        lastRetired.retiredAt = "1800090000"
        reject("last-key-retired", file([oldEntry, lastRetired]), note: "exactly the last key lacks retiredAt")
        var oldCurrent = oldEntry
        oldCurrent.retiredAt = nil
        reject("earlier-key-not-retired", file([oldCurrent, currentEntry]), note: "every key but the last has retiredAt")
        reject("no-keys", file([]).replacingOccurrences(of: "\n    \n", with: "\n"), note: "at least one key")
        reject("wrong-format", file([oldEntry, currentEntry], format: "SealedPush keyring v2"), note: "format as given")
        var fraction = oldEntry
        fraction.createdAt = "1800000000.5"
        reject("created-at-fraction", file([fraction, currentEntry]), note: "createdAt is an integer")
        var beyond = oldEntry
        beyond.createdAt = "9007199254740992"
        reject("created-at-2-53", file([beyond, currentEntry]), note: "createdAt is 0 ... 2^53 - 1")
        var negative = oldEntry
        negative.createdAt = "-1"
        reject("created-at-negative", file([negative, currentEntry]), note: "createdAt is 0 ... 2^53 - 1")
        var duplicated = currentEntry
        duplicated.extra = #", "createdAt": 1800086400"#
        reject("duplicated-member", file([oldEntry, duplicated]), note: "no duplicated member names")
        var badKey = currentEntry
        badKey.privateKey = "SPSK1:" + String(repeating: "A", count: 42)
        reject("private-key-too-short", file([oldEntry, badKey]), note: "privateKey is SPSK1: and 43 base64url characters")
        reject("not-json", "format: SealedPush keyring v1\n", note: "valid JSON")

        let document: [String: Any] = [
            "version": 1, "generator": "swift run sealed-push-vectors keyring Specs/vectors/keyring-v1.json",
            "accepted": accepted, "rejected": rejected,
        ]
        var json = try JSONSerialization.data(
            withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        json.append(0x0A)
        try json.write(to: URL(fileURLWithPath: outPath), options: .atomic)
        print("wrote \(accepted.count) accepted and \(rejected.count) rejected key ring files to \(outPath)")
    }
}
