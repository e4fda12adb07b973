import SealedPushCore

/// A notification as the service extension receives it, reduced to what the step needs: the envelope carried in its
/// APNs JSON body or `userInfo`. Payload checks (spec §8 steps 1–3) run when the request is created, so the request
/// is `Sendable` and holds no `Any`.
public struct NotificationRequest: Sendable {
    let envelope: Result<[UInt8], SealedPushError>

    /// Creates a request from the raw APNs JSON body.
    ///
    /// - Parameter body: The APNs JSON body bytes.
    public init(body: [UInt8]) {
        envelope = Self.capture { try APNsPayload.extractEnvelope(fromBody: body) }
    }

    /// Creates a request from a notification's `userInfo` (`request.content.userInfo` on iOS).
    ///
    /// - Parameter userInfo: The notification's `userInfo`.
    public init(userInfo: [AnyHashable: Any]) {
        envelope = Self.capture { try APNsPayload.extractEnvelope(fromUserInfo: userInfo) }
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
