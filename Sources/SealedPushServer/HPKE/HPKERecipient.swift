/// RFC 9180 §5.1.3 recipient setup (`SetupAuthR`) for the SealedPush suite, and `Open`: what the backend needs to
/// read receipts, which devices seal to the server identity (`Specs/control-v1.md` §4).
package enum HPKERecipient {
    /// AuthDecap(enc, skR, pkS): `dh = DH(skR, enc) || DH(skR, pkS)`, `kem_context = enc || pkR || pkS`.
    ///
    /// - Parameters:
    ///   - enc: The sender's encapsulated key, 32 bytes.
    ///   - recipientPrivateKey: `skR`.
    ///   - senderPublicKey: `pkS`, 32 bytes.
    ///   - recipientPublicKey: `pkR` when the caller holds it (a receipt opener keeps its identity's): saves the
    ///     scalar multiplication that derives it from `skR`.
    /// - Returns: The KEM shared secret.
    /// - Throws: ``HPKEError/zeroSharedSecret`` for a low-order `enc` or `pkS`, ``HPKEError`` for wrong lengths.
    package static func authDecap(
        enc: [UInt8], recipientPrivateKey skR: some RawBytes, senderPublicKey pkS: [UInt8],
        recipientPublicKey: [UInt8]? = nil
    ) throws -> SecretBytes {
        let pkR = try recipientPublicKey ?? X25519.publicKey(privateKey: skR)
        let staticDH = try X25519.sharedSecret(privateKey: skR, publicKey: pkS)
        return try authDecap(
            enc: enc, recipientPrivateKey: skR, senderPublicKey: pkS, recipientPublicKey: pkR, staticSharedValue: staticDH)
    }

    /// AuthDecap with the static-static value `DH(skR, pkS)` given: it depends only on the two long-term keys, so a
    /// recipient that hears from the same sender again may keep it (as the sealer keeps `DH(skS, pkR)`, the same
    /// value seen from the other side) and pay one scalar multiplication per message instead of two.
    ///
    /// - Parameters:
    ///   - enc: The sender's encapsulated key, 32 bytes.
    ///   - recipientPrivateKey: `skR`.
    ///   - senderPublicKey: `pkS`, 32 bytes.
    ///   - recipientPublicKey: `pkR`.
    ///   - staticSharedValue: `DH(skR, pkS)`, 32 bytes.
    /// - Returns: The KEM shared secret.
    /// - Throws: ``HPKEError/zeroSharedSecret`` for a low-order `enc`, ``HPKEError`` for wrong lengths.
    package static func authDecap(
        enc: [UInt8], recipientPrivateKey skR: some RawBytes, senderPublicKey pkS: [UInt8], recipientPublicKey pkR: [UInt8],
        staticSharedValue staticDH: SecretBytes
    ) throws -> SecretBytes {
        guard staticDH.count == X25519.keyLength else {
            throw HPKEError.invalidLength(what: "static shared value", expected: X25519.keyLength, actual: staticDH.count)
        }
        let ephemeralDH = try X25519.sharedSecret(privateKey: skR, publicKey: enc)
        return try DHKEMX25519.extractAndExpand(kemContext: enc + pkR + pkS) { mac in
            mac.update(ephemeralDH)
            mac.update(staticDH)
        }
    }

    /// `SetupAuthR(enc, skR, info, pkS)` then one `Open(aad, ct)` at sequence number 0.
    ///
    /// - Parameters:
    ///   - ciphertext: `ct || tag`.
    ///   - aad: The associated data.
    ///   - enc: The encapsulated key.
    ///   - recipientPrivateKey: `skR`.
    ///   - senderPublicKey: `pkS`.
    ///   - schedule: The key schedule for mode_auth and the `info`.
    ///   - recipientPublicKey: `pkR`, if held (see ``authDecap(enc:recipientPrivateKey:senderPublicKey:recipientPublicKey:)``).
    ///   - staticSharedValue: `DH(skR, pkS)`, if held (needs `recipientPublicKey`; see
    ///     ``authDecap(enc:recipientPrivateKey:senderPublicKey:recipientPublicKey:staticSharedValue:)``).
    /// - Returns: The plaintext (wiped when released), or nil when the tag does not verify.
    /// - Throws: ``HPKEError`` for a low-order key or wrong lengths.
    package static func openAuth(
        _ ciphertext: [UInt8], aad: [UInt8], enc: [UInt8], recipientPrivateKey: some RawBytes, senderPublicKey: [UInt8],
        schedule: HPKEKeySchedule, recipientPublicKey: [UInt8]? = nil, staticSharedValue: SecretBytes? = nil
    ) throws -> SecretBytes? {
        let shared =
            if let staticSharedValue, let recipientPublicKey {
                try authDecap(
                    enc: enc, recipientPrivateKey: recipientPrivateKey, senderPublicKey: senderPublicKey,
                    recipientPublicKey: recipientPublicKey, staticSharedValue: staticSharedValue)
            } else {
                try authDecap(
                    enc: enc, recipientPrivateKey: recipientPrivateKey, senderPublicKey: senderPublicKey,
                    recipientPublicKey: recipientPublicKey)
            }
        let context = try schedule.senderContext(sharedSecret: shared)  // key and base_nonce are the same both ways
        return try open(ciphertext, aad: aad, key: context.key, nonce: context.baseNonce)
    }

    /// `Open` with the key and the nonce of sequence number 0 (the base nonce).
    package static func open(
        _ ciphertext: [UInt8], aad: [UInt8], key: SecretBytes, nonce: SecretBytes
    ) throws -> SecretBytes? {
        guard ciphertext.count >= HPKESuite.tagLength else { return nil }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count - HPKESuite.tagLength)
        let verified = try plaintext.withUnsafeMutableBytes { out in
            try key.withUnsafeBytes { keyView in
                try nonce.withUnsafeBytes { nonceView in
                    try aad.withUnsafeBytes { aadView in
                        try ciphertext.withUnsafeBytes { ctView in
                            try ChaCha20Poly1305.open(key: keyView, nonce: nonceView, aad: aadView, ciphertext: ctView, into: out)
                        }
                    }
                }
            }
        }
        defer { Sodium.wipe(&plaintext) }
        guard verified else { return nil }
        return SecretBytes(copying: plaintext)
    }
}
