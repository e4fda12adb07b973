import Foundation
import Logging
import NIOCore
import SealedPushAPNsEmulatorRules

/// What the emulator saw, in bounded memory however long it runs.
///
/// - Counters count everything: requests, acceptances, answers by status, faults, connections, requests without
///   `apns-push-type`, duplicate acceptances.
/// - Notifications: the last ``APNsEmulatorConfiguration/recordedNotificationsPerToken`` per device token (APNs
///   itself keeps only the last one for an offline device), and of those only the ones among the last
///   ``APNsEmulatorConfiguration/recordedNotificationsLimit`` accepted.
/// - Per-`apns-id` counts (requests, acceptances) for the last ``APNsEmulatorConfiguration/trackedAPNsIDs``
///   distinct ids that arrived: enough to see duplicates, which happen within one notification's deadline.
/// - The full history goes to disk only when asked: ``APNsEmulatorConfiguration/recordFile`` (JSON lines).
///
/// Thread-safe.
public final class APNsEmulatorRecorder: @unchecked Sendable {
    private struct IDCounts {
        var requests = 0
        var accepted = 0
    }

    private let lock = NSLock()
    private let perToken: Int
    private let notificationLimit: Int
    private let idLimit: Int

    /// Per token, its held notifications with their acceptance sequence numbers, oldest first.
    private var byToken: [String: [(sequence: Int, notification: RecordedNotification)]] = [:]
    /// The last `notificationLimit` acceptances in order (token and sequence number); an entry whose notification
    /// was already dropped (superseded for its token, or withdrawn) is stale and skipped.
    private var acceptanceOrder = CircularBuffer<(sequence: Int, token: String)>()
    private var heldNotifications = 0
    private var sequence = 0

    private var ids: [UUID: IDCounts] = [:]
    private var idOrder = CircularBuffer<UUID>()

    private var requestTotal = 0
    private var acceptedTotal = 0
    private var duplicates = 0
    private var withoutPushType = 0
    private var statusCounts: [Int: Int] = [:]
    private var faults: [String: Int] = [:]
    private var connections = 0
    private var connectionsCarrying = 0
    private var firstAnswers: [Int] = []

    private let directory: String?
    private let file: EmulatorRecordFile?
    private let logger: Logger

    /// The most values ``streamsOpenBeforeFirstAnswer`` keeps (one per connection, the first connections).
    public static let firstAnswersLimit = 10_000

    init(configuration: APNsEmulatorConfiguration, logger: Logger) {
        self.perToken = max(0, configuration.recordedNotificationsPerToken)
        self.notificationLimit = max(0, configuration.recordedNotificationsLimit)
        self.idLimit = max(0, configuration.trackedAPNsIDs)
        self.directory = configuration.recordDirectory
        self.file = configuration.recordFile.map { EmulatorRecordFile(path: $0, logger: logger) }
        self.logger = logger
    }

    /// The notifications held for a device token (at most the configured number per token), oldest first.
    /// - Parameter deviceToken: The token, hex (any case).
    /// - Returns: The held notifications, in acceptance order.
    public func notifications(for deviceToken: String) -> [RecordedNotification] {
        lock.withLock { byToken[deviceToken.lowercased()]?.map(\.notification) ?? [] }
    }

    /// Every notification held (bounded by the configuration), in acceptance order.
    public var allNotifications: [RecordedNotification] {
        lock.withLock {
            byToken.values.flatMap { $0 }.sorted { $0.sequence < $1.sequence }.map(\.notification)
        }
    }

    /// How many notifications are held in memory now (at most ``APNsEmulatorConfiguration/recordedNotificationsLimit``).
    public var heldNotificationCount: Int { lock.withLock { heldNotifications } }

    /// How many requests carried this `apns-id` (any outcome, faults included), while the id is among the last
    /// ``APNsEmulatorConfiguration/trackedAPNsIDs`` distinct ids seen; 0 once it is older.
    /// - Parameter apnsID: The id (any case).
    /// - Returns: The count.
    public func requestCount(apnsID: String) -> Int {
        guard let id = UUID(uuidString: apnsID) else { return 0 }
        return lock.withLock { ids[id]?.requests ?? 0 }
    }

    /// How many times a request with this `apns-id` was accepted (200), while the id is tracked (see
    /// ``requestCount(apnsID:)``). More than 1 is a duplicate delivery.
    /// - Parameter apnsID: The id (any case).
    /// - Returns: The count.
    public func acceptedCount(apnsID: String) -> Int {
        guard let id = UUID(uuidString: apnsID) else { return 0 }
        return lock.withLock { ids[id]?.accepted ?? 0 }
    }

    /// Accepted counts for every tracked `apns-id` (lowercase) that was accepted at least once.
    public var acceptedCounts: [String: Int] {
        lock.withLock {
            var result: [String: Int] = [:]
            result.reserveCapacity(ids.count)
            for (id, counts) in ids where counts.accepted > 0 { result[id.uuidString.lowercased()] = counts.accepted }
            return result
        }
    }

