/// The body of `/livez` (`Liveness` in Specs/gateway-api.yaml): always `{"status":"ok"}`.
struct LivenessModel: Encodable {
    var status: String
}
