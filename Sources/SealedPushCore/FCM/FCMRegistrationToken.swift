/// The shape of an FCM registration token (`Specs/fcm-v1.md` §7): what a backend accepts at registration and what
/// the FCM emulator accepts in a send. FCM's tokens are opaque; today they are about 160 characters of base64url text
/// with a `:` separating the instance id (for example `cX3…:APA91b…`). The rule leaves room for them to grow.
public enum FCMRegistrationToken {
    /// The shortest token accepted, in bytes.
    public static let minimumBytes = 20
    /// The longest token accepted, in bytes.
    public static let maximumBytes = 4_096
    /// The rule in words, for error messages.
    public static let ruleDescription = "20 to 4,096 of A-Z a-z 0-9 - _ :"

    /// Whether `token` has a registration token's shape: ``minimumBytes`` to ``maximumBytes`` bytes, each one of
    /// `A–Z a–z 0–9 - _ :`.
    /// - Parameter token: The candidate token.
    /// - Returns: `true` when it has the shape; nothing is known about whether FCM still knows it.
    public static func isWellFormed(_ token: String) -> Bool {
        let bytes = token.utf8
        return (minimumBytes...maximumBytes).contains(bytes.count)
            && bytes.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":")
            }
    }
}
