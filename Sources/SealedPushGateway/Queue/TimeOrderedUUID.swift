#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The gateway's notification ids: UUID version 7 (RFC 9562 §5.7), the Unix time in milliseconds in the first 48
/// bits, then the version, 74 random bits and the variant.
///
/// Ids made later sort after earlier ones (as bytes and as their lowercase text), so the indexes keyed by a
/// notification's id grow at one end: a group commit of sends writes the last leaf of each instead of a leaf per
/// send (`SQLiteWriteVolumeTests`). What the time prefix tells is when the gateway accepted the notification, to
/// the millisecond — which the backend that sent it knows, and APNs (which sees the id as the default
/// `apns-collapse-id`) sees within the same moment. The 74 random bits keep ids unguessable.
public enum TimeOrderedUUID {
    /// A new version 7 UUID for `now`.
    /// - Parameter now: The time in its first 48 bits (milliseconds since 1970, truncated; before 1970 counts as 0).
    /// - Returns: The id; its random bits come from the system's generator (`getrandom`).
    public static func make(now: Date = Date()) -> UUID {
        var generator = SystemRandomNumberGenerator()
        let millis = UInt64(max(0, (now.timeIntervalSince1970 * 1000).rounded(.down))) & 0xFFFF_FFFF_FFFF
        let randomA = generator.next() as UInt64  // 12 bits used
        let randomB = generator.next() as UInt64  // 62 bits used
        let time = millis.bigEndianBytes.suffix(6)
        let b = randomB.bigEndianBytes
        return UUID(
            uuid: (
                time[time.startIndex], time[time.startIndex + 1], time[time.startIndex + 2],
                time[time.startIndex + 3], time[time.startIndex + 4], time[time.startIndex + 5],
                0x70 | UInt8(truncatingIfNeeded: randomA >> 8) & 0x0F, UInt8(truncatingIfNeeded: randomA),
                0x80 | b[0] & 0x3F, b[1], b[2], b[3], b[4], b[5], b[6], b[7]
            ))
    }
}

extension UInt64 {
    /// The eight bytes, most significant first.
    fileprivate var bigEndianBytes: [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: self >> (56 - 8 * $0)) } }
}
