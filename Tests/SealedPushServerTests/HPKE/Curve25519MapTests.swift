import CCurve25519Map
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
}
