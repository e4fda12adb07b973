import CCurve25519Map
import SealedPushCore
import SealedPushTestSupport
import Testing

/// The Edwards-to-Montgomery map on points whose images are known from RFC 7748 §4.1 and RFC 8032 §5.1: the
/// Ed25519 base point (y = 4/5) maps to the X25519 base point u = 9, whatever the sign of x; the neutral element
/// (y = 1) has no image.
@Suite struct Curve25519MapTests {
    private func map(_ hex: String) throws -> (status: Int32, u: [UInt8]) {
        let point = try #require(RFC9180Vectors.bytes(fromHex: hex))
        var u = [UInt8](repeating: 0xaa, count: 32)
        let status = sealedpush_x25519_u_from_ed25519(&u, point)
        return (status, u)
    }

    private let nine: [UInt8] = [9] + [UInt8](repeating: 0, count: 31)

    @Test func ed25519BasePointMapsToNine() throws {
        // RFC 8032 §5.1: B = (x, 4/5) with x positive, encoded as y with the sign bit clear.
        let base = try map("5866666666666666666666666666666666666666666666666666666666666666")
        #expect(base.status == 0)
        #expect(base.u == nine)
        // -B: the same y with the sign bit set.
        let negated = try map("58666666666666666666666666666666666666666666666666666666666666e6")
        #expect(negated.status == 0)
        #expect(negated.u == nine)
    }

    @Test func neutralElementHasNoImage() throws {
        // y = 1, and y = p + 1 (a non-canonical encoding of 1).
        for hex in [
            "0100000000000000000000000000000000000000000000000000000000000000",
            "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        ] {
            let result = try map(hex)
            #expect(result.status == -1)
            #expect(result.u == [UInt8](repeating: 0, count: 32))
        }
    }

    @Test func yEqualToMinusOneMapsToZero() throws {
        // y = -1 = p - 1: u = 0 / 2 = 0 (the point of order 2 on the Edwards side maps to (0, 0)).
        let result = try map("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
        #expect(result.status == 0)
        #expect(result.u == [UInt8](repeating: 0, count: 32))
    }

    private func invert(_ value: [UInt8], variableTime: Bool) -> [UInt8] {
        var out = [UInt8](repeating: 0xaa, count: 32)
        _ = sealedpush_fe25519_invert(&out, value, variableTime ? 1 : 0)
        return out
    }

    /// Known inverses modulo p = 2^255 - 19: 1/1 = 1, 1/2 = (p + 1) / 2 = 2^254 - 9, 1/(p - 1) = p - 1, and the
    /// convention 1/0 = 0; each by both methods.
    @Test(arguments: [true, false])
    func knownInverses(variableTime: Bool) throws {
        let one: [UInt8] = [1] + [UInt8](repeating: 0, count: 31)
        let two: [UInt8] = [2] + [UInt8](repeating: 0, count: 31)
        let half = try #require(
            RFC9180Vectors.bytes(fromHex: "f7ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff3f"))
        let minusOne = try #require(
            RFC9180Vectors.bytes(fromHex: "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"))
        let zero = [UInt8](repeating: 0, count: 32)
        #expect(invert(one, variableTime: variableTime) == one)
        #expect(invert(two, variableTime: variableTime) == half)
        #expect(invert(half, variableTime: variableTime) == two)
        #expect(invert(minusOne, variableTime: variableTime) == minusOne)
        #expect(invert(zero, variableTime: variableTime) == zero)
    }

    /// The map's variable-time inversion (safegcd) against Fermat's z^(p-2): two unrelated algorithms, on random
    /// elements and on the edges (p - k, 2^k, values >= p, all ones).
    @Test func variableTimeInverseMatchesFermat() {
        var values: [[UInt8]] = []
        var generator = SplitMix64(seed: 0x5eed_1234_abcd_0001)
        for _ in 0..<20_000 {
            var value = [UInt8]()
            for _ in 0..<4 { withUnsafeBytes(of: generator.next().littleEndian) { value.append(contentsOf: $0) } }
            values.append(value)
        }
        for k in 1...40 {  // p - k and 2^(6k)
            var minus = [UInt8](repeating: 0xff, count: 32)
            minus[31] = 0x7f
            minus[0] = UInt8(0xed - k)
            values.append(minus)
            var power = [UInt8](repeating: 0, count: 32)
            power[(k * 6) / 8] = 1 << ((k * 6) % 8)
            values.append(power)
        }
        for j in 0..<19 {  // p + j, encodings of j at or above p
            var above = [UInt8](repeating: 0xff, count: 32)
            above[31] = 0x7f
            above[0] = UInt8(0xed + j)
            values.append(above)
        }
        values.append([UInt8](repeating: 0xff, count: 32))
        var mismatches = 0
        for value in values where invert(value, variableTime: true) != invert(value, variableTime: false) {
            mismatches += 1
        }
        #expect(mismatches == 0, "\(mismatches) of \(values.count) inverses differ")
    }
}
