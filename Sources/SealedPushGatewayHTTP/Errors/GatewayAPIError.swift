import Foundation
import HTTPTypes
import Hummingbird

/// An error answer of the gateway API (`Specs/gateway-api.yaml`, schema `Error`): an HTTP status, a stable
/// `code`, a `message` a user can act on and, where one input is at fault, the `field` naming it.
///
/// Messages never carry content, keys or device tokens: they are written from the request's shape and the limits,
/// never from the values a backend sent.
public struct GatewayAPIError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// The stable code of the contract (`malformedRequest`, `unauthorized`, `invalidKey`, …).
    public var code: String
    /// What was wrong, for a person.
    public var message: String
    /// The input at fault: a JSON path into the request (`registration.keyId`, `devices[3]`) or `header:NAME`.
    public var field: String?
    /// Bytes the request needed (`contentTooLarge`, `payloadTooLarge`, `requestTooLarge`).
    public var needed: Int?
    /// The limit that was passed, in the unit of ``needed``.
    public var limit: Int?
    /// The `Allow` header of a `405`.
    var allow: String?
    /// The `Retry-After` seconds of a `429`.
    var retryAfter: Int?

    /// Creates an error answer.
    /// - Parameters:
    ///   - status: The HTTP status.
    ///   - code: The contract's code.
    ///   - message: What was wrong.
    ///   - field: The input at fault, if one is.
    ///   - needed: Bytes needed, for size errors.
    ///   - limit: The limit passed, for size errors.
    public init(
        _ status: HTTPResponse.Status, _ code: String, _ message: String, field: String? = nil, needed: Int? = nil,
        limit: Int? = nil
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.needed = needed
        self.limit = limit
    }

    public var description: String {
        "GatewayAPIError(\(status.code) \(code)\(field.map { ", field \($0)" } ?? "")): \(message)"
    }

    // MARK: The contract's errors

    /// `400 malformedRequest`: not JSON, or not the JSON of the operation.
    static func malformed(_ message: String, field: String? = nil) -> GatewayAPIError {
        GatewayAPIError(.badRequest, "malformedRequest", message, field: field)
    }

    /// `429 rateLimited`: the app's send or device limit (``RateLimits``); `Retry-After` says when to try again.
    static func rateLimited(_ kind: String, appID: String, retryAfter: Int) -> GatewayAPIError {
        var error = GatewayAPIError(
            .tooManyRequests, "rateLimited",
            "app \(appID) is over its \(kind) rate limit (rateLimits in the gateway's configuration); retry after "
                + "\(retryAfter) s with the same Idempotency-Key")
        error.retryAfter = retryAfter
        return error
    }

    /// `422 invalidArgument`: a field out of range.
    static func invalid(_ message: String, field: String?) -> GatewayAPIError {
        GatewayAPIError(.unprocessableContent, "invalidArgument", message, field: field)
    }

    /// `401 unauthorized`.
    static let unauthorized = GatewayAPIError(
        .unauthorized, "unauthorized", "a valid API key is required: send `Authorization: Bearer <key>`")

    /// `403 forbidden`: the key belongs to another app. Says nothing about what exists in this one.
    static let forbidden = GatewayAPIError(.forbidden, "forbidden", "this API key does not act for this app")

    /// `404 notFound`.
    static func notFound(_ message: String) -> GatewayAPIError { GatewayAPIError(.notFound, "notFound", message) }

    /// `405 methodNotAllowed`: the path exists, the method does not; `Allow` lists the ones that do (`HEAD` wherever
    /// `GET`).
    static func methodNotAllowed(_ allowed: [HTTPRequest.Method]) -> GatewayAPIError {
        var error = GatewayAPIError(
            .methodNotAllowed, "methodNotAllowed",
            "this path answers " + allowed.map(\.rawValue).joined(separator: ", ") + " only")
        error.allow = allowed.map(\.rawValue).joined(separator: ", ")
        return error
    }

    /// `501 methodNotImplemented`: a request method the server does not implement (RFC 9110 §15.6.2).
    /// - Parameter method: The method, as the request line has it (a token).
    /// - Returns: The error, naming at most the first 32 characters of the method.
    static func methodNotImplemented(_ method: String) -> GatewayAPIError {
        let named = method.count > 32 ? String(method.prefix(32)) + "…" : method
        return GatewayAPIError(
            .notImplemented, "methodNotImplemented",
            "the method \(named) is not one this server implements (the API uses GET, HEAD, PUT, POST and DELETE)")
    }

    /// `501 transferCodingNotImplemented`: a request body sent with a transfer coding the server does not implement,
    /// before a final `chunked` (RFC 9112 §6.1), field `header:Transfer-Encoding`.
    /// - Parameter coding: The coding's name, or what stands for it.
    /// - Returns: The error.
    static func transferCodingNotImplemented(_ coding: String) -> GatewayAPIError {
        GatewayAPIError(
            .notImplemented, "transferCodingNotImplemented",
            "the request's body is sent with the transfer coding \(coding), which this server does not implement: send "
                + "the body chunked alone, or with a Content-Length", field: "header:Transfer-Encoding")
    }

    /// `503 unavailable`.
    static let unavailable = GatewayAPIError(
        .serviceUnavailable, "unavailable", "the database did not answer in time or the gateway is stopping; retry later")

    // MARK: The response

    /// The JSON body of the `Error` schema.
    var body: [UInt8] {
        struct Body: Encodable {
            var code: String
            var message: String
            var field: String?
            var needed: Int?
            var limit: Int?
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = Body(code: code, message: message, field: field, needed: needed, limit: limit)
        return (try? Array(encoder.encode(body))) ?? Array(#"{"code":"unavailable","message":"error"}"#.utf8)
    }

    /// The HTTP response: the status, the JSON body and the headers the contract names (`WWW-Authenticate` on
    /// `401`, `Retry-After` on `503` and `429`).
    var response: Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if status == .unauthorized { headers[.wwwAuthenticate] = #"Bearer realm="sealed-push-gateway""# }
        if status == .serviceUnavailable { headers[.retryAfter] = "5" }
        if let allow { headers[.allow] = allow }
        if let retryAfter { headers[.retryAfter] = "\(retryAfter)" }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}
