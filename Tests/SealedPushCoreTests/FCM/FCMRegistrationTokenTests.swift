import Testing
import SealedPushCore

/// `Specs/fcm-v1.md` §7: the registration token's shape, shared by the gateway's registration check and the FCM
/// emulator's send check. Expectations are written from the spec's rule, case by case.
@Suite struct FCMRegistrationTokenTests {
    /// A token in the shape FCM hands out today (instance id, `:`, `APA91b…`), 163 characters.
    static let realistic =
        "cX3kq9ZrTQ6m2Yv8hN1bWp:APA91bHk2-Rz8yWcQx7LmV0sNtP4aJ6fUo1iE5rB9dG3hK8wX2cY7vZ0qT6uM4nS1pL9jF3gD8kAaBbCcDdEeFfGgHhIiJjKkLlMmNnOoPpQqRrSsTtUuVvWwXxYyZz0123456789_-ab"

    @Test func acceptsTheShapeFCMHandsOut() {
        #expect(Self.realistic.utf8.count > 150)
        #expect(FCMRegistrationToken.isWellFormed(Self.realistic))
        #expect(FCMRegistrationToken.isWellFormed(String(repeating: "a", count: 20)), "20 bytes: the shortest")
        #expect(FCMRegistrationToken.isWellFormed(String(repeating: "Z", count: 4_096)), "4,096 bytes: the longest")
    }

    @Test(arguments: [
        ("", "empty"),
        (String(repeating: "a", count: 19), "19 bytes"),
        (String(repeating: "a", count: 4_097), "4,097 bytes"),
        ("abcdefghij.klmnopqrstuvwxyz", "a dot"),
        ("abcdefghij klmnopqrstuvwxyz", "a space"),
        ("abcdefghij/klmnopqrstuvwxyz+", "standard base64's / and +"),
        ("abcdefghij=klmnopqrstuvwxyz", "padding ="),
        ("abcdefghijklmnopqrstuvwxyz\n", "a newline"),
        ("abcdefghijklmnopqrstuvwxyzé", "non-ASCII"),
        ("abcdefghij\"klmnopqrstuvwxyz", "a quote (would break the JSON body)"),
    ])
    func refusesAnythingElse(_ token: String, _ what: String) {
        #expect(!FCMRegistrationToken.isWellFormed(token), "\(what) was accepted")
    }
}
