import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks that a key file the operator names (`--apns-key`, `--identity`) is a regular file only its owner may read, as
/// the README and the help promise (0600), before the gateway signs or seals with it.
enum OwnerOnlyFile {
    /// - Parameters:
    ///   - path: The absolute path.
    ///   - option: The option that named it, for the message.
    /// - Throws: ``OperatorError`` naming the option, the file and its mode; never the key.
    static func require(_ path: String, option: String) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw OperatorError("\(option) \(path) does not exist") }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw OperatorError("\(option) \(path) must be a regular file, not a link or a directory")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw OperatorError(
                "\(option) \(path) is readable by others (mode \(String(status.st_mode & 0o777, radix: 8))): chmod 600 it")
        }
    }
}
