import Foundation

/// The RFC 9180 test vectors for DHKEM(X25519, HKDF-SHA256) / HKDF-SHA256 / ChaCha20-Poly1305, modes 0 and 2,
/// decoded from `Sources/SealedPushTestSupport/Vectors/hpke-x25519-chacha-vectors.json` (copied from swift-crypto's
/// own test vectors). Client-test-local loader: the shared one in SealedPushTestSupport lives on another branch.
struct RFC9180VectorFile: Decodable {
    struct Vector: Decodable {
        var mode: Int
        var kem_id: Int
        var kdf_id: Int
        var aead_id: Int
        var info: String
        var skRm: String
        var pkRm: String
        var pkSm: String?
        var enc: String
        var encryptions: [Encryption]
    }

    struct Encryption: Decodable {
        var aad: String
        var ct: String
        var nonce: String
        var pt: String
    }

    var vectors: [Vector]

    static func load() throws -> RFC9180VectorFile {
        // Tests/SealedPushClientTests/Support/<this file> → package root.
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let url = root.appendingPathComponent("Sources/SealedPushTestSupport/Vectors/hpke-x25519-chacha-vectors.json")
        return try JSONDecoder().decode(RFC9180VectorFile.self, from: Data(contentsOf: url))
    }
}
