import SealedPushTestSupport
import Testing

/// Fixed inputs and independently computed answers for the server tests.
///
/// The expected values were computed outside this code base, with a separate Python implementation of the spec
/// (RFC 9180 mode_auth written on `hmac`/`hashlib` and the `cryptography` package's X25519 and
/// ChaCha20-Poly1305; that implementation reproduces the RFC 9180 mode 2 vector), and RFC 7748 §6.1's key pairs.
enum Fixtures {
    /// RFC 7748 §6.1 Alice, used as the server identity.
    static let serverPrivateKeyHex = "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"
    static let serverPublicKeyHex = "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"
    static let serverPublicKeyText = "SPK1:hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo"
    static let serverKeyIDHex = "38a66b4c0144fb94"
    static let serverKeyFile = "SPSK1:dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo\n"

    /// RFC 7748 §6.1 Bob, used as the device.
    static let devicePrivateKeyHex = "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"
    static let devicePublicKeyText = "SPK1:3p7bfXt9wbTTW2HC7OQ1Nz-DQ8hbeGdNrfx-FG-IK08"
    static let deviceKeyIDHex = "f7ba7a6e7881f837"

    /// A deterministic seal: topic, ephemeral key 0x20...0x3f, message id 0x00...0x0f, times, and its results.
    static let topic = "com.example.app"
    static let ephemeralPrivateKey: [UInt8] = Array(0x20...0x3f)
    static let messageID: [UInt8] = Array(0x00...0x0f)
    static let issuedAt: UInt64 = 1_700_000_000
    static let expiresAt: UInt64 = 1_700_086_400
    static let expectedEnvelopeHex =
        "0101f7ba7a6e7881f83738a66b4c0144fb94000102030405060708090a0b0c0d0e0f000000006553f10000000000655542803580"
        + "72d6365880d1aeea329adf9121383851ed21a28e3b75e965d0d2cd16625455dc6573a3897fcf154d4084b032c83204753d4a7a"
        + "191d44b480b3ded56d2d0c707c0ec6da474a11cbe2d4c06d550498c29c57e6b509e02fc10f5e2addc809c9a75c660441b1ddee"
        + "e0db256fea7a2d4b5df3b1a9963bde97607725f3d5799a61e7b2102bb418a33c661c5db1137bac56aae835b413df39a7249867"
        + "774083ab64e82e764ae97d28290e17ac12c77526b6"
    static let expectedPayload =
        #"{"aps":{"alert":{"body":"New notification"},"mutable-content":1},"sp":"AQH3unpueIH4Nzima0wBRPuUAAECAwQF"#
        + "BgcICQoLDA0ODwAAAABlU_EAAAAAAGVVQoA1gHLWNliA0a7qMprfkSE4OFHtIaKOO3XpZdDSzRZiVFXcZXOjiX_PFU1AhLAyyDIEdT1K"
        + "ehkdRLSAs97VbS0McHwOxtpHShHL4tTAbVUEmMKcV-a1CeAvwQ9eKt3ICcmnXGYEQbHd7uDbJW_qei1LXfOxqZY73pdgdyXz1XmaYeey"
        + #"ECu0GKM8ZhxdsRN7rFaq6DW0E985pySYZ3dAg6tk6C52Sul9KCkOF6wSx3Umtg"}"#

    static func hex(_ text: String) throws -> [UInt8] {
        try #require(RFC9180Vectors.bytes(fromHex: text))
    }
}
