// swift-tools-version:6.1
import PackageDescription

// SealedPush: end-to-end encrypted push notifications.
//
// Module map (see README.md):
// - SealedPushCore: envelope v1 wire format, content model, APNs payload model and budget, errors. Foundation only.
// - SealedPushServer: sealing on libsodium (HPKE mode_auth), APNs provider token on OpenSSL, APNs delivery.
// - SealedPushClient: opening on swift-crypto, the notification-service step, device key ring, replay guard.
// - SealedPushGateway: the gateway's storage (SQLite on GRDB, PostgreSQL on postgres-nio) and durable queue.
// - SealedPushGatewayHTTP: the gateway's HTTP API on Hummingbird 2 (Specs/gateway-api.yaml); `sealed-push-gateway` runs it.
// An iOS app depends on SealedPushClient + SealedPushCore only; neither links libsodium nor OpenSSL.

let package = Package(
    name: "SealedPush",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "SealedPushCore", targets: ["SealedPushCore"]),
        .library(name: "SealedPushServer", targets: ["SealedPushServer"]),
        .library(name: "SealedPushClient", targets: ["SealedPushClient"]),
        .library(name: "SealedPushAPNs", targets: ["SealedPushAPNs"]),
        .library(name: "SealedPushBlobServer", targets: ["SealedPushBlobServer"]),
        .library(name: "SealedPushClientURLSession", targets: ["SealedPushClientURLSession"]),
        .library(name: "SealedPushClientNIO", targets: ["SealedPushClientNIO"]),
        .library(name: "SealedPushAPNsEmulator", targets: ["SealedPushAPNsEmulator"]),
        .library(name: "SealedPushAPNsEmulatorRules", targets: ["SealedPushAPNsEmulatorRules"]),
        .library(name: "SealedPushFCM", targets: ["SealedPushFCM"]),
        .library(name: "SealedPushFCMEmulator", targets: ["SealedPushFCMEmulator"]),
        .library(name: "SealedPushGateway", targets: ["SealedPushGateway"]),
        .library(name: "SealedPushGatewayHTTP", targets: ["SealedPushGatewayHTTP"]),
        .executable(name: "sealed-push", targets: ["sealed-push"]),
        .executable(name: "sealed-push-gateway", targets: ["sealed-push-gateway"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // Gateway storage only (SealedPushGateway and its tests).
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // Gateway: delivery workers and the HTTP server (SealedPushGateway, SealedPushGatewayHTTP, sealed-push-gateway).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // The HTTP parts of the gateway's connection guard (already in the graph through Hummingbird).
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
    ],
    targets: [
        // MARK: Core (Foundation only)
        .target(name: "SealedPushCore"),

        // MARK: System C libraries (server side only)
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),

        // MARK: The Edwards-to-Montgomery map for X25519 public keys (public data only; see its header)
        .target(name: "CCurve25519Map"),

        // MARK: Server: libsodium sealing, `aps` emission, OpenSSL provider token (no networking)
        .target(
            name: "SealedPushServer",
            dependencies: ["SealedPushCore", "CSodium", "COpenSSL", "CCurve25519Map"]
        ),

        // MARK: Provider connections: what the APNs and FCM clients' HTTP/2 pipelines share
        .target(
            name: "SealedPushProviderHTTP2",
            dependencies: [
                "SealedPushCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ]
        ),

        // MARK: APNs delivery: HTTP/2 provider client (networking kept out of SealedPushServer)
        .target(
            name: "SealedPushAPNs",
            dependencies: [
                "SealedPushCore", "SealedPushServer", "SealedPushProviderHTTP2",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        // MARK: Blob server: any BlobStore over HTTP/1.1 (GET/HEAD, Range, ETag, immutable caching, expiry sweeps)
        .target(
            name: "SealedPushBlobServer",
            dependencies: [
                "SealedPushCore", "SealedPushServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),

        // MARK: Client: swift-crypto opening, extension step, key ring (no C library of ours)
        .target(
            name: "SealedPushClient",
            dependencies: [
                "SealedPushCore",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),

        // MARK: Client blob transport on URLSession (what the iOS extension links; FoundationNetworking on Linux)
        .target(name: "SealedPushClientURLSession", dependencies: ["SealedPushClient", "SealedPushCore"]),

        // MARK: Client blob transport on SwiftNIO (servers, the CLI, Linux: reads only as fast as the body is taken)
        .target(
            name: "SealedPushClientNIO",
            dependencies: [
                "SealedPushClient", "SealedPushCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        // MARK: APNs emulator: TLS + HTTP/2 peer with Apple's rules and fault injection
        // Apple's request rules, the provider-token check, the configuration and the fault plan: no NIO, so the
        // libFuzzer target that fuzzes them builds without NIO's and BoringSSL's sanitized builds.
        .target(
            name: "SealedPushAPNsEmulatorRules",
            dependencies: ["SealedPushCore", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(
            name: "SealedPushAPNsEmulator",
            dependencies: [
                "SealedPushCore", "SealedPushAPNsEmulatorRules", "COpenSSL",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        // MARK: FCM delivery: HTTP v1 over HTTP/2, OAuth from a service account (Specs/fcm-v1.md)
        .target(
            name: "SealedPushFCM",
            dependencies: [
                "SealedPushCore", "SealedPushServer", "SealedPushProviderHTTP2",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        // MARK: FCM emulator: TLS (h2 and http/1.1) peer with FCM's rules, an OAuth token endpoint, faults
        .target(
            name: "SealedPushFCMEmulator",
            dependencies: [
                "SealedPushCore", "SealedPushServer",
                "SealedPushAPNsEmulator",  // its certificate generator and fault plan
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        // MARK: Gateway storage: apps, devices, durable per-device queue on SQLite (embedded) or PostgreSQL
        .target(
            name: "SealedPushGateway",
            dependencies: [
                "SealedPushCore", "SealedPushAPNs", "SealedPushFCM",
                .product(name: "Crypto", package: "swift-crypto"),  // SHA-256 of API keys, webhook HMAC
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),  // outbound HTTPS (OneShotHTTP1Exchange: webhook, attachments)
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // MARK: Gateway HTTP API (Specs/gateway-api.yaml) on Hummingbird 2: auth, sealing fan-out, health, metrics
        .target(
            name: "SealedPushGatewayHTTP",
            dependencies: [
                "SealedPushGateway", "SealedPushServer", "SealedPushCore",
                "SealedPushAPNs",  // the delivery section's endpoints and client settings
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),  // HTTPS: a TLS child channel per connection
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),  // SIGHUP reloads the certificate
                // Attachments the gateway fetches from a backend's URL (HTTP/1.1, TLS).
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),  // ConnectionGuardHandler's parts
                .product(name: "NIOCore", package: "swift-nio"),  // the listening channel's port
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),  // Timer.record(duration:)
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // MARK: Command-line support shared by the two executables: a mistyped command named as such
        .target(
            name: "SealedPushCommandLine",
            dependencies: [
                "SealedPushCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: Gateway executable (`sealed-push-gateway init|serve`), its own product so the CLI stays lean
        .executableTarget(
            name: "sealed-push-gateway",
            dependencies: [
                "SealedPushGatewayHTTP", "SealedPushGateway", "SealedPushServer", "SealedPushCore",
                "SealedPushBlobServer",  // overflow.listen: the gateway serves its own blob store
                "SealedPushCommandLine",
                "SealedPushProviderHTTP2",  // check: a tunnel through delivery.proxy, as delivery opens them
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // MARK: Gateway test support: a PostgreSQL database per test (store, delivery and HTTP tests)
        .target(
            name: "SealedPushGatewayTestSupport",
            dependencies: [
                "SealedPushAPNsEmulator", "SealedPushServer",  // KeyedEmulator: an emulator and its app's .p8 key
                "SealedPushGateway",  // HookedGatewayStore: a store with test hooks around some calls
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // WebhookReceiver: a loopback HTTP/1.1 server recording the gateway's webhook calls; HMACCheck: the
                // signature recomputed from RFC 2104 on a bare SHA-256.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),  // WebhookReceiver over TLS
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),

        // MARK: Test support: vector loading, fixed keys
        .target(
            name: "SealedPushTestSupport",
            dependencies: ["SealedPushCore"],
            resources: [.copy("Vectors")]
        ),
        // A real HTTP CONNECT proxy on loopback, for the provider clients' proxy tests.
        .target(
            name: "SealedPushProxyTestSupport",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),

        // MARK: CLI
        .executableTarget(
            name: "sealed-push",
            dependencies: [
                "SealedPushCore", "SealedPushServer", "SealedPushClient", "SealedPushAPNs", "SealedPushAPNsEmulator",
                "SealedPushBlobServer", "SealedPushClientNIO", "SealedPushFCM", "SealedPushFCMEmulator",
                "SealedPushCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Vector generator (`swift run sealed-push-vectors`), not part of any product
        .executableTarget(
            name: "sealed-push-vectors",
            // SealedPushClient: the openers' verdicts for the differential tests against the Java library.
            dependencies: ["SealedPushCore", "SealedPushServer", "SealedPushClient", "SealedPushTestSupport"]
        ),

        // MARK: Tests (mirror the sources)
        .testTarget(name: "SealedPushCoreTests", dependencies: ["SealedPushCore", "SealedPushTestSupport"]),
        .testTarget(
            name: "SealedPushServerTests", dependencies: ["SealedPushServer", "SealedPushTestSupport", "CCurve25519Map"]
        ),
        .testTarget(
            name: "SealedPushAPNsTests",
            dependencies: [
                "SealedPushAPNs", "SealedPushAPNsEmulator", "SealedPushTestSupport",
                "SealedPushProxyTestSupport",  // a CONNECT proxy between the client and the emulator
                // Raw requests over the client's own connection (headers APNsClient never sends).
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(
            name: "SealedPushClientTests",
            dependencies: [
                "SealedPushClient", "SealedPushTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),  // the test-only HPKE sender
            ]
        ),
        .testTarget(
            name: "SealedPushAPNsEmulatorTests",
            dependencies: ["SealedPushAPNsEmulator", "SealedPushServer", "SealedPushTestSupport"]
        ),
        .testTarget(
            name: "SealedPushBlobServerTests",
            dependencies: [
                "SealedPushBlobServer", "SealedPushServer", "SealedPushCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "SealedPushBlobTransportTests",
            dependencies: [
                "SealedPushClientURLSession", "SealedPushClientNIO", "SealedPushClient", "SealedPushBlobServer", "SealedPushServer",
                "SealedPushCore",
                // The fault-injecting HTTP/1.1 server.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The extension step with attachments and content by reference, end to end on loopback.
        .testTarget(
            // The README's Swift snippets, compiled as written.
            name: "SealedPushReadmeTests",
            dependencies: ["SealedPushClient", "SealedPushClientURLSession", "SealedPushServer", "SealedPushCore"]
        ),
        .testTarget(
            name: "SealedPushAttachmentTests",
            dependencies: [
                "SealedPushClient", "SealedPushClientURLSession", "SealedPushBlobServer", "SealedPushServer", "SealedPushCore",
            ]
        ),
        .testTarget(
            name: "SealedPushGatewayTests",
            dependencies: [
                "SealedPushGateway", "SealedPushServer", "SealedPushCore",
                "SealedPushGatewayTestSupport",  // a PostgreSQL database per test, read back raw
                "SealedPushProxyTestSupport",  // delivery through a CONNECT proxy
                // Delivery: the APNs emulator, a service group, test metrics, a loopback webhook receiver.
                "SealedPushAPNs", "SealedPushAPNsEmulator", "SealedPushFCM", "SealedPushFCMEmulator",
                .product(name: "Crypto", package: "swift-crypto"),  // bare SHA-256 for an independent HMAC check
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "SealedPushGatewayHTTPTests",
            dependencies: [
                "SealedPushGatewayHTTP", "SealedPushGateway", "SealedPushServer", "SealedPushClient", "SealedPushCore",
                "sealed-push-gateway",
                "SealedPushClientURLSession",  // the device's receipts posted to the gateway over HTTP
                "SealedPushProxyTestSupport",  // check's tunnel through delivery.proxy; delivery through it
                // Process and end-to-end tests: the gateway delivering to loopback APNs and FCM emulators; the bare
                // client as the benchmark's ceiling.
                "SealedPushAPNs", "SealedPushAPNsEmulator", "SealedPushFCMEmulator",
                // Attachments: a loopback HTTP server for the backend's files; the blob store read back.
                "SealedPushBlobServer",
                .product(name: "Logging", package: "swift-log"),
                "SealedPushGatewayTestSupport",  // a PostgreSQL database per test, read back raw
                .product(name: "Prometheus", package: "swift-prometheus"),
                // HTTPS: a TLS connection kept open across a certificate reload.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "SealedPushProviderHTTP2Tests",
            dependencies: [
                "SealedPushProviderHTTP2", "SealedPushCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "SealedPushFCMTests",
            dependencies: [
                "SealedPushFCM", "SealedPushFCMEmulator", "SealedPushServer", "SealedPushCore",
                "SealedPushAPNsEmulator",  // the fault plan
                "SealedPushProxyTestSupport",  // a CONNECT proxy between the client and the emulator
            ]
        ),
        .testTarget(
            name: "SealedPushCLITests",
            dependencies: [
                "sealed-push", "SealedPushCore", "SealedPushServer", "SealedPushClient",
                "SealedPushProxyTestSupport",  // send and fcm-send through a CONNECT proxy
            ]),
        .testTarget(
            name: "SealedPushConformanceTests",
            dependencies: [
                "SealedPushServer", "SealedPushClient", "SealedPushTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),  // the test-only swift-crypto blob writer
            ]
        ),
    ]
)
