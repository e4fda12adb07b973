/// How urgently a notification should interrupt (UNNotificationInterruptionLevel).
public enum InterruptionLevel: String, Sendable, Hashable, Codable, CaseIterable {
    case passive
    case active
    case timeSensitive = "time-sensitive"
    case critical
}
