/// How one send ended after its retries.
public struct FCMSendResult: Sendable, Hashable {
    /// The message name FCM gave (`projects/P/messages/ID`), or the failure.
    public let outcome: Result<String, FCMFailure>
    /// Attempts made (0 when refused before sending).
    public let attempts: Int

    /// Creates a result (for callers that refuse a message before sending it, with `attempts` 0).
    /// - Parameters:
    ///   - outcome: The message name FCM gave, or the failure.
    ///   - attempts: Requests made.
    public init(outcome: Result<String, FCMFailure>, attempts: Int) {
        self.outcome = outcome
        self.attempts = attempts
    }

    /// Whether FCM accepted the message.
    public var isSuccess: Bool { if case .success = outcome { true } else { false } }
    /// The failure, if any.
    public var failure: FCMFailure? { if case .failure(let failure) = outcome { failure } else { nil } }
}
