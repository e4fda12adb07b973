import Foundation
import FuzzSupport
import SealedPushClient
import SealedPushCore
import SealedPushServer

/// The blob readers and the attachment descriptor parser (`Specs/blob-v1.md` §5, §6) on arbitrary bytes.
///
/// Input: the first byte picks the mode.
/// - Even: a descriptor. The rest is parsed as JSON (skipped if it is not JSON); `AttachmentDescriptor(parsing:)`
///   throws only `malformedAttachment` or `blobTooLarge`, and an accepted descriptor obeys §6 (32-byte key, size
///   within its type's cap, http(s) URL, an image thumbnail without its own) and round-trips through `jsonValue`.
///   `BlobReference(parsing:)` with the 64 KiB content cap obeys the same rules.
/// - Odd: a blob. Bytes 1–2 are the declared size (big-endian, so 0 ... 65,535: one chunk), byte 3 seeds the
///   split of the rest into network reads. The client's `BlobFileOpener` (swift-crypto, into a file) and the
///   server's `BlobDecryptor` (libsodium) read it with the key of the spec vector of that size (or of "short").
///   Both must fail with the same blob code as an oracle written from §5 computes, leave no file on failure, and
///   open only a blob that is byte for byte a positive vector's (anything else would be a forgery).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBlob(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let setup = Setup.shared else { return 0 }
    let bytes = Fuzz.bytes(data, size)
    guard let mode = bytes.first else { return 0 }
    if mode % 2 == 0 {
        fuzzDescriptor(Array(bytes.dropFirst()))
    } else if bytes.count >= 4 {
        fuzzReader(setup, declared: Int(bytes[1]) << 8 | Int(bytes[2]), seed: bytes[3], blob: Array(bytes[4...]))
    }
    return 0
}

private let blobCodes: Set<String> = [
    "malformedBlob", "unsupportedBlobVersion", "blobTruncated", "blobTrailingData", "blobAuthenticationFailure",
    "blobTooLarge",
]

private func codeName(_ error: any Error) -> String? { (error as? SealedPushError)?.code.name }

private func fuzzDescriptor(_ text: [UInt8]) {
    guard let value = try? JSONParser.parse(text) else { return }
    do {
        let descriptor = try AttachmentDescriptor(parsing: value)
        checkReference(descriptor.blob, cap: descriptor.mediaType.kind.maxSize)
        if let thumbnail = descriptor.thumbnail {
            Fuzz.check(thumbnail.mediaType.kind == .image, "a thumbnail that is not an image was accepted")
            Fuzz.check(thumbnail.thumbnail == nil, "a thumbnail with its own thumbnail was accepted")
            checkReference(thumbnail.blob, cap: AttachmentMediaType.Kind.image.maxSize)
        }
        Fuzz.check(descriptor.name.map { !$0.isEmpty && $0.utf8.count <= 255 } ?? true, "a bad name was accepted")
        let again = try? AttachmentDescriptor(parsing: descriptor.jsonValue)
        Fuzz.check(again == descriptor, "jsonValue does not parse back to the same descriptor")
        Fuzz.check(!"\(descriptor)".contains(Base64URL.encode(descriptor.blob.key)), "description shows the key")
    } catch {
        Fuzz.expectCode(error, in: ["malformedAttachment", "blobTooLarge"], codeName: codeName)
    }
    do {
        let reference = try BlobReference(parsing: value, maxSize: BlobReference.defaultContentCap)
        checkReference(reference, cap: BlobReference.defaultContentCap)
    } catch {
        Fuzz.expectCode(error, in: ["malformedAttachment", "blobTooLarge"], codeName: codeName)
    }
}

private func checkReference(_ reference: BlobReference, cap: Int) {
    Fuzz.check(reference.key.count == 32, "a key of \(reference.key.count) bytes was accepted")
    Fuzz.check(reference.size >= 0 && reference.size <= cap, "size \(reference.size) over the cap \(cap) was accepted")
    let url = Array(reference.url.utf8)
    Fuzz.check(url.count <= 2048 && url.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }, "a URL outside printable ASCII")
    let lowered = String(decoding: url.prefix(8), as: UTF8.self).lowercased()
    Fuzz.check(lowered.hasPrefix("https://") || lowered.hasPrefix("http://"), "a URL that is not http(s)")
}

