import Foundation
import Testing

/// Ids in the path are compared as the ids they encode: URIs that differ only in an unreserved character written as
/// `%XX` are equivalent (RFC 3986 §2.3). An outside audit found `a%7Eb` (Java's `URLEncoder` writes `~` so) not
/// reaching the device `a~b`, and `ch%61t` refused with `403` under `chat`'s own key. The requests go over a raw
/// socket: a URL API would encode the `%` again.
@Suite("Gateway HTTP: percent-encoded path ids")
struct PathEncodingTests {
    static func get(port: Int, _ target: String, key: String) async throws -> RawResponse {
        try await Task.detached {
            let socket = try RawSocket(port: port)
            _ = socket.send(
                "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(key)\r\nConnection: close\r\n\r\n")
            socket.readToEnd()
            return socket.response()
        }.value
    }

    @Test func percentEncodedUnreservedCharactersNameTheSameIds() async throws {
        try await GatewayTestServer.with(.sqlite) { server in
            try await server.registerDevice("a~b.c_d-e")
            let port = server.client.base.port!
            let key = try #require(server.keys["app1"])
            let device = try await Self.get(port: port, "/v1/apps/app1/devices/a%7Eb.c_d-e", key: key)
            #expect(device.status == 200, "\(device.json)")
            #expect(device.json["deviceId"] as? String == "a~b.c_d-e")
            let app = try await Self.get(port: port, "/v1/apps/app%31/devices/a~b.c_d-e", key: key)
            #expect(app.status == 200, "\(app.json)")
            // A broken encoding, or one that decodes to a character an id may not hold, is no id.
            #expect(try await Self.get(port: port, "/v1/apps/app1/devices/a%ZZb", key: key).status == 404)
            #expect(try await Self.get(port: port, "/v1/apps/app1/devices/a%2Fb", key: key).status == 404)
        }
    }
}
