import SealedPushCore

extension ServerIdentity {
    /// The longest file accepted as a private key file (the format is 50 bytes).
    static let maxKeyFileLength = 256

    /// Loads an identity from a private key file (`SPSK1:` + 43 base64url characters + optional `\n`, spec §7).
    ///
    /// - Parameter path: The file path.
    /// - Throws: `SealedPushError` with code `io` if the file cannot be read, or with the code Core's
    ///   `KeyText.decodePrivateKeyFile` reports (`invalidKey`) if the contents are not a key file; the message
    ///   names the path, never the contents.
    public init(contentsOfFile path: String) throws {
        var contents = try KeyFile.read(path: path, limit: Self.maxKeyFileLength)
        defer { Sodium.wipe(&contents) }
        var raw: [UInt8]
        do {
            raw = try KeyText.decodePrivateKeyFile(contents)
        } catch let error as SealedPushError {
            throw SealedPushError(error.code, "\(path) is not a SealedPush private key file: \(error.message)")
        }
        defer { Sodium.wipe(&raw) }
        try self.init(privateKey: raw)
    }

    /// Writes the private key file (spec §7) atomically with mode 0600: a temporary file in the same directory,
    /// `fsync`, then rename (or link) into place; no partial file is ever visible and no temporary file is left.
    ///
    /// - Parameters:
    ///   - path: The target path.
    ///   - replacingExisting: Replace an existing file; when `false` (the default) an existing file is an error.
    /// - Throws: `SealedPushError` with code `io`, naming the path and the system error.
    public func write(toFile path: String, replacingExisting: Bool = false) throws {
        var raw = privateKey.bytes
        defer { Sodium.wipe(&raw) }
        var contents = KeyText.encodePrivateKeyFile(raw)
        defer { Sodium.wipe(&contents) }
        try KeyFile.writeAtomically(contents, toPath: path, replacingExisting: replacingExisting)
    }
}
