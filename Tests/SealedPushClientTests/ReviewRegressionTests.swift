import Crypto
import Foundation
import SealedPushCore
import Testing

@testable import SealedPushClient

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Regressions for the outside review of the key ring, replay guard and errors (issue 10). Each test names its item
/// and goes through the same public paths as `sealed-push open --keyring` and `device …`.
@Suite("Review regressions (issue 10)")
final class ReviewRegressionTests {
    /// This test's directories (its devices' key rings and journals), removed when the test ends.
    let scratch: URL

    init() throws { scratch = try makeTemporaryDirectory() }
    deinit { removeTemporaryDirectory(scratch) }

    let sealer = TestSealer()

    /// A key ring directory with one key, a receiver on it (read-only store, file replay guard) and a clock.
    func deviceDirectory(now: UInt64) throws -> (URL, DeviceRegistration, ManualClock, SealedPushReceiver) {
        let directoryParent = try makeDirectory(in: scratch)
        let directory = directoryParent.appendingPathComponent("keys")
        let registration = try DeviceKeyManager(directory: directory).create(now: now)
        let clock = ManualClock(now)
        let receiver = try SealedPushReceiver(
            directory: directory, serverPublicKeys: [sealer.serverPublicKey], topic: sealer.topic, clock: clock.clock)
        return (directory, registration, clock, receiver)
    }

    func body(_ content: String = #"{"body":"hi"}"#, for registration: DeviceRegistration, issuedAt: UInt64,
              ttl: UInt64, messageID: [UInt8] = TestSealer.randomMessageID()) throws -> [UInt8] {
        try sealer.sealBody(
            contentJSON: content, to: KeyText.decodePublicKey(registration.publicKey), issuedAt: issuedAt,
            expiresAt: issuedAt + ttl, messageID: messageID)
    }

    // MARK: Items 1–3 end to end through the receiver

    @Test("item 1: a full replay state still opens a fresh one-hour message")
    func item1FullStateOpensFreshMessage() throws {
        let now: UInt64 = 1_800_000_000
        let (directory, registration, clock, receiver) = try deviceDirectory(now: now)
        // 16,384 ids of 28-day envelopes spread over 27 days, written the way the guard writes them.
        let guardian = FileReplayGuard(directory: directory)
        var ledger = ReplayLedger()
        let count = FileReplayGuard.defaultCapacity
        for index in 0..<count {
            let issued = now - 27 * 86_400 + UInt64(index) * 27 * 86_400 / UInt64(count)
            var id = [UInt8](repeating: 0, count: 16)
            withUnsafeBytes(of: UInt64(index).bigEndian) { id.replaceSubrange(8..<16, with: $0) }
            try ledger.record(messageID: id, issuedAt: issued, expiresAt: issued + 2_419_200, now: issued,
                              capacity: count)
        }
        try Data(ledger.encoded()).write(to: directory.appendingPathComponent(FileReplayGuard.fileName))
        #expect(try guardian.state(now: now).count == count)
        // One more long-lived message fills it over the bound (an eviction happens)...
        _ = try receiver.open(body: body(for: registration, issuedAt: now - 5, ttl: 2_419_200))
        // ...and a fresh one-time code (ttl one hour) still opens.
        clock.now = now + 1
        let opened = try receiver.open(body: body(#"{"body":"code 4711"}"#, for: registration, issuedAt: now + 1, ttl: 3_600))
        #expect(opened.content.body == "code 4711")
    }

    @Test("item 2: an envelope issued five years ahead is notYetValid and leaves no trace")
    func item2FarFuture() throws {
        let now: UInt64 = 1_800_000_000
        let (directory, registration, _, receiver) = try deviceDirectory(now: now)
        let future = now + 5 * 365 * 86_400
        #expect(errorCode { try receiver.open(body: body(for: registration, issuedAt: future, ttl: 86_400)) } == .notYetValid)
        #expect(try FileReplayGuard(directory: directory).state(now: now).count == 0)
    }

    @Test("item 3: open A, open B with the clock two hours ahead, open A at the real time: replayed")
    func item3ClockForwardThenBack() throws {
        let now: UInt64 = 1_800_000_000
        let (_, registration, clock, receiver) = try deviceDirectory(now: now)
        let bodyA = try body(for: registration, issuedAt: now, ttl: 3_600)
        _ = try receiver.open(body: bodyA)
        clock.now = now + 7_200
        _ = try receiver.open(body: body(for: registration, issuedAt: now + 1, ttl: 86_400))
        clock.now = now + 2
        #expect(errorCode { try receiver.open(body: bodyA) } == .replayed)
    }

    // MARK: Item 4: the writer never writes what the reader refuses

    @Test("item 4: rotating a ring just under 1 MiB keeps it readable; prune works; oversize is keyStoreCorrupt")
    func item4WriterNeverBricksTheReader() throws {
        let directoryParent = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directoryParent) }
        let directory = directoryParent.appendingPathComponent("keys")
        // Retired keys until the file is just under the limit (every retired entry has the same length here).
        let current = DeviceKeyRing.generate(now: 1_000).current
        func retired() throws -> DeviceKeyRing.Key {
            try DeviceKeyRing.Key(privateKey: Curve25519.KeyAgreement.PrivateKey(), createdAt: 1_000, retiredAt: 2_000)
        }
        let empty = DeviceKeyRing(keys: [current]).fileBytes().count
        let entry = DeviceKeyRing(keys: [try retired(), current]).fileBytes().count - empty
        let count = (DeviceKeyRing.maxFileBytes - 100 - empty) / entry
        let keys = try (0..<count).map { _ in try retired() }
        let ring = DeviceKeyRing(keys: keys + [current])
        let store = FileKeyStore(directory: directory, access: .readWrite)
        try store.update { $0 = ring }
        let before = ring.fileBytes().count
        #expect(before <= DeviceKeyRing.maxFileBytes)

        let manager = DeviceKeyManager(directory: directory)
        let registration = try manager.rotate(now: 3_000)
        let path = directory.appendingPathComponent(FileKeyStore.fileName).path
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? .max
        #expect(size <= DeviceKeyRing.maxFileBytes, "rotate wrote \(size) bytes")
        let reread = try #require(try FileKeyStore(directory: directory, access: .readOnly).loadKeyRing())
        #expect(reread.current.keyID.hex == registration.keyId)
        #expect(reread.keys.first?.keyID != keys.first?.keyID, "the oldest retired key is dropped first")
        // Rotating again and pruning keep working on what the reader accepts.
        try manager.rotate(now: 3_001)
        let pruned = try manager.prune(now: 2_000 + DeviceKeyRing.defaultGracePeriod)
        #expect(pruned.count >= keys.count - 2)

        // A file over the limit is keyStoreCorrupt (not io), and left untouched.
        try Data(repeating: 0x20, count: DeviceKeyRing.maxFileBytes + 1).write(to: URL(fileURLWithPath: path))
        #expect(errorCode { try FileKeyStore(directory: directory, access: .readOnly).loadKeyRing() } == .keyStoreCorrupt)
        #expect(errorCode { try manager.prune(now: 10_000) } == .keyStoreCorrupt)
    }

