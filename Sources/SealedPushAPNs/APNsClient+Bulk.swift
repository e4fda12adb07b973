import Foundation

extension APNsClient {
    /// Sends many notifications with at most `maxConcurrent` in flight. The sequence is read lazily, one
    /// element per free slot (back-pressure: a slow network slows the reading), and `onReport` is awaited for each
    /// result before the slot is refilled.
    /// - Parameters:
    ///   - notifications: The notifications; read lazily.
    ///   - maxConcurrent: The most notifications in flight, 1...10,000 (default 100).
    ///   - onReport: Called once per notification with its report (e.g. progress, pruning).
    /// - Returns: The counts; `total` equals the number of notifications read.
    public func send<Notifications: Sequence>(
        _ notifications: Notifications, maxConcurrent: Int = 100,
        onReport: @escaping @Sendable (APNsSendReport) async -> Void = { _ in }
    ) async -> APNsBulkSummary where Notifications.Element == APNsNotification {
        let makers = notifications.lazy.map { notification in
            BulkItem(deviceToken: notification.deviceToken) { notification }
        }
        return await runBulk(makers, maxConcurrent: maxConcurrent, onReport: onReport)
    }

    /// Sends one notification per device with a payload built per device (e.g. sealed for that device's key),
    /// with at most `maxConcurrent` in flight. The builder runs lazily as slots free up, so at most
    /// `maxConcurrent` payloads exist at once.
    /// - Parameters:
    ///   - deviceTokens: The devices; read lazily.
    ///   - template: Topic, priority, expiration and collapse id shared by all.
    ///   - maxConcurrent: The most notifications in flight, 1...10,000 (default 100).
    ///   - payload: Builds the JSON body for a device. If it throws, that device's report is a failure with
    ///     reason `PayloadBuildFailed` and nothing is sent to it.
    ///   - onReport: Called once per device with its report.
    /// - Returns: The counts.
    public func sendBulk<Tokens: Sequence>(
        to deviceTokens: Tokens, template: APNsNotificationTemplate, maxConcurrent: Int = 100,
        payload: @escaping @Sendable (DeviceToken) throws -> [UInt8],
        onReport: @escaping @Sendable (APNsSendReport) async -> Void = { _ in }
    ) async -> APNsBulkSummary where Tokens.Element == DeviceToken {
        let makers = deviceTokens.lazy.map { token in
            BulkItem(deviceToken: token) {
                APNsNotification(
                    deviceToken: token, topic: template.topic, payload: try payload(token),
                    priority: template.priority, expiration: template.expiration, collapseID: template.collapseID)
            }
        }
        return await runBulk(makers, maxConcurrent: maxConcurrent, onReport: onReport)
    }

    private func runBulk<Makers: Sequence>(
        _ makers: Makers, maxConcurrent: Int, onReport: @escaping @Sendable (APNsSendReport) async -> Void
    ) async -> APNsBulkSummary where Makers.Element == BulkItem {
        let limit = min(max(1, maxConcurrent), 10_000)
        var summary = APNsBulkSummary()
        var iterator = makers.makeIterator()
        await withTaskGroup(of: APNsSendReport.self) { group in
            var inFlight = 0
            func addNext() -> Bool {
                guard let item = iterator.next() else { return false }
                group.addTask {
                    do {
                        let notification = try item.make()
                        return await self.send(notification)
                    } catch {
                        let failure = APNsFailure(
                            reason: .payloadBuildFailed, status: nil, message: "the payload builder threw: \(error)")
                        return APNsSendReport(
                            apnsID: UUID(), deviceToken: item.deviceToken, result: .failed(failure), attempts: 0,
                            possibleDuplicate: false)
                    }
                }
                return true
            }
            while inFlight < limit, addNext() { inFlight += 1 }
            while inFlight > 0, let report = await group.next() {
                inFlight -= 1
                summary.add(report)
                await onReport(report)
                if addNext() { inFlight += 1 }
            }
        }
        return summary
    }
}

/// One element of a bulk send: the device and how to make its notification.
struct BulkItem: Sendable {
    let deviceToken: DeviceToken
    let make: @Sendable () throws -> APNsNotification
}
