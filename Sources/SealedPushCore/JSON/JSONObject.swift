/// The members of a JSON object, with names compared by Unicode code points as RFC 8259 §8.3 says.
///
/// Swift's `String` equality is canonical equivalence, so a `[String: JSONValue]` would treat `"\u{e9}"` (NFC) and
/// `"e\u{301}"` (NFD) as one name. Two senders may legitimately use both in one object; they are two members here.
/// Members are kept sorted by the bytes of their UTF-8 names, which is also the canonical order (spec §4.1).
public struct JSONObject: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// One member: a name and its value.
    public typealias Element = (key: String, value: JSONValue)

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
            let (index, found) = search(key.utf8)  // no allocation: lookups are on the open path
            return found ? values_[index] : nil
        }
        set {
            let (index, found) = search(key.utf8)
            switch (found, newValue) {
            case (true, let value?): values_[index] = value
            case (true, nil): keys.remove(at: index); values_.remove(at: index)
            case (false, let value?): keys.insert(key, at: index); values_.insert(value, at: index)
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

    /// Builds an object from members in document order, sorting once (n log n, so a hostile object with a hundred
    /// thousand members costs no more than its size suggests). Names are compared through their UTF-8 views, with
    /// no copy per member (this runs for every object of every body and content opened).
    ///
    /// - Parameter members: The members with the position each started at.
    /// - Returns: The object, or the position of a member whose name (by code points) repeats an earlier one.
    static func build(_ members: [(key: String, value: JSONValue, position: Int)]) -> Result<JSONObject, DuplicateName> {
        var sorted = members
        if sorted.count > 1 {
            sorted.sort { lhs, rhs in
                lhs.key.utf8.elementsEqual(rhs.key.utf8) ? lhs.position < rhs.position
                    : lhs.key.utf8.lexicographicallyPrecedes(rhs.key.utf8)
            }
        }
        var object = JSONObject()
        object.keys.reserveCapacity(sorted.count)
        object.values_.reserveCapacity(sorted.count)
        var duplicate: Int?
        for member in sorted {
            if let last = object.keys.last, last.utf8.elementsEqual(member.key.utf8) {
                duplicate = Swift.min(duplicate ?? .max, member.position)
                continue
            }
            object.keys.append(member.key)
            object.values_.append(member.value)
        }
        if let duplicate { return .failure(DuplicateName(position: duplicate)) }
        return .success(object)
    }

    /// A member name that appears twice; `position` is where the first repeated occurrence in the text starts.
    struct DuplicateName: Error {
        let position: Int
    }

    /// Binary search by UTF-8 bytes: the index of `name`, or where it would be inserted.
    private func search(_ name: String.UTF8View) -> (Int, Bool) {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle].utf8.lexicographicallyPrecedes(name) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return (low, low < keys.count && keys[low].utf8.elementsEqual(name))
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.keys.count == rhs.keys.count && lhs.values_ == rhs.values_
            && zip(lhs.keys, rhs.keys).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(keys.count)
        for key in keys {
            for byte in key.utf8 { hasher.combine(byte) }
            hasher.combine(0xFF as UInt8)  // never a UTF-8 byte: ends the name unambiguously
        }
        hasher.combine(values_)
    }
}
