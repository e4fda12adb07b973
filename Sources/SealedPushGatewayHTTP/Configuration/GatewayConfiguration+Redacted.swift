import Foundation

extension GatewayConfiguration: CustomStringConvertible {
    /// The configuration for a log line, without secrets: the database URL with its password (in the user info or a
    /// `password` query parameter) replaced by `***`. Paths of key and secret files are shown (never what they hold);
    /// the webhook and proxy URLs are not shown (a webhook URL may carry a token).
    public var description: String {
        var parts = [
            "listen: \(listen)", "database: \(Self.redactedDatabase(database))", "maxBodyBytes: \(maxBodyBytes)",
            "logLevel: \(logLevel)", "logFormat: \(logFormat)", "allowPlainHTTP: \(allowPlainHTTP)",
            "delivery: \(delivery.enabled ? "on" : "off")",
        ]
        if let nodeID = delivery.nodeID { parts.append("nodeId: \(nodeID)") }
        if let overflow { parts.append("blobDirectory: \(overflow.blobDirectory)") }
        if let tls { parts.append("tls: \(tls.certificateFile), \(tls.keyFile)") }
        if let metricsListen { parts.append("metricsListen: \(metricsListen)") }
        return "GatewayConfiguration(\(parts.joined(separator: ", ")))"
    }

    /// The setting as a log may show it: a `postgres://user:password@host/db` URL as `postgres://user:***@host/db`
    /// (a `password=` query parameter too); `sqlite:PATH` as it is.
    /// - Parameter database: The `database` setting.
    /// - Returns: The setting without its password.
    public static func redactedDatabase(_ database: String) -> String {
        guard let schemeEnd = database.range(of: "://") else { return database }
        let afterScheme = database[schemeEnd.upperBound...]
        let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        var redacted = String(database[..<schemeEnd.upperBound])
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                redacted += userInfo[..<colon] + ":***"
            } else {
                redacted += userInfo
            }
            redacted += authority[at...]
        } else {
            redacted += authority
        }
        var rest = String(afterScheme[authorityEnd...])
        if let question = rest.firstIndex(of: "?") {
            let fragmentStart = rest[question...].firstIndex(of: "#") ?? rest.endIndex
            let query = rest[rest.index(after: question)..<fragmentStart].split(separator: "&", omittingEmptySubsequences: false)
                .map { pair -> String in
                    let name = pair.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
                    return name.lowercased().contains("password") ? name + "=***" : String(pair)
                }
                .joined(separator: "&")
            rest = String(rest[..<question]) + "?" + query + String(rest[fragmentStart...])
        }
        return redacted + rest
    }
}
