#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import NIOCore
import SealedPushBlobServer
import SealedPushCore
import SealedPushServer
import Testing

/// A temporary directory with a FileSystemBlobStore and a started BlobServer on a loopback ephemeral port.
final class ServedStore: Sendable {
    let directory: String
    let store: FileSystemBlobStore
    let server: BlobServer

    /// - Parameter serving: What the server serves; by default the file system store itself (a test can put a
    ///   wrapper that counts reads in front of it).
    init(
        configure: (inout BlobServerConfiguration) -> Void = { _ in }, onSweep: BlobServer.SweepHandler? = nil,
        serving: (FileSystemBlobStore) -> any BlobStore = { $0 }
    ) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("blobserver-\(UUID().uuidString)").path
        store = try FileSystemBlobStore(directory: directory)
        var configuration = BlobServerConfiguration(host: "127.0.0.1", port: 0)
        configure(&configuration)
        server = BlobServer(store: serving(store), configuration: configuration, onSweep: onSweep)
        try await server.start()
    }

    var port: Int { server.port }

    /// Encrypts `plaintext` into the store; returns the name and the stored file's bytes (read back from disk).
    func add(_ plaintext: [UInt8]) async throws -> (name: BlobName, file: [UInt8]) {
        let stored = try await store.store(encryptor: try BlobEncryptor(), bytes: plaintext)
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/" + stored.name.text)))
        return (stored.name, file)
    }

    func finish() async {
        await server.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Random bytes, eight at a time (a byte-wise loop takes seconds for megabytes in a debug build and would starve
/// the servers under test of the cooperative thread pool).
func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    var words = [UInt64](repeating: 0, count: (count + 7) / 8)
    for index in words.indices { words[index] = generator.next() }
    return words.withUnsafeBytes { Array($0.prefix(count)) }
}

// Serialized: the servers run on the same two cores as the tests, and timeouts are part of what is tested.
@Suite("BlobServer over loopback", .serialized)
struct BlobServerTests {
    @Test("GET serves the stored file with strong ETag, immutable caching and its exact length")
    func getWholeBlob() async throws {
        let served = try await ServedStore()
        let (name, file) = try await served.add(randomBytes(200_000))
        let response = try await RawHTTPClient.send(port: served.port, path: "/\(name.text)")
        await served.finish()
        #expect(response.status == 200)
        #expect(Bool(response.body == file), "the body differs from the blob")
        #expect(response.headers["content-length"] == String(file.count))
        #expect(response.headers["etag"] == "\"\(name.text)\"")
        #expect(response.headers["cache-control"] == "public, max-age=31536000, immutable")
        #expect(response.headers["content-type"] == "application/octet-stream")
        #expect(response.headers["accept-ranges"] == "bytes")
    }

    @Test("HEAD sends the GET headers and no body")
    func head() async throws {
        let served = try await ServedStore()
        let (name, file) = try await served.add(randomBytes(70_000))
        let response = try await RawHTTPClient.send(port: served.port, method: "HEAD", path: "/\(name.text)")
        await served.finish()
        #expect(response.status == 200)
        #expect(response.body.isEmpty)
        #expect(response.headers["content-length"] == String(file.count))
        #expect(response.headers["etag"] == "\"\(name.text)\"")
    }

    @Test(
        "A single byte range is 206 with Content-Range",
        arguments: [
            ("bytes=10-19", 10..<20), ("bytes=100-", 100..<1_037), ("bytes=-7", 1_030..<1_037),
            ("bytes=0-999999999", 0..<1_037), ("bytes=-5000", 0..<1_037), ("bytes=1036-1036", 1_036..<1_037),
        ])
    func singleRange(header: String, expected: Range<Int>) async throws {
        let served = try await ServedStore()
        let (name, file) = try await served.add(randomBytes(1_000))  // 21 + 1000 + 16 = 1037 bytes
        #expect(file.count == 1_037)
        let response = try await RawHTTPClient.send(port: served.port, path: "/\(name.text)", headers: ["Range": header])
        await served.finish()
        #expect(response.status == 206)
        #expect(response.body == Array(file[expected]))
        #expect(response.headers["content-range"] == "bytes \(expected.lowerBound)-\(expected.upperBound - 1)/1037")
        #expect(response.headers["content-length"] == String(expected.count))
    }

    @Test("An unsatisfiable range is 416 with bytes */size", arguments: ["bytes=1037-", "bytes=5000-6000", "bytes=-0"])
    func unsatisfiableRange(header: String) async throws {
        let served = try await ServedStore()
        let (name, _) = try await served.add(randomBytes(1_000))
        let response = try await RawHTTPClient.send(port: served.port, path: "/\(name.text)", headers: ["Range": header])
        await served.finish()
        #expect(response.status == 416)
        #expect(response.headers["content-range"] == "bytes */1037")
        #expect(response.body.isEmpty)
    }

    @Test(
        "Several ranges, another unit, bad syntax or a stale If-Range get the whole blob",
        arguments: [
            ["Range": "bytes=0-1,5-6"], ["Range": "items=0-1"], ["Range": "bytes=5-2"], ["Range": "bytes=a-b"],
            ["Range": "bytes=0-9", "If-Range": "\"something-else\""],
        ])
    func wholeInsteadOfRange(headers: [String: String]) async throws {
        let served = try await ServedStore()
        let (name, file) = try await served.add(randomBytes(1_000))
        let response = try await RawHTTPClient.send(port: served.port, path: "/\(name.text)", headers: headers)
        await served.finish()
        #expect(response.status == 200)
        #expect(Bool(response.body == file), "the body differs from the blob")
        #expect(response.headers["content-range"] == nil)
    }

    @Test("If-None-Match with the ETag (or *) is 304 without a body; another tag is 200")
    func conditional() async throws {
        let served = try await ServedStore()
        let (name, file) = try await served.add(randomBytes(5_000))
        let tag = "\"\(name.text)\""
        let matched = try await RawHTTPClient.send(
            port: served.port, path: "/\(name.text)", headers: ["If-None-Match": "\"other\", \(tag)"])
        let weak = try await RawHTTPClient.send(port: served.port, path: "/\(name.text)", headers: ["If-None-Match": "W/\(tag)"])
        let star = try await RawHTTPClient.send(port: served.port, path: "/\(name.text)", headers: ["If-None-Match": "*"])
        let other = try await RawHTTPClient.send(port: served.port, path: "/\(name.text)", headers: ["If-None-Match": "\"x\""])
        await served.finish()
        for response in [matched, weak, star] {
            #expect(response.status == 304)
            #expect(response.body.isEmpty)
            #expect(response.headers["etag"] == tag)
            #expect(response.headers["cache-control"] == "public, max-age=31536000, immutable")
        }
        #expect(other.status == 200)
        #expect(Bool(other.body == file), "the body differs from the blob")
    }

    @Test("Anything but /<blob name> is 404; methods other than GET and HEAD are 405")
    func notFound() async throws {
        let served = try await ServedStore()
        let (name, _) = try await served.add(randomBytes(10))
        let missing = BlobName.random().text
        let paths = [
            "/\(missing)", "/", "/\(name.text.uppercased())", "/\(name.text)/x", "/../\(name.text)",
            "/.tmp-\(name.text)", "/\(name.text.dropLast())", "/%2e%2e/etc/passwd",
        ]
        var statuses: [Int] = []
        for path in paths { statuses.append(try await RawHTTPClient.send(port: served.port, path: path).status) }
        let post = try await RawHTTPClient.send(port: served.port, method: "POST", path: "/\(name.text)")
        let delete = try await RawHTTPClient.send(port: served.port, method: "DELETE", path: "/\(name.text)")
        let withQuery = try await RawHTTPClient.send(port: served.port, path: "/\(name.text)?v=1")
        await served.finish()
        #expect(statuses == Array(repeating: 404, count: paths.count))
        #expect(post.status == 405)
        #expect(post.headers["allow"] == "GET, HEAD")
        #expect(delete.status == 405)
        #expect(withQuery.status == 200)
    }

    @Test("Keep-alive: two pipelined requests on one connection get two responses in order")
    func keepAlive() async throws {
        let served = try await ServedStore()
        let (first, firstFile) = try await served.add(randomBytes(3))
        let (second, secondFile) = try await served.add(randomBytes(4))
        let bytes = try await RawHTTPClient.exchange(
            port: served.port,
            "GET /\(first.text) HTTP/1.1\r\nHost: x\r\n\r\nGET /\(second.text) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        await served.finish()
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.components(separatedBy: "HTTP/1.1 200 OK").count == 3)
        let firstEnd = bytes.firstRange(of: firstFile)
        let secondEnd = bytes.firstRange(of: secondFile)
        #expect(firstEnd != nil && secondEnd != nil)
        if let firstEnd, let secondEnd { #expect(firstEnd.upperBound <= secondEnd.lowerBound) }
    }

    @Test("A 12 MB blob streams through in 16 KiB chunks byte for byte")
    func largeBlob() async throws {
        let served = try await ServedStore { $0.chunkSize = 16 * 1024 }
        let (name, file) = try await served.add(randomBytes(12_000_000))
        let response = try await RawHTTPClient.send(port: served.port, path: "/\(name.text)")
        let tail = try await RawHTTPClient.send(
            port: served.port, path: "/\(name.text)", headers: ["Range": "bytes=\(file.count - 100_000)-"])
        await served.finish()
        #expect(response.status == 200)
        #expect(response.body.count == file.count)
        // Compared as a Bool: on a mismatch Swift Testing would otherwise diff 12 MB element by element (minutes).
        let same = response.body == file
        #expect(same, "the body differs from the blob")
        let sameTail = tail.body == Array(file.suffix(100_000))
        #expect(sameTail, "the range differs from the blob's last 100,000 bytes")
    }

    @Test("A client that sends no request is disconnected after the request timeout")
    func requestTimeout() async throws {
        let served = try await ServedStore { $0.requestTimeout = .milliseconds(300) }
        let started = ContinuousClock.now
        let partial = try await RawHTTPClient.exchange(port: served.port, "GET /")  // never ends its head
        let elapsed = ContinuousClock.now - started
        await served.finish()
        #expect(partial.isEmpty)
        #expect(elapsed >= .milliseconds(250))
        #expect(elapsed < .seconds(5))
    }

    @Test("A client that stops reading a body is disconnected after the idle timeout")
    func idleTimeout() async throws {
        let served = try await ServedStore { $0.idleTimeout = .milliseconds(300) }
        let (name, file) = try await served.add(randomBytes(12_000_000))
        let channel = try await RawHTTPClient.connect(port: served.port)
        let received = try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: "GET /\(name.text) HTTP/1.1\r\nHost: x\r\n\r\n"))
            try await Task.sleep(for: .seconds(2))  // read nothing: the socket buffers fill and the server stalls
            var count = 0
            do {
                for try await buffer in inbound { count += buffer.readableBytes }
            } catch {
                // A reset is as good as a close here.
            }
            return count
        }
        await served.finish()
        #expect(received < file.count)  // the server gave up instead of waiting forever
    }

    @Test("Connections beyond the limit are closed at once; admitted ones are still served")
    func connectionLimit() async throws {
        let served = try await ServedStore { $0.maxConnections = 2 }
        let (name, file) = try await served.add(randomBytes(100))
        let first = try await RawHTTPClient.connect(port: served.port)
        let second = try await RawHTTPClient.connect(port: served.port)
        // Nested so both channels are finished whatever throws.
        let (refused, admitted) = try await first.executeThenClose { inbound, outbound in
            let refused = try await second.executeThenClose { _, _ in
                let giveUp = ContinuousClock.now + .seconds(10)
                while served.server.connectionCount < 2, ContinuousClock.now < giveUp {
                    try await Task.sleep(for: .milliseconds(10))
                }
                do {
                    return try await RawHTTPClient.exchange(
                        port: served.port, "GET /\(name.text) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                } catch let error as IOError where error.errnoCode == ECONNRESET {
                    // Closed while the request was already in its receive buffer: the kernel resets instead.
                    return []
                }
            }
            try await outbound.write(ByteBuffer(string: "GET /\(name.text) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
            var received: [UInt8] = []
            for try await buffer in inbound { received += buffer.readableBytesView }
            return (refused, received)
        }
        await served.finish()
        #expect(refused.isEmpty)
        #expect(Bool(try RawHTTPClient.parse(admitted).body == file), "the body differs from the blob")
    }

    @Test("stop() closes idle connections at once, finishes, and the port no longer accepts")
    func gracefulStop() async throws {
        let served = try await ServedStore { $0.shutdownGracePeriod = .seconds(20) }
        let port = served.port
        let idle = try await RawHTTPClient.connect(port: port)
        let giveUp = ContinuousClock.now + .seconds(5)
        while served.server.connectionCount < 1, ContinuousClock.now < giveUp { try await Task.sleep(for: .milliseconds(10)) }
        let started = ContinuousClock.now
        await served.server.stop()
        let elapsed = ContinuousClock.now - started
        let leftover = try await idle.executeThenClose { inbound, _ in
            var received: [UInt8] = []
            for try await buffer in inbound { received += buffer.readableBytesView }
            return received
        }
        do {
            let late = try await RawHTTPClient.connect(port: port)
            try await late.executeThenClose { _, _ in }
            Issue.record("a connection was accepted after stop()")
        } catch {
            // Refused, as it should be.
        }
        await served.finish()
        #expect(elapsed < .seconds(5))  // far below the 20 s grace period: nothing was in flight
        #expect(leftover.isEmpty)
    }

    @Test("stop() lets a response in flight finish")
    func stopFinishesResponse() async throws {
        let served = try await ServedStore { $0.chunkSize = 4 * 1024 }
        let (name, file) = try await served.add(randomBytes(4_000_000))
        let channel = try await RawHTTPClient.connect(port: served.port)
        let body = try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: "GET /\(name.text) HTTP/1.1\r\nHost: x\r\n\r\n"))
            var received: [UInt8] = []
            var iterator = inbound.makeAsyncIterator()
            if let first = try await iterator.next() { received += first.readableBytesView }
            let stopping = Task { await served.server.stop() }  // mid-response
            while let buffer = try await iterator.next() { received += buffer.readableBytesView }
            await stopping.value
            return received
        }
        await served.finish()
        let response = try RawHTTPClient.parse(body)
        #expect(Bool(response.body == file), "the body differs from the blob")
        #expect(response.headers["content-length"] == String(file.count))
    }

    @Test("The expiry sweep deletes blobs older than the age, on its interval, and keeps newer ones")
    func expirySweep() async throws {
        let swept = SweepLog()
        let served = try await ServedStore(
            configure: { $0.expiry = .init(maxAge: .seconds(3600), sweepInterval: .milliseconds(100)) },
            onSweep: { swept.record($0) })
        let (old, _) = try await served.add(randomBytes(10))
        let (fresh, _) = try await served.add(randomBytes(10))
        let twoHoursAgo = time(nil) - 7_200
        var times = [timeval(tv_sec: twoHoursAgo, tv_usec: 0), timeval(tv_sec: twoHoursAgo, tv_usec: 0)]
        #expect(utimes(served.directory + "/" + old.text, &times) == 0)
        let giveUp = ContinuousClock.now + .seconds(10)
        while try await served.store.info(old) != nil, ContinuousClock.now < giveUp {
            try await Task.sleep(for: .milliseconds(50))
        }
        let oldAfter = try await served.store.info(old)
        let freshAfter = try await served.store.info(fresh)
        let gone = try await RawHTTPClient.send(port: served.port, path: "/\(old.text)")
        await served.finish()
        #expect(oldAfter == nil)
        #expect(freshAfter != nil)
        #expect(gone.status == 404)
        #expect(swept.names.contains(old))
        #expect(!swept.names.contains(fresh))
    }
}

final class SweepLog: @unchecked Sendable {
    private let lock = NSLock()
    private var deleted: [BlobName] = []
    func record(_ result: Result<[BlobName], any Error>) {
        if case .success(let names) = result { lock.withLock { deleted += names } }
    }
    var names: [BlobName] { lock.withLock { deleted } }
}
