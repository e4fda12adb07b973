import Testing

@testable import SealedPushServer

@Suite struct StaticSecretCacheTests {
    private func key(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }
    private func secret(_ byte: UInt8) -> SecretBytes { SecretBytes(copying: [UInt8](repeating: byte, count: 32)) }

    @Test func boundedAndLeastRecentlyUsedIsEvicted() {
        let cache = StaticSecretCache(capacity: 3)
        for byte: UInt8 in 1...3 { _ = cache.value(for: key(byte)) { secret(byte) } }
        #expect(cache.count == 3)
        // Touch key 1, then add key 4: key 2 is now the least recently used and goes.
        var computed = false
        let hit = cache.value(for: key(1)) { computed = true; return secret(99) }
        #expect(!computed)
        #expect(hit.bytes == [UInt8](repeating: 1, count: 32))
        _ = cache.value(for: key(4)) { secret(4) }
        #expect(cache.count == 3)
        #expect(cache.keysByRecency == [key(4), key(1), key(3)])
        var recomputed = false
        _ = cache.value(for: key(2)) { recomputed = true; return secret(2) }
        #expect(recomputed)
    }

    @Test func capacityZeroCachesNothing() {
        let cache = StaticSecretCache(capacity: 0)
        var computations = 0
        for _ in 0..<3 { _ = cache.value(for: key(7)) { computations += 1; return secret(7) } }
        #expect(computations == 3)
        #expect(cache.count == 0)
    }

    @Test func failedComputationCachesNothing() {
        let cache = StaticSecretCache(capacity: 2)
        #expect(throws: HPKEError.zeroSharedSecret) {
            _ = try cache.value(for: key(0)) { throw HPKEError.zeroSharedSecret }
        }
        #expect(cache.count == 0)
    }

    @Test func concurrentUseStaysBounded() async {
        let cache = StaticSecretCache(capacity: 16)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for round in 0..<500 {
                        let byte = UInt8((task * 31 + round) % 40)
                        let value = cache.value(for: [UInt8](repeating: byte, count: 32)) {
                            SecretBytes(copying: [UInt8](repeating: byte, count: 32))
                        }
                        #expect(value.bytes.first == byte)
                    }
                }
            }
        }
        #expect(cache.count == 16)
        #expect(Set(cache.keysByRecency).count == 16)
    }
}
