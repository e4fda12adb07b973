/// What a replay guard decided about an envelope it let through (`Specs/keyring-v1.md` §5.5).
public enum ReplayVerdict: Sendable, Hashable {
    /// The message id was new and is now recorded: the envelope's first opening.
    case first
    /// An exact copy (the same envelope bytes) of an envelope this guard accepted less than its duplicate window
    /// ago — a sender's resend after a crash or an ambiguous failure. The content is the one already shown: show it
    /// again or suppress it, never the fallback.
    ///
    /// - Parameter firstAcceptedAt: The device time (UNIX seconds) at which the envelope was first accepted.
    case duplicate(firstAcceptedAt: UInt64)
}