    // MARK: Item 5: no decrypted plaintext in errors

    @Test("item 5: malformedContent after decryption carries an offset and a category, never plaintext")
    func item5NoPlaintextInErrors() throws {
        let now: UInt64 = 1_800_000_000
        let (_, registration, _, receiver) = try deviceDirectory(now: now)
        let marker = "acct-DE89370400440532013000"
        let device = try KeyText.decodePublicKey(registration.publicKey)
        let contents = [
            #"{"\#(marker)":1,"\#(marker)":2}"#, #"{"body":"\#(marker)","body":"x"}"#, #"{"body":"\#(marker)\q"}"#,
            #"{"body":"\#(marker)"} trailing"#, "{\"body\":\"\(marker)\u{01}\"}", #"{"data":[\#(marker)]}"#,
            #"{"title":"\#(marker)","badge":"\#(marker)"}"#,
        ]
        var bodies = try contents.map { try body($0, for: registration, issuedAt: now, ttl: 3_600) }
        // A length prefix that reads the content's first bytes as a length (a sender that forgot the prefix).
        let unprefixed = Array(#"{"body":"\#(marker)"}"#.utf8)
        let envelope = try sealer.sealEnvelope(
            contentJSON: "", to: device, issuedAt: now, expiresAt: now + 3_600,
            paddedOverride: unprefixed + [UInt8](repeating: 0, count: 128 - unprefixed.count))
        bodies.append(APNsPayload.encode(placeholder: .default, envelope: envelope))
        for body in bodies {
            do {
                _ = try receiver.open(body: body)
                Issue.record("opened")
            } catch let error as SealedPushError {
                #expect(error.code == .malformedContent)
                for fragment in [marker, "DE8937", "acct", "\\q", "trailing", String(0x7B22 /* "{\"" as a length */)] {
                    #expect(!error.message.contains(fragment), "\(error.message)")
                }
            }
        }
    }

    // MARK: Item 6 through the receiver

    @Test("item 6: NFC and NFD member names are two members, and the message opens")
    func item6NormalizationIsNotDuplication() throws {
        let now: UInt64 = 1_800_000_000
        let (_, registration, _, receiver) = try deviceDirectory(now: now)
        let opened = try receiver.open(body: body(#"{"data":{"\u00e9":1,"e\u0301":2}}"#, for: registration,
                                                  issuedAt: now, ttl: 60))
        let data = try #require(opened.content.data?.objectValue)
        #expect(data.count == 2)
        #expect(data["\u{e9}"] == .number(1))
        #expect(data["e\u{301}"] == .number(2))
    }

    // MARK: Item 7: FIFOs never block

    /// Runs `body` on its own thread and waits at most `seconds`; nil on time-out (the thread is left blocked).
    func withDeadline<T: Sendable>(seconds: Double, _ body: @escaping @Sendable () -> T) -> T? {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<T>()
        Thread.detachNewThread {
            box.value = body()
            done.signal()
        }
        return done.wait(timeout: .now() + seconds) == .success ? box.value : nil
    }

    @Test("item 7: a FIFO named keyring.json, replay-v1.bin or a lock file fails at once with keyStoreCorrupt",
          arguments: [FileKeyStore.fileName, FileReplayGuard.fileName, FileReplayGuard.lockFileName])
    func item7FIFOs(name: String) throws {
        let now: UInt64 = 1_800_000_000
        let (directory, registration, _, receiver) = try deviceDirectory(now: now)
        let path = directory.appendingPathComponent(name).path
        unlink(path)
        #expect(mkfifo(path, 0o600) == 0)
        let message = try body(for: registration, issuedAt: now, ttl: 60)
        let code = withDeadline(seconds: 5) { errorCode { try receiver.open(body: message) } }
        #expect(code == .keyStoreCorrupt, "open on a FIFO \(name) did not fail at once (nil: it blocked)")
    }

    // MARK: Item 8: symbolic links are refused, targets untouched

    @Test("item 8: a symlinked key ring directory is refused and its target is not chmodded")
    func item8SymlinkedDirectory() throws {
        let parent = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(parent) }
        let target = parent.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        #expect(chmod(target.path, 0o755) == 0)
        let link = parent.appendingPathComponent("kdir")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        do {
            _ = try DeviceKeyManager(directory: link).create(now: 1)
            Issue.record("created a key ring through a symbolic link")
        } catch let error as SealedPushError {
            #expect(error.code == .keyStoreCorrupt)
            #expect(error.message.contains(link.path))
        }
        let mode = try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? Int
        #expect(mode == 0o755)
        #expect(try FileManager.default.contentsOfDirectory(atPath: target.path).isEmpty)
        #expect(errorCode { try FileKeyStore(directory: link, access: .readOnly).loadKeyRing() } == .keyStoreCorrupt)
    }

