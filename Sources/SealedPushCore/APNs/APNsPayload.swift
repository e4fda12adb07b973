/// The APNs JSON body that carries an envelope (spec §6), and its exact 4096-byte budget (spec §6.1).
public enum APNsPayload {
    /// The largest body APNs accepts for an alert push.
    public static let maxBodyBytes = 4096
    /// The top-level member that carries the base64url envelope.
    public static let envelopeKey = "sp"

    /// Everything up to and including `"sp":"`.
    /// - Parameter placeholder: The placeholder.
    /// - Returns: The prefix bytes.
    public static func prefix(placeholder: Placeholder) -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("{\"aps\":{\"alert\":")
        switch placeholder.alert {
        case .text(let title, let body):
            writer.raw("{")
            if let title {
                writer.raw("\"title\":")
                writer.string(title)
                writer.raw(",")
            }
            writer.raw("\"body\":")
            writer.string(body)
            writer.raw("}")
        case .localized(let key, let args):
            writer.raw("{\"loc-key\":")
            writer.string(key)
            if !args.isEmpty {
                writer.raw(",\"loc-args\":")
                writer.value(.array(args.map(JSONValue.string)))
            }
            writer.raw("}")
        }
        if let sound = placeholder.sound {
            writer.raw(",\"sound\":")
            writer.string(sound)
        }
        writer.raw(",\"mutable-content\":1},\"sp\":\"")
        return writer.bytes
    }

    /// The prefix of a **background push** body (`Specs/control-v1.md` §2.3): `{"aps":{"content-available":1},"sp":"`.
    /// No alert and no `mutable-content`: no extension runs and nothing is shown; the app receives it and opens it
    /// with the same receiver. APNs requires `apns-push-type: background` and priority 5 for it.
    public static let backgroundPrefix: [UInt8] = Array(#"{"aps":{"content-available":1},"sp":""#.utf8)

    /// Whether a body is a background push body (starts with ``backgroundPrefix``).
    /// - Parameter body: An APNs body.
    /// - Returns: True for a background push.
    public static func isBackground(_ body: [UInt8]) -> Bool { body.starts(with: backgroundPrefix) }

    /// The closing bytes after the base64url text: `"}`.
    public static let suffix: [UInt8] = Array("\"}".utf8)

    /// The exact body length for a placeholder and a padded plaintext length, computed before sealing.
    /// - Parameters:
    ///   - placeholder: The placeholder.
    ///   - paddedPlaintextLength: The padded plaintext's length (a bucket).
    /// - Returns: `len(prefix) + b64len(82 + 16 + paddedPlaintextLength) + len(suffix)`.
    public static func bodyLength(placeholder: Placeholder, paddedPlaintextLength: Int) -> Int {
        bodyLength(prefixLength: prefix(placeholder: placeholder).count, paddedPlaintextLength: paddedPlaintextLength)
    }

    /// The exact body length from a precomputed prefix length (a sender keeps its placeholder's prefix).
    /// - Parameters:
    ///   - prefixLength: The length of ``prefix(placeholder:)``.
    ///   - paddedPlaintextLength: The padded plaintext's length (a bucket).
    /// - Returns: `prefixLength + b64len(82 + 16 + paddedPlaintextLength) + len(suffix)`.
    public static func bodyLength(prefixLength: Int, paddedPlaintextLength: Int) -> Int {
        let envelopeLength = EnvelopeV1.headerLength + EnvelopeV1.tagLength + paddedPlaintextLength
        return prefixLength + Base64URL.encodedLength(envelopeLength) + suffix.count
    }

    /// Throws unless a body of the given length fits the budget.
    /// - Parameter length: The body's length in bytes.
    /// - Throws: ``SealedPushError`` with `payloadTooLarge` stating the bytes needed and the limit.
    public static func checkBudget(_ length: Int) throws {
        guard length <= maxBodyBytes else {
            throw SealedPushError(
                .payloadTooLarge,
                "the APNs body would be \(length) bytes; the limit is \(maxBodyBytes) (\(length - maxBodyBytes) over): shorten the content or the placeholder")
        }
    }

    /// Emits the exact APNs JSON body.
    /// - Parameters:
    ///   - placeholder: The placeholder.
    ///   - envelope: The envelope bytes.
    /// - Returns: The body bytes.
    public static func encode(placeholder: Placeholder, envelope: [UInt8]) -> [UInt8] {
        encode(prefix: prefix(placeholder: placeholder), envelope: envelope)
    }

    /// Emits the body from a precomputed prefix (a sender reuses its placeholder's prefix for every message).
    /// - Parameters:
    ///   - prefix: ``prefix(placeholder:)`` of the placeholder.
    ///   - envelope: The envelope bytes.
    /// - Returns: The body bytes.
    public static func encode(prefix: [UInt8], envelope: [UInt8]) -> [UInt8] {
        var out = prefix
        out.reserveCapacity(prefix.count + Base64URL.encodedLength(envelope.count) + suffix.count)
        out.append(contentsOf: Base64URL.encode(envelope).utf8)
        out.append(contentsOf: suffix)
        return out
    }

    /// Extracts the envelope bytes from a raw APNs JSON body (spec §8 steps 1–3).
    /// - Parameter bytes: The body as delivered.
    /// - Returns: The decoded envelope bytes (not yet parsed).
    /// - Throws: ``SealedPushError`` with `payloadTooLarge`, `malformedPayload` or `badEncoding`.
    public static func extractEnvelope(fromBody bytes: [UInt8]) throws -> [UInt8] {
        guard bytes.count <= maxBodyBytes else {
            throw SealedPushError(
                .payloadTooLarge, "the APNs body is \(bytes.count) bytes; APNs never delivers more than \(maxBodyBytes)")
        }
        guard case .object(let members) = try JSONParser.parse(bytes, maxDepth: 32, errorCode: .malformedPayload) else {
            throw SealedPushError(.malformedPayload, "the APNs body is not a JSON object")
        }
        guard let value = members[envelopeKey] else {
            throw SealedPushError(.malformedPayload, "the APNs body has no \"\(envelopeKey)\" member carrying an envelope")
        }
        guard case .string(let text) = value else {
            throw SealedPushError(.malformedPayload, "the APNs body's \"\(envelopeKey)\" member is not a string")
        }
        return try Base64URL.decode(text)
    }

    /// Extracts the envelope bytes from a notification's `userInfo` (spec §8 steps 2–4: a body handed over parsed
    /// skips step 1, so an envelope text longer than the longest envelope's encoding is step 4's
    /// `malformedEnvelope`, reported before decoding).
    /// - Parameter userInfo: The dictionary iOS hands the extension.
    /// - Returns: The decoded envelope bytes (not yet parsed).
    /// - Throws: ``SealedPushError`` with `malformedPayload`, `badEncoding` or `malformedEnvelope`.
    public static func extractEnvelope(fromUserInfo userInfo: [AnyHashable: Any]) throws -> [UInt8] {
        guard let value = userInfo[envelopeKey] else {
            throw SealedPushError(.malformedPayload, "userInfo has no \"\(envelopeKey)\" member carrying an envelope")
        }
        guard let text = value as? String else {
            throw SealedPushError(.malformedPayload, "userInfo's \"\(envelopeKey)\" member is not a string")
        }
        let longest = Base64URL.encodedLength(EnvelopeV1.maximumLength)
        guard text.utf8.count <= longest else {
            throw SealedPushError(
                .malformedEnvelope,
                "userInfo's envelope text is \(text.utf8.count) characters; the longest envelope "
                    + "(\(EnvelopeV1.maximumLength) bytes) takes \(longest)")
        }
        return try Base64URL.decode(text)
    }
}
