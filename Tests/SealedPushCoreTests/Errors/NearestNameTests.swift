import SealedPushCore
import Testing

@Suite("NearestName: the suggestion in 'did you mean …?' messages")
struct NearestNameTests {
    /// Levenshtein distances worked out by hand (kitten → sitting is the textbook example: k→s, e→i, +g).
    @Test(arguments: [
        ("kitten", "sitting", 3), ("flaw", "lawn", 2), ("", "abc", 3), ("abc", "", 3), ("serv", "serve", 1),
        ("Serve", "serve", 0), ("rotat", "rotate", 1), ("inti", "init", 2), ("maxBodyByte", "maxBodyBytes", 1),
    ])
    func distance(a: String, b: String, expected: Int) {
        #expect(NearestName.distance(a, b) == expected)
        #expect(NearestName.distance(b, a) == expected)
    }

    @Test func nearestIsTheClosestAndTheFirstOfATie() {
        #expect(NearestName.nearest(to: "serv", among: ["init", "serve", "app", "key", "identity"]) == "serve")
        #expect(NearestName.nearest(to: "kez", among: ["app", "key", "identity"]) == "key")
        // "ab" is 1 from both "a" and "b": the first listed wins.
        #expect(NearestName.nearest(to: "ab", among: ["b", "a"]) == "b")
        #expect(NearestName.nearest(to: "x", among: []) == nil)
    }
}
