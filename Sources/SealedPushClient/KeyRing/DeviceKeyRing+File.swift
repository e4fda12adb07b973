import Crypto
import SealedPushCore

extension DeviceKeyRing {
    /// The value of the key ring file's `format` member (`Specs/keyring-v1.md`).
    public static let fileFormat = "SealedPush keyring v1"

    /// The largest key ring file accepted, in bytes (a ring holds a handful of keys; anything bigger is corrupt).
    /// Writers never write more: rotation drops the oldest retired keys first (``trimToFileLimit()``).
    public static let maxFileBytes = 1 << 20

    /// The deepest nesting of arrays and objects a key ring file may hold (`Specs/keyring-v1.md` §2), unknown
    /// members included.
    public static let maxFileDepth = 32

    /// One entry of the file's `keys` array.
    private struct KeyModel {
        var keyId: String
        var publicKey: String
        var privateKey: String
        var createdAt: UInt64
        var retiredAt: UInt64?
    }

    /// Parses and validates a key ring file (`Specs/keyring-v1.md` §2).
    ///
    /// - Parameter fileBytes: The file's bytes.
    /// - Throws: `SealedPushError` with code `keyStoreCorrupt` when the file is not a valid key ring: bad JSON, wrong
    ///   `format`, no key, a private key that does not parse, a public key or key id that does not match its private
    ///   key, a duplicated key id, or a current (unretired) key that is missing, repeated or not last.
    public init(fileBytes: [UInt8]) throws {
        guard fileBytes.count <= Self.maxFileBytes else {
            throw Self.corrupt("the file is larger than \(Self.maxFileBytes) bytes")
        }
        // Core's strict parser rather than JSONDecoder: one small parser for every JSON the client reads, and a
        // smaller footprint for a one-shot open (spec: keyring-v1 §2; unknown members are ignored, nested up to the
        // spec's 32 levels like any other).
        let root: JSONValue
        do {
            root = try JSONParser.parse(fileBytes, maxDepth: Self.maxFileDepth, errorCode: .keyStoreCorrupt)
        } catch {
            throw Self.corrupt("the file is not key ring JSON")
        }
        guard let format = root["format"]?.stringValue, let entries = root["keys"]?.arrayValue else {
            throw Self.corrupt("the file is not key ring JSON (it needs a string \"format\" and an array \"keys\")")
        }
        // Texts are compared as UTF-8 bytes, as the spec means them: Swift's `==` on strings is canonical equivalence
        // (U+212A KELVIN SIGN equals "K"), which another implementation's comparison is not.
        guard format.utf8.elementsEqual(Self.fileFormat.utf8) else {
            // The file holds private keys, so no text of it is echoed (a damaged file may have one in any field).
            throw Self.corrupt("unknown format (\(format.utf8.count) bytes; expected \"\(Self.fileFormat)\")")
        }
        guard !entries.isEmpty else {
            throw Self.corrupt("the key ring holds no key")
        }
        let models = try entries.enumerated().map { index, entry in try Self.keyModel(entry, index: index) }
        var keys: [Key] = []
        var seen: Set<KeyID> = []
        for (index, entry) in models.enumerated() {
            var raw: [UInt8]
            do {
                raw = try KeyText.decodePrivateKey(Array(entry.privateKey.utf8))
            } catch {
                throw Self.corrupt("key \(index): the private key is not in SPSK1 text form")
            }
            defer { EnvelopeOpener.wipe(&raw) }
            guard let privateKey = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw),
                let key = try? Key(privateKey: privateKey, createdAt: entry.createdAt, retiredAt: entry.retiredAt)
            else {
                throw Self.corrupt("key \(index): the private key cannot be loaded")
            }
            guard key.publicKeyText.utf8.elementsEqual(entry.publicKey.utf8) else {
                throw Self.corrupt("key \(index) (\(key.keyID.hex)): the public key does not match the private key")
            }
            guard key.keyID.hex.utf8.elementsEqual(entry.keyId.utf8) else {
                throw Self.corrupt("key \(index): its keyId does not match its public key (expected \(key.keyID.hex))")
            }
            guard seen.insert(key.keyID).inserted else {
                throw Self.corrupt("key \(key.keyID.hex) appears twice")
            }
            let isLast = index == models.count - 1
            guard (entry.retiredAt == nil) == isLast else {
                throw Self.corrupt("exactly the last key must be current (without retiredAt); key \(index) is not")
            }
            keys.append(key)
        }
        self.init(keys: keys)
    }

    /// The key ring file (`Specs/keyring-v1.md` §2): UTF-8 JSON holding the private keys in SPSK1 text form.
    ///
    /// The result holds secrets: write it with ``FileKeyStore`` (0600, atomic) and overwrite the buffer afterwards.
    ///
    /// - Returns: The file's bytes.
    public func fileBytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(200 * keys.count + 64)
        out += Self.fileHead
        for (index, key) in keys.enumerated() {
            Self.appendEntry(key, last: index == keys.count - 1, to: &out)
        }
        out += Self.fileTail
        return out
    }

    static let fileHead = Array("{\n  \"format\": \"\(fileFormat)\",\n  \"keys\": [\n".utf8)
    static let fileTail = Array("  ]\n}\n".utf8)

    static func appendEntry(_ key: Key, last: Bool, to out: inout [UInt8]) {
        var raw = Array(key.privateKey.rawRepresentation)
        var privateLine = KeyText.encodePrivateKeyFile(raw)
        EnvelopeOpener.wipe(&raw)
        if privateLine.last == UInt8(ascii: "\n") { privateLine.removeLast() }
        out += Array("    {\"keyId\": \"\(key.keyID.hex)\", \"publicKey\": \"\(key.publicKeyText)\", ".utf8)
        out += Array("\"privateKey\": \"".utf8)
        out += privateLine
        EnvelopeOpener.wipe(&privateLine)
        out += Array("\", \"createdAt\": \(key.createdAt)".utf8)
        if let retiredAt = key.retiredAt {
            out += Array(", \"retiredAt\": \(retiredAt)".utf8)
        }
        out += Array((last ? "}\n" : "},\n").utf8)
    }

    /// One `keys` entry: three strings, `createdAt` and an optional (absent or null) `retiredAt`, each a whole
    /// number of seconds 0 ... 2^53 − 1.
    private static func keyModel(_ entry: JSONValue, index: Int) throws -> KeyModel {
        guard let keyId = entry["keyId"]?.stringValue, let publicKey = entry["publicKey"]?.stringValue,
            let privateKey = entry["privateKey"]?.stringValue
        else {
            throw corrupt("key \(index): keyId, publicKey and privateKey must be strings")
        }
        guard let createdAt = seconds(entry["createdAt"]) else {
            throw corrupt("key \(index): createdAt must be a whole number of seconds")
        }
        var retiredAt: UInt64?
        if let value = entry["retiredAt"], value != .null {
            guard let seconds = seconds(value) else {
                throw corrupt("key \(index): retiredAt must be a whole number of seconds or absent")
            }
            retiredAt = seconds
        }
        return KeyModel(
            keyId: keyId, publicKey: publicKey, privateKey: privateKey, createdAt: createdAt, retiredAt: retiredAt)
    }

    private static func seconds(_ value: JSONValue?) -> UInt64? {
        guard let number = value?.numberValue, number >= 0, number < 9_007_199_254_740_992,
            number.rounded(.towardZero) == number
        else { return nil }
        return UInt64(number)
    }

    private static func corrupt(_ detail: String) -> SealedPushError {
        SealedPushError(.keyStoreCorrupt, "key ring file is corrupt: \(detail); it was left untouched (never regenerated)")
    }
}
