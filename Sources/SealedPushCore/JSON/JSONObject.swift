/// The members of a JSON object, with names compared by Unicode code points as RFC 8259 §8.3 says.
///
/// Swift's `String` equality is canonical equivalence, so a `[String: JSONValue]` would treat `"\u{e9}"` (NFC) and
/// `"e\u{301}"` (NFD) as one name. Two senders may legitimately use both in one object; they are two members here.
/// Members are kept sorted by the bytes of their UTF-8 names, which is also the canonical order (spec §4.1).
public struct JSONObject: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// One member: a name and its value.
    public typealias Element = (key: String, value: JSONValue)

    private var names: [[UInt8]] = []
    private var keys: [String] = []
    private var values_: [JSONValue] = []

    /// Creates an empty object.
    public init() {}

    /// Creates an object from a literal; a name given twice (by code points) keeps the last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        for (key, value) in elements { self[key] = value }
    }

    /// Creates an object from a dictionary (whose keys are already distinct).
    ///
    /// - Parameter dictionary: The members.
    public init(_ dictionary: [String: JSONValue]) {
        for (key, value) in dictionary { self[key] = value }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { keys.count }
    public subscript(position: Int) -> Element { (keys[position], values_[position]) }

    /// The member values, in canonical (UTF-8 name) order.
    public var values: [JSONValue] { values_ }

    /// Accesses the member whose name has exactly these code points; setting `nil` removes it.
    public subscript(key: String) -> JSONValue? {
        get {
            let name = Array(key.utf8)
            let (index, found) = search(name)
            return found ? values_[index] : nil
        }
        set {
            let name = Array(key.utf8)
            let (index, found) = search(name)
            switch (found, newValue) {
            case (true, let value?): values_[index] = value
            case (true, nil): names.remove(at: index); keys.remove(at: index); values_.remove(at: index)
            case (false, let value?): names.insert(name, at: index); keys.insert(key, at: index); values_.insert(value, at: index)
            case (false, nil): break
            }
        }
    }

    /// Removes the member with exactly these code points.
    ///
    /// - Parameter key: The member name.
    /// - Returns: Its value, or `nil` if there was none.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        let old = self[key]
        self[key] = nil
        return old
    }

    /// Adds a member unless one with the same code points exists.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The member name.
    /// - Returns: `false` if the name was already present (the object is unchanged).
    @discardableResult
    public mutating func insertNew(_ value: JSONValue, forKey key: String) -> Bool {
        let name = Array(key.utf8)
        let (index, found) = search(name)
        guard !found else { return false }
        names.insert(name, at: index)
        keys.insert(key, at: index)
        values_.insert(value, at: index)
        return true
    }

    /// Builds an object from members in document order, sorting once (n log n, so a hostile object with a hundred
    /// thousand members costs no more than its size suggests).
    ///
    /// - Parameter members: The members with the position each started at.
    /// - Returns: The object, or the position of a member whose name (by code points) repeats an earlier one.
    static func build(_ members: [(key: String, value: JSONValue, position: Int)]) -> Result<JSONObject, DuplicateName> {
        var entries = members.map { (name: Array($0.key.utf8), member: $0) }
        entries.sort { lhs, rhs in
            lhs.name == rhs.name ? lhs.member.position < rhs.member.position
                : lhs.name.lexicographicallyPrecedes(rhs.name)
        }
        var object = JSONObject()
        object.names.reserveCapacity(entries.count)
        object.keys.reserveCapacity(entries.count)
        object.values_.reserveCapacity(entries.count)
        var duplicate: Int?
        for entry in entries {
            if let last = object.names.last, last == entry.name {
                duplicate = Swift.min(duplicate ?? .max, entry.member.position)
                continue
            }
            object.names.append(entry.name)
            object.keys.append(entry.member.key)
            object.values_.append(entry.member.value)
        }
        if let duplicate { return .failure(DuplicateName(position: duplicate)) }
        return .success(object)
    }

    /// A member name that appears twice; `position` is where the first repeated occurrence in the text starts.
    struct DuplicateName: Error {
        let position: Int
    }

    /// Binary search by UTF-8 bytes: the index of `name`, or where it would be inserted.
    private func search(_ name: [UInt8]) -> (Int, Bool) {
        var low = 0
        var high = names.count
        while low < high {
            let middle = (low + high) / 2
            if names[middle].lexicographicallyPrecedes(name) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return (low, low < names.count && names[low] == name)
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.names == rhs.names && lhs.values_ == rhs.values_
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(names)
        hasher.combine(values_)
    }
}