private func fuzzReader(_ setup: Setup, declared: Int, seed: UInt8, blob: [UInt8]) {
    let vector = setup.vectors[declared] ?? setup.vectors[100]!
    let expected = Oracle.expectedCode(blob, declared: declared, key: vector.key, valid: setup.vectors[declared])

    // The client: into a file, in pieces.
    var clientCode: String?
    do {
        let opener = try BlobFileOpener(
            key: vector.key, plaintextSize: declared, maxPlaintextSize: 65_535, directory: setup.directory,
            fileExtension: "bin")
        var offset = 0
        var state = UInt32(seed) &* 2_654_435_761 &+ 1
        while offset < blob.count {
            state = state &* 1_103_515_245 &+ 12_345
            let piece = Int(state >> 16) % 200 + (state % 7 == 0 ? 0 : 1)
            let end = min(blob.count, offset + piece)
            try opener.append(blob[offset..<end])
            offset = end
        }
        let url = try opener.finish()
        let written = readFile(url.path)
        Fuzz.check(written == Array(vector.plaintext.prefix(declared)) && written.count == declared, "the file is not the plaintext")
        try? FileManager.default.removeItem(at: url)
    } catch {
        Fuzz.expectCode(error, in: blobCodes, codeName: codeName)
        clientCode = codeName(error)
    }
    let left = (try? FileManager.default.contentsOfDirectory(atPath: setup.directory.path)) ?? ["?"]
    Fuzz.check(left.isEmpty, "the client left \(left) behind")
    Fuzz.check(clientCode == expected, "the client says \(clientCode ?? "opened"), the spec \(expected ?? "opens")")

    // The server: the same bytes in one piece.
    var serverCode: String?
    do {
        _ = try BlobDecryptor.decrypt(blob, key: vector.key, plaintextSize: declared, maxPlaintextSize: 65_535)
    } catch {
        Fuzz.expectCode(error, in: blobCodes, codeName: codeName)
        serverCode = codeName(error)
    }
    Fuzz.check(serverCode == clientCode, "the server says \(serverCode ?? "opened"), the client \(clientCode ?? "opened")")
}

/// The bytes of a file, read with POSIX calls (FoundationEssentials' `Data(contentsOf:)` leaks its 4 KiB buffer
/// when the file is empty, which LeakSanitizer reports on the empty-blob seed).
private func readFile(_ path: String) -> [UInt8] {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { return [] }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        bytes += buffer[0..<count]
    }
    return bytes
}

/// §5 for a one-chunk blob, from the spec alone: header bytes, then length, then the one chunk (genuine only if it
/// is a positive vector's exact bytes).
private enum Oracle {
    static func expectedCode(_ blob: [UInt8], declared: Int, key: [UInt8], valid: Setup.Vector?) -> String? {
        let magic: [UInt8] = [0x53, 0x50, 0x42, 0x4C]
        for position in 0..<min(4, blob.count) where blob[position] != magic[position] { return "malformedBlob" }
        if blob.count > 4, blob[4] != 1 { return "unsupportedBlobVersion" }
        let length = 21 + declared + 16
        if blob.count < length { return "blobTruncated" }
        guard let valid, valid.key == key, Array(blob[0..<length]) == valid.blob else { return "blobAuthenticationFailure" }
        return blob.count > length ? "blobTrailingData" : nil
    }
}

/// The one-chunk positive vectors of `Specs/vectors/blob-v1.json` (path: `SEALEDPUSH_BLOB_VECTORS`), by size.
private struct Setup: Sendable {
    struct Vector: Sendable {
        let key: [UInt8]
        let blob: [UInt8]
        let plaintext: [UInt8]
    }

    static let shared: Setup? = try? Setup()

    let vectors: [Int: Vector]
    let directory: URL

    init() throws {
        let path = ProcessInfo.processInfo.environment["SEALEDPUSH_BLOB_VECTORS"] ?? "Specs/vectors/blob-v1.json"
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let positive = root["positive"] as? [[String: Any]]
        else { throw SealedPushError(.invalidArgument, "unexpected vector file shape") }
        var vectors: [Int: Vector] = [:]
        for vector in positive {
            guard let size = vector["size"] as? Int, let key = vector["key"] as? String,
                let blob = vector["ciphertext"] as? String
            else { continue }
            vectors[size] = Vector(
                key: try Hex.decode(key), blob: try Hex.decode(blob), plaintext: (0..<size).map { UInt8($0 % 251) })
        }
        guard vectors[100] != nil else { throw SealedPushError(.invalidArgument, "no 100-byte vector") }
        self.vectors = vectors
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-blob-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }
}

/// The process entry: SwiftPM aliases `main` to this symbol; it hands the target to libFuzzer's driver.
@_cdecl("FuzzBlob_main")
public func fuzzBlobMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    guard Setup.shared != nil else {
        var text = "FuzzBlob: cannot load the blob vectors (set SEALEDPUSH_BLOB_VECTORS)\n"
        text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
        return 2
    }
    // libFuzzer ends a run with exit(): the scratch directory goes then (a crash leaves it, beside its reproducer).
    atexit {
        if let directory = Setup.shared?.directory { try? FileManager.default.removeItem(at: directory) }
    }
    return Fuzz.run(argc, argv, fuzzBlob)
}
