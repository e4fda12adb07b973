import Foundation
import SealedPushCore
import SealedPushGateway

/// The contract's `NotificationStatus`; a claimed job is reported `queued`.
struct NotificationStatusModel: Encodable {
    /// The contract's `Receipt`: what the device reported, sealed (`Specs/control-v1.md` §4).
    struct Receipt: Encodable {
        var outcome: String
        var reason: String?
        var attachmentsDelivered: Int
        var attachmentsFailed: Int
        var deviceTime: String
        var receivedAt: String
        var count: Int
    }

    struct Delivery: Encodable {
        var deviceId: String
        var state: String
        var apnsId: String?
        var reason: String?
        var attempts: Int
        var lastTransientReason: String?
        var updatedAt: String
        var receipt: Receipt?
    }

    var id: String
    var createdAt: String
    var expiresAt: String
    var priority: Int
    var collapseId: String?
    var withdrawnAt: String?
    var devices: [Delivery]
    /// The devices the send reached only through their users and left out, as its `202` listed them; absent when
    /// none was.
    var skippedDevices: [SkippedDeviceModel]?

    init(_ status: NotificationStatus) {
        id = status.id.uuidString.lowercased()
        createdAt = DeviceRegistration.formatDate(status.createdAt)
        expiresAt = DeviceRegistration.formatDate(status.expiresAt)
        priority = status.priority
        collapseId = status.collapseID
        withdrawnAt = status.withdrawnAt.map(DeviceRegistration.formatDate)
        devices = status.deliveries.map { delivery in
            Delivery(
                deviceId: delivery.deviceID, state: delivery.state == .claimed ? "queued" : delivery.state.rawValue,
                apnsId: delivery.apnsID, reason: delivery.reason, attempts: delivery.attempts,
                lastTransientReason: delivery.lastTransientReason, updatedAt: DeviceRegistration.formatDate(delivery.updatedAt),
                receipt: delivery.receipt.map { receipt in
                    Receipt(
                        outcome: receipt.outcome, reason: receipt.reason, attachmentsDelivered: receipt.attachmentsDelivered,
                        attachmentsFailed: receipt.attachmentsFailed, deviceTime: DeviceRegistration.formatDate(receipt.deviceTime),
                        receivedAt: DeviceRegistration.formatDate(receipt.receivedAt), count: receipt.count)
                })
        }
        skippedDevices = SkippedDeviceModel.list(status.skippedDevices)
    }
}
