import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one place the client touches swift-crypto's HPKE: suite 0x0020/0x0001/0x0003
/// (`HPKE.Ciphersuite.Curve25519_SHA256_ChachaPoly`), base mode (RFC 9180 vectors only) or auth mode (envelopes).
///
/// The envelope opener and the RFC 9180 known-answer tests both go through this wrapper, so the vectors exercise the
/// exact code path that opens envelopes. Every failure surfaces as the caller's single authentication failure.
struct HPKERecipientWrapper {
    static let ciphersuite = HPKE.Ciphersuite.Curve25519_SHA256_ChachaPoly

    private var recipient: HPKE.Recipient

    /// Sets up an HPKE recipient context (`SetupBaseR` when `sender` is nil, `SetupAuthR` otherwise).
    ///
    /// - Parameters:
    ///   - privateKey: The recipient's X25519 private key `skR`.
    ///   - info: The HPKE `info`.
    ///   - encapsulatedKey: The sender's `enc` (32 bytes).
    ///   - sender: The sender's static public key `pkS` for mode_auth, or nil for mode_base.
    /// - Throws: Whatever swift-crypto throws (bad `enc`, all-zero DH result, ...).
    init(
        privateKey: Curve25519.KeyAgreement.PrivateKey,
        info: [UInt8],
        encapsulatedKey: [UInt8],
        sender: Curve25519.KeyAgreement.PublicKey?
    ) throws {
        if let sender {
            recipient = try HPKE.Recipient(
                privateKey: privateKey,
                ciphersuite: Self.ciphersuite,
                info: Data(info),
                encapsulatedKey: Data(encapsulatedKey),
                authenticatedBy: sender
            )
        } else {
            recipient = try HPKE.Recipient(
                privateKey: privateKey,
                ciphersuite: Self.ciphersuite,
                info: Data(info),
                encapsulatedKey: Data(encapsulatedKey)
            )
        }
    }

    /// Opens the next ciphertext of the context (the sequence number advances on success).
    ///
    /// - Parameters:
    ///   - ciphertext: AEAD ciphertext with its 16-byte tag.
    ///   - aad: The associated data.
    /// - Returns: The plaintext.
    /// - Throws: Whatever swift-crypto throws on a tag mismatch.
    mutating func open(_ ciphertext: [UInt8], authenticating aad: [UInt8]) throws -> [UInt8] {
        var plaintext = try recipient.open(ciphertext, authenticating: aad)
        let bytes = Array(plaintext)
        plaintext.resetBytes(in: 0..<plaintext.count)
        return bytes
    }
}
