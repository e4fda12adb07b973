import Foundation
import SealedPushCore
import Testing

@testable import SealedPushClient

private func mode(_ url: URL) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

private func listing(_ url: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
}

@Suite("FileKeyStore and InMemoryKeyStore")
struct FileKeyStoreTests {
    struct InjectedCrash: Error {}

    @Test("create writes a 0700 directory and a 0600 key ring the read-only store loads")
    func createAndLoad() throws {
        let parent = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(parent) }
        let directory = parent.appendingPathComponent("nested/keys")
        let manager = DeviceKeyManager(directory: directory)
        let registration = try manager.create(now: 100)
        #expect(try mode(directory) == 0o700)
        #expect(try mode(directory.appendingPathComponent("keyring.json")) == 0o600)
        #expect(!listing(directory).contains { $0.contains(".tmp-") })

        let readOnly = FileKeyStore(directory: directory, access: .readOnly)
        let ring = try #require(try readOnly.loadKeyRing())
        #expect(ring.current.publicKeyText == registration.publicKey)
        #expect(errorCode { try manager.create(now: 200) } == .invalidArgument)
        #expect(try manager.createIfNeeded(now: 300) == registration)
        #expect(try manager.registration() == registration)
    }

    /// Audit (stop 48, L8): `device init --keyring DIR` on an existing directory changed it to 0700 (`--keyring .`
    /// made the working directory private). An existing directory keeps its mode; one that others may write to is
    /// refused, naming its mode, and left as it was.
    @Test("an existing directory keeps its mode; one others may write to is refused")
    func existingDirectoryKeepsItsMode() throws {
        let parent = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(parent) }
        let shared = parent.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: shared.path)
        _ = try DeviceKeyManager(directory: shared).create(now: 100)
        #expect(try mode(shared) == 0o755)
        #expect(try mode(shared.appendingPathComponent("keyring.json")) == 0o600)

        let open = parent.appendingPathComponent("open")
        try FileManager.default.createDirectory(at: open, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o775], ofItemAtPath: open.path)
        #expect {
            _ = try DeviceKeyManager(directory: open).create(now: 100)
        } throws: { error in
            let error = error as? SealedPushError
            return error?.code == .keyStoreCorrupt && error?.message.contains("mode 775") == true
        }
        #expect(try mode(open) == 0o775)
        #expect(listing(open).isEmpty)
    }

    @Test("read-only store never creates anything: missing directory or file → keysUnavailable")
    func readOnlyNeverCreates() throws {
        let parent = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(parent) }
        let missing = parent.appendingPathComponent("never-created")
        let store = FileKeyStore(directory: missing, access: .readOnly)
        #expect(errorCode { try store.loadKeyRing() } == .keysUnavailable)
        #expect(errorCode { try store.update { ring in ring = DeviceKeyRing.generate(now: 1) } } == .invalidArgument)
        #expect(!FileManager.default.fileExists(atPath: missing.path))

        let empty = parent.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: false)
        let emptyStore = FileKeyStore(directory: empty, access: .readOnly)
        #expect(errorCode { try emptyStore.loadKeyRing() } == .keysUnavailable)
        #expect(listing(empty).isEmpty)
    }

    @Test("unreadable key file → keysUnavailable (skipped as root, who can read anything)")
    func unreadable() throws {
        guard getuid() != 0 else { return }
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        try DeviceKeyManager(directory: directory).create(now: 1)
        let file = directory.appendingPathComponent("keyring.json")
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: file.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path) }
        #expect(errorCode { try FileKeyStore(directory: directory, access: .readOnly).loadKeyRing() } == .keysUnavailable)
    }

    @Test("a write interrupted before its rename leaves the previous key ring intact and readable")
    func crashBeforeRename() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let manager = DeviceKeyManager(directory: directory)
        try manager.create(now: 100)
        let before = try Data(contentsOf: directory.appendingPathComponent("keyring.json"))
        let beforeRing = try #require(try FileKeyStore(directory: directory, access: .readOnly).loadKeyRing())

        var crashing = FileKeyStore(directory: directory, access: .readWrite)
        crashing.beforeRename = { temporary in
            // The new file is complete and synced at this point but not yet renamed.
            #expect(FileManager.default.fileExists(atPath: temporary))
            throw InjectedCrash()
        }
        #expect(throws: InjectedCrash.self) { try DeviceKeyManager(store: crashing).rotate(now: 200) }
        #expect(try Data(contentsOf: directory.appendingPathComponent("keyring.json")) == before)
        let after = try #require(try FileKeyStore(directory: directory, access: .readOnly).loadKeyRing())
        #expect(after.keys.map(\.keyID) == beforeRing.keys.map(\.keyID))
        #expect(after.keys.count == 1)

        // A real crash leaves the temporary file behind: readers ignore it, the next write removes it.
        let leftover = directory.appendingPathComponent("keyring.json.tmp-deadbeef")
        try Data("{\"format\": \"SealedPush keyring v1\", \"keys\": [".utf8).write(to: leftover)
        let stillThere = try #require(try FileKeyStore(directory: directory, access: .readOnly).loadKeyRing())
        #expect(stillThere.current.keyID == beforeRing.current.keyID)
        try manager.rotate(now: 300)
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
        let rotated = try #require(try FileKeyStore(directory: directory, access: .readOnly).loadKeyRing())
        #expect(rotated.keys.count == 2 && rotated.keys[0].keyID == beforeRing.current.keyID)
    }

    @Test("a corrupt key ring is reported, never regenerated or overwritten")
    func corruptionIsNotRegenerated() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        let file = directory.appendingPathComponent("keyring.json")
        try Data("garbage".utf8).write(to: file)
        let manager = DeviceKeyManager(directory: directory)
        #expect(errorCode { try manager.createIfNeeded(now: 1) } == .keyStoreCorrupt)
        #expect(errorCode { try manager.create(now: 1) } == .keyStoreCorrupt)
        #expect(errorCode { try manager.rotate(now: 1) } == .keyStoreCorrupt)
        #expect(errorCode { try FileKeyStore(directory: directory, access: .readOnly).loadKeyRing() } == .keyStoreCorrupt)
        #expect(try Data(contentsOf: file) == Data("garbage".utf8))
    }

    @Test("concurrent rotations through separate stores lose no key (flock)")
    func concurrentRotations() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTemporaryDirectory(directory) }
        try DeviceKeyManager(directory: directory).create(now: 1)
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            _ = try? DeviceKeyManager(directory: directory).rotate(now: 10 + UInt64(index))
        }
        let ring = try #require(try FileKeyStore(directory: directory, access: .readOnly).loadKeyRing())
        #expect(ring.keys.count == 9)
        #expect(Set(ring.keys.map(\.keyID)).count == 9)
    }

    @Test("in-memory store: read-only view, unavailability, corruption")
    func inMemory() throws {
        let store = InMemoryKeyStore()
        let view = store.readOnlyView()
        #expect(errorCode { try view.loadKeyRing() } == .keysUnavailable)
        #expect(try store.loadKeyRing() == nil)
        let registration = try DeviceKeyManager(store: store).create(now: 5)
        #expect(try view.loadKeyRing()?.current.publicKeyText == registration.publicKey)
        #expect(errorCode { try DeviceKeyManager(store: view).rotate(now: 6) } == .invalidArgument)
        store.setAvailable(false)
        #expect(errorCode { try view.loadKeyRing() } == .keysUnavailable)
        store.setAvailable(true)
        store.replaceStoredBytes(Array("{}".utf8))
        #expect(errorCode { try view.loadKeyRing() } == .keyStoreCorrupt)
    }
}
