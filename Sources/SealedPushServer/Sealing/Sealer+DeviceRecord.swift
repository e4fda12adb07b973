import SealedPushCore

extension Sealer {
    /// Seals `content` to the newest unexpired key of `device` (see ``DeviceRecord/currentKey(at:)``).
    ///
    /// - Parameters:
    ///   - content: The notification content.
    ///   - device: The device's registered keys.
    ///   - ttl: Seconds until the envelope expires, 1 ... 2,419,200.
    ///   - now: The issue time in UNIX seconds; also the time at which key expiry is judged.
    /// - Returns: The sealed notification.
    /// - Throws: `SealedPushError` with code `unknownRecipientKey` if the device has no valid key, otherwise as
    ///   ``seal(_:to:ttl:now:)``.
    public func seal(
        _ content: NotificationContent, to device: DeviceRecord, ttl: UInt64 = EnvelopeV1.defaultTTL,
        now: UInt64 = Sealer.currentTime()
    ) throws -> SealedNotification {
        try seal(content, to: device.currentKey(at: now), ttl: ttl, now: now)
    }
}
