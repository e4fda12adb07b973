import Foundation
import SealedPushCore

/// Refuses keys of `gateway.json` the gateway does not know, at any level, naming the key and the nearest known one.
///
/// Without it a misspelled setting (`maxBodyByte`, `delivery.leaseSecond`, `overflow.fetchAllowedHost`) would
/// leave its setting at the default without a word — for the attachment allow-list, open to every host.
enum ConfigurationKeyCheck {
    /// The known keys of each object of the file, by its path (`""` for the top level).
    static let sections: [String: [String]] = [
        "": GatewayConfiguration.knownKeys,
        "overflow": GatewayConfiguration.Overflow.knownKeys,
        "delivery": GatewayDeliverySettings.knownKeys,
        "tls": GatewayTLSSettings.knownKeys,
        "delivery.webhook": GatewayDeliverySettings.knownWebhookKeys,
        "rateLimits": RateLimits.knownKeys,
        "rateLimits.apps.*": RateLimits.Limit.knownKeys,
    ]

    /// Objects whose keys are names the operator chooses (app ids); their members are checked as `PATH.*`.
    static let namedSections: Set<String> = ["rateLimits.apps"]

    /// Checks every object of the file's JSON (a root that is not an object is left to the decoder's message).
    /// - Parameters:
    ///   - root: The file, parsed.
    ///   - file: The file's path, for the message.
    /// - Throws: ``GatewayConfigurationError`` naming the first unknown key (sorted), its path and the nearest
    ///   known key.
    static func check(_ root: JSONValue, file: String) throws {
        guard case .object(let object) = root else { return }
        try check(object, path: "", file: file)
    }

    private static func check(_ object: JSONObject, path: String, file: String) throws {
        if namedSections.contains(path) {
            for (name, value) in object {
                if case .object(let child) = value {
                    try check(child, path: path + ".*", file: file, shown: path + "." + name)
                }
            }
            return
        }
        try check(object, path: path, file: file, shown: path)
    }

    private static func check(_ object: JSONObject, path: String, file: String, shown: String) throws {
        guard let known = sections[path] else { return }
        for key in object.map(\.key).sorted() {
            let full = path.isEmpty ? key : path + "." + key
            guard known.contains(key) else {
                let nearest = NearestName.nearest(to: key, among: known) ?? ""
                let prefix = shown.isEmpty ? "" : shown + "."
                let full = shown.isEmpty ? key : shown + "." + key
                throw GatewayConfigurationError(
                    "\(file): unknown setting \"\(full)\"; did you mean \"\(prefix)\(nearest)\"? "
                        + "(known here: \(known.joined(separator: ", ")))")
            }
            if case .object(let child)? = object[key] { try check(child, path: full, file: file) }
        }
    }
}
