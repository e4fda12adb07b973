import Foundation
import SealedPushGateway

/// What the receipt endpoint needs to open a device's receipts — its app and the device's public key, by key id —
/// kept for a short time, so a device posting receipts one after another costs one store call each (the record),
/// not three. Bounded: past ``capacity`` entries the oldest half is dropped.
///
/// A device removed or re-keyed within ``lifetime`` may still have its receipts opened meanwhile; they are recorded
/// only against jobs sealed to that very key, so nothing is recorded that the device did not receive.
final class ReceiptSenders: @unchecked Sendable {
    struct Sender: Sendable {
        var app: GatewayApp
        var device: StoredDevice
    }

    static let lifetime: Duration = .seconds(30)
    static let capacity = 50_000

    private struct Entry {
        var sender: Sender
        var expires: ContinuousClock.Instant
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]

    /// The cached sender of this app and key id, if still fresh.
    func sender(appID: String, keyID: String) -> Sender? {
        let now = ContinuousClock.now
        return lock.withLock {
            guard let entry = entries[appID + "/" + keyID], entry.expires > now else { return nil }
            return entry.sender
        }
    }

    /// Keeps a sender for ``lifetime``.
    func keep(_ sender: Sender, appID: String, keyID: String) {
        let now = ContinuousClock.now
        lock.withLock {
            if entries.count >= Self.capacity {
                let oldest = entries.sorted { $0.value.expires < $1.value.expires }.prefix(Self.capacity / 2)
                for (key, _) in oldest { entries[key] = nil }
            }
            entries[appID + "/" + keyID] = Entry(sender: sender, expires: now.advanced(by: Self.lifetime))
        }
    }
}
