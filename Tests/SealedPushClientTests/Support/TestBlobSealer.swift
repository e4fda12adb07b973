import Crypto
import Foundation
import SealedPushCore

/// A test-only blob writer on swift-crypto, written from `Specs/blob-v1.md` §3: it rebuilds the spec vectors' blobs
/// on the client side (whose large vectors store only a SHA-256) and the chunks the damaged vectors reseal.
enum TestBlobSealer {
    static func payloadKey(key: [UInt8], salt: [UInt8]) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: key), salt: salt, info: Array("SealedPush blob v1 payload".utf8),
            outputByteCount: 32)
    }

    static func nonce(_ index: Int, last: Bool) -> [UInt8] {
        (0..<11).map { position in
            position < 3 ? 0 : UInt8(truncatingIfNeeded: UInt64(index) >> UInt64(8 * (10 - position)))
        } + [last ? 1 : 0]
    }

    static func sealChunk(_ payloadKey: SymmetricKey, index: Int, last: Bool, plaintext: [UInt8]) throws -> [UInt8] {
        let box = try ChaChaPoly.seal(plaintext, using: payloadKey, nonce: ChaChaPoly.Nonce(data: nonce(index, last: last)))
        return Array(box.ciphertext) + Array(box.tag)
    }

    static func seal(key: [UInt8], salt: [UInt8], plaintext: [UInt8]) throws -> [UInt8] {
        let payloadKey = payloadKey(key: key, salt: salt)
        let count = max(1, (plaintext.count + 65_535) / 65_536)
        var blob: [UInt8] = [0x53, 0x50, 0x42, 0x4C, 0x01] + salt
        for index in 0..<count {
            let chunk = Array(plaintext[index * 65_536..<min((index + 1) * 65_536, plaintext.count)])
            blob += try sealChunk(payloadKey, index: index, last: index == count - 1, plaintext: chunk)
        }
        return blob
    }

    static func sha256Hex(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }
}

/// A fresh empty directory under the system's temporary directory, removed by ``remove()``.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("sp-blob-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Every entry in the directory, hidden ones included.
    func entries() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: url.path).sorted() }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Cuts `count` bytes into random pieces (sizes from 0 to a little over two chunks), reproducibly.
func randomSplit(_ count: Int, using generator: inout some RandomNumberGenerator) -> [Range<Int>] {
    var ranges: [Range<Int>] = []
    var offset = 0
    let sizes = [0, 1, 2, 15, 16, 17, 21, 1_000, 65_535, 65_552, 65_553, 140_000]
    while offset < count {
        let size = Bool.random(using: &generator)
            ? sizes.randomElement(using: &generator)! : Int.random(in: 1...70_000, using: &generator)
        let end = min(count, offset + size)
        ranges.append(offset..<end)
        offset = end
    }
    return ranges
}
