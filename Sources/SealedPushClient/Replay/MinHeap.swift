/// A binary min-heap: the replay ledger's order of eviction (earliest issued) and of pruning (earliest expiring),
/// so recording a message stays O(log n) when the ledger is full.
struct MinHeap<Element: Comparable> {
    private(set) var elements: [Element] = []

    init() {}

    /// Builds a heap from unordered elements in O(n).
    init(_ unordered: [Element]) {
        elements = unordered
        var index = elements.count / 2
        while index > 0 {
            index -= 1
            siftDown(from: index)
        }
    }

    var isEmpty: Bool { elements.isEmpty }
    var count: Int { elements.count }
    var min: Element? { elements.first }

    mutating func insert(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child] < elements[parent] else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func popMin() -> Element? {
        guard !elements.isEmpty else { return nil }
        elements.swapAt(0, elements.count - 1)
        let smallest = elements.removeLast()
        if !elements.isEmpty { siftDown(from: 0) }
        return smallest
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < elements.count, elements[left] < elements[smallest] { smallest = left }
            if right < elements.count, elements[right] < elements[smallest] { smallest = right }
            guard smallest != parent else { return }
            elements.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
