import Foundation
import SealedPushCore
import Testing

@testable import SealedPushServer

@Suite struct DeviceRecordTests {
    private func newKey() throws -> DevicePublicKey {
        try DevicePublicKey(rawRepresentation: ServerIdentity.generate().publicKey)
    }

    private func expectCode(_ code: SealedPushError.Code, _ body: () throws -> Void) {
        #expect {
            try body()
        } throws: { error in
            (error as? SealedPushError)?.code == code
        }
    }

    @Test func acceptsMatchingKeyID() throws {
        var record = DeviceRecord()
        try record.register(
            publicKeyText: Fixtures.devicePublicKeyText, keyIDHex: Fixtures.deviceKeyIDHex, createdAt: 100,
            expiresAt: nil)
        #expect(try record.currentKey(at: 1_000).text == Fixtures.devicePublicKeyText)
    }

    @Test func rejectsMismatchedKeyID() throws {
        var record = DeviceRecord()
        expectCode(.invalidKey) {
            try record.register(
                publicKeyText: Fixtures.devicePublicKeyText, keyIDHex: Fixtures.serverKeyIDHex, createdAt: 100,
                expiresAt: nil)
        }
        expectCode(.invalidKey) {
            try record.register(
                publicKeyText: Fixtures.devicePublicKeyText, keyIDHex: "not-hex", createdAt: 100, expiresAt: nil)
        }
        expectCode(.invalidKey) {
            try record.register(publicKeyText: "SPK1:short", keyIDHex: "0011223344556677", createdAt: 1, expiresAt: nil)
        }
        #expect(record.keys.isEmpty)
    }

    @Test func rejectsExpiryBeforeCreation() throws {
        var record = DeviceRecord()
        expectCode(.invalidArgument) {
            try record.register(
                publicKeyText: Fixtures.devicePublicKeyText, keyIDHex: Fixtures.deviceKeyIDHex, createdAt: 100,
                expiresAt: 100)
        }
    }

    @Test func sealsToLastArrivedUnexpiredKey() throws {
        let (first, second, third) = (try newKey(), try newKey(), try newKey())
        var record = DeviceRecord()
        // Arrival order decides, not the device's createdAt (keyring spec §4).
        try record.register(publicKeyText: first.text, keyIDHex: first.keyID.hex, createdAt: 200, expiresAt: 5_000)
        try record.register(publicKeyText: second.text, keyIDHex: second.keyID.hex, createdAt: 300, expiresAt: 1_000)
        try record.register(publicKeyText: third.text, keyIDHex: third.keyID.hex, createdAt: 100, expiresAt: nil)
        #expect(record.keys.map(\.publicKey) == [third, second, first])
        #expect(try record.currentKey(at: 999) == third)
        record.removeExpired(at: 5_000)
        #expect(record.keys.map(\.publicKey) == [third])
    }

    @Test func fallsBackToTheLastArrivedKeyThatHasNotExpired() throws {
        let (older, newer) = (try newKey(), try newKey())
        var record = DeviceRecord()
        try record.register(publicKeyText: older.text, keyIDHex: older.keyID.hex, createdAt: 100, expiresAt: 5_000)
        try record.register(publicKeyText: newer.text, keyIDHex: newer.keyID.hex, createdAt: 200, expiresAt: 1_000)
        #expect(try record.currentKey(at: 999) == newer)
        #expect(try record.currentKey(at: 1_000) == older)  // newer expired at 1,000
    }

    /// Review item 9: a registration "created" in 2036 (device clock wrong) stayed first forever, so after the
    /// device rotated and pruned, every message was sealed to a key it no longer had.
    @Test func farFutureRegistrationDoesNotPinItsKey() throws {
        let now: UInt64 = 1_800_000_000  // 2027
        let year2036: UInt64 = 2_082_758_400
        let (wrongClock, rotated) = (try newKey(), try newKey())
        var record = DeviceRecord()
        #expect {
            try record.register(
                publicKeyText: wrongClock.text, keyIDHex: wrongClock.keyID.hex, createdAt: year2036, expiresAt: nil,
                now: now)
        } throws: { error in
            (error as? SealedPushError)?.code == .invalidArgument
                && (error as? SealedPushError)?.message.contains("ahead of the server clock") == true
        }
        #expect(record.keys.isEmpty)
        // Within the 10-minute skew it is accepted, and a later registration (the device rotated) still wins.
        try record.register(
            publicKeyText: wrongClock.text, keyIDHex: wrongClock.keyID.hex, createdAt: now + 600, expiresAt: nil, now: now)
        try record.register(
            publicKeyText: rotated.text, keyIDHex: rotated.keyID.hex, createdAt: now + 60, expiresAt: nil, now: now + 60)
        #expect(try record.currentKey(at: now + 60) == rotated)
    }

    @Test func noValidKeyIsUnknownRecipientKey() throws {
        let key = try newKey()
        var record = DeviceRecord()
        expectCode(.unknownRecipientKey) { _ = try record.currentKey(at: 0) }
        try record.register(publicKeyText: key.text, keyIDHex: key.keyID.hex, createdAt: 1, expiresAt: 10)
        expectCode(.unknownRecipientKey) { _ = try record.currentKey(at: 10) }
    }

    @Test func reRegistrationReplacesAndRecordIsBounded() throws {
        var record = DeviceRecord(maxKeys: 2)
        let keys = try (0..<3).map { _ in try newKey() }
        for (index, key) in keys.enumerated() {
            try record.register(
                publicKeyText: key.text, keyIDHex: key.keyID.hex, createdAt: UInt64(index), expiresAt: nil)
        }
        #expect(record.keys.map(\.publicKey) == [keys[2], keys[1]])
        try record.register(publicKeyText: keys[1].text, keyIDHex: keys[1].keyID.hex, createdAt: 9, expiresAt: nil)
        #expect(record.keys.map(\.publicKey) == [keys[1], keys[2]])
    }

    @Test func sealerSealsToRecordsCurrentKey() throws {
        let newest = try newKey()
        var record = DeviceRecord()
        try record.register(
            publicKeyText: Fixtures.devicePublicKeyText, keyIDHex: Fixtures.deviceKeyIDHex, createdAt: 1,
            expiresAt: nil)
        try record.register(publicKeyText: newest.text, keyIDHex: newest.keyID.hex, createdAt: 2, expiresAt: nil)
        let sealer = try Sealer(identity: ServerIdentity.generate(), topic: "com.example.app")
        let sealed = try sealer.seal(NotificationContent(body: "hello"), to: record, now: 50)
        #expect(sealed.recipientKeyID == newest.keyID)
        #expect(Array(sealed.envelope[2..<10]) == newest.keyID.bytes)
    }
}