    @Test("item 8: symlinked key ring files and lock files are refused; nothing is created through them",
          arguments: [FileKeyStore.lockFileName, FileKeyStore.fileName, FileReplayGuard.fileName, FileReplayGuard.lockFileName])
    func item8SymlinkedFiles(name: String) throws {
        let now: UInt64 = 1_800_000_000
        let (directory, registration, _, receiver) = try deviceDirectory(now: now)
        let outsideParent = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(outsideParent) }
        let outside = outsideParent.appendingPathComponent("outside-\(name)")
        let path = directory.appendingPathComponent(name)
        unlink(path.path)
        try FileManager.default.createSymbolicLink(at: path, withDestinationURL: outside)
        let manager = DeviceKeyManager(directory: directory)
        if name.hasPrefix("keyring") {
            #expect(errorCode { try manager.rotate(now: now) } == .keyStoreCorrupt)
        } else {
            #expect(errorCode { try receiver.open(body: body(for: registration, issuedAt: now, ttl: 60)) } == .keyStoreCorrupt)
        }
        #expect(!FileManager.default.fileExists(atPath: outside.path), "a file was created through the link")
    }

    // MARK: Item 10 (client side): no key material in descriptions

    @Test("item 10: key stores, key rings, openers and receivers render without key material")
    func item10ClientDescriptions() throws {
        let ring = DeviceKeyRing.generate(now: 1)
        let raw = Array(ring.current.privateKey.rawRepresentation)
        let secrets = [
            Hex.encode(raw), Base64URL.encode(raw), String(describing: raw),
            String(decoding: KeyText.encodePrivateKeyFile(raw), as: UTF8.self).trimmingCharacters(in: .newlines),
        ]
        let store = InMemoryKeyStore(keyRing: ring)
        let receiver = try SealedPushReceiver(
            keyStore: store, replayGuard: InMemoryReplayGuard(), serverPublicKeys: [sealer.serverPublicKey],
            topic: sealer.topic)
        let opener = try EnvelopeOpener(keyRing: ring, serverPublicKeys: [sealer.serverPublicKey], topic: sealer.topic)
        let values: [(String, Any)] = [
            ("InMemoryKeyStore", store), ("DeviceKeyRing", ring), ("EnvelopeOpener", opener),
            ("SealedPushReceiver", receiver), ("DeviceKeyRing.Key", ring.current),
        ]
        for (what, value) in values {
            var dumped = ""
            dump(value, to: &dumped)
            for rendering in [String(describing: value), "\(value)", String(reflecting: value), dumped] {
                for secret in secrets {
                    #expect(!rendering.contains(secret), "\(what): \(rendering.prefix(200))")
                }
            }
        }
        #expect(String(describing: store).contains(ring.current.keyID.hex))
    }
}

final class ResultBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T?
    var value: T? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
