#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealedPushCore

/// Sealed receipts waiting to be posted, one file each in a private directory (the app group's, so the extension
/// and the app share it).
///
/// A file is `<issuedAt, 16 hex digits>-<receipt id, 32 hex digits>.receipt`, exactly one receipt envelope, written
/// atomically with mode 0600 and never through a symbolic link; names sort oldest first. The queue holds at most
/// ``capacity`` receipts (the oldest go first), and receipts past their own expiry are dropped when read. Files hold
/// only sealed receipts: nothing about a notification is readable from them without the backend's key.
struct ReceiptQueue: Sendable {
    /// The most receipts kept.
    static let capacity = 256
    static let suffix = ".receipt"

    let directory: URL

    /// Adds a receipt; drops the oldest beyond ``capacity``.
    /// - Returns: The file's name.
    @discardableResult
    func add(_ receipt: [UInt8], header: EnvelopeHeader) throws -> String {
        try POSIXFile.ensurePrivateDirectory(directory.path)
        let issued = String(header.issuedAt, radix: 16)
        let name = String(repeating: "0", count: max(0, 16 - issued.count)) + issued + "-" + Hex.encode(header.messageID)
            + Self.suffix
        try POSIXFile.writeAtomically(receipt, to: directory.appendingPathComponent(name).path, directory: directory.path)
        let names = self.names()
        for old in names.prefix(max(0, names.count - Self.capacity)) { remove(old) }
        return name
    }

    /// The queued receipts' names, oldest first.
    func names() -> [String] {
        let all = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return all.filter { $0.hasSuffix(Self.suffix) && $0.count == 16 + 1 + 32 + Self.suffix.count }.sorted()
    }

    /// The receipt in a queued file, or nil (gone, unreadable, not a receipt, or expired at `now`: then removed).
    func read(_ name: String, now: UInt64) -> [UInt8]? {
        let path = directory.appendingPathComponent(name).path
        guard case .bytes(let bytes) = try? POSIXFile.read(path, limit: DeliveryReceipt.maximumEnvelopeLength),
            bytes.count == DeliveryReceipt.maximumEnvelopeLength,
            let header = try? EnvelopeHeader(parsing: bytes[0..<EnvelopeV1.headerLength]), now < header.expiresAt
        else {
            remove(name)
            return nil
        }
        return bytes
    }

    func remove(_ name: String) {
        _ = unlink(directory.appendingPathComponent(name).path)
    }
}
