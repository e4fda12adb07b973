import Crypto
import Foundation
import SealedPushCore
import SealedPushServer
import SealedPushTestSupport
import Testing

/// The other direction: blobs written by a test-only swift-crypto writer (from `Specs/blob-v1.md` §3 alone) are read
/// by the server's libsodium `BlobDecryptor`, in random splits, and reproduce the libsodium encryptor's bytes for the
/// same key and salt.
@Suite("Blob conformance: swift-crypto writer, server reader")
struct ClientSealedBlobTests {
    static func seal(key: [UInt8], salt: [UInt8], plaintext: [UInt8]) throws -> [UInt8] {
        let payloadKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: key), salt: salt, info: Array("SealedPush blob v1 payload".utf8),
            outputByteCount: 32)
        let count = max(1, (plaintext.count + 65_535) / 65_536)
        var blob: [UInt8] = [0x53, 0x50, 0x42, 0x4C, 0x01] + salt
        for index in 0..<count {
            let nonce = [UInt8](repeating: 0, count: 7) + withUnsafeBytes(of: UInt32(index).bigEndian, Array.init)
                + [index == count - 1 ? 1 : 0]
            let chunk = plaintext[index * 65_536..<min((index + 1) * 65_536, plaintext.count)]
            let box = try ChaChaPoly.seal(chunk, using: payloadKey, nonce: ChaChaPoly.Nonce(data: nonce))
            blob += Array(box.ciphertext) + Array(box.tag)
        }
        return blob
    }

    @Test func swiftCryptoBlobsOpenOnTheServerAndMatchItsBytes() throws {
        var generator = SplitMix64(seed: 0xC11E)
        let chunk = BlobFormat.chunkSize
        for size in [0, 1, 17, chunk - 1, chunk, chunk + 1, 2 * chunk, 2 * chunk + 3, Int(generator.next() % 300_000)] {
            let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let plaintext = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let blob = try Self.seal(key: key, salt: salt, plaintext: plaintext)
            let libsodium = try BlobEncryptor(key: SecretBytes(copying: key), salt: salt).encrypt(plaintext).blob
            #expect(blob == libsodium, "size \(size): the two writers disagree")

            let reader = try BlobDecryptor(key: key, plaintextSize: size)
            var opened: [UInt8] = []
            var offset = 0
            while offset < blob.count {
                let end = min(blob.count, offset + Int(generator.next() % 90_000))
                try blob[offset..<end].withUnsafeBytes { try reader.append($0) { opened += $0 } }
                offset = end
            }
            try reader.finish()
            #expect(opened == plaintext, "size \(size)")
        }
    }
}
