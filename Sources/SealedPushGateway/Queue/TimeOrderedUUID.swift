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
        let time = millis << 16  // the 48 bits at the top
        let a = generator.next() as UInt64  // 12 bits used
        let b = generator.next() as UInt64  // 62 bits used
        // Byte `index` of `value`, most significant first.
        func byte(_ value: UInt64, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: value >> (56 - 8 * index)) }
        return UUID(
            uuid: (
                byte(time, 0), byte(time, 1), byte(time, 2), byte(time, 3), byte(time, 4), byte(time, 5),
                0x70 | byte(a, 6) & 0x0F, byte(a, 7),
                0x80 | byte(b, 0) & 0x3F, byte(b, 1), byte(b, 2), byte(b, 3), byte(b, 4), byte(b, 5), byte(b, 6),
                byte(b, 7)
            ))
    }
}
