import Foundation
import SealedPushGateway
import Testing

/// The `notifications.skipped_devices` column's text (``SkippedDevice/storedText(_:)``).
@Suite("Devices a send left out, as stored")
struct SkippedDeviceTests {
    static let expired = SkippedDevice(
        deviceID: "erin-old", code: "invalidKey",
        reason: "its registered key 0123456789abcdef expired at 2027-01-15T07:00:00Z; the device must register a new key")

    /// None is null: the column stays null for nearly every send.
    @Test func noneIsNull() {
        #expect(SkippedDevice.storedText([]) == nil)
        #expect(SkippedDevice.devices(storedText: nil) == [])
    }

    /// An array of `[deviceId, code, reason]`: no member names, and the message's device name is not repeated.
    @Test func compactArraysRoundTrip() throws {
        let devices = [
            Self.expired,
            SkippedDevice(deviceID: "a.b_c~d-e", code: "fcmNotConfigured", reason: "\"quoted\" \\ / é ✓\nnext line"),
        ]
        let text = try #require(SkippedDevice.storedText(devices))
        #expect(!text.contains("deviceId") && !text.contains("device 'erin-old'"), "\(text)")
        #expect(text.hasPrefix(#"[["erin-old","invalidKey","its registered key"#), "\(text)")
        #expect(SkippedDevice.devices(storedText: text) == devices)
        #expect(Self.expired.message == "device 'erin-old': " + Self.expired.reason)
    }

    /// A send's device limit bounds the column: 1,000 devices left out, each with a message as long as the gateway
    /// writes, stay within a few hundred bytes each.
    @Test func aFullSendStaysBounded() throws {
        let devices = (0..<1_000).map { index in
            SkippedDevice(deviceID: "device-\(index)", code: Self.expired.code, reason: Self.expired.reason)
        }
        let text = try #require(SkippedDevice.storedText(devices))
        #expect(text.utf8.count < 1_000 * (Self.expired.reason.utf8.count + 40))
        #expect(SkippedDevice.devices(storedText: text) == devices)
    }

    /// Text that is not such an array lists none (the status still answers).
    @Test(arguments: ["", "{}", "[1,2]", #"[["a","b"]]"#, "not json"])
    func malformedTextListsNone(_ text: String) {
        #expect(SkippedDevice.devices(storedText: text) == [])
    }
}
