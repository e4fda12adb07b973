#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SealedPushClient
import SealedPushClientURLSession
import SealedPushCore
import SealedPushServer
import Testing

/// Defects an outside review of the device side found in the step's attachments (#20 §2), each failing on the old
/// code: sequential downloads let one stalled server spend every attachment's time, and a process killed
/// mid-download left its decrypted `.partial` file forever.
/// A loopback port whose connections the kernel accepts and nobody ever answers (a stalled blob server).
final class SilentListener: @unchecked Sendable {
    let port: Int
    private let socketFD: Int32

    init() throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        socketFD = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw SealedPushError(.io, "cannot listen on loopback")
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(socketFD) }
}

extension StepAttachmentTests {
    @Test func aStalledDownloadDoesNotSpendTheTimeOfTheNextAttachment() async throws {
        let silent = try SilentListener()
        try await withServer { prefix in
            let image = Self.bytes(50_000, seed: 21)
            let stalled = try await attach(Self.bytes(50_000, seed: 20), type: "image/jpeg", prefix: "http://127.0.0.1:\(silent.port)/")
            let good = try await attach(image, type: "image/png", prefix: prefix)
            let content = NotificationContent(body: "two pictures", attachments: [stalled.jsonValue, good.jsonValue])
            let started = ContinuousClock.now
            let delivery = await deliver(try step(deadline: .seconds(4)), try sealer.seal(content, to: device()).payload)
            let elapsed = ContinuousClock.now - started
            guard case .decrypted(let shown) = delivery.content else { Issue.record("not decrypted"); return }
            #expect(shown.body == "two pictures")
            // The second picture arrived although the first server never answered; the first is named.
            #expect(delivery.attachments.map(\.index) == [1])
            #expect(try delivery.attachments.first.map { try Data(contentsOf: $0.fileURL) } == Data(image))
            #expect(delivery.attachmentFailures.map(\.index) == [0])
            #expect(delivery.attachmentFailures.map(\.code) == [.deadlineExceeded])
            #expect(elapsed < .seconds(8), "the deadline was not kept: \(elapsed)")
        }
    }

    @Test func partialFilesOfAKilledRunAreRemovedAndLiveOnesAreKept() async throws {
        // A leftover: decrypted bytes under a partial name whose writer is gone (nobody holds its lock).
        let stem = (0..<32).map { _ in "0123456789abcdef".randomElement()! }
        let leftover = attachmentDirectory.appendingPathComponent("." + String(stem) + ".partial")
        try Data("decrypted secret".utf8).write(to: leftover)
        // A live download in another process: `flock --no-fork` takes the lock and becomes `sleep`, so the process
        // killed below is the one holding it (a forking `flock` would leave the lock with its `sleep` child).
        let liveStem = (0..<32).map { _ in "0123456789abcdef".randomElement()! }
        let live = attachmentDirectory.appendingPathComponent("." + String(liveStem) + ".partial")
        try Data("in progress".utf8).write(to: live)
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = ["--exclusive", "--no-fork", live.path, "sleep", "30"]
        try holder.run()
        defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) } }
        try await Task.sleep(for: .milliseconds(1_200))  // both are older than a second now
        // The next run of the step (here: one with no attachment of its own still runs the clean-up).
        try await withServer { prefix in
            let content = NotificationContent(
                body: "later", attachments: [try await attach(Self.bytes(1_000, seed: 22), type: "image/png", prefix: prefix).jsonValue])
            let delivery = await deliver(try step(), try sealer.seal(content, to: device()).payload)
            #expect(delivery.attachments.count == 1)
        }
        #expect(!FileManager.default.fileExists(atPath: leftover.path), "the killed run's partial file is still there")
        #expect(FileManager.default.fileExists(atPath: live.path), "a live download's partial file was removed")
        // The live process is killed (as iOS kills an extension): its file is now a leftover too.
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        #expect(BlobFileOpener.removeAbandonedPartialFiles(in: attachmentDirectory) == 1)
        #expect(!FileManager.default.fileExists(atPath: live.path))
    }

    @Test func anExactDuplicateDeliversTheVerifiedFilesAgainWithoutDownloading() async throws {
        try await withServer { prefix in
            let image = Self.bytes(200_000, seed: 30)
            let descriptor = try await attach(image, type: "image/png", prefix: prefix)
            let content = NotificationContent(body: "once", attachments: [descriptor.jsonValue])
            let step = try step()
            let body = try sealer.seal(content, to: device()).payload
            let first = await deliver(step, body)
            #expect(first.outcome == .decrypted)
            #expect(first.attachments.count == 1)
            // The blob is gone from the server: only what the first opening verified can serve the duplicate.
            _ = try await store.delete(try BlobName(validating: String(descriptor.blob.url.dropFirst(prefix.count))))
            // iOS moves a delivered attachment's file away.
            try FileManager.default.removeItem(at: try #require(first.attachments.first).fileURL)
            let again = await deliver(step, body)
            #expect(again.outcome == .duplicate(.deliverAgain))
            #expect(again.attachmentFailures.isEmpty, "\(again.attachmentFailures)")
            #expect(again.attachments.map(\.index) == [0])
            #expect(try again.attachments.first.map { try Data(contentsOf: $0.fileURL) } == Data(image))
        }
    }

    @Test func verifiedFilesKeptForDuplicatesGoAfterTheWindow() async throws {
        try await withServer { prefix in
            let content = NotificationContent(
                body: "short window", attachments: [try await attach(Self.bytes(1_000, seed: 31), type: "image/png", prefix: prefix).jsonValue])
            let receiver = try SealedPushReceiver(
                keyStore: InMemoryKeyStore(keyRing: ring).readOnlyView(), replayGuard: InMemoryReplayGuard(),
                serverPublicKeys: [identity.publicKey], topic: topic)
            let step = NotificationServiceStep(
                receiver: receiver,
                configuration: .init(
                    deadline: .seconds(20), fallbackPlaceholder: .default,
                    attachments: AttachmentConfiguration(
                        transport: URLSessionBlobTransport(), directory: attachmentDirectory, reuseWindow: .seconds(1))))
            _ = await deliver(step, try sealer.seal(content, to: device()).payload)
            let verified = attachmentDirectory.appendingPathComponent(".verified")
            #expect(try FileManager.default.contentsOfDirectory(atPath: verified.path).count == 1)
            try await Task.sleep(for: .milliseconds(2_100))
            // The next run sweeps what is past the window (and keeps its own new file).
            _ = await deliver(step, try sealer.seal(content, to: device()).payload)
            let kept = try FileManager.default.contentsOfDirectory(atPath: verified.path)
            #expect(kept.count == 1, "\(kept)")
        }
    }
}
