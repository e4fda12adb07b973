/// RFC 9180 §5.1.1 / §5.1.3 sender setup for the SealedPush suite, with an explicit ephemeral key.
package enum HPKESender {
    /// `SetupBaseS(pkR, info)` with the ephemeral key `skE`.
    ///
    /// - Parameters:
    ///   - recipientPublicKey: `pkR`.
    ///   - schedule: The key schedule for mode_base and the `info`.
    ///   - ephemeralPrivateKey: `skE`.
    ///   - includeExporter: Also derive the exporter secret.
    /// - Returns: `enc`, the KEM shared secret and the sender context.
    /// - Throws: ``HPKEError``.
    package static func setupBase(
        recipientPublicKey: [UInt8], schedule: HPKEKeySchedule, ephemeralPrivateKey: some RawBytes,
        includeExporter: Bool = false
    ) throws -> (encapsulation: DHKEMX25519.Encapsulation, context: HPKESenderContext) {
        let encapsulation = try DHKEMX25519.encap(
            recipientPublicKey: recipientPublicKey, ephemeralPrivateKey: ephemeralPrivateKey)
        let context = try schedule.senderContext(
            sharedSecret: encapsulation.sharedSecret, includeExporter: includeExporter)
        return (encapsulation, context)
    }

    /// `SetupAuthS(pkR, info, skS)` with the ephemeral key `skE`.
    ///
    /// - Parameters:
    ///   - recipientPublicKey: `pkR`.
    ///   - senderPrivateKey: `skS`.
    ///   - schedule: The key schedule for mode_auth and the `info`.
    ///   - ephemeralPrivateKey: `skE`.
    ///   - includeExporter: Also derive the exporter secret.
    /// - Returns: `enc`, the KEM shared secret and the sender context.
    /// - Throws: ``HPKEError``.
    package static func setupAuth(
        recipientPublicKey: [UInt8], senderPrivateKey: some RawBytes, schedule: HPKEKeySchedule,
        ephemeralPrivateKey: some RawBytes, includeExporter: Bool = false
    ) throws -> (encapsulation: DHKEMX25519.Encapsulation, context: HPKESenderContext) {
        let encapsulation = try DHKEMX25519.authEncap(
            recipientPublicKey: recipientPublicKey, senderPrivateKey: senderPrivateKey,
            ephemeralPrivateKey: ephemeralPrivateKey)
        let context = try schedule.senderContext(
            sharedSecret: encapsulation.sharedSecret, includeExporter: includeExporter)
        return (encapsulation, context)
    }
}
