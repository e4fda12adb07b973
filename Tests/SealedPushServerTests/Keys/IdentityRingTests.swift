import SealedPushCore
import Testing

@testable import SealedPushServer

@Suite struct IdentityRingTests {
    private func device() throws -> DevicePublicKey {
        try DevicePublicKey(text: Fixtures.devicePublicKeyText)
    }

    @Test func rotationSealsWithNewIdentityAndKeepsOld() throws {
        let first = try ServerIdentity.generate()
        let second = try ServerIdentity.generate()
        let ring = try IdentityRing(current: first, topic: "com.example.app")
        let before = try ring.seal(NotificationContent(body: "a"), to: device())
        #expect(Array(before.envelope[10..<18]) == first.keyID.bytes)

        try ring.rotate(to: second)
        let after = try ring.seal(NotificationContent(body: "b"), to: device())
        #expect(Array(after.envelope[10..<18]) == second.keyID.bytes)
        #expect(ring.current.keyID == second.keyID)
        #expect(ring.previous.map(\.keyID) == [first.keyID])
        #expect(ring.pinnedPublicKeyTexts == [second.publicKeyText, first.publicKeyText])
        #expect(ring.identity(for: first.keyID)?.publicKey == first.publicKey)
        #expect(ring.identity(for: second.keyID)?.publicKey == second.publicKey)

        #expect(ring.retire(keyID: first.keyID))
        #expect(ring.identity(for: first.keyID) == nil)
        #expect(!ring.retire(keyID: second.keyID))  // current is never retired
        #expect(ring.current.keyID == second.keyID)
    }

    @Test func rotatingToAHeldKeyIsRejected() throws {
        let first = try ServerIdentity.generate()
        let ring = try IdentityRing(current: first, topic: "com.example.app")
        #expect {
            try ring.rotate(to: first)
        } throws: { error in
            (error as? SealedPushError)?.code == .invalidArgument
        }
        #expect {
            _ = try IdentityRing(current: first, previous: [first], topic: "com.example.app")
        } throws: { error in
            (error as? SealedPushError)?.code == .invalidArgument
        }
    }

    @Test func keepingPreviousBoundsTheRing() throws {
        let ring = try IdentityRing(current: ServerIdentity.generate(), topic: "com.example.app")
        var identities: [ServerIdentity] = [ring.current]
        for _ in 0..<4 {
            let next = try ServerIdentity.generate()
            try ring.rotate(to: next, keepingPrevious: 2)
            identities.append(next)
        }
        #expect(ring.current.keyID == identities[4].keyID)
        #expect(ring.previous.map(\.keyID) == [identities[3].keyID, identities[2].keyID])
    }
}
