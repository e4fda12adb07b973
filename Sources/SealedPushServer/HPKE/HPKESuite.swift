/// The one HPKE suite SealedPush uses (RFC 9180): DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305,
/// with the labeled HKDF functions bound to a suite id.
package struct HPKESuite: Sendable {
    /// `KEM_ID` 0x0020 DHKEM(X25519, HKDF-SHA256).
    package static let kemID: UInt16 = 0x0020
    /// `KDF_ID` 0x0001 HKDF-SHA256.
    package static let kdfID: UInt16 = 0x0001
    /// `AEAD_ID` 0x0003 ChaCha20-Poly1305.
    package static let aeadID: UInt16 = 0x0003
    /// `Nk`, `Nn`, `Nt` of the AEAD and `Nenc`/`Npk`/`Nsk`/`Nsecret` of the KEM.
    package static let keyLength = 32, nonceLength = 12, tagLength = 16, encLength = 32, secretLength = 32

    /// The suite id of the KEM context: "KEM" || I2OSP(kem_id, 2).
    package static let kem = HPKESuite(suiteID: Array("KEM".utf8) + i2osp2(kemID))
    /// The suite id of the HPKE context: "HPKE" || I2OSP(kem_id, 2) || I2OSP(kdf_id, 2) || I2OSP(aead_id, 2).
    package static let hpke = HPKESuite(suiteID: Array("HPKE".utf8) + i2osp2(kemID) + i2osp2(kdfID) + i2osp2(aeadID))

    private static let versionLabel = Array("HPKE-v1".utf8)

    /// The suite id prefixed to every label.
    package let suiteID: [UInt8]

    /// LabeledExtract(salt, label, ikm) = Extract(salt, "HPKE-v1" || suite_id || label || ikm).
    ///
    /// - Parameters:
    ///   - salt: The salt (may be secret, e.g. the shared secret in the key schedule).
    ///   - label: The ASCII label.
    ///   - ikm: The input keying material.
    /// - Returns: A 32-byte pseudorandom key.
    package func labeledExtract(salt: some RawBytes, label: String, ikm: some RawBytes) -> SecretBytes {
        labeledExtract(salt: salt, label: label) { $0.update(ikm) }
    }

    /// LabeledExtract with the input keying material fed in pieces (e.g. dh1 || dh2 without concatenating).
    func labeledExtract(salt: some RawBytes, label: String, feedIKM: (inout HMACSHA256) -> Void) -> SecretBytes {
        HKDFSHA256.extract(salt: salt) { mac in
            mac.update(Self.versionLabel)
            mac.update(suiteID)
            mac.update(utf8: label)
            feedIKM(&mac)
        }
    }

    /// LabeledExpand(prk, label, info, L) = Expand(prk, I2OSP(L, 2) || "HPKE-v1" || suite_id || label || info, L).
    ///
    /// - Parameters:
    ///   - prk: The pseudorandom key.
    ///   - label: The ASCII label.
    ///   - info: The context.
    ///   - length: `L`, at most 65,535 and at most 255 × 32.
    /// - Returns: `length` bytes.
    /// - Throws: ``HPKEError/outputTooLong(requested:limit:)`` for a length out of range.
    package func labeledExpand(
        prk: some RawBytes, label: String, info: some RawBytes, length: Int
    ) throws -> SecretBytes {
        var keyed = HMACSHA256(key: prk)
        defer { keyed.wipe() }
        return try labeledExpand(keyedBy: keyed, label: label, info: info, length: length)
    }

    /// LabeledExpand with the PRK given as a MAC keyed with it (see ``HKDFSHA256/expand(keyedBy:length:feedInfo:)``).
    func labeledExpand(
        keyedBy keyed: HMACSHA256, label: String, info: some RawBytes, length: Int
    ) throws -> SecretBytes {
        guard length >= 0, length <= Int(UInt16.max) else {
            throw HPKEError.outputTooLong(requested: length, limit: Int(UInt16.max))
        }
        // Fed piece by piece: no concatenated or converted copies on the sealing path.
        let lengthBytes = UInt16(length).bigEndian
        return try HKDFSHA256.expand(keyedBy: keyed, length: length) { mac in
            withUnsafeBytes(of: lengthBytes) { mac.update($0) }  // I2OSP(L, 2)
            mac.update(Self.versionLabel)
            mac.update(suiteID)
            mac.update(utf8: label)
            mac.update(info)
        }
    }

    /// I2OSP(value, 2).
    static func i2osp2(_ value: UInt16) -> [UInt8] {
        [UInt8(value >> 8), UInt8(value & 0xff)]
    }
}
