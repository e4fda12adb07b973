/// How one send ended after its retries.
public struct FCMSendResult: Sendable, Hashable {
    /// The message name FCM gave (`projects/P/messages/ID`), or the failure.
    public let outcome: Result<String, FCMFailure>
    /// Attempts made (0 when refused before sending).
    public let attempts: Int
    /// The reason of every attempt that failed in a way worth another attempt (429, 500, 503, a lost connection, a
    /// timeout, a 401 answered by refreshing the access token), in order; the last one too when the retries ran out.
    /// A success after two faults has two; a failure that is not retryable adds none.
    public let transientFailures: [FCMFailure.Reason]

    /// Creates a result (for callers that refuse a message before sending it, with `attempts` 0).
    /// - Parameters:
    ///   - outcome: The message name FCM gave, or the failure.
    ///   - attempts: Requests made.
    ///   - transientFailures: The reasons of the attempts that failed transiently, in order.
    public init(outcome: Result<String, FCMFailure>, attempts: Int, transientFailures: [FCMFailure.Reason] = []) {
        self.outcome = outcome
        self.attempts = attempts
        self.transientFailures = transientFailures
    }

    /// Whether FCM accepted the message.
    public var isSuccess: Bool { if case .success = outcome { true } else { false } }
    /// The failure, if any.
    public var failure: FCMFailure? { if case .failure(let failure) = outcome { failure } else { nil } }
}
