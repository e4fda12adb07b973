/// The contract's `SendAccepted`.
struct SendAcceptedModel: Encodable {
    var id: String
    var devices: Int

    /// The JSON `JSONResponse` would encode (sorted keys), written directly: every accepted send answers with it, and
    /// Foundation's encoder was about 1 % of the gateway's CPU at capacity. `id` is a lowercase UUID (hex digits and
    /// hyphens), so it needs no escaping.
    var json: [UInt8] {
        Array(#"{"devices":\#(devices),"id":"\#(id)"}"#.utf8)
    }
}
