/// The contract's `SendAccepted`.
struct SendAcceptedModel: Encodable {
    var id: String
    var devices: Int
}
