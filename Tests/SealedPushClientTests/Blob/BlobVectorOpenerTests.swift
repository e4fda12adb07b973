import Crypto
import Foundation
import SealedPushCore
import SealedPushTestSupport
import Testing

@testable import SealedPushClient

/// `Specs/vectors/blob-v1.json` (made by the libsodium encryptor) against the swift-crypto reader: every positive
/// blob opens into a file holding exactly the plaintext rule's bytes, fed in random splits; every damaged blob fails
/// with the vector's code and leaves the directory empty.
@Suite("BlobFileOpener: blob-v1 vectors")
struct BlobVectorOpenerTests {
    let file: BlobVectorFile

    init() throws { file = try BlobVectorFile.load() }

    func blob(of vector: BlobVectorFile.Positive) throws -> [UInt8] {
        try TestBlobSealer.seal(
            key: Hex.decode(vector.key), salt: Hex.decode(vector.salt),
            plaintext: BlobVectorFile.plaintext(size: vector.size))
    }

    @Test func testSealerReproducesEveryPositiveBlob() throws {
        for vector in file.positive {
            let blob = try blob(of: vector)
            #expect(blob.count == vector.ciphertextSize, "\(vector.name)")
            #expect(TestBlobSealer.sha256Hex(blob) == vector.ciphertextSHA256, "\(vector.name)")
            if let hex = vector.ciphertext { #expect(Hex.encode(blob) == hex, "\(vector.name)") }
            let payloadKey = TestBlobSealer.payloadKey(key: try Hex.decode(vector.key), salt: try Hex.decode(vector.salt))
            #expect(payloadKey.withUnsafeBytes { Hex.encode($0) } == vector.payloadKey, "\(vector.name)")
        }
    }

    @Test func everyPositiveBlobOpensIntoAFile() throws {
        var generator = SplitMix64(seed: 0xB10B)
        for vector in file.positive {
            let blob = try blob(of: vector)
            for round in 0..<3 {
                let directory = try TemporaryDirectory()
                defer { directory.remove() }
                let opener = try BlobFileOpener(
                    key: Hex.decode(vector.key), plaintextSize: vector.size, maxPlaintextSize: vector.size,
                    directory: directory.url, fileExtension: "bin")
                let pieces = round == 0 ? [0..<blob.count] : randomSplit(blob.count, using: &generator)
                for piece in pieces { try opener.append(blob[piece]) }
                let url = try opener.finish()
                #expect(url.pathExtension == "bin")
                #expect(try Array(Data(contentsOf: url)) == BlobVectorFile.plaintext(size: vector.size), "\(vector.name)")
                #expect(try directory.entries() == [url.lastPathComponent], "\(vector.name): only the final file")
            }
        }
    }

    @Test func everyNegativeBlobFailsWithItsCodeAndLeavesNoFile() throws {
        var generator = SplitMix64(seed: 0xDA3A6E)
        var blobs: [String: [UInt8]] = [:]
        for vector in file.positive { blobs[vector.name] = try blob(of: vector) }
        for vector in file.negative {
            let damaged = try file.damagedBlob(vector, baseBlob: blobs[vector.base]!) { base, index, last, plaintext in
                try TestBlobSealer.sealChunk(
                    TestBlobSealer.payloadKey(key: Hex.decode(base.key), salt: Hex.decode(base.salt)), index: index,
                    last: last, plaintext: plaintext)
            }
            for round in 0..<2 {
                let directory = try TemporaryDirectory()
                defer { directory.remove() }
                let code = blobOpenCode {
                    let opener = try BlobFileOpener(
                        key: Hex.decode(vector.key), plaintextSize: vector.size,
                        maxPlaintextSize: vector.maxSize ?? BlobFormat.maxPlaintextSize, directory: directory.url,
                        fileExtension: "jpg")
                    let pieces = round == 0 ? [0..<damaged.count] : randomSplit(damaged.count, using: &generator)
                    for piece in pieces { try opener.append(damaged[piece]) }
                    _ = try opener.finish()
                }
                #expect(code?.name == vector.expectedError, "\(vector.name) (round \(round))")
                #expect(try directory.entries().isEmpty, "\(vector.name): a file was left behind")
            }
        }
    }
}

/// The code of the `SealedPushError` `body` throws, or `nil` if it succeeds (any other error is a mismatch).
func blobOpenCode(_ body: () throws -> Void) -> SealedPushError.Code? {
    do {
        try body()
        return nil
    } catch let error as SealedPushError {
        return error.code
    } catch {
        return .io
    }
}
