/// The FCM data-only carrier of an envelope (`Specs/fcm-v1.md` §2–§4) and its exact data budget (§3).
public enum FCMPayload {
    /// The data member that carries the base64url envelope (the same name as the APNs body's member).
    public static let envelopeKey = APNsPayload.envelopeKey
    /// The largest ``dataSize(_:)`` FCM accepts for a message to a token.
    public static let maxDataBytes = 4051
    /// What each data member after the first costs on top of its key and value.
    public static let perExtraMemberBytes = 6
    /// The longest envelope text a receiver reads before refusing it as `malformedEnvelope` (§4 step 3a).
    public static let maxEnvelopeTextLength = Base64URL.encodedLength(EnvelopeV1.maximumLength)

    /// The FCM data size of a map: the key and value bytes of every member, plus 6 per member after the first.
    /// - Parameter data: The data members (keys and values as sent).
    /// - Returns: The size that FCM compares with ``maxDataBytes``.
    public static func dataSize(_ data: some Sequence<(key: String, value: String)>) -> Int {
        var total = 0
        var members = 0
        for (key, value) in data {
            total += key.utf8.count + value.utf8.count
            members += 1
        }
        return total + perExtraMemberBytes * max(0, members - 1)
    }

    /// The FCM data size of a map.
    /// - Parameter data: The data members.
    /// - Returns: See ``dataSize(_:)-(Sequence<(key:String,value:String)>)``.
    public static func dataSize(_ data: [String: String]) -> Int {
        dataSize(data.lazy.map { (key: $0.key, value: $0.value) })
    }

    /// The data size of a sealed message before sealing: `sp` plus the envelope text of a padded plaintext, plus
    /// configured extra members.
    /// - Parameters:
    ///   - paddedPlaintextLength: The padded plaintext's length (a bucket).
    ///   - extraDataSize: ``dataSize(_:)`` of the configured extra members (0 for none).
    ///   - extraMembers: How many extra members there are.
    /// - Returns: `2 + b64len(82 + 16 + paddedPlaintextLength)` plus the extra members' size and 6 for each.
    public static func dataSize(paddedPlaintextLength: Int, extraDataSize: Int = 0, extraMembers: Int = 0) -> Int {
        let envelopeLength = EnvelopeV1.headerLength + EnvelopeV1.tagLength + paddedPlaintextLength
        return envelopeKey.utf8.count + Base64URL.encodedLength(envelopeLength) + extraDataSize
            + perExtraMemberBytes * extraMembers
    }

    /// Throws unless a data size fits FCM's budget.
    /// - Parameter size: ``dataSize(_:)`` of the message's data.
    /// - Throws: ``SealedPushError`` with `payloadTooLarge` stating the bytes needed and the limit.
    public static func checkBudget(_ size: Int) throws {
        guard size <= maxDataBytes else {
            throw SealedPushError(
                .payloadTooLarge,
                "the FCM data would be \(size) bytes; the limit is \(maxDataBytes) (\(size - maxDataBytes) over): "
                    + "shorten the content or drop extra data members")
        }
    }

    /// Extracts the envelope bytes from the data map an Android app receives (`Specs/fcm-v1.md` §4 steps 2–3).
    /// - Parameter data: `RemoteMessage.getData()`.
    /// - Returns: The decoded envelope bytes (not yet parsed).
    /// - Throws: ``SealedPushError`` with `malformedPayload`, `malformedEnvelope` or `badEncoding`.
    public static func extractEnvelope(fromData data: [String: String]) throws -> [UInt8] {
        guard let text = data[envelopeKey] else {
            throw SealedPushError(.malformedPayload, "the FCM data has no \"\(envelopeKey)\" member carrying an envelope")
        }
        guard text.utf8.count <= maxEnvelopeTextLength else {
            throw SealedPushError(
                .malformedEnvelope,
                "the FCM envelope text is \(text.utf8.count) characters; the longest envelope "
                    + "(\(EnvelopeV1.maximumLength) bytes) takes \(maxEnvelopeTextLength)")
        }
        return try Base64URL.decode(text)
    }
}
