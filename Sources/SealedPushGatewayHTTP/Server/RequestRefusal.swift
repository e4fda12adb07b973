/// A request the gateway answers before its router sees it: the contract's error, and whether the answer goes
/// without its body.
///
/// ``RequestHeadCheckHandler`` sends it down the pipeline (`fireErrorCaught`) in place of the head it refused;
/// ``ConnectionGuardHandler`` answers it (as it answers what the HTTP parser refuses) after the responses to the
/// requests before it, then closes the connection.
struct RequestRefusal: Error {
    /// The answer.
    let error: GatewayAPIError
    /// Whether the answer goes without its body (with its `Content-Length`): the refused request is a `HEAD`
    /// (RFC 9110 §9.3.2).
    let withoutBody: Bool
}
