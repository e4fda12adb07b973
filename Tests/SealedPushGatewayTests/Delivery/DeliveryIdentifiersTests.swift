import Foundation
import SealedPushGateway
import Testing

@Suite("Delivery identifiers")
struct DeliveryIdentifiersTests {
    /// Known answer computed with Python's hashlib and uuid: SHA-256 of the domain label, a zero byte, the
    /// notification id's 16 bytes and the device id, first 16 bytes, version 8, RFC 9562 variant.
    @Test func apnsIDKnownAnswer() throws {
        let notification = try #require(UUID(uuidString: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"))
        let id = DeliveryIdentifiers.apnsID(notificationID: notification, deviceID: "device-7")
        #expect(id.uuidString.lowercased() == "d313c7b1-ddb6-81bc-b604-ef8ad633695b")
    }

    @Test func apnsIDDiffersPerDeviceAndNotification() {
        let a = UUID()
        let b = UUID()
        let ids = Set([
            DeliveryIdentifiers.apnsID(notificationID: a, deviceID: "d1"),
            DeliveryIdentifiers.apnsID(notificationID: a, deviceID: "d2"),
            DeliveryIdentifiers.apnsID(notificationID: b, deviceID: "d1"),
        ])
        #expect(ids.count == 3)
    }

    @Test func collapseIDIsTheBackendsOrDerivedWithinAPNsLimit() throws {
        let notification = try #require(UUID(uuidString: "6F1C2A3B-4D5E-4F60-8A7B-9C0D1E2F3A4B"))
        #expect(DeliveryIdentifiers.collapseID(notificationID: notification, collapseID: "mine") == "mine")
        let derived = DeliveryIdentifiers.collapseID(notificationID: notification, collapseID: nil)
        #expect(derived == "sp-6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b")
        #expect(derived.utf8.count <= 64)
        #expect(DeliveryIdentifiers.collapseID(notificationID: notification, collapseID: "") == derived)
    }
}
