import ArgumentParser
import Foundation
import SealedPushAPNs
import SealedPushCore
import SealedPushServer

/// Where `send` gets each device's JSON body. Today: a file (`--payload`). Further sources (e.g. sealing
/// options) are added here: declare their options, and return a builder from ``makePayloadBuilder(topic:)``.
struct SendPayloadOptions: ParsableArguments {
    @Option(name: .long, help: "A file holding the JSON body to send as is (at most 4096 bytes).")
    var payload: String?

    @Option(help: "Seal instead: the server identity's private key file (from `keygen`).")
    var serverKey: String?

    @Option(help: "Seal instead: the device public key (SPK1:…). Each notification is sealed afresh.")
    var devicePublic: String?

    @OptionGroup var seal: SealOptions

    func validate() throws {
        let sealing = serverKey != nil || devicePublic != nil || seal.hasContent
        guard (payload != nil) != sealing else {
            throw ValidationError("give either --payload FILE or --server-key, --device-public and the content")
        }
        if sealing {
            guard serverKey != nil, devicePublic != nil, seal.hasContent else {
                throw ValidationError("sealing needs --server-key, --device-public and --title/--body/--content")
            }
        }
    }

    /// A builder that seals the content afresh for every notification (a new ephemeral key and message id each).
    /// - Parameter topic: The APNs topic the envelope is bound to.
    /// - Returns: A function from device token to body bytes.
    func makeSealingBuilder(topic: String) throws -> (@Sendable (DeviceToken) throws -> [UInt8])? {
        guard let serverKey, let devicePublic else { return nil }
        let sealer = try Sealer(
            identity: ServerIdentity(contentsOfFile: serverKey), topic: topic, placeholder: seal.placeholder)
        let device = try DevicePublicKey(text: devicePublic)
        let content = try seal.notificationContent()
        let ttl = seal.ttl
        _ = try sealer.seal(content, to: device, ttl: ttl)  // fail before connecting if it cannot be sealed
        return { _ in try sealer.seal(content, to: device, ttl: ttl).payload }
    }

    /// A builder for one device's body.
    /// - Returns: A function from device token to body bytes.
    /// - Throws: `SealedPushError` (`io`, or `invalidArgument` for a file over APNs' 4096-byte limit; nothing is
    ///   sent) if the source cannot be read.
    func makePayloadBuilder(topic: String) throws -> @Sendable (DeviceToken) throws -> [UInt8] {
        if let sealing = try makeSealingBuilder(topic: topic) { return sealing }
        guard let payload else { throw ValidationError("give --payload FILE") }
        let bytes = try CLIIO.read(payload, limit: APNsNotification.maximumPayloadBytes, what: "--payload")
        return { _ in bytes }
    }
}
