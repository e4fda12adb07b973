import Foundation

/// An event the gateway's webhook (``UnregisteredWebhook``) posts to the backend, signed: its type goes in the
/// `SealedPush-Event` header, its JSON in the body. Events carry ids and outcomes, never content, sealed bodies,
/// device tokens or keys.
public protocol WebhookEvent: Sendable {
    /// The `SealedPush-Event` header's value (`device.unregistered`, `notification.receipt`).
    var eventType: String { get }
    /// The app the event is about.
    var appID: String { get }
    /// The device the event is about (for the webhook's logs).
    var deviceID: String { get }
    /// The JSON body (UTF-8).
    var jsonBody: [UInt8] { get }
    /// The ids a log line names the event by (`app`, `device`, `notification`…): never content.
    var logMetadata: [String: String] { get }
}

extension WebhookEvent {
    /// The app and the device.
    public var logMetadata: [String: String] { ["app": appID, "device": deviceID] }
}

extension WebhookEvent {
    /// A body's JSON, members sorted, slashes unescaped (encoding strings and integers cannot fail).
    static func json(_ body: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return Array((try? encoder.encode(body)) ?? Data())
    }
}
