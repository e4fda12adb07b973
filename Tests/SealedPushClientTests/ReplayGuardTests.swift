import Foundation
import SealedPushCore
import Testing

@testable import SealedPushClient

@Suite("Replay guard")
struct ReplayGuardTests {
    func id(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 16) }

    @Test("file guard: a replay is rejected across a restart of the store")
    func replayAcrossRestart() throws {
        let directory = try makeTemporaryDirectory()
        try FileReplayGuard(directory: directory).checkAndRecord(messageID: id(1), expiresAt: 200, now: 100)
        // A new instance (a new process) reads the persisted state.
        let restarted = FileReplayGuard(directory: directory)
        #expect(errorCode { try restarted.checkAndRecord(messageID: id(1), expiresAt: 200, now: 101) } == .replayed)
        try restarted.checkAndRecord(messageID: id(2), expiresAt: 200, now: 101)
        let attributes = try FileManager.default.attributesOfItem(
            atPath: directory.appendingPathComponent(FileReplayGuard.fileName).path
        )
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test("expiry by the injected clock, at the boundary second")
    func expiryBoundary() throws {
        let guardian = InMemoryReplayGuard()
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(1), expiresAt: 500, now: 500) } == .expired)
        try guardian.checkAndRecord(messageID: id(1), expiresAt: 500, now: 499)
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(1), expiresAt: 500, now: 499) } == .replayed)
        #expect(errorCode { try guardian.checkAndRecord(messageID: [1, 2], expiresAt: 500, now: 1) } == .invalidArgument)
    }

    @Test("file guard prunes expired ids and stays bounded, failing closed on overflow")
    func pruneAndBound() throws {
        let directory = try makeTemporaryDirectory()
        let guardian = FileReplayGuard(directory: directory, capacity: 3)
        let file = directory.appendingPathComponent(FileReplayGuard.fileName)
        try guardian.checkAndRecord(messageID: id(1), expiresAt: 110, now: 100)
        try guardian.checkAndRecord(messageID: id(2), expiresAt: 120, now: 100)
        try guardian.checkAndRecord(messageID: id(3), expiresAt: 130, now: 100)
        // File: 17-byte header + 24 bytes per id.
        #expect(try Data(contentsOf: file).count == 17 + 3 * 24)
        // At 111 the first id has expired and is pruned when the next one is recorded.
        try guardian.checkAndRecord(messageID: id(4), expiresAt: 140, now: 111)
        #expect(try Data(contentsOf: file).count == 17 + 3 * 24)
        // Over capacity: the earliest-expiring id (2, expires 120) is evicted and becomes the watermark.
        try guardian.checkAndRecord(messageID: id(5), expiresAt: 150, now: 111)
        #expect(try Data(contentsOf: file).count == 17 + 3 * 24)
        // An evicted id cannot be replayed: everything expiring at or before 120 is rejected.
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(2), expiresAt: 120, now: 112) } == .replayed)
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(9), expiresAt: 119, now: 112) } == .replayed)
        // Once the watermark has passed, fresh envelopes open again.
        try guardian.checkAndRecord(messageID: id(6), expiresAt: 200, now: 121)
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(5), expiresAt: 150, now: 121) } == .replayed)
    }

    @Test("corrupt state is reported, not silently reset; reset() is explicit")
    func corruption() throws {
        let directory = try makeTemporaryDirectory()
        let file = directory.appendingPathComponent(FileReplayGuard.fileName)
        try Data("SPRG\u{1}garbage".utf8).write(to: file)
        let guardian = FileReplayGuard(directory: directory)
        #expect(errorCode { try guardian.checkAndRecord(messageID: id(1), expiresAt: 10, now: 1) } == .keyStoreCorrupt)
        #expect(try Data(contentsOf: file) == Data("SPRG\u{1}garbage".utf8))
        try guardian.reset()
        try guardian.checkAndRecord(messageID: id(1), expiresAt: 10, now: 1)
    }

    @Test("the guard never creates its directory")
    func noDirectory() throws {
        let missing = try makeTemporaryDirectory(create: false)
        #expect(errorCode { try FileReplayGuard(directory: missing).checkAndRecord(messageID: id(1), expiresAt: 9, now: 1) }
            == .io)
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }

    @Test("app and extension recording at once: no id lost, each id accepted exactly once")
    func concurrentRecording() throws {
        let directory = try makeTemporaryDirectory()
        let accepted = Counter()
        // 4 "processes" (separate guard instances, separate lock descriptors) each record ids 0..<50 concurrently.
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let guardian = FileReplayGuard(directory: directory)
            for value in 0..<50 {
                var messageID = [UInt8](repeating: 0, count: 16)
                messageID[15] = UInt8(value)
                if (try? guardian.checkAndRecord(messageID: messageID, expiresAt: 1000, now: 1)) != nil {
                    accepted.increment()
                }
            }
        }
        #expect(accepted.value == 50)
        let data = try Data(contentsOf: directory.appendingPathComponent(FileReplayGuard.fileName))
        #expect(data.count == 17 + 50 * 24)
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
