/// The contract's `Withdrawn`: what `DELETE …/notifications/{id}` did.
struct WithdrawnModel: Encodable {
    /// The notification withdrawn.
    var id: String
    /// Jobs this call ended `withdrawn` (0 on a repeat).
    var withdrawnJobs: Int
    /// Devices that may show it (sent, or in a worker's hands when withdrawn): each gets a sealed `remove`.
    var reachedDevices: Int
    /// The notification carrying the `remove` (its status at `…/notifications/{removalId}`); absent when no device
    /// was reached.
    var removalId: String?
}
