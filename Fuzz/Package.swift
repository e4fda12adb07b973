// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets for SealedPush. Kept out of the root package so `swift build` / `swift test` never compile
// sanitizer code. Build only through `scripts/fuzz.sh` (it passes `-sanitize=fuzzer,address` and a separate
// scratch path); each executable's `<Module>_main` (SwiftPM's entry
// symbol on Linux) hands `LLVMFuzzerTestOneInput` to libFuzzer's driver (see CFuzzDriver).

let package = Package(
    name: "SealedPushFuzz",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "SealedPush", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        // Invariant checks and byte helpers shared by every target (no SealedPush dependency).
        .target(name: "CFuzzDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzDriver"]),

        // Core parsers: Foundation only, so these build in a minute or two.
        .executableTarget(name: "FuzzEnvelope", dependencies: ["FuzzSupport", core]),
        .executableTarget(name: "FuzzAPNsPayload", dependencies: ["FuzzSupport", core]),
        .executableTarget(name: "FuzzContent", dependencies: ["FuzzSupport", core]),
        .executableTarget(name: "FuzzKeyText", dependencies: ["FuzzSupport", core]),
        .executableTarget(name: "FuzzRegistration", dependencies: ["FuzzSupport", core]),
        .executableTarget(name: "FuzzJSON", dependencies: ["FuzzSupport", core]),

        // The client's whole open path (swift-crypto), with the spec vectors' keys.
        .executableTarget(
            name: "FuzzClientOpen",
            dependencies: ["FuzzSupport", core, .product(name: "SealedPushClient", package: "SealedPush")]
        ),

        // The blob readers (client swift-crypto into a file, server libsodium) and the attachment descriptor parser.
        .executableTarget(
            name: "FuzzBlob",
            dependencies: [
                "FuzzSupport", core, .product(name: "SealedPushClient", package: "SealedPush"),
                .product(name: "SealedPushServer", package: "SealedPush"),
            ]
        ),

        // Receipts as the gateway's receipt endpoint reads them (control-v1 §4): the server library's opener
        // (libsodium) with the control vectors' keys, and the record reader.
        .executableTarget(
            name: "FuzzReceipt",
            dependencies: ["FuzzSupport", core, .product(name: "SealedPushServer", package: "SealedPush")]
        ),

        // The device key ring file (Specs/keyring-v1.md §2): JSON, private key text and key checks (swift-crypto).
        .executableTarget(
            name: "FuzzKeyRing",
            dependencies: ["FuzzSupport", core, .product(name: "SealedPushClient", package: "SealedPush")]
        ),

        // The APNs emulator's request validation and provider-token verification (its NIO-free rules module, whose
        // package API is reached with `@testable import`; the fuzz build compiles with `-enable-testing`).
        .executableTarget(
            name: "FuzzEmulatorRequest",
            dependencies: [
                "FuzzSupport",
                .product(name: "SealedPushAPNsEmulatorRules", package: "SealedPush"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
    ]
)

var core: Target.Dependency { .product(name: "SealedPushCore", package: "SealedPush") }
