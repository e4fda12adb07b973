import SealedPushCore

/// A device's X25519 public key (the HPKE recipient key `pkR`) with its key id.
public struct DevicePublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The 32 raw bytes (RFC 7748 encoding).
    public let rawRepresentation: [UInt8]
    /// The key id (spec §2.2), computed from the key.
    public let keyID: KeyID

    /// Creates a device key from its 32 raw bytes.
    ///
    /// - Parameter rawRepresentation: The 32-byte public key.
    /// - Throws: `SealedPushError` with code `invalidKey` if it is not 32 bytes or not a canonical u-coordinate
    ///   (bit 255 set, or `u >= 2^255 − 19`; spec §7).
    public init(rawRepresentation: [UInt8]) throws {
        try KeyText.checkCanonicalPublicKey(rawRepresentation)
        self.keyID = try KeyID(derivingFrom: rawRepresentation)
        self.rawRepresentation = rawRepresentation
    }

    /// Parses the text form `SPK1:` + 43 base64url characters (spec §7).
    ///
    /// - Parameter text: The public key text.
    /// - Throws: `SealedPushError` with code `invalidKey` for any other text.
    public init(text: String) throws {
        try self.init(rawRepresentation: KeyText.decodePublicKey(text))
    }

    /// The text form `SPK1:…` (spec §7).
    public var text: String { KeyText.encodePublicKey(rawRepresentation) }

    /// The text form and key id; public keys are not secret.
    public var description: String { "DevicePublicKey(\(keyID.hex), \(text))" }

    public static func == (lhs: DevicePublicKey, rhs: DevicePublicKey) -> Bool {
        lhs.rawRepresentation == rhs.rawRepresentation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(rawRepresentation)
    }
}
