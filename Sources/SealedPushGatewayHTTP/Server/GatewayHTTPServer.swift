import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import SealedPushCore
import SealedPushGateway
import ServiceLifecycle

/// The gateway's HTTP API (`Specs/gateway-api.yaml`) on Hummingbird 2, as a swift-service-lifecycle `Service`.
///
/// Run it in a `ServiceGroup` (``GatewayServiceGroup`` builds the gateway's): on graceful shutdown it stops
/// accepting connections and finishes the requests in flight, then ``run()`` returns. The store is not closed here
/// (other services, such as the delivery worker, share it); ``GatewayServiceGroup`` closes it last.
///
/// Every `/v1/apps/{appId}/…` route authenticates first (`401`, or `403` for another app's key before anything
/// of this app is read), then reads the body up to ``GatewayHTTPConfiguration/maxBodyBytes`` (`413`), then
/// validates it (`400`/`422` naming the field). Content is sealed at once; only sealed bodies reach the store, and
/// neither logs nor error messages carry content. Every `GET` route answers `HEAD` too; what HTTP/1.1 itself requires
/// of each request (one `Host`, a known method and transfer coding) is checked before the routes
/// (``GatewayHTTP1Channel``).
public struct GatewayHTTPServer: Service, CustomStringConvertible {
    /// Listening address and limits.
    public let configuration: GatewayHTTPConfiguration
    private let store: any GatewayStore
    let metrics: GatewayMetrics
    private let logger: Logger
    private let onListening: @Sendable (Int) async -> Void
    let calls: StoreCalls
    let fanOut: NotificationFanOut
    let limiter: AppRateLimiter
    let receipts: ReceiptIntake
    private let keyUses = APIKeyUses()
    private let keyRecords = RecentlyRead<StoredAPIKey>()
    let clock: @Sendable () -> Date
    private let tls: GatewayTLSContext?
    private let healthCheck: GatewayHealth
    /// Whether the graceful stop has begun (``DrainService`` marks it; `/healthz` answers `503` `stopping`).
    let shutdownState = ShutdownState()
    /// The log of refused API keys (at most one line every 10 s).
    private let authRefusals: AuthenticationRefusals

    /// Creates the server.
    /// - Parameters:
    ///   - configuration: Listening address and limits.
    ///   - store: The gateway's store (migrated).
    ///   - metrics: Where the API records, and what `/metrics` renders.
    ///   - overflow: Where over-budget content goes by reference; nil answers such content `422`.
    ///   - logger: The server's logger (never given content).
    ///   - clock: The gateway's clock (registrations' skew rule, notification times).
    ///   - tls: The certificate to serve HTTPS with (each new connection takes its current one); nil: plain HTTP.
    ///   - webhook: The gateway's webhook (the delivery service's), which receipts are forwarded to; nil: none.
    ///   - delivery: The delivery service of this process, if it delivers: a send hands it its jobs directly when
    ///     it has free slots and nothing queued (``DeliveryService/reserve(jobs:)``), or tells it jobs were queued
    ///     (``DeliveryService/jobsQueued()``) so it claims them at once rather than at its next poll.
    ///   - onListening: Called with the bound port once the server listens (useful with port 0).
    public init(
        configuration: GatewayHTTPConfiguration, store: any GatewayStore, metrics: GatewayMetrics,
        overflow: OverflowConfiguration? = nil, logger: Logger = Logger(label: "sealed-push.gateway.http"),
        clock: @escaping @Sendable () -> Date = { Date() }, tls: GatewayTLSContext? = nil,
        webhook: UnregisteredWebhook? = nil, delivery: DeliveryService? = nil,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) {
        self.tls = tls
        self.authRefusals = AuthenticationRefusals(logger: logger)
        self.healthCheck = GatewayHealth(
            store: store, delivery: delivery, deadline: configuration.healthDeadline, logger: logger,
            shutdown: shutdownState)
        self.configuration = configuration
        self.store = store
        self.metrics = metrics
        self.logger = logger
        self.onListening = onListening
        self.clock = clock
        let calls = StoreCalls(store: store, deadline: configuration.storeDeadline, logger: logger)
        self.calls = calls
        let limiter = AppRateLimiter(limits: configuration.rateLimits)
        self.limiter = limiter
        self.fanOut = NotificationFanOut(
            calls: calls, sealers: AppSealers(), overflow: overflow,
            fetcher: overflow.map { AttachmentFetcher(policy: $0.fetchPolicy) }, metrics: metrics, limiter: limiter,
            clock: clock,
            enqueues: GroupCommit(
                maxBatch: Self.maxEnqueueBatch, metrics: GroupCommitMetrics(write: "enqueue", factory: metrics.factory)
            ) { batch in
                try await calls.run("enqueue") { try await $0.enqueueBatch(batch) }
            },
            delivery: delivery)
        self.receipts = ReceiptIntake(
            calls: calls, openers: AppReceiptOpeners(), limiter: limiter, metrics: metrics, clock: clock,
            webhook: webhook)
    }

