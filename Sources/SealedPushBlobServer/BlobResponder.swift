import NIOCore
import NIOHTTP1
import SealedPushCore
import SealedPushServer

/// Serves the requests of one connection from a ``BlobStore``: `GET` and `HEAD` of `/<blob name>`, a single byte
/// range, `If-None-Match`, immutable caching headers; the body is streamed in chunks as the client takes them.
struct BlobResponder: Sendable {
    typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>
    typealias Outbound = ResponseWriter

    /// Body writes outstanding per connection: with 64 KiB chunks, at most 256 KiB of a blob is queued in the
    /// process for a client, however slowly it reads.
    static let writeWindow = 4

    /// `Cache-Control` of every blob: a name is written once and never changes.
    static let cacheControl = "public, max-age=31536000, immutable"

    let store: any BlobStore
    let chunkSize: Int

    /// Answers requests until the client closes, asks to close, or the connection fails.
    func run(_ connection: Connection) async {
        try? await connection.executeThenClose { inbound, _ in
            var outbound = ResponseWriter(channel: connection.channel, window: Self.writeWindow)
            var head: HTTPRequestHead?
            for try await part in inbound {
                switch part {
                case .head(let requestHead): head = requestHead
                case .body: continue  // GET and HEAD carry no body worth reading
                case .end:
                    guard let request = head else { continue }
                    head = nil
                    try await respond(to: request, outbound: &outbound)
                    // Every byte is in the socket before the next request is read or the connection closes:
                    // closing with writes still queued would drop the tail and the client would see a short
                    // body end cleanly.
                    try await outbound.drain()
                    if !request.isKeepAlive { return }
                }
            }
        }
    }

    private func respond(to request: HTTPRequestHead, outbound: inout Outbound) async throws {
        var headers = HTTPHeaders()
        if !request.isKeepAlive { headers.add(name: "Connection", value: "close") }
        guard request.method == .GET || request.method == .HEAD else {
            headers.add(name: "Allow", value: "GET, HEAD")
            return try await sendEmpty(.methodNotAllowed, headers, request, &outbound)
        }
        guard let name = Self.blobName(in: request.uri) else {
            return try await sendEmpty(.notFound, headers, request, &outbound)
        }
        let info: BlobInfo?
        do { info = try await store.info(name) } catch {
            return try await sendEmpty(.internalServerError, headers, request, &outbound)
        }
        guard let info else { return try await sendEmpty(.notFound, headers, request, &outbound) }

        let etag = "\"\(name.text)\""
        headers.add(name: "ETag", value: etag)
        headers.add(name: "Cache-Control", value: Self.cacheControl)
        headers.add(name: "Accept-Ranges", value: "bytes")
        if Self.matches(ifNoneMatch: request.headers[canonicalForm: "if-none-match"], etag: etag) {
            return try await sendEmpty(.notModified, headers, request, &outbound, contentLength: false)
        }

        var range = ByteRangeRequest(header: request.headers.first(name: "range"), size: info.size)
        if let ifRange = request.headers.first(name: "if-range"), ifRange.trimmingASCIIWhitespace() != etag {
            range = .whole  // RFC 9110 §13.1.5: a validator that does not match means the whole representation
        }
        let status: HTTPResponseStatus
        let bytes: Range<Int>
        switch range {
        case .whole:
            status = .ok
            bytes = 0..<info.size
        case .partial(let wanted):
            status = .partialContent
            bytes = wanted
            headers.add(name: "Content-Range", value: "bytes \(wanted.lowerBound)-\(wanted.upperBound - 1)/\(info.size)")
        case .unsatisfiable:
            headers.add(name: "Content-Range", value: "bytes */\(info.size)")
            return try await sendEmpty(.rangeNotSatisfiable, headers, request, &outbound)
        }

        let reader: (any BlobReader)?
        do { reader = try await store.open(name, range: bytes) } catch {
            return try await sendEmpty(.internalServerError, headers, request, &outbound)
        }
        guard let reader else { return try await sendEmpty(.notFound, headers, request, &outbound) }
        headers.add(name: "Content-Type", value: "application/octet-stream")
        headers.add(name: "Content-Length", value: String(bytes.count))
        do {
            try await outbound.write(.head(HTTPResponseHead(version: request.version, status: status, headers: headers)))
            if request.method == .GET {
                var remaining = bytes.count
                while remaining > 0 {
                    let piece = try await reader.read(maxCount: min(chunkSize, remaining))
                    guard !piece.isEmpty else {
                        throw SealedPushError(.io, "blob \(name) ended before its size was served")
                    }
                    remaining -= piece.count
                    // Suspends while the client is not reading: at most `writeWindow` chunks are in memory.
                    try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: piece))))
                }
            }
            try await outbound.write(.end(nil))
        } catch {
            await reader.close()
            throw error  // the head is out: closing the connection is the only way to say the body is short
        }
        await reader.close()
    }

    private func sendEmpty(
        _ status: HTTPResponseStatus, _ headers: HTTPHeaders, _ request: HTTPRequestHead, _ outbound: inout Outbound,
        contentLength: Bool = true
    ) async throws {
        var headers = headers
        if contentLength { headers.add(name: "Content-Length", value: "0") }
        try await outbound.write(.head(HTTPResponseHead(version: request.version, status: status, headers: headers)))
        try await outbound.write(.end(nil))
    }

    /// The blob named by a request target `/<name>` (a query is ignored), or `nil`.
    static func blobName(in uri: String) -> BlobName? {
        let path = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard path.hasPrefix("/") else { return nil }
        return try? BlobName(validating: String(path.dropFirst()))
    }

    /// Whether `If-None-Match` lists this entity tag (weak comparison, RFC 9110 §13.1.2) or is `*`.
    static func matches(ifNoneMatch values: [Substring], etag: String) -> Bool {
        values.contains { value in
            let tag = value.trimmingASCIIWhitespace()
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}
