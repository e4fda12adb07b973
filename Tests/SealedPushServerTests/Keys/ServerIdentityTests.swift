import Foundation
import SealedPushCore
import Testing

@testable import SealedPushServer

@Suite struct ServerIdentityTests {
    @Test func knownKeyPairAndKeyID() throws {
        let identity = try ServerIdentity(privateKey: Fixtures.hex(Fixtures.serverPrivateKeyHex))
        #expect(identity.publicKey == (try Fixtures.hex(Fixtures.serverPublicKeyHex)))
        #expect(identity.keyID.hex == Fixtures.serverKeyIDHex)
        #expect(identity.publicKeyText == Fixtures.serverPublicKeyText)
        #expect(!identity.description.contains("dwdt"))  // never the private key
    }

    @Test func generatedIdentitiesDiffer() throws {
        let first = try ServerIdentity.generate()
        let second = try ServerIdentity.generate()
        #expect(first.publicKey.count == 32)
        #expect(first.publicKey != second.publicKey)
        #expect(first.keyID != second.keyID)
    }

    @Test(arguments: [0, 31, 33, 64])
    func wrongPrivateKeyLengthIsInvalidKey(length: Int) {
        #expect {
            _ = try ServerIdentity(privateKey: [UInt8](repeating: 1, count: length))
        } throws: { error in
            (error as? SealedPushError)?.code == .invalidKey
        }
    }
}

@Suite struct DevicePublicKeyTests {
    @Test func fromTextAndRaw() throws {
        let key = try DevicePublicKey(text: Fixtures.devicePublicKeyText)
        #expect(key.keyID.hex == Fixtures.deviceKeyIDHex)
        #expect(key.text == Fixtures.devicePublicKeyText)
        let raw = try DevicePublicKey(rawRepresentation: key.rawRepresentation)
        #expect(raw == key)
        #expect(raw.keyID.hex == Fixtures.deviceKeyIDHex)
    }

    @Test(arguments: [
        "", "SPK1:", "SPK2:3p7bfXt9wbTTW2HC7OQ1Nz-DQ8hbeGdNrfx-FG-IK08",
        "SPK1:3p7bfXt9wbTTW2HC7OQ1Nz-DQ8hbeGdNrfx-FG-IK0",
        "SPK1:3p7bfXt9wbTTW2HC7OQ1Nz+DQ8hbeGdNrfx-FG-IK08", "SPK1:3p7bfXt9wbTTW2HC7OQ1Nz-DQ8hbeGdNrfx-FG-IK08=",
    ])
    func badTextIsInvalidKey(text: String) {
        #expect {
            _ = try DevicePublicKey(text: text)
        } throws: { error in
            (error as? SealedPushError)?.code == .invalidKey
        }
    }

    @Test func wrongRawLengthIsInvalidKey() {
        #expect {
            _ = try DevicePublicKey(rawRepresentation: [UInt8](repeating: 9, count: 31))
        } throws: { error in
            (error as? SealedPushError)?.code == .invalidKey
        }
    }
}
