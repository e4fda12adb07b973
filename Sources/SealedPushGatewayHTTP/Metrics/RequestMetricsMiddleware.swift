import CoreMetrics
import HTTPTypes
import Hummingbird
import Metrics  // Timer.record(duration:)
import NIOConcurrencyHelpers

/// The API's request metrics, recorded around every request (the router's outermost middleware):
///
/// - `sealedpush_gateway_http_requests_total{route,method,status}`: answers, by the route's pattern
///   (`/v1/apps/{appId}/notifications`; `NotFound` for a path or a method no route has), the method, and the status.
/// - `sealedpush_gateway_http_request_seconds{route,method}`: the time from the request's head to its answer.
///
/// Every label has a bounded set of values: the API's routes, seven usual methods (any other counts as `other`), the
/// statuses the gateway answers. No label carries an app id, a device id or anything from a body.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {

    /// The counters and timers already made, by their labels (a metrics factory's lookup takes a lock and hashes the
    /// labels each time; this takes one lookup a request).
    private final class Series: Sendable {
        struct Key: Hashable {
            let route: String
            let method: String
            let status: Int
        }

        let factory: any MetricsFactory
        let made = NIOLockedValueBox<[Key: (CoreMetrics.Counter, CoreMetrics.Timer)]>([:])

        init(factory: any MetricsFactory) { self.factory = factory }

        func metrics(_ key: Key) -> (CoreMetrics.Counter, CoreMetrics.Timer) {
            made.withLockedValue { made in
                if let existing = made[key] { return existing }
                let series = (
                    CoreMetrics.Counter(
                        label: GatewayMetrics.Name.httpRequests,
                        dimensions: [("route", key.route), ("method", key.method), ("status", String(key.status))],
                        factory: factory),
                    CoreMetrics.Timer(
                        label: GatewayMetrics.Name.httpRequestSeconds,
                        dimensions: [("route", key.route), ("method", key.method)], factory: factory)
                )
                made[key] = series
                return series
            }
        }
    }

    private let series: Series

    /// Records through `factory` (the gateway's: ``GatewayMetrics/factory``).
    init(factory: any MetricsFactory) {
        series = Series(factory: factory)
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        do {
            let response = try await next(request, context)
            record(request, context, status: response.status.code, since: started)
            return response
        } catch {
            // Not reached behind ErrorResponseMiddleware, which answers every error; counted as Hummingbird would
            // answer it.
            record(request, context, status: (error as? any HTTPResponseError)?.status.code ?? 500, since: started)
            throw error
        }
    }

    private func record(_ request: Request, _ context: Context, status: Int, since started: ContinuousClock.Instant) {
        let key = Series.Key(
            route: context.endpointPath ?? "NotFound",
            method: Self.methods.contains(request.method) ? request.method.rawValue : "other", status: status)
        let (counter, timer) = series.metrics(key)
        counter.increment()
        timer.record(duration: started.duration(to: .now))
    }

    /// The methods counted by name; any other is `other` (a client choosing methods must not add series).
    private static var methods: Set<HTTPRequest.Method> { countedMethods }
}

/// ``RequestMetricsMiddleware``'s methods counted by name (a generic type has no stored static properties).
private let countedMethods: Set<HTTPRequest.Method> = [.get, .head, .post, .put, .delete, .patch, .options]
