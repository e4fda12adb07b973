#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a worker ends (or postpones) a claimed job.
public enum JobOutcome: Sendable, Hashable {
    /// APNs accepted it with this `apns-id`.
    case sent(apnsID: String)
    /// APNs refused it for good, or retries ran out (`reason`: APNs's reason or the gateway's).
    case failed(reason: String)
    /// Try again from `notBefore` (429, 5xx, a transport failure); the lease is released.
    case retry(reason: String, notBefore: Date)
    /// Its ttl passed before APNs took it.
    case expired
    /// APNs said the token is gone (`Unregistered`, `BadDeviceToken`, `DeviceTokenNotForTopic`): the job ends
    /// `unregistered`, and the device is marked unregistered unless its token changed since the claim.
    case unregistered(reason: String)
}
