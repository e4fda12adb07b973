import SealedPushCore

/// A notification as the service extension receives it, reduced to what the step needs: the envelope carried in its
/// APNs JSON body or `userInfo`. Payload checks (spec §8 steps 1–3) run when the request is created, so the request
/// is `Sendable` and holds no `Any`.
public struct NotificationRequest: Sendable {
    let envelope: Result<[UInt8], SealedPushError>
    /// The system's request identifier (`UNNotificationRequest.identifier`), which an update never removes.
    public let identifier: String?

    /// Creates a request from the raw APNs JSON body.
    ///
    /// - Parameters:
    ///   - body: The APNs JSON body bytes.
    ///   - identifier: The system's request identifier, if known.
    public init(body: [UInt8], identifier: String? = nil) {
        envelope = Self.capture { try APNsPayload.extractEnvelope(fromBody: body) }
        self.identifier = identifier
    }

    /// Creates a request from a notification's `userInfo` (`request.content.userInfo` on iOS).
    ///
    /// - Parameters:
    ///   - userInfo: The notification's `userInfo`.
    ///   - identifier: The system's request identifier (`request.identifier`).
    public init(userInfo: [AnyHashable: Any], identifier: String? = nil) {
        envelope = Self.capture { try APNsPayload.extractEnvelope(fromUserInfo: userInfo) }
        self.identifier = identifier
    }

    /// The envelope a request made from this body carries (the checks of ``init(body:identifier:)``).
    /// - Parameter body: The APNs JSON body (or FCM data) bytes.
    /// - Returns: The envelope bytes.
    /// - Throws: `SealedPushError` as opening would.
    public static func envelope(ofBody body: [UInt8]) throws -> [UInt8] {
        try NotificationRequest(body: body).envelope.get()
    }

    private static func capture(_ body: () throws -> [UInt8]) -> Result<[UInt8], SealedPushError> {
        do {
            return .success(try body())
        } catch let error as SealedPushError {
            return .failure(error)
        } catch {
            return .failure(SealedPushError(.malformedPayload, "the notification payload could not be read"))
        }
    }
}
