/// How a control message reaches iPhones (`Specs/control-v1.md` §2.3): `alert` (default; the extension applies it
/// and shows nothing or a quiet placeholder) or `background` (`apns-push-type: background`, priority 5: the app
/// applies it, nothing is shown, but iOS throttles such pushes and drops them for a force-quit app).
enum Carrier {
    /// Whether a `carrier` value asks for a background push.
    /// - Parameters:
    ///   - value: The value given, if any.
    ///   - field: Where it came from (for the error).
    /// - Throws: ``GatewayAPIError`` `invalidArgument` for anything but `alert` or `background`.
    static func isBackground(_ value: String?, field: String) throws -> Bool {
        switch value {
        case nil, "alert": return false
        case "background": return true
        default: throw GatewayAPIError.invalid("carrier must be \"alert\" or \"background\"", field: field)
        }
    }
}
