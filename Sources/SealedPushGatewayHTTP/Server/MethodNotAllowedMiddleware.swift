import HTTPTypes
import Hummingbird

/// Answers `405 methodNotAllowed` with an `Allow` header when a request's path is one of the API's but its method
/// is not (the router alone would say `404`, as if the path did not exist).
///
/// The router throws `404` only when no route matched (the gateway's handlers answer their own `404`s), so a thrown
/// `404` on a known path means an undeclared method.
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {

    private let routes: [(segments: [Substring], allowed: [HTTPRequest.Method])]

    /// - Parameter routes: Each path pattern (`:name` segments match any one segment) and its methods, in the order
    ///   `Allow` lists them (`HEAD` included wherever `GET` is: the router answers it).
    init(routes: [(path: String, allowed: [HTTPRequest.Method])]) {
        self.routes = routes.map { ($0.path.split(separator: "/"), $0.allowed) }
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            guard let allowed = allowedMethods(path: request.uri.path) else { throw error }
            return GatewayAPIError.methodNotAllowed(allowed).response
        }
    }

    /// The methods of the route whose pattern matches `path`, if one does.
    func allowedMethods(path: String) -> [HTTPRequest.Method]? {
        let segments = path.split(separator: "/")
        for route in routes where route.segments.count == segments.count {
            let matches = zip(route.segments, segments).allSatisfy { pattern, segment in
                pattern.hasPrefix(":") || pattern == segment
            }
            if matches { return route.allowed }
        }
        return nil
    }
}
