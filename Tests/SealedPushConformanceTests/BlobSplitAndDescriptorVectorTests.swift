import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer
import SealedPushTestSupport
import Testing

/// `Specs/blob-v1.md` §5 and §6, pinned by the vectors: every negative blob gives its one code whatever the split of
/// its bytes into reads (one byte at a time, exact sealed-chunk pieces, random pieces), and every descriptor case is
/// accepted or skipped as the vectors say (size limits, name bytes, the attachment count).
@Suite("Blob vectors: split independence and descriptor cases")
struct BlobSplitAndDescriptorVectorTests {
    static let sealedChunk = BlobFormat.chunkSize + BlobFormat.tagLength

    /// The three splits the spec asks implementations to test.
    static func splits(_ count: Int, seed: UInt64) -> [(String, [Range<Int>])] {
        let oneByte = (0..<count).map { $0..<($0 + 1) }
        let chunked = stride(from: 0, to: count, by: sealedChunk).map { $0..<min(count, $0 + sealedChunk) }
        var generator = SplitMix64(seed: seed)
        var random: [Range<Int>] = []
        var offset = 0
        while offset < count {
            let end = min(count, offset + 1 + Int(generator.next() % 90_000))
            random.append(offset..<end)
            offset = end
        }
        return [("one byte at a time", oneByte), ("sealed-chunk pieces", chunked), ("random pieces", random)]
    }

    @Test func everyNegativeVectorGivesItsCodeWhateverTheSplit() throws {
        let file = try BlobVectorFile.load()
        var blobs: [String: [UInt8]] = [:]
        func encryptor(_ vector: BlobVectorFile.Positive) throws -> BlobEncryptor {
            try BlobEncryptor(key: SecretBytes(copying: Hex.decode(vector.key)), salt: Hex.decode(vector.salt))
        }
        for vector in file.positive {
            blobs[vector.name] = try encryptor(vector).encrypt(BlobVectorFile.plaintext(size: vector.size)).blob
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-split-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (index, vector) in file.negative.enumerated() {
            let damaged = try file.damagedBlob(vector, baseBlob: blobs[vector.base]!) { base, chunk, last, plaintext in
                try encryptor(base).sealChunk(index: chunk, isLast: last, plaintext: plaintext)
            }
            for (splitName, pieces) in Self.splits(damaged.count, seed: UInt64(index)) {
                var got: String?
                do {
                    let opener = try BlobFileOpener(
                        key: Hex.decode(vector.key), plaintextSize: vector.size,
                        maxPlaintextSize: vector.maxSize ?? BlobFormat.maxPlaintextSize, directory: directory,
                        fileExtension: "bin")
                    for piece in pieces { try opener.append(damaged[piece]) }
                    _ = try opener.finish()
                } catch let error as SealedPushError {
                    got = error.code.name
                }
                #expect(got == vector.expectedError, "\(vector.name), \(splitName)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "\(vector.name): a file was left")
            }
        }
    }

    @Test func descriptorCasesParseAsTheVectorsSay() throws {
        let file = try BlobVectorFile.load()
        #expect(file.descriptors.count >= 10)
        for vector in file.descriptors {
            let elements = try #require(JSONParser.parse(Array(vector.attachments.utf8)).arrayValue, "\(vector.name)")
            let got = AttachmentDescriptor.parseAll(elements).map { result -> String in
                switch result {
                case .success: "ok"
                case .failure(let error): error.code.name
                }
            }
            #expect(got == vector.expected, "\(vector.name)")
        }
    }
}
