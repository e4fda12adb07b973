import Foundation
import SealedPushBlobServer
import SealedPushClient
import SealedPushCore
import SealedPushGateway
import SealedPushGatewayHTTP
import SealedPushServer
import Testing

/// A send with attachments, uploaded (base64) or fetched from the backend's URL: each encrypted once per
/// notification into the gateway's blob store, described (URL, key) in every recipient's sealed content, and opened
/// by the device's own code (SealedPushClient) to the original bytes. No plaintext lands anywhere.
@Suite("Gateway HTTP: attachments", .serialized)
struct AttachmentSendTests {
    static let prefix = "https://blobs.example.com/b/"

    /// The backend's file server: a real HTTP server (SealedPushBlobServer) over a directory of plain files.
    struct BackendFiles {
        let store: FileSystemBlobStore
        let server: BlobServer
        let directory: URL

        static func start() async throws -> BackendFiles {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-backend-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let store = try FileSystemBlobStore(directory: directory.path)
            let server = BlobServer(store: store)
            try await server.start()
            return BackendFiles(store: store, server: server, directory: directory)
        }

        /// Publishes `bytes` as they are; returns the URL.
        func publish(_ bytes: [UInt8]) async throws -> String {
            let writer = try await store.makeWriter()
            try await writer.write(bytes)
            _ = try await writer.commit()
            return "http://127.0.0.1:\(server.port)/\(writer.name.text)"
        }

        func stop() async {
            await server.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static func file(marker: String, size: Int) -> [UInt8] {
        var bytes = Array(marker.utf8)
        while bytes.count < size { bytes.append(UInt8.random(in: 0...255)) }
        return bytes
    }

    static func blobFiles(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { !$0.hasPrefix(".") }
    }

    @Test(arguments: Backend.available)
    func uploadedAndFetchedAttachmentsAreEncryptedOnceAndOpen(_ backend: Backend) async throws {
        let backendFiles = try await BackendFiles.start()
        defer { Task { await backendFiles.stop() } }
        try await GatewayTestServer.with(backend, maxBodyBytes: 262_144, overflowPrefix: Self.prefix) { server in
            let key = server.keys["app1"]!
            var rings: [String: DeviceKeyRing] = [:]
            for id in ["a", "b", "c"] { rings[id] = try await server.registerDevice(id) }
            let marker = "attachment-plaintext-\(UUID().uuidString)"
            let chart = Self.file(marker: marker + "-png", size: 3_000)
            let photo = Self.file(marker: marker + "-jpeg", size: 200_000)
            let photoURL = try await backendFiles.publish(photo)

            let sent = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: key,
                json: [
                    "devices": ["a", "b", "c"], "content": ["body": "see attached"],
                    "attachments": [
                        ["type": "image/png", "name": "chart.png", "data": Data(chart).base64EncodedString()],
                        ["type": "image/jpeg", "url": photoURL],
                    ],
                ])
            #expect(sent.status == 202, "\(sent.text)")

            // One blob per attachment, whatever the number of recipients.
            #expect(Self.blobFiles(server.blobDirectory).count == 2)
            let jobs = try await server.store.claim(owner: "t", limit: 10, leaseDuration: .seconds(60), now: Date())
            #expect(jobs.count == 3)
            var seen: Set<[String]> = []
            for job in jobs {
                let content = try server.open(job.body.bytes, with: rings[job.deviceID]!)
                #expect(content.body == "see attached")
                let descriptors = try (content.attachments ?? []).map { try AttachmentDescriptor(parsing: $0) }
                #expect(descriptors.count == 2)
                seen.insert(descriptors.map { "\($0.blob.url) \(Data($0.blob.key).base64EncodedString())" })
                for (descriptor, original, type, name) in zip4(descriptors, [chart, photo], ["image/png", "image/jpeg"], ["chart.png", nil]) {
                    #expect(descriptor.mediaType.mimeType == type)
                    #expect(descriptor.name == name)
                    #expect(descriptor.blob.url.hasPrefix(Self.prefix))
                    let blobName = String(descriptor.blob.url.dropFirst(Self.prefix.count))
                    let blob = try Data(contentsOf: URL(fileURLWithPath: server.blobDirectory + "/" + blobName))
                    #expect(!blob.contains(Data(marker.utf8)))
                    let opened = try BlobOpener.open(
                        blob, reference: descriptor.blob, maxPlaintextSize: descriptor.mediaType.kind.maxSize)
                    #expect(opened == original)
                }
            }
            #expect(seen.count == 1, "every recipient gets the same blob URL and key")

            // The plaintext is nowhere: not in the database, the blob store or the logs.
            for file in try await server.rawDatabase() {
                #expect(!file.bytes.contains(bytes: Array(marker.utf8)), "marker in \(file.name)")
            }
            #expect(!server.logs.text.contains(marker))
            let metrics = try await server.client.send("GET", "/metrics")
            #expect(metrics.text.contains("sealedpush_gateway_attachment_bytes_total \(chart.count + photo.count)"))
        }
    }

