// swift-tools-version:6.1
import PackageDescription

// SealedPush benchmarks: one release executable that prints every figure beside its comparison as a ratio.
// Its own package (depending on the root by path) so `swift build` / `swift test` of the root stay light.
//
//   swift run -c release --package-path Benchmarks sealed-push-bench            (see BENCHMARKS.md)

let package = Package(
    name: "SealedPushBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "SealedPush", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),  // the store's floor: SQLite's C API
    ],
    targets: [
        // libsodium for the primitive floor (the root's CSodium is a target, not a product, so it has its own map).
        .systemLibrary(
            name: "CSodiumBench",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        .executableTarget(
            name: "sealed-push-bench",
            dependencies: [
                "CSodiumBench",
                .product(name: "SealedPushCore", package: "SealedPush"),
                .product(name: "SealedPushServer", package: "SealedPush"),
                .product(name: "SealedPushClient", package: "SealedPush"),
                .product(name: "SealedPushAPNs", package: "SealedPush"),
                .product(name: "SealedPushAPNsEmulator", package: "SealedPush"),
                .product(name: "SealedPushGateway", package: "SealedPush"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/SealedPushBench"
        ),
        // A one-shot open process with only the library linked: the memory floor of `sealed-push open`.
        .executableTarget(
            name: "sealed-push-open-probe",
            dependencies: [
                .product(name: "SealedPushCore", package: "SealedPush"),
                .product(name: "SealedPushClient", package: "SealedPush"),
            ],
            path: "Sources/OpenProbe"
        ),
    ]
)
