import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange with the gateway over a real socket (URLSession).
struct HTTPExchange {
    let status: Int
    let headers: [String: String]
    let body: Data

    /// The body as a JSON object (empty when it is not one).
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    var text: String { String(decoding: body, as: UTF8.self) }

    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}

/// A URLSession client for the gateway on loopback.
struct HTTPTestClient {
    let base: URL
    let session: URLSession

    /// - Parameters:
    ///   - port: The gateway's port on 127.0.0.1.
    ///   - maxConnections: The most connections to it at once (URLSession's default otherwise: requests beyond it
    ///     wait for a free connection).
    init(port: Int, maxConnections: Int? = nil) {
        base = URL(string: "http://127.0.0.1:\(port)")!
        let configuration = URLSessionConfiguration.ephemeral
        if let maxConnections { configuration.httpMaximumConnectionsPerHost = maxConnections }
        configuration.timeoutIntervalForRequest = 30
        configuration.timeoutIntervalForResource = 60
        session = URLSession(configuration: configuration)
    }

    func send(
        _ method: String, _ path: String, key: String? = nil, json: Any? = nil, body: Data? = nil,
        stream: Data? = nil, headers: [String: String] = [:], query: [URLQueryItem] = []
    ) async throws -> HTTPExchange {
        var url = base.appendingPathComponent(path)
        if !query.isEmpty, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            components.queryItems = query
            url = components.url ?? url
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let body { request.httpBody = body }
        if let stream { request.httpBodyStream = InputStream(data: stream) }  // no Content-Length: chunked
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields { headers["\(name)"] = "\(value)" }
        return HTTPExchange(status: http.statusCode, headers: headers, body: data)
    }
}
