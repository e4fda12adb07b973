import SealedPushCore

/// Remembers the message ids of opened envelopes so an envelope opens at most once (spec §8 step 13).
///
/// Callers record a message id only after the envelope authenticated and its content parsed (step 12), so forged
/// envelopes cannot fill the set. An id is kept until its envelope's `expiresAt`; after that, step 10 rejects the
/// envelope as `expired` anyway. Implementations are bounded: when full they evict the entries that expire first
/// and from then on treat every envelope expiring no later than the evicted ones as `replayed` (fail closed).
public protocol ReplayGuard: Sendable {
    /// Records `messageID` as seen, or rejects it.
    ///
    /// - Parameters:
    ///   - messageID: The envelope's 16-byte message id.
    ///   - expiresAt: The envelope's `expiresAt`, UNIX seconds: how long the id must be remembered.
    ///   - now: The current time, UNIX seconds (from the injected clock).
    /// - Throws: `SealedPushError` with code `expired` (`now >= expiresAt`), `replayed` (seen before, or not provably
    ///   fresh after an overflow), `invalidArgument` (id not 16 bytes), `keyStoreCorrupt` or `io` (persisted state).
    func checkAndRecord(messageID: [UInt8], expiresAt: UInt64, now: UInt64) throws
}

/// The bounded set behind every replay guard, with its binary file form (`Specs/keyring-v1.md` §5).
struct ReplayLedger: Equatable {
    static let magic: [UInt8] = Array("SPRG".utf8)
    static let version: UInt8 = 1
    static let headerLength = 17
    static let entryLength = 24

    /// Every envelope with `expiresAt <= watermark` is treated as replayed (set when entries were evicted).
    var watermark: UInt64 = 0
    var entries: [[UInt8]: UInt64] = [:]

    init() {}

    init(bytes: [UInt8]) throws {
        guard bytes.count >= Self.headerLength, Array(bytes[0..<4]) == Self.magic else {
            throw Self.corrupt("missing SPRG header")
        }
        guard bytes[4] == Self.version else {
            throw Self.corrupt("unknown version \(bytes[4])")
        }
        watermark = Self.uint64(bytes, at: 5)
        let count = Int(bytes[13]) << 24 | Int(bytes[14]) << 16 | Int(bytes[15]) << 8 | Int(bytes[16])
        guard bytes.count == Self.headerLength + count * Self.entryLength else {
            throw Self.corrupt("length \(bytes.count) does not match \(count) entries")
        }
        var offset = Self.headerLength
        for _ in 0..<count {
            let id = Array(bytes[offset..<(offset + 16)])
            guard entries.updateValue(Self.uint64(bytes, at: offset + 16), forKey: id) == nil else {
                throw Self.corrupt("a message id appears twice")
            }
            offset += Self.entryLength
        }
    }

    func encoded() -> [UInt8] {
        var out = Self.magic + [Self.version]
        out += Self.bytes(of: watermark)
        let count = UInt32(entries.count)
        out += [UInt8(count >> 24), UInt8((count >> 16) & 0xff), UInt8((count >> 8) & 0xff), UInt8(count & 0xff)]
        for (id, expiresAt) in entries.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            out += id
            out += Self.bytes(of: expiresAt)
        }
        return out
    }

    /// Drops ids whose envelopes have expired (they can no longer open) and a watermark in the past.
    mutating func prune(now: UInt64) {
        entries = entries.filter { $0.value > now }
        if watermark <= now { watermark = 0 }
    }

    mutating func record(messageID: [UInt8], expiresAt: UInt64, now: UInt64, capacity: Int) throws {
        guard messageID.count == EnvelopeV1.messageIDLength else {
            throw SealedPushError(.invalidArgument, "a message id is 16 bytes, got \(messageID.count)")
        }
        prune(now: now)
        guard now < expiresAt else {
            throw SealedPushError(.expired, "the envelope expired at \(expiresAt) (UNIX seconds); now is \(now)")
        }
        guard entries[messageID] == nil else {
            throw SealedPushError(.replayed, "message \(Self.hex(messageID)) was already opened")
        }
        guard expiresAt > watermark else {
            throw SealedPushError(
                .replayed,
                "message \(Self.hex(messageID)) expires at \(expiresAt), not after the replay guard's overflow "
                    + "watermark \(watermark); it cannot be proven fresh"
            )
        }
        entries[messageID] = expiresAt
        let overflow = entries.count - max(capacity, 1)
        if overflow > 0 {
            let evicted = entries.sorted { $0.value < $1.value }.prefix(overflow)
            for (id, evictedExpiry) in evicted {
                entries[id] = nil
                watermark = max(watermark, evictedExpiry)
            }
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }

    private static func corrupt(_ detail: String) -> SealedPushError {
        SealedPushError(.keyStoreCorrupt, "replay guard file is corrupt: \(detail)")
    }

    private static func uint64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        bytes[offset..<(offset + 8)].reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static func bytes(of value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) }
    }
}