    /// The total number of requests received.
    public var totalRequests: Int { lock.withLock { requestTotal } }
    /// The total number of acceptances.
    public var totalAccepted: Int { lock.withLock { acceptedTotal } }
    /// Acceptances of an `apns-id` that had already been accepted (while it was tracked): duplicate deliveries.
    public var duplicateAcceptances: Int { lock.withLock { duplicates } }
    /// Requests without an `apns-push-type` header (any outcome).
    public var requestsWithoutPushType: Int { lock.withLock { withoutPushType } }
    /// Responses written, by HTTP status (counted once the write completed, which may be just after the client
    /// read the answer).
    public var responsesByStatus: [Int: Int] { lock.withLock { statusCounts } }
    /// Faults injected, by description.
    public var faultsInjected: [String: Int] { lock.withLock { faults } }
    /// TLS connections accepted.
    public var connectionCount: Int { lock.withLock { connections } }
    /// Connections that carried at least one request.
    public var connectionsWithRequests: Int { lock.withLock { connectionsCarrying } }

    /// For each connection that got an answer (the first ``firstAnswersLimit``): the most streams it had open
    /// before its first answer. A client that waits for its first token-authenticated request to succeed shows 1
    /// for every connection.
    public var streamsOpenBeforeFirstAnswer: [Int] { lock.withLock { firstAnswers } }

    /// Writes buffered lines of ``APNsEmulatorConfiguration/recordFile`` to disk.
    public func flush() { file?.flush() }

    func openRecordFile() throws { try file?.create() }

    func closeRecordFile() { file?.finish() }

    func noteFirstAnswer(openStreams: Int) {
        lock.withLock { if firstAnswers.count < Self.firstAnswersLimit { firstAnswers.append(openStreams) } }
    }

    func countConnection() { lock.withLock { connections += 1 } }

    func countConnectionCarryingRequests() { lock.withLock { connectionsCarrying += 1 } }

    func countRequest(apnsID: String, hasPushType: Bool) {
        let id = UUID(uuidString: apnsID)
        lock.withLock {
            requestTotal += 1
            if !hasPushType { withoutPushType += 1 }
            guard let id, idLimit > 0 else { return }
            if ids[id] == nil {
                ids[id] = IDCounts()
                idOrder.append(id)
                while idOrder.count > idLimit { ids[idOrder.removeFirst()] = nil }
            }
            ids[id]?.requests += 1
        }
    }

    func countFault(_ fault: EmulatorFault) { lock.withLock { faults[fault.description, default: 0] += 1 } }

    /// Called once the answer was written: counts it and appends an accepted notification to the record file.
    func answered(status: Int, record: RecordedNotification?) {
        lock.withLock { statusCounts[status, default: 0] += 1 }
        if let record, let file { file.append(record) }
    }

    /// Holds an accepted notification (before its answer is written, so a client holding a 200 finds it).
    func record(_ notification: RecordedNotification) {
        lock.withLock {
            acceptedTotal += 1
            if let id = UUID(uuidString: notification.apnsID), ids[id] != nil {
                if ids[id]!.accepted > 0 { duplicates += 1 }
                ids[id]!.accepted += 1
            }
            if perToken > 0, notificationLimit > 0 { hold(notification) }
        }
        writeToDirectory(notification)
    }

    /// Keeps an accepted notification within the bounds. Must hold the lock.
    private func hold(_ notification: RecordedNotification) {
        sequence += 1
        byToken[notification.deviceToken, default: []].append((sequence, notification))
        heldNotifications += 1
        if byToken[notification.deviceToken]!.count > perToken {
            byToken[notification.deviceToken]!.removeFirst()
            heldNotifications -= 1
        }
        acceptanceOrder.append((sequence, notification.deviceToken))
        while acceptanceOrder.count > notificationLimit {
            let (oldest, token) = acceptanceOrder.removeFirst()
            // Held notifications of a token are in sequence order, so the oldest acceptance, if still held, is its
            // token's first.
            if let first = byToken[token]?.first, first.sequence == oldest {
                byToken[token]!.removeFirst()
                heldNotifications -= 1
                if byToken[token]!.isEmpty { byToken[token] = nil }
            }
        }
    }

    /// Undoes ``record(_:)`` for a notification whose answer could not be written (the client never saw the 200
    /// and will resend).
    func withdraw(_ notification: RecordedNotification) {
        lock.withLock {
            acceptedTotal -= 1
            if let id = UUID(uuidString: notification.apnsID), let counts = ids[id], counts.accepted > 0 {
                if counts.accepted > 1 { duplicates -= 1 }
                ids[id]!.accepted -= 1
            }
            if var list = byToken[notification.deviceToken],
                let index = list.lastIndex(where: { $0.notification.apnsID == notification.apnsID })
            {
                list.remove(at: index)
                heldNotifications -= 1
                byToken[notification.deviceToken] = list.isEmpty ? nil : list
            }
        }
        guard let directory else { return }
        let file = URL(fileURLWithPath: directory).appendingPathComponent(notification.deviceToken)
            .appendingPathComponent(notification.apnsID + ".json")
        try? FileManager.default.removeItem(at: file)
    }

    private func writeToDirectory(_ notification: RecordedNotification) {
        guard let directory else { return }
        // The token is checked hex and the apns-id a UUID, so both are safe path components.
        let folder = URL(fileURLWithPath: directory).appendingPathComponent(notification.deviceToken)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(notification.body).write(
                to: folder.appendingPathComponent(notification.apnsID + ".json"), options: .atomic)
        } catch {
            logger.error("cannot write record", metadata: ["dir": "\(directory)", "error": "\(error)"])
        }
    }
}
