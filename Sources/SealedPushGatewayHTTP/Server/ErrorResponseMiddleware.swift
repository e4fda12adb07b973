import HTTPTypes
import Hummingbird

/// The outermost middleware of the gateway's router: every error answer is the contract's `Error` object.
///
/// Errors Hummingbird raises itself (`404` for a path the API does not have, such as `GET /admin` or
/// `GET /v1/apps`) would answer with an empty body; they become ``GatewayAPIError``s of the same status. (A refusal
/// given while the request's body is still arriving is closed by ``ConnectionGuardHandler``.) A `HEAD` gets these
/// answers without their body, as the router's `HEAD` routes answer (RFC 9110 §9.3.2).
struct ErrorResponseMiddleware<Context: RequestContext>: RouterMiddleware {

    /// What the API's `404` for an unknown path says: every path of `Specs/gateway-api.yaml`.
    static var apiPaths: String {
        "no such path: the API has /v1/apps/{appId}/devices/{deviceId}, /v1/apps/{appId}/users/{userId}, "
            + "/v1/apps/{appId}/notifications[/{notificationId}[/update]], /v1/apps/{appId}/badge, "
            + "/v1/apps/{appId}/receipts, /healthz, /livez and /metrics"
    }

    /// What a `404` for an unknown path says (the API's paths by default).
    var notFound = Self.apiPaths

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let response: Response
        do {
            response = try await next(request, context)
        } catch let error as GatewayAPIError {
            response = error.response
        } catch let error as any HTTPResponseError {
            response = Self.apiError(error.status, notFound: notFound).response
        } catch {
            response = GatewayAPIError.unavailable.response
        }
        return request.method == .head ? response.createHeadResponse() : response
    }

    /// The contract's error for a status Hummingbird answered on its own; `notFound` is what a `404` says.
    static func apiError(_ status: HTTPResponse.Status, notFound: String = apiPaths) -> GatewayAPIError {
        switch status.code {
        case 404:
            return .notFound(notFound)
        case 413:
            return GatewayAPIError(.contentTooLarge, "requestTooLarge", "the request body is over the gateway's limit")
        case 500...:
            return .unavailable
        default:
            return .malformed("the request could not be read as HTTP (\(status.code) \(status.reasonPhrase))")
        }
    }
}
