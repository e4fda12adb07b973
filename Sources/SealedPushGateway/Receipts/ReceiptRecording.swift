#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What ``GatewayStore/recordReceipt(_:)`` did.
public enum ReceiptRecording: Sendable, Hashable {
    /// Recorded against the job of this notification and device. `first` is false when the job already had a
    /// receipt (the first one stays on the job; this one is counted).
    case recorded(notificationID: UUID, deviceID: String, first: Bool)
    /// This receipt id was recorded before (until its expiry): nothing changed.
    case replayed
    /// The job has taken ``ReceivedReceipt/maxPerJob`` receipts already: nothing changed, and the receipt's id is not
    /// kept (checked before the replay: a receipt about a full job is this, whether or not its id was seen).
    case limitReached
    /// No job of the app sent that message id to that device key: nothing changed.
    case unknownMessage
}
