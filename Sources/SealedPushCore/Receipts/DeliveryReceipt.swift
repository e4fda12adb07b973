/// What a device did with one notification, as it tells the backend (`Specs/control-v1.md` §4): sealed by the
/// device to the server identity it pinned, so only that backend reads it and no one else can forge it.
///
/// The plaintext is this record's canonical JSON, padded to exactly ``paddedLength`` bytes (envelope spec §5's
/// scheme, one bucket), so every receipt has the same length whatever it says.
public struct DeliveryReceipt: Sendable, Hashable {
    /// What the device showed.
    public enum Outcome: Sendable, Hashable {
        /// The decrypted notification.
        case decrypted
        /// An exact copy of one shown moments ago (a sender's resend): shown again or suppressed.
        case duplicate
        /// The fallback placeholder, with the reason code (the step's `FallbackReason` raw value, e.g. `replayed`).
        case fallback(reason: String)
    }

    /// The padded plaintext's length: every receipt is this long before sealing.
    public static let paddedLength = 256
    /// A receipt's longest lifetime: `expiresAt - issuedAt` at most 7 days.
    public static let maxLifetime: UInt64 = 604_800
    /// The HPKE `info` label: `"SealedPush receipt v1" || 0x00 || topic`, never an envelope's.
    public static let infoLabel = Array("SealedPush receipt v1".utf8)
    /// The reference step's fallback reason codes (its `FallbackReason` raw values). A receipt may carry any code
    /// of §4's form (another receiver's own); a backend that counts receipts by reason, as metric labels, counts the
    /// others under one value, so devices cannot add label values without bound.
    public static let referenceReasonCodes: Set<String> = [
        "keysUnavailable", "unknownKey", "unknownSender", "authenticationFailure", "expired", "notYetValid",
        "replayed", "malformed", "timedOut", "controlNotApplied",
    ]
    /// The longest receipt envelope: header, one 256-byte bucket and the tag.
    public static let maximumEnvelopeLength = EnvelopeV1.headerLength + paddedLength + 16

    /// The `messageId` of the envelope this receipt is about (16 bytes).
    public var messageID: [UInt8]
    /// What the device showed.
    public var outcome: Outcome
    /// Attachment files delivered.
    public var attachmentsDelivered: Int
    /// Attachments that did not arrive.
    public var attachmentsFailed: Int
    /// When the device decided, UNIX seconds (device clock).
    public var deviceTime: UInt64

    /// Creates a receipt.
    ///
    /// - Parameters:
    ///   - messageID: The notification envelope's `messageId`, 16 bytes.
    ///   - outcome: What the device showed.
    ///   - attachmentsDelivered: Attachment files delivered (0 ... 8).
    ///   - attachmentsFailed: Attachments that did not arrive (0 ... 8).
    ///   - deviceTime: The device's time, UNIX seconds.
    public init(messageID: [UInt8], outcome: Outcome, attachmentsDelivered: Int = 0, attachmentsFailed: Int = 0,
                deviceTime: UInt64) {
        self.messageID = messageID
        self.outcome = outcome
        self.attachmentsDelivered = attachmentsDelivered
        self.attachmentsFailed = attachmentsFailed
        self.deviceTime = deviceTime
    }

    /// The HPKE `info` for a topic.
    ///
    /// - Parameter topic: The app's topic (bundle id or application id).
    /// - Returns: `"SealedPush receipt v1" || 0x00 || topic`.
    /// - Throws: ``SealedPushError`` with `invalidTopic`.
    public static func hpkeInfo(topic: String) throws -> [UInt8] {
        try EnvelopeV1.validateTopic(topic)
        return infoLabel + [0] + Array(topic.utf8)
    }

    /// The padded plaintext: canonical JSON, length prefix, zeros to 256 bytes.
    ///
    /// - Returns: 256 bytes.
    /// - Throws: ``SealedPushError`` with `invalidArgument` for a field out of range.
    public func paddedPlaintext() throws -> [UInt8] {
        try validate()
        var writer = JSONWriter()
        writer.value(.object(jsonObject))
        let json = writer.bytes
        var padded = [UInt8(json.count >> 8), UInt8(json.count & 0xff)] + json
        padded += [UInt8](repeating: 0, count: Self.paddedLength - padded.count)
        return padded
    }

