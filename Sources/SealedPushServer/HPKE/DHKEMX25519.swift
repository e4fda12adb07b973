/// DHKEM(X25519, HKDF-SHA256) of RFC 9180 §4.1, sender side (`Encap` and `AuthEncap`).
///
/// The ephemeral private key is passed in, so the caller decides where it comes from (fresh random for real
/// envelopes, fixed for test vectors) and when it is wiped.
package enum DHKEMX25519 {
    /// The result of an encapsulation: the encapsulated key (the ephemeral public key) and the KEM shared secret.
    package struct Encapsulation: Sendable {
        /// `enc`, the serialized ephemeral public key (32 bytes).
        package let enc: [UInt8]
        /// The KEM shared secret (32 bytes), wiped when released.
        package let sharedSecret: SecretBytes
    }

    /// ExtractAndExpand(dh, kem_context): `LabeledExtract("", "eae_prk", dh)` then
    /// `LabeledExpand(eae_prk, "shared_secret", kem_context, Nsecret)` with the KEM suite id.
    static func extractAndExpand(
        kemContext: [UInt8], feedDH: (inout HMACSHA256) -> Void
    ) throws -> SecretBytes {
        let eaePRK = HPKESuite.kem.labeledExtract(salt: [UInt8](), label: "eae_prk", feedIKM: feedDH)
        return try HPKESuite.kem.labeledExpand(
            prk: eaePRK, label: "shared_secret", info: kemContext, length: HPKESuite.secretLength)
    }

    /// Encap(pkR) with a given ephemeral key (mode_base).
    ///
    /// - Parameters:
    ///   - recipientPublicKey: `pkR`, 32 bytes.
    ///   - ephemeralPrivateKey: `skE`, 32 bytes.
    /// - Returns: `enc` and the shared secret.
    /// - Throws: ``HPKEError/zeroSharedSecret`` for a low-order `pkR`,
    ///   ``HPKEError/invalidLength(what:expected:actual:)`` for a key of the wrong length.
    package static func encap(
        recipientPublicKey pkR: [UInt8], ephemeralPrivateKey skE: some RawBytes
    ) throws -> Encapsulation {
        let enc = try X25519.publicKey(privateKey: skE)
        let dh = try X25519.sharedSecret(privateKey: skE, publicKey: pkR)
        let shared = try extractAndExpand(kemContext: enc + pkR) { $0.update(dh) }
        return Encapsulation(enc: enc, sharedSecret: shared)
    }

    /// AuthEncap(pkR, skS) with a given ephemeral key (mode_auth).
    ///
    /// - Parameters:
    ///   - recipientPublicKey: `pkR`, 32 bytes.
    ///   - senderPrivateKey: `skS`, 32 bytes.
    ///   - ephemeralPrivateKey: `skE`, 32 bytes.
    /// - Returns: `enc` and the shared secret.
    /// - Throws: ``HPKEError/zeroSharedSecret`` if either DH is all zeros.
    package static func authEncap(
        recipientPublicKey pkR: [UInt8], senderPrivateKey skS: some RawBytes, ephemeralPrivateKey skE: some RawBytes
    ) throws -> Encapsulation {
        let pkS = try X25519.publicKey(privateKey: skS)
        let staticDH = try X25519.sharedSecret(privateKey: skS, publicKey: pkR)
        return try authEncap(
            recipientPublicKey: pkR, senderPublicKey: pkS, staticSharedValue: staticDH, ephemeralPrivateKey: skE)
    }

    /// AuthEncap with the static-static value `DH(skS, pkR)` already computed (it depends only on the two static
    /// keys, so a sender may cache it): costs one key generation and one DH.
    ///
    /// - Parameters:
    ///   - recipientPublicKey: `pkR`, 32 bytes.
    ///   - senderPublicKey: `pkS`, 32 bytes.
    ///   - staticSharedValue: `DH(skS, pkR)`, 32 bytes.
    ///   - ephemeralPrivateKey: `skE`, 32 bytes.
    /// - Returns: `enc` and the shared secret.
    /// - Throws: ``HPKEError/zeroSharedSecret`` if `DH(skE, pkR)` is all zeros.
    package static func authEncap(
        recipientPublicKey pkR: [UInt8], senderPublicKey pkS: [UInt8], staticSharedValue: SecretBytes,
        ephemeralPrivateKey skE: some RawBytes
    ) throws -> Encapsulation {
        guard staticSharedValue.count == X25519.keyLength else {
            throw HPKEError.invalidLength(
                what: "static shared value", expected: X25519.keyLength, actual: staticSharedValue.count)
        }
        let enc = try X25519.publicKey(privateKey: skE)
        let ephemeralDH = try X25519.sharedSecret(privateKey: skE, publicKey: pkR)
        // dh = DH(skE, pkR) || DH(skS, pkR); kem_context = enc || pkR || pkS
        let shared = try extractAndExpand(kemContext: enc + pkR + pkS) { mac in
            mac.update(ephemeralDH)
            mac.update(staticSharedValue)
        }
        return Encapsulation(enc: enc, sharedSecret: shared)
    }
}
