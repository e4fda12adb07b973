import Foundation
import SealedPushCore

/// Draws an envelope's `messageId` (`Specs/envelope-v1.md` §3): a 4-byte time prefix — the sender's clock in
/// milliseconds since the UNIX epoch, modulo 2³², big-endian — then 12 bytes (96 bits) from libsodium's
/// cryptographically secure random source.
///
/// The 96 random bits are what the design requires (unguessable, and unique: a collision within one millisecond
/// needs about 2⁴⁸ ids). The prefix makes ids drawn one after another sort by time, so a store that indexes them
/// (the gateway's receipts look jobs up by message id) appends to its index instead of writing a random leaf of it
/// per notification. It tells nothing the cleartext header's `issuedAt` does not, but to the millisecond.
/// Receivers treat all 16 bytes as opaque.
public enum MessageID {
    /// The bytes taken from the clock; the other 12 are drawn from the secure random source.
    public static let timePrefixLength = 4

    /// A fresh message id.
    ///
    /// - Parameter milliseconds: The sender's clock in milliseconds since the UNIX epoch (default: now); only its
    ///   low 32 bits are used.
    /// - Returns: 16 bytes: the time prefix, then 12 random bytes.
    public static func draw(milliseconds: UInt64 = currentMilliseconds()) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: EnvelopeV1.messageIDLength)
        let prefix = UInt32(truncatingIfNeeded: milliseconds)
        bytes[0] = UInt8(truncatingIfNeeded: prefix >> 24)
        bytes[1] = UInt8(truncatingIfNeeded: prefix >> 16)
        bytes[2] = UInt8(truncatingIfNeeded: prefix >> 8)
        bytes[3] = UInt8(truncatingIfNeeded: prefix)
        bytes.withUnsafeMutableBytes { buffer in
            Sodium.randomBytes(into: UnsafeMutableRawBufferPointer(rebasing: buffer[timePrefixLength...]))
        }
        return bytes
    }

    /// The wall clock in milliseconds since the UNIX epoch, or 0 if the clock is before that.
    public static func currentMilliseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        guard time.tv_sec >= 0 else { return 0 }
        return UInt64(time.tv_sec) &* 1_000 &+ UInt64(time.tv_nsec / 1_000_000)
    }
}
