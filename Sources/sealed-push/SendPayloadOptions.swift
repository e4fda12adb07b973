import ArgumentParser
import Foundation
import SealedPushAPNs

/// Where `send` gets each device's JSON body. Today: a file (`--payload`). Further sources (e.g. sealing
/// options) are added here: declare their options, and return a builder from ``makePayloadBuilder()``.
struct SendPayloadOptions: ParsableArguments {
    @Option(name: .long, help: "A file holding the JSON body to send as is (at most 4096 bytes).")
    var payload: String?

    func validate() throws {
        guard payload != nil else { throw ValidationError("give --payload FILE") }
    }

    /// A builder for one device's body.
    /// - Returns: A function from device token to body bytes.
    /// - Throws: `ValidationError` if the source cannot be read.
    func makePayloadBuilder() throws -> @Sendable (DeviceToken) throws -> [UInt8] {
        guard let payload else { throw ValidationError("give --payload FILE") }
        let bytes: [UInt8]
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: payload))
            defer { try? handle.close() }
            // Read one byte past the limit so an oversize file is reported as such.
            bytes = Array(try handle.read(upToCount: APNsNotification.maximumPayloadBytes + 1) ?? Data())
        } catch {
            throw ValidationError("cannot read --payload \(payload): \(error.localizedDescription)")
        }
        guard bytes.count <= APNsNotification.maximumPayloadBytes else {
            throw ValidationError(
                "--payload \(payload) is over APNs' \(APNsNotification.maximumPayloadBytes)-byte limit; nothing sent")
        }
        return { _ in bytes }
    }
}
