import SealedPushCore
import Testing

/// The emulators' fault draws and the tests' random inputs reproduce from a seed only if the generator is SplitMix64
/// exactly.
@Suite("Core: SplitMix64")
struct SplitMix64Tests {
    /// The reference implementation's first outputs for the seed 0 (Vigna's `splitmix64.c`, `x = 0`).
    @Test func matchesTheReferenceForSeedZero() {
        var generator = SplitMix64(seed: 0)
        let outputs = (0..<3).map { _ in generator.next() }
        #expect(outputs == [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
    }

    /// The same seed gives the same draws; another seed other draws.
    @Test func aSeedReproducesItsDraws() {
        var first = SplitMix64(seed: 42)
        var second = SplitMix64(seed: 42)
        var other = SplitMix64(seed: 43)
        let a = (0..<8).map { _ in Double.random(in: 0..<1, using: &first) }
        let b = (0..<8).map { _ in Double.random(in: 0..<1, using: &second) }
        let c = (0..<8).map { _ in Double.random(in: 0..<1, using: &other) }
        #expect(a == b)
        #expect(a != c)
    }
}
