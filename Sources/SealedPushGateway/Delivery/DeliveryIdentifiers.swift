import Crypto
import Foundation
import SealedPushCore

/// The identifiers a job is sent with, derived from the job alone so that every send of it — the first, a retry
/// after an ambiguous failure, a resend by another node after a lease takeover — carries the same ones.
///
/// Together with the body (stored sealed once, sent byte for byte), this makes every resend of a job an exact copy
/// of the first send: APNs collapses it into the notification already shown, and the extension can tell an exact
/// duplicate from a replay of an old envelope.
public enum DeliveryIdentifiers {
    /// The prefix of a collapse id the gateway makes for a notification that has none.
    public static let collapseIDPrefix = "sp-"

    /// The `apns-collapse-id` for a notification: its own, or `sp-` followed by the notification id in lowercase
    /// (39 bytes, within APNs's 64-byte limit). The id is random and says nothing about the content.
    /// - Parameters:
    ///   - notificationID: The notification.
    ///   - collapseID: The collapse id the backend gave, if any.
    /// - Returns: The collapse id to send.
    public static func collapseID(notificationID: UUID, collapseID: String?) -> String {
        if let collapseID, !collapseID.isEmpty { return collapseID }
        return collapseIDPrefix + notificationID.lowercasedString
    }

    /// The `apns-id` of one device's send of a notification: the first 16 bytes of
    /// SHA-256(`"sealedpush-apns-id-v1" || 0x00 || notification id (16 bytes) || device id (UTF-8)`), marked as an
    /// RFC 9562 version 8 UUID. The same job always gets the same `apns-id`, so APNs's and the gateway's records
    /// name one delivery however often it was sent.
    /// - Parameters:
    ///   - notificationID: The notification.
    ///   - deviceID: The recipient device.
    /// - Returns: The `apns-id`.
    public static func apnsID(notificationID: UUID, deviceID: String) -> UUID {
        var hasher = SHA256()
        hasher.update(data: Array("sealedpush-apns-id-v1".utf8) + [0])
        let id = notificationID.uuid
        hasher.update(data: [
            id.0, id.1, id.2, id.3, id.4, id.5, id.6, id.7, id.8, id.9, id.10, id.11, id.12, id.13, id.14, id.15,
        ])
        hasher.update(data: Array(deviceID.utf8))
        var bytes = Array(hasher.finalize().prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80  // version 8
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}
