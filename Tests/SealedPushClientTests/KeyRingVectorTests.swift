import Foundation
import SealedPushCore
import SealedPushTestSupport
import Testing

@testable import SealedPushClient

/// `Specs/vectors/keyring-v1.json`: key ring files every reader must accept (with the keys it reads) or reject as
/// `keyStoreCorrupt` (`Specs/keyring-v1.md` §2) — the same files the Java reader and the spec's Python checker read.
@Suite("Key ring vectors")
struct KeyRingVectorTests {
    let document: [String: Any]

    init() throws {
        let url = EnvelopeVectorFile.repositoryRoot.appendingPathComponent("Specs/vectors/keyring-v1.json")
        document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    func vectors(_ name: String) throws -> [[String: Any]] {
        try #require(document[name] as? [[String: Any]])
    }

    @Test func acceptedFilesReadAsTheirKeys() throws {
        let accepted = try vectors("accepted")
        #expect(accepted.count >= 6)
        for vector in accepted {
            let name = try #require(vector["name"] as? String)
            let file = try #require(vector["file"] as? String)
            let expected = try #require(vector["keys"] as? [[String: Any]]).map { key in
                "\(key["keyId"] as? String ?? "?") \((key["createdAt"] as? NSNumber)?.uint64Value ?? 0) "
                    + "\((key["retiredAt"] as? NSNumber).map { "\($0.uint64Value)" } ?? "current")"
            }
            do {
                let ring = try DeviceKeyRing(fileBytes: Array(file.utf8))
                let read = ring.keys.map { "\($0.keyID.hex) \($0.createdAt) \($0.retiredAt.map { "\($0)" } ?? "current")" }
                #expect(read == expected, "\(name)")
            } catch {
                Issue.record("\(name): \(error)")
            }
        }
    }

    @Test func rejectedFilesAreKeyStoreCorrupt() throws {
        let rejected = try vectors("rejected")
        #expect(rejected.count >= 15)
        for vector in rejected {
            let name = try #require(vector["name"] as? String)
            let file = try #require(vector["file"] as? String)
            #expect(vector["expectedError"] as? String == "keyStoreCorrupt", "\(name)")
            #expect(errorCode { try DeviceKeyRing(fileBytes: Array(file.utf8)) } == .keyStoreCorrupt, "\(name)")
        }
    }
}
