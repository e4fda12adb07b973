import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The database file a ``SQLiteGatewayStore`` opened (its device and inode), compared with what its path names now,
/// at most once a second: a file deleted or replaced while open takes writes nobody will see again (they go to the
/// unlinked file, gone at the next start), so the store refuses them and `/healthz` reports it.
final class SQLiteFileIdentity: @unchecked Sendable {  // its cache is behind `lock`
    /// A file's device and inode.
    struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
    }

    let path: String
    /// What the path named when the store opened it; nil: no file to watch (an in-memory database).
    private let opened: Identity?
    private let lock = NSLock()
    private var checkedAt: ContinuousClock.Instant?
    private var cached: String?
    /// How often the path is looked at again.
    static let interval: Duration = .seconds(1)
    /// ``problem``'s short reasons (no path: `/healthz` answers anyone).
    static let deleted = "database file deleted"
    static let replaced = "database file replaced"

    /// Records what `path` names now (call right after opening it).
    init(path: String) {
        self.path = path
        opened = Self.identity(of: path)
    }

    /// The device and inode `path` names, or nil when it names nothing.
    static func identity(of path: String) -> Identity? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Identity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// What is wrong with the file, looked at again when the last look is a second old: deleted (the path names
    /// nothing) or replaced (another file); nil while the path still names the file opened.
    var problem: String? {
        guard let opened else { return nil }
        let now = ContinuousClock.now
        return lock.withLock {
            if let checkedAt, checkedAt.duration(to: now) < Self.interval { return cached }
            checkedAt = now
            // Once seen, a problem stays: writes went to a file nobody reads any more.
            if cached == nil {
                if let current = Self.identity(of: path) {
                    if current != opened { cached = Self.replaced }
                } else {
                    cached = Self.deleted
                }
            }
            return cached
        }
    }
}
