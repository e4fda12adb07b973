import Foundation

/// A bounded, thread-safe LRU cache of static-static X25519 values `DH(skS, pkR)`, keyed by the device public key.
///
/// Spec §2 allows caching this value because it depends only on the server identity and the device key; the
/// cache is bounded and its values are ``SecretBytes``, which wipe themselves (`sodium_memzero`) as soon as the
/// last reference goes away — on eviction, or when a seal that was still using an evicted value finishes, and on
/// `deinit` of the cache.
final class StaticSecretCache: @unchecked Sendable {
    private struct Node {
        var key: [UInt8]
        var value: SecretBytes
        var newer: Int
        var older: Int
    }

    /// The largest number of entries kept; 0 disables caching.
    let capacity: Int

    // All mutable state is guarded by `lock`.
    private let lock = NSLock()
    private var nodes: [Node] = []
    private var index: [[UInt8]: Int] = [:]
    private var newest = -1
    private var oldest = -1

    /// Creates an empty cache.
    ///
    /// - Parameter capacity: The largest number of entries (≥ 0).
    init(capacity: Int) {
        self.capacity = max(0, capacity)
        nodes.reserveCapacity(min(self.capacity, 1024))
    }

    /// The number of cached values.
    var count: Int {
        lock.withLock { index.count }
    }

    /// Returns the cached value for `key`, or computes it with `compute` (outside the lock) and caches it.
    ///
    /// - Parameters:
    ///   - key: The device public key.
    ///   - compute: Computes the value on a miss.
    /// - Returns: The value.
    /// - Throws: Whatever `compute` throws; nothing is cached then.
    func value(for key: [UInt8], compute: () throws -> SecretBytes) rethrows -> SecretBytes {
        if let hit = lock.withLock({ lookUp(key) }) { return hit }
        let value = try compute()
        lock.withLock { insert(key, value) }
        return value
    }

    /// Removes every entry (their values are wiped once no seal uses them).
    func removeAll() {
        lock.withLock {
            nodes.removeAll()
            index.removeAll()
            newest = -1
            oldest = -1
        }
    }

    // MARK: Linked list (called with the lock held)

    private func lookUp(_ key: [UInt8]) -> SecretBytes? {
        guard let slot = index[key] else { return nil }
        moveToNewest(slot)
        return nodes[slot].value
    }

    private func insert(_ key: [UInt8], _ value: SecretBytes) {
        guard capacity > 0 else { return }
        if let slot = index[key] {  // another thread computed it meanwhile
            moveToNewest(slot)
            return
        }
        if nodes.count < capacity {
            nodes.append(Node(key: key, value: value, newer: -1, older: -1))
            let slot = nodes.count - 1
            index[key] = slot
            linkAsNewest(slot)
            return
        }
        // Full: reuse the least recently used slot. Replacing `value` releases the old SecretBytes, which wipes it.
        let slot = oldest
        unlink(slot)
        index[nodes[slot].key] = nil
        nodes[slot].key = key
        nodes[slot].value = value
        index[key] = slot
        linkAsNewest(slot)
    }

    private func moveToNewest(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        linkAsNewest(slot)
    }

    private func unlink(_ slot: Int) {
        let newer = nodes[slot].newer
        let older = nodes[slot].older
        if newer >= 0 { nodes[newer].older = older } else { newest = older }
        if older >= 0 { nodes[older].newer = newer } else { oldest = newer }
        nodes[slot].newer = -1
        nodes[slot].older = -1
    }

    private func linkAsNewest(_ slot: Int) {
        nodes[slot].older = newest
        nodes[slot].newer = -1
        if newest >= 0 { nodes[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    /// The cached keys from most to least recently used (for tests).
    var keysByRecency: [[UInt8]] {
        lock.withLock {
            var keys: [[UInt8]] = []
            var slot = newest
            while slot >= 0 {
                keys.append(nodes[slot].key)
                slot = nodes[slot].older
            }
            return keys
        }
    }
}
