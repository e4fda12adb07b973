import Foundation
import Testing

import SealedPushCore

/// `ProviderProxy`: the proxy URL an operator writes, what is refused (with a message that names the part and never
/// the password), and the `Proxy-Authorization` value RFC 7617 defines.
@Suite struct ProviderProxyTests {
    @Test func aPlainProxyURL() throws {
        let proxy = try ProviderProxy(url: "http://egress.internal:3128")
        #expect(proxy.host == "egress.internal")
        #expect(proxy.port == 3128)
        #expect(proxy.username == nil)
        #expect(proxy.authorization == nil)
        #expect(proxy.description == "http://egress.internal:3128")
        #expect(try ProviderProxy(url: "HTTP://10.0.0.7:8080/") == ProviderProxy(host: "10.0.0.7", port: 8080))
    }

    @Test func credentialsArePercentDecodedAndSentAsBasic() throws {
        let proxy = try ProviderProxy(url: "http://gw%2D1:p%40ss%3Aw%2Frd%25@proxy.example:3128")
        #expect(proxy.username == "gw-1")
        // RFC 7617 §2: base64 of user-id ":" password; RFC 7617's own example as a second check.
        let expected = "Basic " + Data("gw-1:p@ss:w/rd%".utf8).base64EncodedString()
        #expect(proxy.authorization == expected)
        #expect(try ProviderProxy(host: "p", port: 1, username: "Aladdin", password: "open sesame").authorization
            == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        #expect(!proxy.description.contains("p@ss") && !proxy.description.contains("p%40ss"))
        #expect(proxy.description == "http://gw-1:…@proxy.example:3128")
        var dumped = ""
        dump(proxy, to: &dumped)
        #expect(!dumped.contains("p@ss"), "dump shows the password: \(dumped)")
    }

    @Test func anIPv6Proxy() throws {
        let proxy = try ProviderProxy(url: "http://[::1]:3128")
        #expect(proxy.host == "::1")
        #expect(proxy.description == "http://[::1]:3128")
        #expect(ProviderProxy.authority(host: "fd00::2", port: 443) == "[fd00::2]:443")
        #expect(ProviderProxy.authority(host: "api.push.apple.com", port: 443) == "api.push.apple.com:443")
    }

    @Test(arguments: [
        ("egress.internal:3128", "://"),
        ("https://egress.internal:3128", "scheme must be http"),
        ("socks5://egress.internal:1080", "scheme must be http"),
        ("http://egress.internal", "names its port"),
        ("http://egress.internal:0", "1 to 65535"),
        ("http://egress.internal:65536", "1 to 65535"),
        ("http://egress.internal:31a", "must be a number"),
        ("http://egress.internal:3128/path", "no path"),
        ("http://egress.internal:3128?x=1", "no path"),
        ("http://:3128", "host"),
        ("http://bad host:3128", "host"),
        ("http://user:pa%zzss@egress.internal:3128", "percent-encoded"),
        ("http://:secret@egress.internal:3128", "user name"),
        ("http://[::1:3128", "names its port"),
    ])
    func aBadURLIsRefusedNamingWhatIsWrong(url: String, message: String) {
        do {
            _ = try ProviderProxy(url: url)
            Issue.record("accepted \(url)")
        } catch let error as SealedPushError {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains(message), "\(url): \(error.message)")
            #expect(!error.message.contains("secret"))
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func partsAreCheckedToo() {
        #expect(throws: SealedPushError.self) { try ProviderProxy(host: "p", port: 1, username: nil, password: "x") }
        #expect(throws: SealedPushError.self) { try ProviderProxy(host: "p", port: 1, username: "a:b", password: "x") }
        #expect(throws: SealedPushError.self) { try ProviderProxy(host: "p", port: 1, username: "a", password: "x\r\ny") }
        #expect(throws: SealedPushError.self) { try ProviderProxy(host: "p\r\nX-Injected: 1", port: 1) }
    }

    @Test func credentialsFromAFile() throws {
        let proxy = try ProviderProxy(url: "http://egress.internal:3128")
        let withUser = try proxy.withCredentials(fromFile: Array("gw-1:pa:ss w0rd\r\n".utf8))
        #expect(withUser == (try ProviderProxy(host: "egress.internal", port: 3128, username: "gw-1", password: "pa:ss w0rd")))
        #expect(try proxy.withCredentials(fromFile: Array("gw-1:".utf8)).authorization
            == "Basic " + Data("gw-1:".utf8).base64EncodedString())
        for contents in ["no-colon-here", ":password-only", "two\nlines:x", ""] {
            #expect(throws: SealedPushError.self, "\(contents)") { try proxy.withCredentials(fromFile: Array(contents.utf8)) }
        }
        #expect(throws: SealedPushError.self) { try proxy.withCredentials(fromFile: [0x61, 0x3A, 0xFF]) }
    }
}
