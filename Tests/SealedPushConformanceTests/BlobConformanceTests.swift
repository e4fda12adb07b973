import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer
import SealedPushTestSupport
import Testing

/// Blobs made by the server (libsodium) opened by the client (swift-crypto): sizes around the chunk boundaries,
/// random splits of the incoming bytes, every damage case failing with its code and leaving no file.
@Suite("Blob conformance: server writer, client reader")
struct BlobConformanceTests {
    let chunk = BlobFormat.chunkSize

    func serverBlob(_ plaintext: [UInt8]) throws -> (blob: [UInt8], key: [UInt8]) {
        let (blob, result) = try BlobEncryptor().encrypt(plaintext)
        return (blob, result.keyBytes)
    }

    func plaintext(_ size: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        var bytes = [UInt8](repeating: 0, count: size)
        for index in stride(from: 0, to: size, by: 8) {
            let value = generator.next()
            for offset in 0..<min(8, size - index) { bytes[index + offset] = UInt8(truncatingIfNeeded: value >> (8 * offset)) }
        }
        return bytes
    }

    /// Feeds `blob` to a client file opener in the given pieces and finishes; the file's bytes on success.
    func clientOpen(
        _ blob: [UInt8], key: [UInt8], size: Int, maxSize: Int = BlobFormat.maxPlaintextSize, pieces: [Range<Int>],
        in directory: URL
    ) throws -> [UInt8] {
        let opener = try BlobFileOpener(
            key: key, plaintextSize: size, maxPlaintextSize: maxSize, directory: directory, fileExtension: "bin")
        for piece in pieces { try opener.append(blob[piece]) }
        return try Array(Data(contentsOf: opener.finish()))
    }

    func splits(_ count: Int, using generator: inout SplitMix64) -> [[Range<Int>]] {
        var result = [[0..<count]]
        var random: [Range<Int>] = []
        var offset = 0
        while offset < count {
            let end = min(count, offset + Int(generator.next() % 70_000) + (generator.next() % 4 == 0 ? 0 : 1))
            random.append(offset..<end)
            offset = end
        }
        result.append(random)
        // Pieces that end exactly on, just before and just after chunk boundaries.
        var boundary: [Range<Int>] = []
        offset = 0
        var step = 0
        while offset < count {
            let end = min(count, offset + [21, 65_551, 2, 65_552, 65_553][step % 5])
            boundary.append(offset..<end)
            offset = end
            step += 1
        }
        result.append(boundary)
        return result
    }

