import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// Seals a ``DeliveryReceipt`` on the device (`Specs/control-v1.md` §4): HPKE mode_auth with the device key that
/// received the notification as the authenticated sender and the server identity that sent it as the recipient, under
/// the receipt `info`, so only that backend reads it and no one else can forge one.
///
/// The sealer reads the key ring (read-only) for each receipt, as the opener does; it never writes keys.
public struct ReceiptSealer: Sendable {
    private let keyStore: any KeyStore
    private let serverKeys: [KeyID: [UInt8]]
    private let info: [UInt8]

    /// Creates a sealer.
    ///
    /// - Parameters:
    ///   - keyStore: The device key ring (the extension's read-only store is enough).
    ///   - serverPublicKeys: The pinned server identities (raw 32-byte X25519 public keys), the same as the receiver's.
    ///   - topic: The app's topic.
    /// - Throws: `SealedPushError` with `invalidKey` or `invalidTopic`.
    public init(keyStore: any KeyStore, serverPublicKeys: [[UInt8]], topic: String) throws {
        var keys: [KeyID: [UInt8]] = [:]
        for key in serverPublicKeys {
            guard key.count == 32 else {
                throw SealedPushError(.invalidKey, "a pinned server public key is 32 bytes, got \(key.count)")
            }
            keys[try KeyID.derived(fromPublicKey: key)] = key
        }
        self.keyStore = keyStore
        self.serverKeys = keys
        self.info = try DeliveryReceipt.hpkeInfo(topic: topic)
    }

    /// Seals a receipt about an opened notification, from the key that opened it to the server key that sealed it.
    ///
    /// - Parameters:
    ///   - receipt: The record.
    ///   - notification: The notification the receipt is about (its key ids say who seals to whom).
    ///   - now: The device time, UNIX seconds (the receipt lives 7 days from it).
    /// - Returns: The receipt envelope (82 + 256 + 16 bytes).
    /// - Throws: `SealedPushError`: `keysUnavailable`, `unknownRecipientKey` (the device key is gone),
    ///   `unknownSenderKey` (the server key is not pinned), `invalidArgument` (a field out of range).
    public func seal(_ receipt: DeliveryReceipt, about notification: OpenedNotification, now: UInt64) throws -> [UInt8] {
        try seal(receipt, deviceKeyID: notification.recipientKeyID, serverKeyID: notification.senderKeyID, now: now)
    }

    /// Seals a receipt from device key `deviceKeyID` to pinned server key `serverKeyID`.
    ///
    /// - Parameters:
    ///   - receipt: The record.
    ///   - deviceKeyID: The device key that received the notification.
    ///   - serverKeyID: The server identity that sealed it.
    ///   - now: The device time, UNIX seconds.
    /// - Returns: The receipt envelope.
    /// - Throws: `SealedPushError` as ``seal(_:about:now:)``.
    public func seal(_ receipt: DeliveryReceipt, deviceKeyID: KeyID, serverKeyID: KeyID, now: UInt64) throws -> [UInt8] {
        guard let serverKey = serverKeys[serverKeyID] else {
            throw SealedPushError(.unknownSenderKey, "server key \(serverKeyID.hex) is not pinned")
        }
        guard let ring = try keyStore.loadKeyRing() else {
            throw SealedPushError(.keysUnavailable, "no device key ring exists")
        }
        guard let deviceKey = ring.keys.first(where: { $0.keyID == deviceKeyID }) else {
            throw SealedPushError(.unknownRecipientKey, "the device no longer holds key \(deviceKeyID.hex)")
        }
        guard now < 9_007_199_254_740_992 - DeliveryReceipt.maxLifetime else {
            throw SealedPushError(.invalidArgument, "the device time \(now) is past what a receipt can carry")
        }
        var padded = try receipt.paddedPlaintext()
        defer { for index in padded.indices { padded[index] = 0 } }
        var generator = SystemRandomNumberGenerator()
        let receiptID = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        do {
            var sender = try HPKE.Sender(
                recipientKey: Curve25519.KeyAgreement.PublicKey(rawRepresentation: serverKey),
                ciphersuite: HPKERecipientWrapper.ciphersuite, info: Data(info), authenticatedBy: deviceKey.privateKey)
            let header = EnvelopeHeader(
                recipientKeyID: serverKeyID, senderKeyID: deviceKeyID, messageID: receiptID, issuedAt: now,
                expiresAt: now + DeliveryReceipt.maxLifetime, enc: Array(sender.encapsulatedKey))
            let aad = header.encoded()
            return aad + Array(try sender.seal(padded, authenticating: aad))
        } catch let error as SealedPushError {
            throw error
        } catch {
            throw SealedPushError(.invalidKey, "the receipt could not be sealed to server key \(serverKeyID.hex)")
        }
    }
}
