import Hummingbird
import HTTPTypes
import NIOHTTP1

/// Reads a request body up to the gateway's `maxBodyBytes`, answering `413 requestTooLarge` beyond it.
///
/// A declared `Content-Length` over the limit is refused before anything is read; a body without one (chunked)
/// is refused as soon as the bytes read pass the limit — without reading further: the connection is closed after
/// the answer (``ConnectionGuardHandler``).
enum RequestBodyReader {
    /// The whole body.
    /// - Parameters:
    ///   - request: The request.
    ///   - limit: The most bytes accepted.
    ///   - limitText: What the limit is, for the refusal's message; nil: the gateway's `maxBodyBytes`.
    /// - Returns: The body's bytes.
    /// - Throws: ``GatewayAPIError`` `requestTooLarge` (413) with `needed` (when known) and `limit`.
    static func read(_ request: Request, limit: Int, limitText: String? = nil) async throws -> [UInt8] {
        let limitText = limitText ?? "the gateway's limit of \(limit) bytes (maxBodyBytes)"
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limit {
            throw tooLarge(needed: declared, limit: limit, limitText)
        }
        var bytes: [UInt8] = []
        do {
            for try await buffer in request.body {
                guard bytes.count + buffer.readableBytes <= limit else {
                    throw tooLarge(needed: nil, limit: limit, limitText)
                }
                bytes.append(contentsOf: buffer.readableBytesView)
            }
        } catch is HTTPParserError {
            // A bad chunk size or a body cut short by the framing: the connection ends after this answer.
            throw GatewayAPIError.malformed("the request body's HTTP framing is malformed (chunked encoding)")
        }
        return bytes
    }

    private static func tooLarge(needed: Int?, limit: Int, _ limitText: String) -> GatewayAPIError {
        GatewayAPIError(
            .contentTooLarge, "requestTooLarge", "the request body is over \(limitText)", needed: needed, limit: limit)
    }
}
