import Foundation
import SealedPushCore
import SealedPushServer
import SealedPushTestSupport

/// Regenerates `Specs/vectors/blob-v1.json` (`Specs/blob-v1.md` §9) with the libsodium blob encryptor and fixed
/// keys and salts. Every negative vector's expected error is stated here from the spec's reading procedure (§5),
/// not computed by a reader; the tests and `Specs/tools/verify_blob_vectors.py` check them.
enum BlobVectorGenerator {
    static let chunk = BlobFormat.chunkSize
    static let sealedChunk = BlobFormat.chunkSize + BlobFormat.tagLength
    static let header = BlobFormat.headerLength

    static func key(_ seed: UInt8) -> [UInt8] { (0..<32).map { UInt8(truncatingIfNeeded: Int(seed) &* 29 &+ $0 &* 11) } }
    static func salt(_ seed: UInt8) -> [UInt8] { (0..<16).map { UInt8(truncatingIfNeeded: Int(seed) &* 53 &+ $0 &* 5 &+ 1) } }

    static func run(outPath: String) throws {
        var positives: [BlobVectorFile.Positive] = []
        func positive(_ name: String, size: Int, seed: UInt8) throws {
            let encryptor = try BlobEncryptor(key: SecretBytes(copying: key(seed)), salt: salt(seed))
            let (blob, result) = try encryptor.encrypt(BlobVectorFile.plaintext(size: size))
            precondition(result.plaintextSize == size && blob.count == result.ciphertextSize)
            positives.append(
                .init(
                    name: name, key: Hex.encode(key(seed)), salt: Hex.encode(salt(seed)),
                    payloadKey: Hex.encode(try encryptor.payloadKeyForVectors()), size: size,
                    ciphertextSize: blob.count, ciphertext: size <= 1_024 ? Hex.encode(blob) : nil,
                    ciphertextSHA256: Hex.encode(BlobDigest.sha256(blob))))
        }
        try positive("empty", size: 0, seed: 1)
        try positive("one-byte", size: 1, seed: 2)
        try positive("short", size: 100, seed: 3)
        try positive("one-full-chunk", size: chunk, seed: 4)
        try positive("one-chunk-plus-one", size: chunk + 1, seed: 5)
        try positive("two-full-chunks", size: 2 * chunk, seed: 6)
        try positive("four-chunks", size: 3 * chunk + 1_000, seed: 7)

        var negatives: [BlobVectorFile.Negative] = []
        func negative(
            _ name: String, base: String, _ error: SealedPushError.Code, key: [UInt8]? = nil, size: Int? = nil,
            maxSize: Int? = nil, _ edits: [BlobVectorFile.Edit] = []
        ) {
            let vector = positives.first { $0.name == base }!
            negatives.append(
                .init(
                    name: name, base: base, key: key.map { Hex.encode($0) } ?? vector.key, size: size ?? vector.size,
                    maxSize: maxSize, edits: edits, expectedError: error.name))
        }
        let fourSize = 3 * chunk + 1_000
        let fourLength = BlobFormat.ciphertextSize(plaintextSize: fourSize)
        // Header.
        negative("header-truncated", base: "short", .blobTruncated, [.truncate(10)])
        negative("header-only-no-final-chunk", base: "empty", .blobTruncated, [.truncate(header)])
        negative("nothing", base: "empty", .blobTruncated, [.truncate(0)])
        negative("wrong-magic", base: "short", .malformedBlob, [.xor(0, 0x20)])
        negative("wrong-magic-last-byte", base: "short", .malformedBlob, [.xor(3, 0x01)])
        negative("wrong-version", base: "short", .unsupportedBlobVersion, [.xor(4, 0x03)])
        negative("version-zero", base: "empty", .unsupportedBlobVersion, [.xor(4, 0x01)])
        negative("salt-altered", base: "short", .blobAuthenticationFailure, [.xor(5, 0x01)])
        negative("salt-last-byte-altered", base: "empty", .blobAuthenticationFailure, [.xor(20, 0x80)])
        // Keys and tags.
        negative("wrong-key", base: "short", .blobAuthenticationFailure, key: key(99))
        negative("wrong-key-empty", base: "empty", .blobAuthenticationFailure, key: key(98))
        negative("tag-flipped", base: "short", .blobAuthenticationFailure, [.xor(header + 100 + 15, 0x01)])
        negative("empty-tag-flipped", base: "empty", .blobAuthenticationFailure, [.xor(header, 0x01)])
        negative("ciphertext-flipped-first-chunk", base: "four-chunks", .blobAuthenticationFailure, [.xor(header + 7, 0x40)])
        negative(
            "ciphertext-flipped-middle-chunk", base: "four-chunks", .blobAuthenticationFailure,
            [.xor(header + sealedChunk + 5, 0x01)])
        // Truncation and dropped chunks.
        negative("truncated-mid-last-chunk", base: "four-chunks", .blobTruncated, [.truncate(fourLength - 10)])
        negative("truncated-one-byte", base: "short", .blobTruncated, [.truncate(header + 100 + 15)])
        negative(
            "truncated-mid-middle-chunk", base: "four-chunks", .blobTruncated, [.truncate(header + sealedChunk + 1_000)])
        negative("dropped-last-chunk", base: "four-chunks", .blobTruncated, [.truncate(header + 3 * sealedChunk)])
        negative(
            "dropped-last-full-chunk", base: "two-full-chunks", .blobTruncated, [.truncate(header + sealedChunk)])
        negative(
            "dropped-middle-chunk", base: "four-chunks", .blobAuthenticationFailure,
            [.delete(header + sealedChunk, sealedChunk)])
        negative("reordered-chunks", base: "four-chunks", .blobAuthenticationFailure, [.swap(header, header + sealedChunk, sealedChunk)])
        negative(
            "duplicated-chunk", base: "four-chunks", .blobAuthenticationFailure,
            [.delete(header + sealedChunk, sealedChunk), .appendCopy(header, sealedChunk)])
        // Data after the last chunk.
        negative("appended-chunk", base: "four-chunks", .blobTrailingData, [.appendCopy(header, sealedChunk)])
        negative("trailing-byte", base: "short", .blobTrailingData, [.append([0])])
        negative("trailing-byte-after-full-chunk", base: "one-full-chunk", .blobTrailingData, [.append([0x53])])
        negative("trailing-bytes-after-empty", base: "empty", .blobTrailingData, [.append(Array(repeating: 0, count: 16))])
        // Final flags on genuine chunks.
        negative("last-flag-on-first-chunk", base: "four-chunks", .blobAuthenticationFailure, [.reseal(chunk: 0, last: true)])
        negative("last-flag-on-middle-chunk", base: "four-chunks", .blobAuthenticationFailure, [.reseal(chunk: 2, last: true)])
        negative("last-flag-missing", base: "four-chunks", .blobAuthenticationFailure, [.reseal(chunk: 3, last: false)])
        negative(
            "last-flag-missing-full-last-chunk", base: "two-full-chunks", .blobAuthenticationFailure,
            [.reseal(chunk: 1, last: false)])
        negative("empty-without-last-flag", base: "empty", .blobAuthenticationFailure, [.reseal(chunk: 0, last: false)])
        // A declared size that does not match the blob.
        negative("declared-size-one-less", base: "short", .blobAuthenticationFailure, size: 99)
        negative("declared-size-one-more", base: "short", .blobTruncated, size: 101)
        negative("declared-size-zero", base: "one-byte", .blobAuthenticationFailure, size: 0)
        negative(
            "declared-one-chunk-for-two", base: "one-chunk-plus-one", .blobAuthenticationFailure, size: chunk)
        // Caps, checked before any byte.
        negative("over-the-cap", base: "short", .blobTooLarge, maxSize: 99)
        negative("over-the-format-limit", base: "short", .blobTooLarge, size: BlobFormat.maxPlaintextSize + 1)
        negative("at-the-cap", base: "short", .blobTrailingData, maxSize: 100, [.append([1])])

        let file = BlobVectorFile(
            generator: "swift run sealed-push-vectors blob Specs/vectors/blob-v1.json", positive: positives,
            negative: negatives, descriptors: descriptorCases())
        try file.encoded().write(to: URL(fileURLWithPath: outPath), options: .atomic)
        print(
            "wrote \(positives.count) positive, \(negatives.count) negative and \(file.descriptors.count) descriptor blob "
                + "vectors to \(outPath)")
        // The test targets read a copy bundled with SealedPushTestSupport; keep it identical (a test checks).
        let copy = "Sources/SealedPushTestSupport/Vectors/blob-v1.json"
        if FileManager.default.fileExists(atPath: "Sources/SealedPushTestSupport/Vectors") {
            try file.encoded().write(to: URL(fileURLWithPath: copy), options: .atomic)
            print("wrote the test copy \(copy)")
        }
    }

