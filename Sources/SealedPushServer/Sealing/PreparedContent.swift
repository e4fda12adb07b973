/// Content encoded, padded and checked against one ``Sealer``'s APNs budget once, so a fan-out seals it to many
/// devices without redoing that work per device (``Sealer/prepare(_:)``, ``Sealer/seal(_:to:ttl:now:)-(PreparedContent,_,_,_)``).
///
/// It holds the padded plaintext, which is wiped when the last reference goes; its description and mirror show
/// the length only.
public final class PreparedContent: @unchecked Sendable {
    /// The canonical JSON, padded (spec §9 steps 1–2). Never changed after `init`, so sharing it is safe.
    private(set) var padded: [UInt8]

    init(padded: [UInt8]) {
        self.padded = padded
    }

    deinit {
        Sodium.wipe(&padded)
    }
}

extension PreparedContent: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The padded length only; never the content.
    public var description: String { "PreparedContent(\(padded.count) padded bytes)" }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with the padded length only.
    public var customMirror: Mirror { Mirror(self, children: ["paddedLength": padded.count], displayStyle: .class) }
}
