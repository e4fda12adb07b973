import NIOCore
import Testing

@testable import SealedPushGatewayHTTP

/// The ranges an attachment fetch refuses by default, checked against addresses written out by hand (RFC 1918,
/// RFC 6598, RFC 3927, RFC 4193, RFC 4291, RFC 6052).
@Suite("Gateway attachments: private addresses")
struct PrivateAddressTests {
    @Test(arguments: [
        "127.0.0.1", "127.255.255.254", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
        "100.64.0.1", "0.0.0.0", "224.0.0.251", "255.255.255.255", "198.18.0.1", "::1", "::", "fc00::1", "fd12:3456::1",
        "fe80::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1",
    ])
    func refused(_ ip: String) throws {
        #expect(PrivateAddress.contains(try SocketAddress(ipAddress: ip, port: 443)))
    }

    @Test(arguments: [
        "8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1", "169.253.0.1",
        "192.169.0.1", "2606:4700::1111", "2a00:1450:4001::200e", "::ffff:8.8.8.8", "64:ff9b::808:808",
    ])
    func allowed(_ ip: String) throws {
        #expect(!PrivateAddress.contains(try SocketAddress(ipAddress: ip, port: 443)))
    }
}
