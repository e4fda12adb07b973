import Crypto
import Foundation
import SealedPushCore
import Testing

@testable import SealedPushClient

/// `Specs/keyring-v1.md` §5.5 at the guard: an exact copy within the window is a duplicate, everything else seen
/// before is `replayed`. Each test runs on both guards; the file guard is re-created for every call, as a new
/// process would be.
@Suite("Replay guard duplicates (keyring §5.5)")
final class ReplayDuplicateTests {
    /// This test's files (its file guards' directories), removed when the test ends.
    let scratch: URL

    init() throws { scratch = try makeTemporaryDirectory() }
    deinit { removeTemporaryDirectory(scratch) }

    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case memory, file
        var testDescription: String { rawValue }
    }

    /// Makes a guard factory: the in-memory guard is shared, the file guard is a fresh instance per call.
    func guards(_ kind: Kind, window: UInt64 = 600) throws -> () -> any ReplayGuard {
        switch kind {
        case .memory:
            let shared = InMemoryReplayGuard(duplicateWindow: window)
            return { shared }
        case .file:
            let directory = try makeDirectory(in: scratch)
            return { FileReplayGuard(directory: directory, duplicateWindow: window) }
        }
    }

    func id(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 16) }
    /// A stand-in for an envelope's digest, computed here with SHA-256 from distinct bytes.
    func digest(_ text: String) -> [UInt8] { Array(SHA256.hash(data: Array(text.utf8)).prefix(16)) }

    func verdict(_ guardian: any ReplayGuard, _ messageID: [UInt8], _ envelope: String, issuedAt: UInt64 = 1_000,
                 expiresAt: UInt64 = 90_000, now: UInt64) throws -> ReplayVerdict {
        try guardian.checkAndRecord(
            messageID: messageID, envelopeDigest: digest(envelope), issuedAt: issuedAt, expiresAt: expiresAt, now: now)
    }

    @Test("the same envelope within the window is a duplicate; at the window's end it is replayed", arguments: Kind.allCases)
    func withinAndAfterWindow(kind: Kind) throws {
        let make = try guards(kind)
        #expect(try verdict(make(), id(1), "A", now: 1_000) == .first)
        #expect(try verdict(make(), id(1), "A", now: 1_003) == .duplicate(firstAcceptedAt: 1_000))
        #expect(try verdict(make(), id(1), "A", now: 1_599) == .duplicate(firstAcceptedAt: 1_000))
        #expect(errorCode { try verdict(make(), id(1), "A", now: 1_600) } == .replayed)
        // The window closed for this id: a clock set back to just after the first opening does not reopen it.
        #expect(errorCode { try verdict(make(), id(1), "A", now: 1_005) } == .replayed)
    }

    @Test("a different envelope reusing a recorded id is replayed, and does not close the window", arguments: Kind.allCases)
    func differentEnvelopeSameID(kind: Kind) throws {
        let make = try guards(kind)
        #expect(try verdict(make(), id(2), "original", now: 1_000) == .first)
        var message = ""
        do {
            _ = try verdict(make(), id(2), "forged re-seal", now: 1_001)
            Issue.record("a different envelope with a recorded id was accepted")
        } catch let error as SealedPushError {
            #expect(error.code == .replayed)
            message = error.message
        }
        #expect(message.contains("different envelope"))
        #expect(try verdict(make(), id(2), "original", now: 1_002) == .duplicate(firstAcceptedAt: 1_000))
    }

    @Test("a clock set back after later envelopes were accepted does not turn a replay into a duplicate",
          arguments: Kind.allCases)
    func clockBackAcrossEntries(kind: Kind) throws {
        let make = try guards(kind)
        #expect(try verdict(make(), id(3), "A", now: 1_000) == .first)
        // An hour later (device and sender agree), another message.
        #expect(try verdict(make(), id(4), "B", issuedAt: 4_600, now: 4_600) == .first)
        // The clock is set back to 10 s after A's first opening: A again is a replay, not a duplicate.
        #expect(errorCode { try verdict(make(), id(3), "A", now: 1_010) } == .replayed)
        // And a clock before the first acceptance never makes a duplicate either.
        let other = try guards(kind)
        #expect(try verdict(other(), id(5), "C", issuedAt: 2_000, now: 2_000) == .first)
        #expect(errorCode { try verdict(other(), id(5), "C", issuedAt: 2_000, now: 1_990) } == .replayed)
        // That refusal did not close the window: back at the right time, the resend is still a duplicate.
        #expect(try verdict(other(), id(5), "C", issuedAt: 2_000, now: 2_004) == .duplicate(firstAcceptedAt: 2_000))
    }

    @Test("a device clock far ahead once does not switch duplicates off for good", arguments: Kind.allCases)
    func clockFarAheadIsBoundedBySenderTime(kind: Kind) throws {
        let make = try guards(kind)
        #expect(try verdict(make(), id(6), "A", issuedAt: 1_000, now: 1_000) == .first)
        // The device clock reads ten days ahead for one message (issued at 1,000 by the sender's clock).
        #expect(try verdict(make(), id(7), "B", issuedAt: 1_000, expiresAt: 2_000_000, now: 865_000) == .first)
        // Clock fixed: a message and its resend five seconds later are a duplicate, as the sender's clock
        // (issuedAt 1,000 + 600) bounds what that wrong reading recorded.
        #expect(try verdict(make(), id(8), "C", issuedAt: 2_000, now: 2_000) == .first)
        #expect(try verdict(make(), id(8), "C", issuedAt: 2_000, now: 2_005) == .duplicate(firstAcceptedAt: 2_000))
    }

    @Test("window 0 turns duplicates off; ids recorded without a digest are never duplicates", arguments: Kind.allCases)
    func windowZeroAndNoDigest(kind: Kind) throws {
        let off = try guards(kind, window: 0)
        #expect(try verdict(off(), id(9), "A", now: 1_000) == .first)
        #expect(errorCode { try verdict(off(), id(9), "A", now: 1_000) } == .replayed)
        let make = try guards(kind)
        try make().checkAndRecord(messageID: id(10), issuedAt: 1_000, expiresAt: 90_000, now: 1_000)
        #expect(errorCode { try verdict(make(), id(10), "A", now: 1_001) } == .replayed)
        #expect(errorCode { try make().checkAndRecord(messageID: id(10), envelopeDigest: [1, 2], issuedAt: 1_000,
                                                      expiresAt: 90_000, now: 1_001) } == .invalidArgument)
    }

    @Test("a duplicate past the envelope's expiry is expired, not delivered", arguments: Kind.allCases)
    func expiryStillApplies(kind: Kind) throws {
        let make = try guards(kind)
        #expect(try verdict(make(), id(11), "A", issuedAt: 1_000, expiresAt: 1_060, now: 1_000) == .first)
        #expect(errorCode { try verdict(make(), id(11), "A", issuedAt: 1_000, expiresAt: 1_060, now: 1_060) } == .expired)
    }

    @Test("file form version 4: header and entry carry the acceptance times and the digest, and survive a reload")
    func fileLayout() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let envelope = Array("the envelope bytes".utf8)
        let expectedDigest = Array(SHA256.hash(data: envelope).prefix(16))
        #expect(EnvelopeDigest.of(envelope) == expectedDigest)
        _ = try FileReplayGuard(directory: directory).checkAndRecord(
            messageID: id(0x21), envelopeDigest: EnvelopeDigest.of(envelope), issuedAt: 5_000, expiresAt: 8_000,
            now: 5_007)
        let bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent(FileReplayGuard.fileName)))
        func uint64(_ offset: Int) -> UInt64 { bytes[offset..<(offset + 8)].reduce(0) { $0 << 8 | UInt64($1) } }
        #expect(bytes.count == 41 + 56)
        #expect(Array(bytes[0..<5]) == Array("SPRG".utf8) + [4])
        #expect(uint64(21) == 5_000)  // L
        #expect(uint64(29) == 5_007)  // A = min(now, L + 600)
        #expect(Array(bytes[37..<41]) == [0, 0, 0, 1])
        #expect(Array(bytes[41..<57]) == id(0x21))
        #expect(uint64(57) == 5_000 && uint64(65) == 8_000 && uint64(73) == 5_007)
        #expect(Array(bytes[81..<97]) == expectedDigest)
        // A fresh instance (a new process) reads the times back.
        let state = try FileReplayGuard(directory: directory).state(now: 5_010)
        #expect(state.latestAcceptedAt == 5_007 && state.count == 1)
        #expect(try FileReplayGuard(directory: directory).checkAndRecord(
            messageID: id(0x21), envelopeDigest: expectedDigest, issuedAt: 5_000, expiresAt: 8_000, now: 5_010)
            == .duplicate(firstAcceptedAt: 5_007))
        // A duplicate writes nothing; a closed window is written (a close record: its digest is none from then on).
        let afterDuplicate = [UInt8](try Data(contentsOf: directory.appendingPathComponent(FileReplayGuard.fileName)))
        #expect(afterDuplicate == bytes)
        #expect(errorCode { try FileReplayGuard(directory: directory).checkAndRecord(
            messageID: id(0x21), envelopeDigest: expectedDigest, issuedAt: 5_000, expiresAt: 8_000, now: 5_607) }
            == .replayed)
        let closed = [UInt8](try Data(contentsOf: directory.appendingPathComponent(FileReplayGuard.fileName)))
        #expect(closed.count == 41 + 56 + 64)
        #expect(Array(closed[0..<97]) == bytes)  // the snapshot is never rewritten in place
        #expect(closed[97] == 2 && Array(closed[98..<101]) == [0, 0, 0])  // kind close, reserved zero
        #expect(Array(closed[105..<121]) == id(0x21))
        #expect(Array(closed[121..<161]) == [UInt8](repeating: 0, count: 40))
        // The closed entry is never a duplicate again, even with the clock set back into the window.
        #expect(errorCode { try FileReplayGuard(directory: directory).checkAndRecord(
            messageID: id(0x21), envelopeDigest: expectedDigest, issuedAt: 5_000, expiresAt: 8_000, now: 5_010) }
            == .replayed)
    }

    @Test("a version 2 file migrates to version 4: its ids stay refused and are never duplicates")
    func migratesVersion2() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let file = directory.appendingPathComponent(FileReplayGuard.fileName)
        func be(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) } }
        // Version 2: W = 0, P = 0, L = 1,000, one entry (id 7, issued 1,000, expires 9,000).
        let legacy = Array("SPRG".utf8) + [2] + be(0) + be(0) + be(1_000) + [0, 0, 0, 1] + id(7) + be(1_000) + be(9_000)
        try Data(legacy).write(to: file)
        let guardian = FileReplayGuard(directory: directory)
        #expect(errorCode { try guardian.checkAndRecord(
            messageID: id(7), envelopeDigest: digest("A"), issuedAt: 1_000, expiresAt: 9_000, now: 1_001) } == .replayed)
        let migrated = [UInt8](try Data(contentsOf: file))
        #expect(migrated.count == 41 + 56 && migrated[4] == 4)
        #expect(Array(migrated[41..<57]) == id(7))
        #expect(Array(migrated[73..<97]) == [UInt8](repeating: 0, count: 24))  // acceptedAt 0, digest none
        // New ids in the migrated state get duplicates.
        #expect(try guardian.checkAndRecord(
            messageID: id(8), envelopeDigest: digest("B"), issuedAt: 1_100, expiresAt: 9_000, now: 1_100) == .first)
        #expect(try guardian.checkAndRecord(
            messageID: id(8), envelopeDigest: digest("B"), issuedAt: 1_100, expiresAt: 9_000, now: 1_102)
            == .duplicate(firstAcceptedAt: 1_100))
    }
}
