import Foundation
import SealedPushCore
import Testing

@testable import SealedPushServer

/// Private key files (spec §7): 0600, atomic, no temporary leftovers, strict parsing.
@Suite struct KeyFileTests {
    /// A fresh empty directory under the system temporary directory.
    private func makeDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "sealedpush-keyfile-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    private func permissions(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int)
    }

    private func expectCode(_ code: SealedPushError.Code, _ body: () throws -> Void) {
        #expect {
            try body()
        } throws: { error in
            (error as? SealedPushError)?.code == code
        }
    }

    @Test func writeIsExactFormatWithMode0600AndNoLeftovers() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/server.key"
        let identity = try ServerIdentity(privateKey: Fixtures.hex(Fixtures.serverPrivateKeyHex))
        try identity.write(toFile: path)

        #expect(try permissions(path) == 0o600)
        let contents = try String(contentsOfFile: path, encoding: .utf8)
        #expect(contents == Fixtures.serverKeyFile)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["server.key"])

        let loaded = try ServerIdentity(contentsOfFile: path)
        #expect(loaded.publicKey == identity.publicKey)
        #expect(loaded.keyID.hex == Fixtures.serverKeyIDHex)
    }

    /// Audit (stop 48, L3): a legal 240-byte name was refused ("File name too long"): the temporary name added
    /// 22 bytes. Names up to NAME_MAX (255 bytes), multi-byte ones too, are written.
    @Test(arguments: [String(repeating: "a", count: 240), String(repeating: "k", count: 255),
                      String(repeating: "é", count: 127) + "x"])
    func longestNamesAreWritten(name: String) throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let identity = try ServerIdentity.generate()
        try identity.write(toFile: directory + "/" + name)
        #expect(try ServerIdentity(contentsOfFile: directory + "/" + name).publicKey == identity.publicKey)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == [name])
        #expect(try permissions(directory + "/" + name) == 0o600)
    }

    @Test func roundTripOfGeneratedKey() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let identity = try ServerIdentity.generate()
        try identity.write(toFile: directory + "/k")
        #expect(try ServerIdentity(contentsOfFile: directory + "/k").publicKey == identity.publicKey)
    }

    @Test func existingFileIsKeptUnlessReplacing() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/server.key"
        let first = try ServerIdentity.generate()
        let second = try ServerIdentity.generate()
        try first.write(toFile: path)

        expectCode(.io) { try second.write(toFile: path) }
        #expect(try ServerIdentity(contentsOfFile: path).publicKey == first.publicKey)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["server.key"])

        try second.write(toFile: path, replacingExisting: true)
        #expect(try ServerIdentity(contentsOfFile: path).publicKey == second.publicKey)
        #expect(try permissions(path) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["server.key"])
    }

    @Test func unwritableDirectoryIsIOAndLeavesNothing() throws {
        let identity = try ServerIdentity.generate()
        expectCode(.io) { try identity.write(toFile: "/nonexistent-sealedpush-dir/server.key") }
    }

    @Test func directoryIsIO() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        expectCode(.io) { _ = try ServerIdentity(contentsOfFile: directory) }
    }

    /// A FIFO without a writer would block a plain open/read forever; loading must fail at once instead.
    @Test func fifoIsIOAndDoesNotBlock() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/fifo"
        try #require(mkfifo(path, 0o600) == 0)
        expectCode(.io) { _ = try ServerIdentity(contentsOfFile: path) }
    }

    @Test func missingFileIsIO() {
        expectCode(.io) { _ = try ServerIdentity(contentsOfFile: "/nonexistent-sealedpush-dir/server.key") }
    }

    static let corruptFiles: [String] = [
        "",
        "SPSK1:",
        "SPSK1:dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LC\n",  // short
        "SPSK1:dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCoA\n",  // long
        "SPSK2:dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo\n",  // wrong prefix
        "SPK1:dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo\n",  // public key prefix
        "SPSK1:dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo\n\n",  // two newlines
        "SPSK1:dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LC+\n",  // not base64url
        " SPSK1:dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo\n",
        String(repeating: "A", count: 10_000),  // far too long
    ]

    @Test(arguments: corruptFiles)
    func corruptFileIsATypedError(contents: String) throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/bad.key"
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try ServerIdentity(contentsOfFile: path)
        } throws: { error in
            guard let error = error as? SealedPushError else { return false }
            return (error.code == .invalidKey || error.code == .keyStoreCorrupt) && error.message.contains(path)
        }
    }

    @Test func fileWithoutFinalNewlineIsAccepted() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/k"
        try Data(Fixtures.serverKeyFile.dropLast().utf8).write(to: URL(fileURLWithPath: path))
        #expect(try ServerIdentity(contentsOfFile: path).keyID.hex == Fixtures.serverKeyIDHex)
    }
}