    @Test func refusalsNameTheAttachmentAndLeaveNoBlob() async throws {
        let backendFiles = try await BackendFiles.start()
        defer { Task { await backendFiles.stop() } }
        let big = try await backendFiles.publish([UInt8](repeating: 7, count: AttachmentMediaType(mimeType: "audio/mpeg")!.kind.maxSize + 1))
        try await GatewayTestServer.with(.sqlite, maxBodyBytes: 262_144, overflowPrefix: Self.prefix) { server in
            let key = server.keys["app1"]!
            try await server.registerDevice("a")
            let png = Data(Self.file(marker: "x", size: 100)).base64EncodedString()
            let missing = "http://127.0.0.1:\(backendFiles.server.port)/SecretCapabilityName0123456789abcdef"
            let cases: [(attachments: [[String: Any]], status: Int, code: String, field: String)] = [
                ([["type": "image/png", "data": "not base64!"]], 422, "invalidArgument", "attachments[0].data"),
                ([["type": "application/pdf", "data": png]], 422, "invalidArgument", "attachments[0].type"),
                ([["type": "image/png", "data": png, "url": "https://x.example/a.png"]], 422, "invalidArgument", "attachments[0]"),
                ([["type": "image/png"]], 422, "invalidArgument", "attachments[0]"),
                ([["type": "image/png", "url": "ftp://x.example/a.png"]], 422, "invalidArgument", "attachments[0].url"),
                // The first is stored, then the second fails: the first blob is deleted again.
                ([["type": "image/png", "data": png], ["type": "image/png", "url": missing]], 422, "attachmentUnavailable", "attachments[1].url"),
                ([["type": "audio/mpeg", "url": big]], 422, "blobTooLarge", "attachments[0].url"),
                ([["type": "image/png", "url": "http://127.0.0.1:1/refused.png"]], 422, "attachmentUnavailable", "attachments[0].url"),
                (Array(repeating: ["type": "image/png", "data": png], count: 9), 422, "invalidArgument", "attachments"),
                // 86 three-byte characters: 86 characters but 258 bytes; the limit is 255 bytes (Specs/blob-v1.md §6.2).
                ([["type": "image/png", "data": png, "name": String(repeating: "\u{20AC}", count: 86)]], 422, "invalidArgument", "attachments[0].name"),
            ]
            for (attachments, status, code, field) in cases {
                let answer = try await server.client.send(
                    "POST", "/v1/apps/app1/notifications", key: key,
                    json: ["devices": ["a"], "content": ["body": "b"], "attachments": attachments])
                #expect(answer.status == status, "\(field): \(answer.text)")
                #expect(answer.json["code"] as? String == code, "\(field): \(answer.text)")
                #expect(answer.json["field"] as? String == field, "\(answer.text)")
                // Errors name the host, never a URL's path (a blob name is a capability).
                #expect(!answer.text.contains("SecretCapabilityName"))
            }
            #expect(Self.blobFiles(server.blobDirectory).isEmpty)
            #expect(try await server.store.queueDepth().total == 0)
        }
        // Without a blob store, attachments are refused with a reason.
        try await GatewayTestServer.with(.sqlite) { server in
            try await server.registerDevice("a")
            let answer = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: server.keys["app1"]!,
                json: ["devices": ["a"], "content": ["body": "b"], "attachments": [["type": "image/png", "data": "AAAA"]]])
            #expect(answer.status == 422)
            #expect(answer.json["code"] as? String == "noBlobStore")
        }
        // https only unless allowed; hosts outside the allow-list are refused.
        var strict = AttachmentFetchPolicy()
        strict.allowedHosts = ["cdn.example.com"]
        try await GatewayTestServer.with(.sqlite, overflowPrefix: Self.prefix, fetchPolicy: strict) { server in
            try await server.registerDevice("a")
            for url in ["http://127.0.0.1:\(backendFiles.server.port)/x", "https://other.example.com/x.png"] {
                let answer = try await server.client.send(
                    "POST", "/v1/apps/app1/notifications", key: server.keys["app1"]!,
                    json: ["devices": ["a"], "content": ["body": "b"], "attachments": [["type": "image/png", "url": url]]])
                #expect(answer.status == 422)
                #expect(answer.json["code"] as? String == "attachmentUnavailable")
            }
        }
        // By default a backend's URL cannot reach the gateway's own network: a live file server on loopback is
        // refused before any connection (its request count stays 0), as are private and link-local addresses.
        var noPrivate = AttachmentFetchPolicy()
        noPrivate.allowHTTP = true
        noPrivate.timeout = .seconds(3)
        let live = try await backendFiles.publish(Array("private".utf8))
        try await GatewayTestServer.with(.sqlite, overflowPrefix: Self.prefix, fetchPolicy: noPrivate) { server in
            try await server.registerDevice("a")
            for url in [live, "http://10.1.2.3/x.png", "http://169.254.169.254/latest/meta-data", "http://[::1]:9/x.png"] {
                let answer = try await server.client.send(
                    "POST", "/v1/apps/app1/notifications", key: server.keys["app1"]!,
                    json: ["devices": ["a"], "content": ["body": "b"], "attachments": [["type": "image/png", "url": url]]])
                #expect(answer.status == 422, "\(url)")
                #expect(answer.json["code"] as? String == "attachmentUnavailable")
                #expect(answer.text.contains("private"), "\(answer.text)")
            }
        }
    }

