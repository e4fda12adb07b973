import NIOCore

/// Addresses a fetch for a backend must not reach unless the operator allows it: loopback, private, link-local,
/// shared (CGNAT), multicast, unspecified and reserved ranges, for IPv4 and IPv6 (IPv4-mapped IPv6 included).
enum PrivateAddress {
    static func contains(_ address: SocketAddress) -> Bool {
        switch address {
        case .v4(let v4):
            return isPrivate(ipv4: UInt32(bigEndian: v4.address.sin_addr.s_addr))
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            return isPrivate(ipv6: bytes)
        default:
            return true  // Unix sockets and anything else: never a backend's file server
        }
    }

    static func isPrivate(ipv4 value: UInt32) -> Bool {
        func within(_ base: UInt32, _ bits: UInt32) -> Bool {
            let mask: UInt32 = bits == 0 ? 0 : ~UInt32(0) << (32 - bits)
            return value & mask == base & mask
        }
        return within(0x0000_0000, 8)  // 0.0.0.0/8 "this network"
            || within(0x0A00_0000, 8)  // 10.0.0.0/8
            || within(0x6440_0000, 10)  // 100.64.0.0/10 shared (CGNAT)
            || within(0x7F00_0000, 8)  // 127.0.0.0/8 loopback
            || within(0xA9FE_0000, 16)  // 169.254.0.0/16 link-local (cloud metadata)
            || within(0xAC10_0000, 12)  // 172.16.0.0/12
            || within(0xC000_0000, 24)  // 192.0.0.0/24 protocol assignments
            || within(0xC0A8_0000, 16)  // 192.168.0.0/16
            || within(0xC612_0000, 15)  // 198.18.0.0/15 benchmarking
            || within(0xE000_0000, 4)  // 224.0.0.0/4 multicast
            || within(0xF000_0000, 4)  // 240.0.0.0/4 reserved, broadcast
    }

    static func isPrivate(ipv6 bytes: [UInt8]) -> Bool {
        guard bytes.count == 16 else { return true }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {  // ::ffff:a.b.c.d
            let v4 = UInt32(bytes[12]) << 24 | UInt32(bytes[13]) << 16 | UInt32(bytes[14]) << 8 | UInt32(bytes[15])
            return isPrivate(ipv4: v4)
        }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) { return true }  // :: and ::1
        if bytes[0] & 0xFE == 0xFC { return true }  // fc00::/7 unique local
        if bytes[0] == 0xFE, bytes[1] & 0xC0 == 0x80 { return true }  // fe80::/10 link-local
        if bytes[0] == 0xFF { return true }  // ff00::/8 multicast
        if bytes[0] == 0x20, bytes[1] == 0x01, bytes[2] == 0x0D, bytes[3] == 0xB8 { return true }  // documentation
        if bytes[0] == 0x00, bytes[1] == 0x64, bytes[2] == 0xFF, bytes[3] == 0x9B { // 64:ff9b::/96 NAT64
            let v4 = UInt32(bytes[12]) << 24 | UInt32(bytes[13]) << 16 | UInt32(bytes[14]) << 8 | UInt32(bytes[15])
            return isPrivate(ipv4: v4)
        }
        return false
    }
}
