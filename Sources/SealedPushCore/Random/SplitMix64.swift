/// A small, seedable generator (SplitMix64, Steele, Lea and Flood 2014) for draws that must reproduce from a seed —
/// the emulators' fault plans, the tests' random inputs. Not for cryptography: keys and nonces come from the
/// system's generator.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator; the same seed gives the same sequence.
    ///
    /// - Parameter seed: The initial state.
    package init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
