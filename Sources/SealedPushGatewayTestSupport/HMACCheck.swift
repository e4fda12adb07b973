import Crypto

/// HMAC-SHA256 built here from its definition (RFC 2104) on a bare SHA-256, to check the gateway's signatures
/// independently of the HMAC implementation it uses.
public enum HMACCheck {
    /// HMAC-SHA256 of `message` under `key`.
    public static func sha256(key: [UInt8], message: [UInt8]) throws -> [UInt8] {
        var block = key.count > 64 ? Array(SHA256.hash(data: key)) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        let inner = Array(SHA256.hash(data: block.map { $0 ^ 0x36 } + message))
        return Array(SHA256.hash(data: block.map { $0 ^ 0x5C } + inner))
    }
}
