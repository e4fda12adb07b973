/// The version of this SealedPush release: what `sealed-push --version` and `sealed-push-gateway --version` print, what
/// the gateway reports in `sealedpush_gateway_build_info` and its start-up log line, and what its outbound requests
/// name in `User-Agent`.
///
/// A Semantic Versioning 2.0.0 string (`MAJOR.MINOR.PATCH`, optionally `-pre.release`). It versions the code, not the
/// wire formats: those carry versions of their own (envelope v1, key ring v1, blob v1, control v1), and a release that
/// changes none of them interoperates with every other release that reads the same ones.
public enum SealedPushVersion {
    /// This release's version.
    public static let current = "0.9.0"

    /// The `User-Agent` of a request a SealedPush program makes (RFC 9110 §10.1.5: `product/version`).
    /// - Parameter product: The program (`sealed-push-gateway`).
    /// - Returns: `product/version`, for example `sealed-push-gateway/0.9.0`.
    public static func userAgent(_ product: String) -> String { "\(product)/\(current)" }
}
