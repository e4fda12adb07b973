import Foundation
import SealedPushClient

/// Fresh device key rings.
enum SealedPushClientRing {
    static func fresh() -> DeviceKeyRing { DeviceKeyRing.generate(now: UInt64(Date().timeIntervalSince1970)) }
}
