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

    /// Seals racing with rotations each use one whole identity: the header's sender key id is one the ring held.
    @Test func sealsRacingWithRotations() async throws {
        let identities = try (0..<6).map { _ in try ServerIdentity.generate() }
        let ring = try IdentityRing(current: identities[0], topic: "com.example.app", cacheCapacity: 8)
        let device = try device()
        let known = Set(identities.map(\.keyID.bytes))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for identity in identities.dropFirst() { try ring.rotate(to: identity) }
            }
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<25 {
                        let sealed = try ring.seal(NotificationContent(body: "race"), to: device)
                        #expect(known.contains(Array(sealed.envelope[10..<18])))
                        #expect(Array(sealed.envelope[10..<18]) == sealed.senderKeyID.bytes)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(ring.current.keyID == identities[5].keyID)
        #expect(ring.previous.count == 5)
    }

    @Test func stagedIdentityIsPinnedBeforeItSeals() throws {
        let first = try ServerIdentity.generate()
        let second = try ServerIdentity.generate()
        let ring = try IdentityRing(current: first, topic: "com.example.app")
        #expect(throws: SealedPushError.self) { try ring.rotate() }  // nothing staged

        try ring.stage(second)
        #expect(ring.next?.keyID == second.keyID)
        #expect(ring.pinnedPublicKeyTexts == [first.publicKeyText, second.publicKeyText])
        #expect(ring.identity(for: second.keyID) != nil)
        let staged = try ring.seal(NotificationContent(body: "still first"), to: device())
        #expect(Array(staged.envelope[10..<18]) == first.keyID.bytes)

        try ring.rotate()
        #expect(ring.next == nil)
        #expect(ring.current.keyID == second.keyID)
        #expect(ring.previous.map(\.keyID) == [first.keyID])
        #expect(ring.pinnedPublicKeyTexts == [second.publicKeyText, first.publicKeyText])
        let rotated = try ring.seal(NotificationContent(body: "second"), to: device())
        #expect(Array(rotated.envelope[10..<18]) == second.keyID.bytes)

        #expect {
            try ring.stage(first)  // a previous identity cannot come back as next
        } throws: { error in
            (error as? SealedPushError)?.code == .invalidArgument
        }
    }
}