@Suite struct DeviceRecordRegistrationTests {
    @Test func acceptsCoreRegistration() throws {
        var record = DeviceRecord()
        let registration = DeviceRegistration(
            publicKey: Fixtures.devicePublicKeyText, keyId: Fixtures.deviceKeyIDHex,
            createdAt: Date(timeIntervalSince1970: 1_000), expiresAt: Date(timeIntervalSince1970: 2_000.5))
        let key = try record.register(registration)
        #expect(key.createdAt == 1_000)
        #expect(key.expiresAt == 2_000)
        #expect(try record.currentKey(at: Date(timeIntervalSince1970: 1_999)).keyID.hex == Fixtures.deviceKeyIDHex)
        #expect(throws: SealedPushError.self) { _ = try record.currentKey(at: Date(timeIntervalSince1970: 2_000)) }
    }

    @Test func rejectsCoreRegistrationWithWrongKeyID() throws {
        var record = DeviceRecord()
        let registration = DeviceRegistration(
            publicKey: Fixtures.devicePublicKeyText, keyId: "0011223344556677", createdAt: Date())
        #expect {
            try record.register(registration)
        } throws: { error in
            (error as? SealedPushError)?.code == .invalidKey
        }
    }

    @Test func rejectsRegistrationBefore1970() throws {
        var record = DeviceRecord()
        let registration = DeviceRegistration(
            publicKey: Fixtures.devicePublicKeyText, keyId: Fixtures.deviceKeyIDHex,
            createdAt: Date(timeIntervalSince1970: -5))
        #expect {
            try record.register(registration)
        } throws: { error in
            (error as? SealedPushError)?.code == .invalidArgument
        }
    }
}