    /// The record's members (`Specs/control-v1.md` §4), which a canonical writer turns into the plaintext.
    public var jsonObject: JSONObject {
        var members = JSONObject()
        members["message-id"] = .string(Hex.encode(messageID))
        switch outcome {
        case .decrypted: members["outcome"] = .string("decrypted")
        case .duplicate: members["outcome"] = .string("duplicate")
        case .fallback(let reason):
            members["outcome"] = .string("fallback")
            members["reason"] = .string(reason)
        }
        members["attachments"] = .object([
            "delivered": .number(Double(attachmentsDelivered)), "failed": .number(Double(attachmentsFailed)),
        ])
        members["device-time"] = .number(Double(deviceTime))
        return members
    }

    /// Reads a padded plaintext strictly: exactly 256 bytes, zero padding, the members of §4 and no others.
    ///
    /// - Parameter padded: The decrypted plaintext.
    /// - Throws: ``SealedPushError`` with `malformedContent` naming what is wrong.
    public init(paddedPlaintext padded: [UInt8]) throws {
        guard padded.count == Self.paddedLength else {
            throw Self.malformed("the padded plaintext is \(padded.count) bytes, not \(Self.paddedLength)")
        }
        let json = try Padding.unpad(padded)
        guard case .object(let members) = try JSONParser.parse(json, maxDepth: 2, errorCode: .malformedContent) else {
            throw Self.malformed("it is not a JSON object")
        }
        let known: Set<String> = ["message-id", "outcome", "reason", "attachments", "device-time"]
        guard members.allSatisfy({ known.contains($0.key) }) else { throw Self.malformed("it has an unknown member") }
        // Lowercase only (what a writer writes); Hex.decode takes either case.
        guard case .string(let hex)? = members["message-id"], hex.utf8.count == 32,
              hex.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
              let id = try? Hex.decode(hex)
        else {
            throw Self.malformed("\"message-id\" must be 32 lowercase hex digits")
        }
        messageID = id
        let reason = members["reason"]
        switch members["outcome"] {
        case .string("decrypted")?: outcome = .decrypted
        case .string("duplicate")?: outcome = .duplicate
        case .string("fallback")?:
            guard case .string(let text)? = reason else { throw Self.malformed("a fallback needs a \"reason\" string") }
            guard Self.isReasonCode(text) else {
                throw Self.malformed("\"reason\" must be 1 to 32 characters U+0021 ... U+007E (printable ASCII, no space)")
            }
            outcome = .fallback(reason: text)
        default: throw Self.malformed("\"outcome\" must be decrypted, duplicate or fallback")
        }
        if case .fallback = outcome {} else if reason != nil {
            throw Self.malformed("only a fallback carries a \"reason\"")
        }
        guard case .object(let attachments)? = members["attachments"], attachments.count == 2,
              case .number(let delivered)? = attachments["delivered"], case .number(let failed)? = attachments["failed"],
              Self.isCount(delivered), Self.isCount(failed)
        else { throw Self.malformed("\"attachments\" must be {\"delivered\": 0...8, \"failed\": 0...8}") }
        attachmentsDelivered = Int(delivered)
        attachmentsFailed = Int(failed)
        guard case .number(let time)? = members["device-time"], time >= 0, time == time.rounded(),
              time < 9_007_199_254_740_992
        else { throw Self.malformed("\"device-time\" must be an integer 0 ... 2^53 − 1") }
        deviceTime = UInt64(time)
    }

    private func validate() throws {
        guard messageID.count == 16 else {
            throw SealedPushError(.invalidArgument, "a receipt's message id is 16 bytes, got \(messageID.count)")
        }
        guard Self.isCount(Double(attachmentsDelivered)), Self.isCount(Double(attachmentsFailed)) else {
            throw SealedPushError(.invalidArgument, "attachment counts are 0 ... 8")
        }
        guard deviceTime < 9_007_199_254_740_992 else {
            throw SealedPushError(.invalidArgument, "the device time \(deviceTime) is past 2^53 − 1")
        }
        if case .fallback(let reason) = outcome {
            guard Self.isReasonCode(reason) else {
                throw SealedPushError(
                    .invalidArgument,
                    "a fallback reason is 1 to 32 characters U+0021 ... U+007E (printable ASCII, no space), got "
                        + "\(reason.utf8.count) bytes")
            }
        }
    }

    /// §4: a fallback reason code is 1 to 32 characters U+0021 ... U+007E — what a writer writes and a reader takes.
    private static func isReasonCode(_ reason: String) -> Bool {
        (1...32).contains(reason.utf8.count) && reason.utf8.allSatisfy { $0 >= 0x21 && $0 < 0x7f }
    }

    private static func isCount(_ value: Double) -> Bool { value >= 0 && value <= 8 && value == value.rounded() }

    private static func malformed(_ detail: String) -> SealedPushError {
        SealedPushError(.malformedContent, "receipt: \(detail)")
    }
}