    /// Descriptor cases, each expected result stated from `Specs/blob-v1.md` §6 (not computed by a parser).
    static func descriptorCases() -> [BlobVectorFile.DescriptorCase] {
        let keyText = Base64URL.encode(key(9))
        func element(_ type: String = "image/jpeg", size: String = "1000", name: String? = nil, url: String? = nil) -> String {
            var text = "{\"url\":\"\(url ?? "https://blobs.example.com/AAAAAAAAAAAAAAAAAAAAAA")\",\"key\":\"\(keyText)\","
            text += "\"size\":\(size),\"type\":\"\(type)\""
            if let name { text += ",\"name\":\"\(name)\"" }
            return text + "}"
        }
        func list(_ elements: [String]) -> String { "[" + elements.joined(separator: ",") + "]" }
        let ok = "ok"
        let malformed = SealedPushError.Code.malformedAttachment.name
        let tooLarge = SealedPushError.Code.blobTooLarge.name
        let euro = String(repeating: "\u{20AC}", count: 85)  // 85 three-byte characters: 255 bytes
        return [
            .init(name: "valid-image", attachments: list([element()]), expected: [ok]),
            .init(name: "size-one-point-zero", attachments: list([element(size: "1.0")]), expected: [ok]),
            .init(name: "size-fraction", attachments: list([element(size: "1.5")]), expected: [malformed]),
            .init(name: "size-negative", attachments: list([element(size: "-1")]), expected: [malformed]),
            .init(name: "size-string", attachments: list([element(size: "\"1000\"")]), expected: [malformed]),
            .init(name: "image-at-cap", attachments: list([element(size: "10000000")]), expected: [ok]),
            .init(name: "image-over-cap", attachments: list([element(size: "10000001")]), expected: [tooLarge]),
            .init(name: "video-over-format-limit", attachments: list([element("video/mp4", size: "4294967297")]), expected: [tooLarge]),
            .init(name: "size-huge-exponent", attachments: list([element("video/mp4", size: "1e300")]), expected: [tooLarge]),
            .init(
                name: "over-cap-with-bad-url-is-malformed",
                attachments: list([element(size: "10000001", url: "ftp://blobs.example.com/x")]), expected: [malformed]),
            .init(name: "name-255-ascii-bytes", attachments: list([element(name: String(repeating: "a", count: 255))]), expected: [ok]),
            .init(name: "name-256-ascii-bytes", attachments: list([element(name: String(repeating: "a", count: 256))]), expected: [malformed]),
            .init(name: "name-255-utf8-bytes", attachments: list([element(name: euro)]), expected: [ok]),
            .init(name: "name-256-utf8-bytes", attachments: list([element(name: euro + "a")]), expected: [malformed]),
            .init(name: "unsupported-type", attachments: list([element("image/webp")]), expected: [malformed]),
            .init(name: "eight-attachments", attachments: list(Array(repeating: element(), count: 8)), expected: Array(repeating: ok, count: 8)),
            .init(
                name: "nine-attachments", attachments: list(Array(repeating: element(), count: 9)),
                expected: Array(repeating: ok, count: 8) + [malformed]),
            .init(
                name: "ten-with-a-bad-one", attachments: list([element(size: "-1")] + Array(repeating: element(), count: 9)),
                expected: [malformed] + Array(repeating: ok, count: 7) + [malformed, malformed]),
        ]
    }
}
