import Foundation
import Logging

/// A notification the emulator accepted (answered 200).
public struct RecordedNotification: Sendable, Hashable {
    /// The device token from the path, lowercase hex.
    public let deviceToken: String
    /// The `apns-id` (the client's, or one the emulator assigned), lowercase.
    public let apnsID: String
    /// `apns-topic`.
    public let topic: String
    /// `apns-push-type`, or nil if the request had none (APNs accepts that; Apple requires it only for watchOS).
    public let pushType: String?
    /// `apns-priority`, if sent.
    public let priority: Int?
    /// `apns-expiration`, if sent.
    public let expiration: Int64?
    /// `apns-collapse-id`, if sent.
    public let collapseID: String?
    /// The JSON body exactly as received.
    public let body: [UInt8]
    /// When it was accepted (emulator clock).
    public let acceptedAt: Date
}

/// What the emulator saw: accepted notifications per device token, and request counts per `apns-id` so that
/// duplicates are visible. Thread-safe.
public final class APNsEmulatorRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var byToken: [String: [RecordedNotification]] = [:]
    private var requests: [String: Int] = [:]
    private var accepted: [String: Int] = [:]
    private var statusCounts: [Int: Int] = [:]
    private var faults: [String: Int] = [:]
    private var connections = 0
    private let directory: String?
    private let logger: Logger

    init(directory: String?, logger: Logger) {
        self.directory = directory
        self.logger = logger
    }

    /// The notifications accepted for a device token, in acceptance order.
    /// - Parameter deviceToken: The token, hex (any case).
    /// - Returns: The accepted notifications.
    public func notifications(for deviceToken: String) -> [RecordedNotification] {
        lock.withLock { byToken[deviceToken.lowercased()] ?? [] }
    }

    /// Every accepted notification, grouped by token in no particular order of tokens.
    public var allNotifications: [RecordedNotification] {
        lock.withLock { byToken.values.flatMap { $0 } }
    }

    /// How many requests carried this `apns-id` (any outcome, faults included).
    /// - Parameter apnsID: The id (any case).
    /// - Returns: The count.
    public func requestCount(apnsID: String) -> Int {
        lock.withLock { requests[apnsID.lowercased()] ?? 0 }
    }

    /// How many times a request with this `apns-id` was accepted (200). More than 1 is a duplicate delivery.
    /// - Parameter apnsID: The id (any case).
    /// - Returns: The count.
    public func acceptedCount(apnsID: String) -> Int {
        lock.withLock { accepted[apnsID.lowercased()] ?? 0 }
    }

    /// Accepted counts for every `apns-id` (lowercase).
    public var acceptedCounts: [String: Int] { lock.withLock { accepted } }
    /// The total number of requests received.
    public var totalRequests: Int { lock.withLock { requests.values.reduce(0, +) } }
    /// The total number of acceptances.
    public var totalAccepted: Int { lock.withLock { accepted.values.reduce(0, +) } }
    /// Responses written, by HTTP status (counted once the write completed, which may be just after the client
    /// read the answer).
    public var responsesByStatus: [Int: Int] { lock.withLock { statusCounts } }
    /// Faults injected, by description.
    public var faultsInjected: [String: Int] { lock.withLock { faults } }
    /// TLS connections accepted.
    public var connectionCount: Int { lock.withLock { connections } }

    /// For each connection that got an answer: the most streams it had open before its first answer. A client
    /// that waits for its first token-authenticated request to succeed shows 1 for every connection.
    public var streamsOpenBeforeFirstAnswer: [Int] { lock.withLock { firstAnswers } }
    private var firstAnswers: [Int] = []

    func noteFirstAnswer(openStreams: Int) { lock.withLock { firstAnswers.append(openStreams) } }

    func countConnection() { lock.withLock { connections += 1 } }

    func countRequest(apnsID: String) { lock.withLock { requests[apnsID, default: 0] += 1 } }

    func countResponse(status: Int) { lock.withLock { statusCounts[status, default: 0] += 1 } }

    func countFault(_ fault: EmulatorFault) { lock.withLock { faults[fault.description, default: 0] += 1 } }

    func withdraw(_ notification: RecordedNotification) {
        lock.withLock {
            if var list = byToken[notification.deviceToken],
                let index = list.lastIndex(where: { $0.apnsID == notification.apnsID })
            {
                list.remove(at: index)
                byToken[notification.deviceToken] = list
            }
            accepted[notification.apnsID, default: 1] -= 1
            if accepted[notification.apnsID] == 0 { accepted[notification.apnsID] = nil }
        }
        guard let directory else { return }
        let file = URL(fileURLWithPath: directory).appendingPathComponent(notification.deviceToken)
            .appendingPathComponent(notification.apnsID + ".json")
        try? FileManager.default.removeItem(at: file)
    }

    func record(_ notification: RecordedNotification) {
        lock.withLock {
            byToken[notification.deviceToken, default: []].append(notification)
            accepted[notification.apnsID, default: 0] += 1
        }
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
