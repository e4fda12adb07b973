import Foundation

/// What the FCM emulator saw, in bounded memory however long it runs: the newest accepted messages (at most
/// ``FCMEmulatorConfiguration/recordedMessagesLimit``), acceptance counts for the most recent envelopes (at most
/// ``FCMEmulatorConfiguration/trackedEnvelopes``), and counters.
public final class FCMEmulatorRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private let messageLimit: Int
    private let envelopeLimit: Int
    private var messages: [RecordedFCMMessage] = []
    private var messageStart = 0
    private var envelopeCounts: [String: Int] = [:]
    private var envelopeOrder: [String] = []
    private var envelopeStart = 0
    private var requests = 0
    private var accepted = 0
    private var duplicates = 0
    private var withNotification = 0
    private var statuses: [Int: Int] = [:]
    private var faults: [String: Int] = [:]
    private var tokensIssued = 0
    private var tokenRequests = 0
    private var connections = 0
    private let recordDirectory: String?
    private var written = 0

    init(configuration: FCMEmulatorConfiguration) {
        messageLimit = max(0, configuration.recordedMessagesLimit)
        envelopeLimit = max(0, configuration.trackedEnvelopes)
        recordDirectory = configuration.recordDirectory
    }

    /// Writes an accepted message's data map to the record directory (see
    /// ``FCMEmulatorConfiguration/recordDirectory``); a failure to write is ignored (the counters still count).
    private func write(_ message: RecordedFCMMessage, number: Int) {
        guard let recordDirectory else { return }
        let token = message.token ?? "no-token"
        let folder = String(token.prefix(24).map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
        let directory = URL(fileURLWithPath: recordDirectory).appendingPathComponent(folder)
        guard let json = try? JSONSerialization.data(withJSONObject: message.data, options: [.sortedKeys]) else { return }
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("\(number).json").path
        _ = FileManager.default.createFile(atPath: file, contents: json, attributes: [.posixPermissions: 0o600])
    }

    /// The held messages, oldest first.
    public var allMessages: [RecordedFCMMessage] {
        lock.withLock { Array(messages[messageStart...]) }
    }

    /// The held messages to one registration token.
    /// - Parameter token: The registration token.
    /// - Returns: Those messages, oldest first.
    public func messages(for token: String) -> [RecordedFCMMessage] { allMessages.filter { $0.token == token } }

    /// How many times a message with this `sp` value was accepted (among the tracked envelopes).
    /// - Parameter envelopeText: The `sp` data value.
    /// - Returns: The count.
    public func acceptedCount(envelopeText: String) -> Int { lock.withLock { envelopeCounts[envelopeText] ?? 0 } }

    /// Send requests received (answered or not).
    public var totalRequests: Int { lock.withLock { requests } }
    /// Messages accepted (200, not validate-only).
    public var totalAccepted: Int { lock.withLock { accepted } }
    /// Acceptances of an `sp` value accepted before.
    public var duplicateAcceptances: Int { lock.withLock { duplicates } }
    /// Accepted messages that had a `notification` member.
    public var messagesWithNotification: Int { lock.withLock { withNotification } }
    /// Send answers by HTTP status.
    public var responsesByStatus: [Int: Int] { lock.withLock { statuses } }
    /// Faults injected, by description.
    public var faultsInjected: [String: Int] { lock.withLock { faults } }
    /// Access tokens issued.
    public var accessTokensIssued: Int { lock.withLock { tokensIssued } }
    /// Token endpoint requests (granted or not).
    public var tokenRequestCount: Int { lock.withLock { tokenRequests } }
    /// TCP connections accepted.
    public var connectionsAccepted: Int { lock.withLock { connections } }

    func countRequest() { lock.withLock { requests += 1 } }
    func countConnection() { lock.withLock { connections += 1 } }
    func countTokenRequest(granted: Bool) {
        lock.withLock {
            tokenRequests += 1
            if granted { tokensIssued += 1 }
        }
    }
    func countStatus(_ status: Int) { lock.withLock { statuses[status, default: 0] += 1 } }
    func countFault(_ description: String) { lock.withLock { faults[description, default: 0] += 1 } }

    func record(_ message: RecordedFCMMessage) {
        let number: Int? = recordDirectory == nil ? nil : lock.withLock {
            written += 1
            return written
        }
        if let number { write(message, number: number) }
        lock.withLock {
            accepted += 1
            if message.hasNotification { withNotification += 1 }
            if let index = message.dataKeys.firstIndex(of: "sp"), envelopeLimit > 0 {
                let text = message.dataValues[index]
                if let count = envelopeCounts[text] {
                    envelopeCounts[text] = count + 1
                    duplicates += 1
                } else {
                    envelopeCounts[text] = 1
                    envelopeOrder.append(text)
                    if envelopeOrder.count - envelopeStart > envelopeLimit {
                        envelopeCounts[envelopeOrder[envelopeStart]] = nil
                        envelopeStart += 1
                        if envelopeStart > 4096, envelopeStart * 2 > envelopeOrder.count {
                            envelopeOrder.removeFirst(envelopeStart)
                            envelopeStart = 0
                        }
                    }
                }
            }
            guard messageLimit > 0 else { return }
            messages.append(message)
            if messages.count - messageStart > messageLimit {
                messageStart += 1
                if messageStart > 1024, messageStart * 2 > messages.count {
                    messages.removeFirst(messageStart)
                    messageStart = 0
                }
            }
        }
    }
}
