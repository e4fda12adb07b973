import Foundation
import SealedPushClient

/// A stand-in for the phone's notification center in a JSON file (`sealed-push open --notification-center`): the
/// notifications "on screen" and the badge, so control messages (`Specs/control-v1.md` §2) can be seen acting from
/// the command line. `{"badge": 3, "delivered": [{"request": "…", "id": "…", "thread": "…"}]}`.
struct FileNotificationCenter: DeliveredNotificationCenter {
    let path: String

    private struct Stored: Codable {
        struct Entry: Codable {
            var request: String
            var id: String?
            var thread: String?
        }

        var badge: Int?
        var delivered: [Entry] = []
    }

    private func load() -> Stored {
        guard let data = FileManager.default.contents(atPath: path) else { return Stored() }
        return (try? JSONDecoder().decode(Stored.self, from: data)) ?? Stored()
    }

    private func save(_ stored: Stored) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(stored).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// Shows a notification (replacing one with the same request identifier, as iOS does for a collapse id).
    func add(_ notification: DeliveredNotification) throws {
        var stored = load()
        stored.delivered.removeAll { $0.request == notification.requestIdentifier }
        stored.delivered.append(
            .init(request: notification.requestIdentifier, id: notification.notificationID, thread: notification.threadIdentifier))
        try save(stored)
    }

    /// What the file says is on screen, and the badge.
    var summary: String {
        let stored = load()
        let ids = stored.delivered.map { $0.id ?? $0.request }
        return "\(ids.count) notification(s) shown\(ids.isEmpty ? "" : ": " + ids.joined(separator: ", "))"
            + (stored.badge.map { "; badge \($0)" } ?? "")
    }

    func deliveredNotifications() async -> [DeliveredNotification] {
        load().delivered.map { DeliveredNotification(requestIdentifier: $0.request, notificationID: $0.id, threadIdentifier: $0.thread) }
    }

    func removeDeliveredNotifications(withIdentifiers identifiers: [String]) async {
        var stored = load()
        stored.delivered.removeAll { identifiers.contains($0.request) }
        try? save(stored)
    }

    func setBadgeCount(_ count: Int) async throws {
        var stored = load()
        stored.badge = count
        try save(stored)
    }
}
