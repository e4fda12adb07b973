import Foundation

/// The contract's `SendAccepted`.
struct SendAcceptedModel: Encodable {
    var id: String
    var devices: Int
    /// The devices of the users named that could not be sealed to and got no job (the first request's, for a
    /// replay); absent when none was left out.
    var skippedDevices: [SkippedDeviceModel]? = nil

    /// The JSON `JSONResponse` would encode (sorted keys), written directly: every accepted send answers with it, and
    /// Foundation's encoder was about 1 % of the gateway's CPU at capacity. `id` is a lowercase UUID (hex digits and
    /// hyphens), so it needs no escaping. An answer that left devices out (rare) goes through the encoder.
    var json: [UInt8] {
        if skippedDevices != nil {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            if let encoded = try? encoder.encode(self) { return Array(encoded) }
        }
        return Array(#"{"devices":\#(devices),"id":"\#(id)"}"#.utf8)
    }
}
