import Foundation

/// The RFC 9180 test vectors for SealedPush's HPKE suite (DHKEM(X25519, HKDF-SHA256), HKDF-SHA256,
/// ChaCha20-Poly1305), modes 0 (base) and 2 (auth), loaded from `Vectors/hpke-x25519-chacha-vectors.json`.
///
/// Hex fields are decoded to bytes while loading, so tests compare bytes with bytes.
public struct RFC9180Vectors: Decodable, Sendable {
    /// One encryption of a vector: `ct = Seal(aad, pt)` with the given nonce.
    public struct Encryption: Decodable, Sendable {
        /// Associated data.
        public let aad: [UInt8]
        /// Ciphertext including the tag.
        public let ciphertext: [UInt8]
        /// The nonce used for this sequence number.
        public let nonce: [UInt8]
        /// Plaintext.
        public let plaintext: [UInt8]

        enum CodingKeys: String, CodingKey { case aad, ct, nonce, pt }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            aad = try container.decodeHex(.aad)
            ciphertext = try container.decodeHex(.ct)
            nonce = try container.decodeHex(.nonce)
            plaintext = try container.decodeHex(.pt)
        }
    }

    /// One exported secret: `Export(exporter_context, L)`.
    public struct Export: Decodable, Sendable {
        /// The exporter context.
        public let exporterContext: [UInt8]
        /// The length `L`.
        public let length: Int
        /// The expected exported value.
        public let exportedValue: [UInt8]

        enum CodingKeys: String, CodingKey {
            case exporterContext = "exporter_context", length = "L", exportedValue = "exported_value"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            exporterContext = try container.decodeHex(.exporterContext)
            length = try container.decode(Int.self, forKey: .length)
            exportedValue = try container.decodeHex(.exportedValue)
        }
    }

    /// One test vector (one mode).
    public struct Vector: Decodable, Sendable {
        /// HPKE mode: 0 = base, 2 = auth.
        public let mode: UInt8
        /// KEM, KDF and AEAD ids.
        public let kemID: UInt16, kdfID: UInt16, aeadID: UInt16
        /// The `info` parameter.
        public let info: [UInt8]
        /// Ephemeral private key and its public key.
        public let skEm: [UInt8], pkEm: [UInt8]
        /// Recipient private and public key.
        public let skRm: [UInt8], pkRm: [UInt8]
        /// Sender private and public key (auth mode only).
        public let skSm: [UInt8]?, pkSm: [UInt8]?
        /// Expected intermediate and final values.
        public let enc: [UInt8], sharedSecret: [UInt8], keyScheduleContext: [UInt8], secret: [UInt8]
        /// Expected AEAD key, base nonce and exporter secret.
        public let key: [UInt8], baseNonce: [UInt8], exporterSecret: [UInt8]
        /// Expected encryptions, in sequence-number order.
        public let encryptions: [Encryption]
        /// Expected exports.
        public let exports: [Export]

        enum CodingKeys: String, CodingKey {
            case mode, kemID = "kem_id", kdfID = "kdf_id", aeadID = "aead_id", info
            case skEm, pkEm, skRm, pkRm, skSm, pkSm, enc
            case sharedSecret = "shared_secret", keyScheduleContext = "key_schedule_context", secret
            case key, baseNonce = "base_nonce", exporterSecret = "exporter_secret", encryptions, exports
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            mode = try container.decode(UInt8.self, forKey: .mode)
            kemID = try container.decode(UInt16.self, forKey: .kemID)
            kdfID = try container.decode(UInt16.self, forKey: .kdfID)
            aeadID = try container.decode(UInt16.self, forKey: .aeadID)
            info = try container.decodeHex(.info)
            skEm = try container.decodeHex(.skEm)
            pkEm = try container.decodeHex(.pkEm)
            skRm = try container.decodeHex(.skRm)
            pkRm = try container.decodeHex(.pkRm)
            skSm = try container.contains(.skSm) ? container.decodeHex(.skSm) : nil
            pkSm = try container.contains(.pkSm) ? container.decodeHex(.pkSm) : nil
            enc = try container.decodeHex(.enc)
            sharedSecret = try container.decodeHex(.sharedSecret)
            keyScheduleContext = try container.decodeHex(.keyScheduleContext)
            secret = try container.decodeHex(.secret)
            key = try container.decodeHex(.key)
            baseNonce = try container.decodeHex(.baseNonce)
            exporterSecret = try container.decodeHex(.exporterSecret)
            encryptions = try container.decode([Encryption].self, forKey: .encryptions)
            exports = try container.decode([Export].self, forKey: .exports)
        }
    }

    /// The vectors, one per mode.
    public let vectors: [Vector]

    /// The vector for `mode`, if the file has one.
    ///
    /// - Parameter mode: The HPKE mode (0 or 2).
    /// - Returns: The vector, or `nil`.
    public func vector(mode: UInt8) -> Vector? {
        vectors.first { $0.mode == mode }
    }

    /// Loads `Vectors/hpke-x25519-chacha-vectors.json` from this module's bundle.
    ///
    /// - Returns: The decoded vectors.
    /// - Throws: `CocoaError(.fileNoSuchFile)` if the resource is missing, or a decoding error.
    public static func load() throws -> RFC9180Vectors {
        let name = "hpke-x25519-chacha-vectors"
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Vectors")
            ?? Bundle.module.url(forResource: name, withExtension: "json")
        else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Vectors/\(name).json"])
        }
        return try JSONDecoder().decode(RFC9180Vectors.self, from: Data(contentsOf: url))
    }

    /// Decodes lowercase or uppercase hex; `nil` for odd length or a non-hex character.
    ///
    /// - Parameter hex: The hex text.
    /// - Returns: The bytes, or `nil`.
    public static func bytes(fromHex hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension KeyedDecodingContainer {
    fileprivate func decodeHex(_ key: Key) throws -> [UInt8] {
        let text = try decode(String.self, forKey: key)
        guard let bytes = RFC9180Vectors.bytes(fromHex: text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not hex: \(text)")
        }
        return bytes
    }
}
