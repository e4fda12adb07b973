/// The known name nearest to a mistyped one, for error messages that suggest it ("did you mean …?"): a
/// configuration key, a command.
public enum NearestName {
    /// The Levenshtein distance between two names, ignoring ASCII case: the fewest single-byte insertions, deletions
    /// and substitutions that turn one into the other.
    /// - Parameters:
    ///   - a: One name.
    ///   - b: The other.
    /// - Returns: The distance, 0 for names equal but for case.
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.lowercased().utf8)
        let b = Array(b.lowercased().utf8)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    /// The candidate nearest to `name` by ``distance(_:_:)``, the first of equally near ones.
    /// - Parameters:
    ///   - name: The name as given.
    ///   - candidates: The names it could have meant.
    /// - Returns: The nearest candidate, or `nil` when there are none.
    public static func nearest(to name: String, among candidates: [String]) -> String? {
        candidates.min { distance(name, $0) < distance(name, $1) }
    }
}