    /// Replaces the per-app rate limits while serving (`serve` reloads them from its configuration on `SIGHUP`).
    /// - Parameter rateLimits: The new limits.
    public func updateRateLimits(_ rateLimits: RateLimits) {
        limiter.update(limits: rateLimits)
    }

    /// The most sends committed in one transaction.
    static let maxEnqueueBatch = 64

    /// The listening address only (service groups log their services' descriptions).
    public var description: String { "GatewayHTTPServer(\(configuration.host):\(configuration.port))" }

    /// Listens and serves until graceful shutdown (or cancellation).
    public func run() async throws {
        let onListening = self.onListening
        let idle = configuration.idleTimeout.components
        let idleTimeout = TimeAmount.nanoseconds(idle.seconds * 1_000_000_000 + idle.attoseconds / 1_000_000_000)
        let tls = self.tls
        // Checks request heads, closes refused connections and answers malformed HTTP with the contract's Error object.
        let server = HTTPServerBuilder { responder in
            let http1 = GatewayHTTP1Channel(responder: responder, idleTimeout: idleTimeout)
            guard let tls else { return http1 }
            return ReloadableTLSChannel(base: http1, tls: tls)
        }
        let application = Application(
            router: makeRouter(),
            server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
        let (host, port, grace, logger) = (configuration.host, configuration.port, configuration.requestGrace, logger)
        // At a graceful stop the application closes its listener and waits for the requests in flight; a client that
        // stops sending in the middle of a body would hold the process until the idle timeout. So the requests get
        // `requestGrace`, then the connections still open are closed (the application's task is cancelled).
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    try await application.run()
                } catch where Task.isCancelled {
                    return true  // closed after the grace
                } catch {
                    throw ListenError.bind(error, listener: "the API", host: host, port: port) ?? error
                }
                return true
            }
            group.addTask {
                do { try await gracefulShutdown() } catch { return false }
                do { try await Task.sleep(for: grace) } catch { return false }
                logger.warning(
                    "requests still in flight after the grace: closing their connections",
                    metadata: ["requestGraceSeconds": "\(grace.components.seconds)"])
                return false
            }
            while let finished = try await group.next() {
                if finished {
                    group.cancelAll()
                    return
                }
                // The grace ran out (or the watch was cancelled): end the application.
                group.cancelAll()
            }
        }
    }

    // MARK: Routes

    func makeRouter() -> Router<GatewayRequestContext> {
        typealias Handler = @Sendable (Request, GatewayRequestContext) async -> Response
        // The one table of the API's routes: registered with the router, and the source of the 405 answers' `Allow`.
        let routes: [(path: String, method: HTTPRequest.Method, handler: Handler)] = [
            ("/v1/apps/:appId/devices/:deviceId", .put, { r, c in await self.answer { try await self.putDevice(r, c) } }),
            ("/v1/apps/:appId/devices/:deviceId", .get, { r, c in await self.answer { try await self.getDevice(r, c) } }),
            ("/v1/apps/:appId/devices/:deviceId", .delete, { r, c in await self.answer { try await self.deleteDevice(r, c) } }),
            ("/v1/apps/:appId/users/:userId", .delete, { r, c in await self.answer { try await self.deleteUser(r, c) } }),
            ("/v1/apps/:appId/notifications", .post, { r, c in await self.answer { try await self.sendNotification(r, c) } }),
            ("/v1/apps/:appId/notifications/:notificationId", .get, { r, c in
                await self.answer { try await self.getNotification(r, c) }
            }),
            ("/v1/apps/:appId/notifications/:notificationId", .delete, { r, c in
                await self.answer { try await self.withdrawNotification(r, c) }
            }),
            ("/v1/apps/:appId/notifications/:notificationId/update", .post, { r, c in
                await self.answer { try await self.updateNotification(r, c) }
            }),
            ("/v1/apps/:appId/badge", .post, { r, c in await self.answer { try await self.setBadge(r, c) } }),
            ("/v1/apps/:appId/receipts", .post, { r, c in await self.answer { try await self.takeReceipt(r, c) } }),
            ("/healthz", .get, { _, _ in await self.health() }),
            ("/livez", .get, { _, _ in GatewayHealth.liveness() }),
            ("/metrics", .get, { _, _ in await self.answer { try await self.renderMetrics() } }),  // 404 with metricsListen
        ]
        // Every GET route answers HEAD as its GET, without the body (RFC 9110 §9.1, §9.3.2).
        let router = Router(context: GatewayRequestContext.self, options: .autoGenerateHeadEndpoints)
        // Every answer counted, by its route's pattern, method and status (a middleware wraps the routes added after
        // it, and the router's answer for a path it does not have).
        router.add(middleware: RequestMetricsMiddleware<GatewayRequestContext>(factory: metrics.factory))
        var allowed: [(path: String, allowed: [HTTPRequest.Method])] = []
        for route in routes {
            router.on(RouterPath(route.path), method: route.method, use: route.handler)
            // HEAD is allowed wherever GET is, and listed right after it.
            let methods: [HTTPRequest.Method] = route.method == .get ? [.get, .head] : [route.method]
            if let index = allowed.firstIndex(where: { $0.path == route.path }) {
                allowed[index].allowed.append(contentsOf: methods)
            } else {
                allowed.append((route.path, methods))
            }
        }
        // Around the router's own answers (a path or a method the routes do not have; a middleware wraps only what is
        // added after it): every error is the contract's Error object, as the routes answer theirs.
        router.add(middleware: ErrorResponseMiddleware<GatewayRequestContext>())
        // Any other method on these paths: 405 with `Allow`, not 404 (the path exists).
        router.add(middleware: MethodNotAllowedMiddleware<GatewayRequestContext>(routes: allowed))
        return router
    }

    /// Runs a handler; a contract error becomes its response, anything else a logged `503` (type name only).
    private func answer(_ handler: () async throws -> Response) async -> Response {
        do {
            return try await handler()
        } catch let error as GatewayAPIError {
            return error.response
        } catch {
            logger.error("request failed", metadata: ["error": "\(type(of: error))"])
            return GatewayAPIError.unavailable.response
        }
    }

    /// The app of the path, after checking the request's key acts for it.
    func authorizedApp(_ request: Request, _ context: GatewayRequestContext) async throws -> String {
        let appID = context.pathID("appId") ?? ""
        try await BearerAuthenticator(calls: calls, uses: keyUses, keys: keyRecords, refusals: authRefusals)
            .authorize(request, appID: appID, client: context.clientAddress)
        return appID
    }

    private func deviceID(_ context: GatewayRequestContext) throws -> String {
        guard let id = context.pathID("deviceId"), Identifier.isValid(id) else {
            throw GatewayAPIError.notFound("no such device in this app (a device id is 1 to 128 of A-Z a-z 0-9 . _ ~ -)")
        }
        return id
    }

    private func putDevice(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let appID = try await authorizedApp(request, context)
        guard let deviceID = context.pathID("deviceId"), Identifier.isValid(deviceID) else {
            throw GatewayAPIError.invalid(
                "the device id in the path must be 1 to 128 of A-Z a-z 0-9 . _ ~ -", field: "path:deviceId")
        }
        let body = try await RequestBodyReader.read(request, limit: configuration.maxBodyBytes)
        let now = clock()
        let device = try DeviceRequest(body: body, now: now)
        if device.address.platform == .fcm {
            // An Android device of an app the gateway cannot reach over FCM would only collect failed jobs.
            let app = try await calls.run("app") { try await $0.app(id: appID) }
            guard app?.fcm != nil else {
                throw GatewayAPIError(
                    .unprocessableContent, "fcmNotConfigured",
                    "app \(appID) has no FCM credentials in this gateway: the operator adds them with "
                        + "`sealed-push-gateway app set-fcm` (project, service-account file, Android application id)",
                    field: "platform")
            }
        }
        let result = try await calls.run("putDevice") {
            try await $0.putDevice(
                appID: appID, deviceID: deviceID, address: device.address, registration: device.registration,
                userID: device.userID, now: now)
        }
        fanOut.forgetDevices(appID: appID, [deviceID] + result.tokenTakenFrom)
        return try JSONResponse.make(result.created ? .created : .ok, DeviceModel(result.device))
    }

    private func getDevice(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let appID = try await authorizedApp(request, context)
        let deviceID = try deviceID(context)
        guard let device = try await calls.run("device", { try await $0.device(appID: appID, deviceID: deviceID) }) else {
            throw GatewayAPIError.notFound("no such device in this app")
        }
        return try JSONResponse.make(.ok, DeviceModel(device))
    }

    private func deleteDevice(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let appID = try await authorizedApp(request, context)
        let deviceID = try deviceID(context)
        let now = clock()
        guard try await calls.run("removeDevice", { try await $0.removeDevice(appID: appID, deviceID: deviceID, now: now) })
        else { throw GatewayAPIError.notFound("no such device in this app") }
        fanOut.forgetDevices(appID: appID, [deviceID])
        return Response(status: .noContent)
    }

    /// Removes every device of a user (for example when the account is deleted); answers which, possibly none.
    private func deleteUser(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let appID = try await authorizedApp(request, context)
        guard let userID = context.pathID("userId"), Identifier.isValid(userID) else {
            throw GatewayAPIError.invalid(
                "the user id in the path must be 1 to 128 of A-Z a-z 0-9 . _ ~ -", field: "path:userId")
        }
        let now = clock()
        let removed = try await calls.run("removeDevices") { try await $0.removeDevices(appID: appID, userID: userID, now: now) }
        fanOut.forgetDevices(appID: appID, removed)
        return try JSONResponse.make(.ok, UserDevicesRemovedModel(userId: userID, devicesRemoved: removed))
    }

    private func sendNotification(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let appID = try await authorizedApp(request, context)
        let idempotencyKey = try Self.idempotencyKey(request)
        if idempotencyKey == nil { try admitSend(appID: appID) }
        var body = try await RequestBodyReader.read(request, limit: configuration.maxBodyBytes)
        defer { for index in body.indices { body[index] = 0 } }  // the content in clear, as it arrived
        let send = try SendRequest(body: body)
        let digest = idempotencyKey == nil ? nil : Self.requestDigest(body)
        if let earlier = try await replayOrAdmit(appID: appID, idempotencyKey: idempotencyKey, requestDigest: digest) {
            return self.accepted(earlier, appID: appID)
        }
        guard
            let accepted = try await fanOut.send(
                appID: appID, request: send, idempotencyKey: idempotencyKey, requestDigest: digest, replayChecked: true)
        else { throw GatewayAPIError.unavailable }  // not reached: only skipMissingDevices answers nil
        return self.accepted(accepted, appID: appID)
    }

    /// Takes one send from the app's sends bucket, or refuses with `429 rateLimited`.
    func admitSend(appID: String) throws {
        if let wait = limiter.admitSend(appID: appID) {
            metrics.recordRateLimited(appID: appID, limit: "sends")
            throw GatewayAPIError.rateLimited("send", appID: appID, retryAfter: wait)
        }
    }

    /// The rate limit of a request that counts as a send, and its replay. A request without an `Idempotency-Key` was
    /// admitted before its body was read (nothing to do here). One with a key is first looked up: a retry of an
    /// accepted request is a no-op and is answered as the replay it is — whatever the limits, taking no token, and
    /// whatever happened to the notification since (a withdrawal) — and only a new request takes a token.
    /// - Returns: The first request's answer for a replay; nil for a new request, admitted.
    /// - Throws: ``GatewayAPIError`` `429 rateLimited`, or `422 idempotencyKeyReused` for the key with another body.
    func replayOrAdmit(
        appID: String, idempotencyKey: String?, requestDigest: String?
    ) async throws -> NotificationFanOut.Accepted? {
        guard let idempotencyKey else { return nil }
        if let earlier = try await fanOut.replayed(
            appID: appID, idempotencyKey: idempotencyKey, requestDigest: requestDigest)
        {
            return earlier
        }
        try admitSend(appID: appID)
        return nil
    }

    private func getNotification(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let appID = try await authorizedApp(request, context)
        guard let text = context.pathID("notificationId"), let id = UUID(uuidString: text) else {
            throw GatewayAPIError.notFound("no such notification in this app (an id is a UUID)")
        }
        guard let status = try await calls.run("status", { try await $0.notificationStatus(appID: appID, notificationID: id) })
        else { throw GatewayAPIError.notFound("no such notification in this app") }
        return try JSONResponse.make(.ok, NotificationStatusModel(status))
    }

    // MARK: Operations

    private func health() async -> Response { await healthCheck.response() }  // Lifecycle/GatewayHealth.swift

    private func renderMetrics() async throws -> Response {
        guard configuration.metricsOnAPI else {
            throw GatewayAPIError.notFound(
                "this gateway serves /metrics on its metrics listener (metricsListen), not on the API")
        }
        return await MetricsEndpoint(calls: calls, metrics: metrics).response()
    }

    /// The digest kept with an `Idempotency-Key`: SHA-256 of the body's canonical JSON (`Specs/envelope-v1.md`
    /// §4.1: members sorted, no whitespace, minimal escapes), so a retry that serializes the same JSON differently
    /// (member order, spacing) is still a retry. The canonical bytes hold content in clear and are zeroed.
    static func requestDigest(_ body: [UInt8]) -> String {
        guard let value = try? JSONParser.parse(body, maxDepth: 34, errorCode: .malformedPayload) else {
            return NewNotification.requestDigest(of: body)  // not reached: the body was parsed as a send already
        }
        var writer = JSONWriter()
        writer.value(value)
        var canonical = writer.bytes
        defer { for index in canonical.indices { canonical[index] = 0 } }
        return NewNotification.requestDigest(of: canonical)
    }

    // MARK: Headers

    private static let idempotencyKeyName = HTTPField.Name("Idempotency-Key")!
    static let idempotentReplayed = HTTPField.Name("Idempotent-Replayed")!

    /// The `Idempotency-Key`: 1 to 255 printable ASCII characters.
    static func idempotencyKey(_ request: Request) throws -> String? {
        let values = request.headers[values: idempotencyKeyName]
        guard let key = values.first else { return nil }
        guard values.count == 1, (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else {
            throw GatewayAPIError.invalid(
                "Idempotency-Key must be one header of 1 to 255 printable ASCII characters without spaces",
                field: "header:Idempotency-Key")
        }
        return key
    }
}
