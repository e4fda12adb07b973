import ArgumentParser
import Foundation
import SealedPushCore
import SealedPushServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An app's APNs signing key as the operator names it (`.p8` path, key id, team id), checked before it is stored:
/// the file is a regular file only its owner may read and holds a P-256 key; the ids have Apple's form.
struct APNsKeyReference {
    /// The `.p8` file, absolute.
    let path: String
    let keyID: String
    let teamID: String

    /// Checks a reference.
    /// - Parameters:
    ///   - path: The `.p8` file (relative paths resolve against the working directory).
    ///   - keyID: Apple's 10-character key id.
    ///   - teamID: Apple's 10-character team id.
    /// - Throws: ``OperatorError`` naming the option and what is wrong; never the key.
    init(path: String, keyID: String, teamID: String) throws {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        try OwnerOnlyFile.require(absolute, option: "--apns-key")
        do { _ = try APNsSigningKey(contentsOfFile: absolute) } catch let error as SealedPushError {
            throw OperatorError("--apns-key \(absolute): \(error.message)")
        }
        try Self.checkIDs(keyID: keyID, teamID: teamID)
        self.path = absolute
        self.keyID = keyID
        self.teamID = teamID
    }

    /// Checks the ids given (nil: not given) have Apple's form: 10 characters of A-Z 0-9.
    /// - Throws: ``OperatorError`` naming the option.
    static func checkIDs(keyID: String?, teamID: String?) throws {
        for (name, value) in [("--key-id", keyID), ("--team-id", teamID)] {
            guard let value else { continue }
            guard value.utf8.count == 10, value.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) })
            else { throw OperatorError("\(name) must be Apple's 10 characters of A-Z 0-9 (got '\(value)')") }
        }
    }
}