    /// A fetch that gets no answer ends at the policy's deadline with `attachmentUnavailable`, not a hang.
    @Test func silentServerEndsAtTheDeadline() async throws {
        let listener = try LoopbackListener()  // accepts connections (the kernel's backlog), never answers
        let port = listener.port
        var policy = GatewayTestServer.loopbackFetchPolicy
        policy.timeout = .milliseconds(500)
        try await GatewayTestServer.with(.sqlite, overflowPrefix: Self.prefix, fetchPolicy: policy) { server in
            try await server.registerDevice("a")
            let started = ContinuousClock.now
            let answer = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: server.keys["app1"]!,
                json: ["devices": ["a"], "content": ["body": "b"], "attachments": [["type": "image/png", "url": "http://127.0.0.1:\(port)/slow.png"]]])
            let elapsed = started.duration(to: .now)
            #expect(answer.status == 422)
            #expect(answer.json["code"] as? String == "attachmentUnavailable")
            #expect(answer.text.contains("did not finish"))
            #expect(elapsed < .seconds(10))
        }
        withExtendedLifetime(listener) {}  // listening until the fetch has timed out
    }

    /// Regression: a connect still waiting when the fetch's deadline passed was reported as `cannot connect`; the
    /// deadline covers connecting too, so it is the deadline the answer names (CI's thread-sanitizer run met it on a
    /// loaded machine). Here the listener's queue is full, so the connect itself hangs.
    @Test func aConnectThatHangsEndsAtTheDeadline() async throws {
        let listener = try LoopbackListener(backlog: 0)
        listener.fillBacklog()
        var policy = GatewayTestServer.loopbackFetchPolicy
        policy.timeout = .milliseconds(500)
        try await GatewayTestServer.with(.sqlite, overflowPrefix: Self.prefix, fetchPolicy: policy) { server in
            try await server.registerDevice("a")
            let answer = try await server.client.send(
                "POST", "/v1/apps/app1/notifications", key: server.keys["app1"]!,
                json: [
                    "devices": ["a"], "content": ["body": "b"],
                    "attachments": [["type": "image/png", "url": "http://127.0.0.1:\(listener.port)/slow.png"]],
                ])
            #expect(answer.status == 422)
            #expect(answer.json["code"] as? String == "attachmentUnavailable")
            #expect(answer.text.contains("did not finish"), "\(answer.text)")
        }
        withExtendedLifetime(listener) {}
    }
}

private func zip4<A, B, C, D>(_ a: [A], _ b: [B], _ c: [C], _ d: [D]) -> [(A, B, C, D)] {
    (0..<min(a.count, b.count, c.count, d.count)).map { (a[$0], b[$0], c[$0], d[$0]) }
}
