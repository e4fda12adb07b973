import Foundation
import HTTPTypes
import Hummingbird

/// A JSON response of one of the contract's schemas.
enum JSONResponse {
    /// Encodes `value` (sorted keys, absent optionals left out).
    static func make(
        _ status: HTTPResponse.Status, _ value: some Encodable, headers extra: HTTPFields = [:]
    ) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var headers: HTTPFields = [.contentType: "application/json"]
        headers.append(contentsOf: extra)
        return Response(
            status: status, headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: Array(try encoder.encode(value)))))
    }
}
