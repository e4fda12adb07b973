/// The RFC 9180 §5.1 key schedule for one mode and one `info`, without a PSK.
///
/// Everything that depends only on the mode and `info` (`psk_id_hash`, `info_hash`, `key_schedule_context`) is
/// computed once at initialization, so a sender that always uses the same topic pays for it once.
package struct HPKEKeySchedule: Sendable {
    /// The HPKE modes this implementation supports (no PSK modes).
    package enum Mode: UInt8, Sendable {
        /// `mode_base`.
        case base = 0x00
        /// `mode_auth`.
        case auth = 0x02
    }

    /// The mode.
    package let mode: Mode
    /// `key_schedule_context = mode || psk_id_hash || info_hash`.
    package let context: [UInt8]

    /// Precomputes the key schedule context for `mode` and `info`.
    ///
    /// - Parameters:
    ///   - mode: The HPKE mode.
    ///   - info: The application info.
    package init(mode: Mode, info: [UInt8]) {
        let suite = HPKESuite.hpke
        let pskIDHash = suite.labeledExtract(salt: [UInt8](), label: "psk_id_hash", ikm: [UInt8]())
        let infoHash = suite.labeledExtract(salt: [UInt8](), label: "info_hash", ikm: info)
        self.mode = mode
        self.context = [mode.rawValue] + pskIDHash.bytes + infoHash.bytes
    }

    /// `secret = LabeledExtract(shared_secret, "secret", psk)` with the empty psk.
    ///
    /// - Parameter sharedSecret: The KEM shared secret.
    /// - Returns: The 32-byte key schedule secret.
    package func secret(sharedSecret: SecretBytes) -> SecretBytes {
        HPKESuite.hpke.labeledExtract(salt: sharedSecret, label: "secret", ikm: [UInt8]())
    }

    /// Runs the key schedule and returns a sender context with sequence number 0.
    ///
    /// - Parameters:
    ///   - sharedSecret: The KEM shared secret.
    ///   - includeExporter: Also derive `exporter_secret` (not needed for sealing).
    /// - Returns: The sender context.
    /// - Throws: ``HPKEError`` if a derivation fails (it cannot for these fixed lengths).
    package func senderContext(sharedSecret: SecretBytes, includeExporter: Bool = false) throws -> HPKESenderContext {
        let suite = HPKESuite.hpke
        // key, base_nonce and exporter_secret are all expanded from `secret`: key the MAC once and copy it.
        var keyed = HMACSHA256(key: secret(sharedSecret: sharedSecret))
        defer { keyed.wipe() }
        let key = try suite.labeledExpand(keyedBy: keyed, label: "key", info: context, length: HPKESuite.keyLength)
        let baseNonce = try suite.labeledExpand(
            keyedBy: keyed, label: "base_nonce", info: context, length: HPKESuite.nonceLength)
        let exporterSecret = includeExporter
            ? try suite.labeledExpand(keyedBy: keyed, label: "exp", info: context, length: HPKESuite.secretLength)
            : nil
        return HPKESenderContext(key: key, baseNonce: baseNonce, exporterSecret: exporterSecret)
    }
}
