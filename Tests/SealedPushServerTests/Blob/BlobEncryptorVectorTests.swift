import Foundation
import SealedPushCore
import SealedPushTestSupport
import Testing

@testable import SealedPushServer

/// The libsodium blob writer and reader against `Specs/vectors/blob-v1.json` (whose bytes
/// `Specs/tools/verify_blob_vectors.py` rebuilds independently from the spec) and the writer's streaming contract.
@Suite("BlobEncryptor and BlobDecryptor: blob-v1 vectors")
struct BlobEncryptorVectorTests {
    let file: BlobVectorFile

    init() throws { file = try BlobVectorFile.load() }

    func encryptor(_ vector: BlobVectorFile.Positive) throws -> BlobEncryptor {
        try BlobEncryptor(key: SecretBytes(copying: Hex.decode(vector.key)), salt: Hex.decode(vector.salt))
    }

    @Test func theEncryptorReproducesEveryPositiveVector() throws {
        for vector in file.positive {
            let encryptor = try encryptor(vector)
            let (blob, result) = try encryptor.encrypt(BlobVectorFile.plaintext(size: vector.size))
            #expect(Hex.encode(try encryptor.payloadKeyForVectors()) == vector.payloadKey, "\(vector.name)")
            #expect(blob.count == vector.ciphertextSize && result.ciphertextSize == vector.ciphertextSize)
            #expect(result.plaintextSize == vector.size)
            #expect(Hex.encode(BlobDigest.sha256(blob)) == vector.ciphertextSHA256, "\(vector.name)")
            if let hex = vector.ciphertext { #expect(Hex.encode(blob) == hex, "\(vector.name)") }
        }
    }

    @Test func streamingWithShortReadsGivesTheSameBlobAndNeverAsksForMoreThanAChunk() throws {
        var generator = SplitMix64(seed: 7)
        for vector in file.positive {
            let plaintext = BlobVectorFile.plaintext(size: vector.size)
            var offset = 0
            var largestRequest = 0
            var blob: [UInt8] = []
            _ = try encryptor(vector).encrypt(
                reading: { buffer in
                    largestRequest = max(largestRequest, buffer.count)
                    let count = min(buffer.count, plaintext.count - offset, Int.random(in: 0...9_000, using: &generator) + 1)
                    plaintext.withUnsafeBytes {
                        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count]))
                    }
                    offset += count
                    return count
                },
                writing: { blob.append(contentsOf: $0) })
            #expect(Hex.encode(BlobDigest.sha256(blob)) == vector.ciphertextSHA256, "\(vector.name)")
            #expect(largestRequest <= BlobFormat.chunkSize)
        }
    }

    @Test func theServerReaderOpensPositivesAndRejectsNegativesWithTheirCodes() throws {
        var blobs: [String: [UInt8]] = [:]
        for vector in file.positive {
            let blob = try encryptor(vector).encrypt(BlobVectorFile.plaintext(size: vector.size)).blob
            blobs[vector.name] = blob
            #expect(try BlobDecryptor.decrypt(blob, key: Hex.decode(vector.key), plaintextSize: vector.size)
                == BlobVectorFile.plaintext(size: vector.size))
        }
        for vector in file.negative {
            let damaged = try file.damagedBlob(vector, baseBlob: blobs[vector.base]!) { base, index, last, plaintext in
                try encryptor(base).sealChunk(index: index, isLast: last, plaintext: plaintext)
            }
            var released = 0
            let code: String? = {
                do {
                    let reader = try BlobDecryptor(
                        key: Hex.decode(vector.key), plaintextSize: vector.size,
                        maxPlaintextSize: vector.maxSize ?? BlobFormat.maxPlaintextSize)
                    try damaged.withUnsafeBytes { try reader.append($0) { released += $0.count } }
                    try reader.finish()
                    return nil
                } catch let error as SealedPushError {
                    return error.code.name
                } catch {
                    return "\(error)"
                }
            }()
            #expect(code == vector.expectedError, "\(vector.name)")
        }
    }

    @Test func theEncryptorEnforcesItsLimitAndMakesOneBlob() throws {
        let encryptor = try BlobEncryptor(maxPlaintextSize: 100)
        #expect(throws: SealedPushError.self) { _ = try encryptor.encrypt([UInt8](repeating: 1, count: 101)) }
        let once = try BlobEncryptor(maxPlaintextSize: 100)
        _ = try once.encrypt([1, 2, 3])
        do {
            _ = try once.encrypt([1])
            Issue.record("an encryptor made a second blob under the same key")
        } catch let error as SealedPushError {
            #expect(error.code == .invalidArgument)
        }
        do {
            _ = try BlobEncryptor(maxPlaintextSize: 100).encrypt([UInt8](repeating: 1, count: 101))
        } catch let error as SealedPushError {
            #expect(error.code == .blobTooLarge)
        }
    }

    @Test func freshEncryptorsUseFreshKeysAndSalts() throws {
        let first = try BlobEncryptor().encrypt([1, 2, 3])
        let second = try BlobEncryptor().encrypt([1, 2, 3])
        #expect(first.result.keyBytes != second.result.keyBytes)
        #expect(first.blob[5..<21] != second.blob[5..<21])
        #expect(first.blob != second.blob)
        #expect(!"\(first.result)".contains(Base64URL.encode(first.result.keyBytes)))
        var dumped = ""
        dump(first.result, to: &dumped)
        #expect(!dumped.contains("\(first.result.keyBytes)"))
    }
}
