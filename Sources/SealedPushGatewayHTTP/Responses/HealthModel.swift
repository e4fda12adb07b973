/// The contract's `Health`.
struct HealthModel: Encodable {
    var status: String
    var database: String
}