    func withDirectory(_ body: (URL) throws -> Void) throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sp-conf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        try body(url)
    }

    func entries(_ url: URL) throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: url.path) }

    func code(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as SealedPushError {
            return error.code.name
        } catch {
            return "\(type(of: error))"
        }
    }

    @Test func vectorCopiesAreIdentical() throws {
        #expect(try Data(contentsOf: BlobVectorFile.specPath) == Data(contentsOf: BlobVectorFile.testCopyPath))
    }

    @Test func serverBlobsOpenOnTheClientAtEverySizeAroundTheChunkBoundaries() throws {
        var generator = SplitMix64(seed: 0x5EED)
        var sizes = [0, 1, 2, 15, 16, 17, chunk - 1, chunk, chunk + 1, 2 * chunk - 1, 2 * chunk, 2 * chunk + 1, 3 * chunk + 7]
        sizes += (0..<6).map { _ in Int(generator.next() % UInt64(5 * chunk)) }
        for size in sizes {
            let plain = plaintext(size, seed: UInt64(size))
            let (blob, key) = try serverBlob(plain)
            #expect(blob.count == BlobFormat.ciphertextSize(plaintextSize: size))
            for pieces in splits(blob.count, using: &generator) {
                try withDirectory { directory in
                    let opened = try clientOpen(blob, key: key, size: size, pieces: pieces, in: directory)
                    #expect(opened == plain, "size \(size)")
                }
            }
        }
    }

    @Test func serverStreamingFromAFileMatchesWhatTheClientReads() throws {
        try withDirectory { directory in
            let plain = plaintext(3 * chunk + 12_345, seed: 99)
            let path = directory.appendingPathComponent("source.bin").path
            try Data(plain).write(to: URL(fileURLWithPath: path))
            let source = try BlobSourceFile(path: path)
            var blob: [UInt8] = []
            let result = try BlobEncryptor().encrypt(reading: source.read(into:), writing: { blob.append(contentsOf: $0) })
            #expect(result.plaintextSize == plain.count && result.ciphertextSize == blob.count)
            let output = directory.appendingPathComponent("out")
            try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
            #expect(try clientOpen(blob, key: result.keyBytes, size: plain.count, pieces: [0..<blob.count], in: output) == plain)
        }
    }

    @Test func everyDamageFailsWithItsCodeAndLeavesNoFile() throws {
        var generator = SplitMix64(seed: 0xDEAD)
        let size = 2 * chunk + 500
        let plain = plaintext(size, seed: 3)
        let (blob, key) = try serverBlob(plain)
        let sealed = chunk + 16
        var cases: [(String, [UInt8], String, Int)] = []  // name, blob, expected code, declared size
        // Every truncation point at and around the header and chunk boundaries.
        let firstChunk: Range<Int> = 21..<(21 + sealed)
        let secondChunk: Range<Int> = (21 + sealed)..<(21 + 2 * sealed)
        let chunkEnds: [Int] = [firstChunk.upperBound - 1, firstChunk.upperBound, firstChunk.upperBound + 1, secondChunk.upperBound]
        let lengths: [Int] = [0, 1, 4, 5, 20, 21, 22] + chunkEnds + [blob.count - 1]
        for length in lengths {
            cases.append(("truncated to \(length)", Array(blob[0..<length]), "blobTruncated", size))
        }
        let oneMore: [UInt8] = blob + [0]
        let extraChunk: [UInt8] = blob + Array(blob[firstChunk])
        cases.append(("one trailing byte", oneMore, "blobTrailingData", size))
        cases.append(("a whole extra chunk", extraChunk, "blobTrailingData", size))
        // A flipped bit anywhere: the magic, the version, or (salt, ciphertext, tag) authentication.
        for _ in 0..<40 {
            let position = Int(generator.next() % UInt64(blob.count))
            var damaged = blob
            damaged[position] ^= UInt8(1 << (generator.next() % 8))
            let expected: String
            if position < 4 {
                expected = "malformedBlob"
            } else if position == 4 {
                expected = "unsupportedBlobVersion"
            } else {
                expected = "blobAuthenticationFailure"
            }
            cases.append(("bit flipped at \(position)", damaged, expected, size))
        }
        var swapped = blob
        swapped.replaceSubrange(firstChunk, with: blob[secondChunk])
        swapped.replaceSubrange(secondChunk, with: blob[firstChunk])
        cases.append(("chunks 0 and 1 swapped", swapped, "blobAuthenticationFailure", size))
        var dropped = blob
        dropped.removeSubrange(firstChunk)
        cases.append(("chunk 0 dropped", dropped, "blobAuthenticationFailure", size - chunk))
        let other = try serverBlob(plain)
        cases.append(("another blob's bytes under the right key", other.blob, "blobAuthenticationFailure", size))
        cases.append(("a declared size one byte short", blob, "blobAuthenticationFailure", size - 1))
        cases.append(("a declared size one byte long", blob, "blobTruncated", size + 1))

        for (name, damaged, expected, declared) in cases {
            for pieces in splits(damaged.count, using: &generator) {
                try withDirectory { directory in
                    let got = code { _ = try clientOpen(damaged, key: key, size: declared, pieces: pieces, in: directory) }
                    #expect(got == expected, "\(name)")
                    let left = try entries(directory)
                    #expect(left.isEmpty, "\(name): a file was left behind")
                }
            }
        }
    }

    @Test func serverMadeNegativeVectorsFailOnTheClient() throws {
        let file = try BlobVectorFile.load()
        var blobs: [String: [UInt8]] = [:]
        func encryptor(_ vector: BlobVectorFile.Positive) throws -> BlobEncryptor {
            try BlobEncryptor(key: SecretBytes(copying: Hex.decode(vector.key)), salt: Hex.decode(vector.salt))
        }
        for vector in file.positive {
            blobs[vector.name] = try encryptor(vector).encrypt(BlobVectorFile.plaintext(size: vector.size)).blob
        }
        var generator = SplitMix64(seed: 11)
        for vector in file.negative {
            let damaged = try file.damagedBlob(vector, baseBlob: blobs[vector.base]!) { base, index, last, plaintext in
                try encryptor(base).sealChunk(index: index, isLast: last, plaintext: plaintext)
            }
            for pieces in splits(damaged.count, using: &generator) {
                try withDirectory { directory in
                    let got = code {
                        _ = try clientOpen(
                            damaged, key: Hex.decode(vector.key), size: vector.size,
                            maxSize: vector.maxSize ?? BlobFormat.maxPlaintextSize, pieces: pieces, in: directory)
                    }
                    #expect(got == vector.expectedError, "\(vector.name)")
                    let left = try entries(directory)
                    #expect(left.isEmpty, "\(vector.name)")
                }
            }
        }
    }

    @Test func aServerDescriptorParsesOnTheClientAndOpensItsBlob() throws {
        let plain = plaintext(54_321, seed: 5)
        let (blob, result) = try BlobEncryptor().encrypt(plain)
        let thumbnail = try BlobEncryptor().encrypt(plaintext(900, seed: 6))
        let descriptor = try result.attachment(
            url: "https://blobs.example.com/\(BlobName.random())", mediaType: #require(AttachmentMediaType(mimeType: "video/mp4")),
            name: "clip.mp4",
            thumbnail: thumbnail.result.attachment(
                url: "https://blobs.example.com/t", mediaType: #require(AttachmentMediaType(mimeType: "image/jpeg"))))
        // Through canonical JSON text and the strict parser, as the content travels.
        var writer = JSONWriter()
        writer.value(descriptor.jsonValue)
        let parsed = try AttachmentDescriptor(parsing: JSONParser.parse(writer.bytes))
        #expect(parsed == descriptor)
        #expect(parsed.thumbnail?.blob.size == 900)
        try withDirectory { directory in
            let opener = try BlobFileOpener(attachment: parsed, directory: directory)
            try opener.append(blob)
            let url = try opener.finish()
            #expect(url.pathExtension == "mp4")
            #expect(try Array(Data(contentsOf: url)) == plain)
        }
    }
}
