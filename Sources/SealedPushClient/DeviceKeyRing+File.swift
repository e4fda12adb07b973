import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

extension DeviceKeyRing {
    /// The value of the key ring file's `format` member (`Specs/keyring-v1.md`).
    public static let fileFormat = "SealedPush keyring v1"

    /// The largest key ring file accepted, in bytes (a ring holds a handful of keys; anything bigger is corrupt).
    public static let maxFileBytes = 1 << 20

    private struct FileModel: Decodable {
        var format: String
        var keys: [KeyModel]
    }

    private struct KeyModel: Decodable {
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
        let model: FileModel
        do {
            model = try JSONDecoder().decode(FileModel.self, from: Data(fileBytes))
        } catch {
            throw Self.corrupt("the file is not key ring JSON")
        }
        guard model.format == Self.fileFormat else {
            throw Self.corrupt("unknown format \"\(model.format.prefix(64))\" (expected \"\(Self.fileFormat)\")")
        }
        guard !model.keys.isEmpty else {
            throw Self.corrupt("the key ring holds no key")
        }
        var keys: [Key] = []
        var seen: Set<KeyID> = []
        for (index, entry) in model.keys.enumerated() {
            var raw: [UInt8]
            do {
                raw = try KeyText.decodePrivateKeyFile(Array(entry.privateKey.utf8))
            } catch {
                throw Self.corrupt("key \(index): the private key is not in SPSK1 text form")
            }
            defer { EnvelopeOpener.wipe(&raw) }
            guard let privateKey = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw),
                let key = try? Key(privateKey: privateKey, createdAt: entry.createdAt, retiredAt: entry.retiredAt)
            else {
                throw Self.corrupt("key \(index): the private key cannot be loaded")
            }
            guard key.publicKeyText == entry.publicKey else {
                throw Self.corrupt("key \(index) (\(key.keyID.hex)): the public key does not match the private key")
            }
            guard key.keyID.hex == entry.keyId else {
                throw Self.corrupt("key \(index): keyId \(entry.keyId.prefix(32)) does not match (expected \(key.keyID.hex))")
            }
            guard seen.insert(key.keyID).inserted else {
                throw Self.corrupt("key \(key.keyID.hex) appears twice")
            }
            let isLast = index == model.keys.count - 1
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
        out += Array("{\n  \"format\": \"\(Self.fileFormat)\",\n  \"keys\": [\n".utf8)
        for (index, key) in keys.enumerated() {
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
            out += Array((index == keys.count - 1 ? "}\n" : "},\n").utf8)
        }
        out += Array("  ]\n}\n".utf8)
        return out
    }

    private static func corrupt(_ detail: String) -> SealedPushError {
        SealedPushError(.keyStoreCorrupt, "key ring file is corrupt: \(detail); it was left untouched (never regenerated)")
    }
}
