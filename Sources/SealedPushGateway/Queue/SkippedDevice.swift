#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A device a send reached only through its user and left out, because it cannot be sealed to: its key expired or
/// cannot be used, or it is an FCM device of an app without FCM credentials.
///
/// Kept with the notification (``NewNotification/skippedDevices``), so that a replay of the send's idempotency key
/// and the notification's status list it as the send's `202` did (`SendAccepted.skippedDevices`).
public struct SkippedDevice: Sendable, Hashable {
    /// The device id within the app.
    public var deviceID: String
    /// The error code a send naming the device directly gets (`invalidKey`, `fcmNotConfigured`).
    public var code: String
    /// Why it cannot be sealed to, for a person, without the device's name (``message`` adds it); never a key's
    /// material.
    public var reason: String

    /// Creates a record of a device left out.
    /// - Parameters:
    ///   - deviceID: The device id.
    ///   - code: The error code a send naming it directly gets.
    ///   - reason: Why it cannot be sealed to, without the device's name.
    public init(deviceID: String, code: String, reason: String) {
        self.deviceID = deviceID
        self.code = code
        self.reason = reason
    }

    /// The message the HTTP API answers: the reason, naming the device.
    public var message: String { "device '\(deviceID)': \(reason)" }

    /// The `notifications.skipped_devices` column's text for `devices`: a JSON array of `[deviceId, code, reason]`
    /// arrays, in the send's order (no member names, and no device name repeated in a message: at most one entry
    /// per device a send may reach); nil when none was left out.
    /// - Parameter devices: The devices a send left out.
    /// - Returns: The column's text, or nil for none.
    public static func storedText(_ devices: [SkippedDevice]) -> String? {
        guard !devices.isEmpty else { return nil }
        let rows = devices.map { [$0.deviceID, $0.code, $0.reason] }
        guard let data = try? JSONEncoder().encode(rows) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// The devices a column's text lists (``storedText(_:)``): none for null, and for text that is not such an array
    /// (a status still answers, without the list).
    /// - Parameter storedText: The `notifications.skipped_devices` column.
    /// - Returns: The devices, in the send's order.
    public static func devices(storedText: String?) -> [SkippedDevice] {
        guard let storedText, let rows = try? JSONDecoder().decode([[String]].self, from: Data(storedText.utf8))
        else { return [] }
        return rows.compactMap { row in
            row.count == 3 ? SkippedDevice(deviceID: row[0], code: row[1], reason: row[2]) : nil
        }
    }
}
