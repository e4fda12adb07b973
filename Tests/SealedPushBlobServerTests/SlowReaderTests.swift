import Foundation
import NIOCore
import SealedPushBlobServer
import SealedPushCore
import SealedPushServer
import Synchronization
import Testing

/// A store that counts the bytes its readers hand out: how far the server has read a blob ahead of its client.
final class CountingBlobStore: BlobStore {
    let base: FileSystemBlobStore
    let bytesRead = Atomic<Int>(0)

    init(_ base: FileSystemBlobStore) { self.base = base }

    func makeWriter() async throws -> any BlobWriter { try await base.makeWriter() }
    func info(_ name: BlobName) async throws -> BlobInfo? { try await base.info(name) }
    func delete(_ name: BlobName) async throws -> Bool { try await base.delete(name) }
    func list() async throws -> [BlobInfo] { try await base.list() }
    func removeBlobs(modifiedBefore date: Date) async throws -> [BlobName] {
        try await base.removeBlobs(modifiedBefore: date)
    }
    func open(_ name: BlobName, range: Range<Int>?) async throws -> (any BlobReader)? {
        guard let reader = try await base.open(name, range: range) else { return nil }
        return Reader(base: reader, counter: self)
    }

    final class Reader: BlobReader {
        let base: any BlobReader
        let counter: CountingBlobStore
        init(base: any BlobReader, counter: CountingBlobStore) {
            self.base = base
            self.counter = counter
        }
        var blobSize: Int { base.blobSize }
        var range: Range<Int> { base.range }
        func read(maxCount: Int) async throws -> [UInt8] {
            let piece = try await base.read(maxCount: maxCount)
            counter.bytesRead.add(piece.count, ordering: .relaxed)
            return piece
        }
        func close() async { await base.close() }
    }
}

/// A client that reads slowly, or stops for a while, is served at its own pace: the server neither runs ahead into
/// memory nor closes a `Connection: close` response with its tail still queued. Before the fix the server queued
/// megabytes past the channel's high-water mark (6.9 MB measured for a 12 MB blob) and, on `Connection: close`,
/// closed with them queued: the client saw a short body end cleanly (the 12 MB test's failure under load).
@Suite("BlobServer and slow readers", .serialized)
struct SlowReaderTests {
    /// Reads a whole `Connection: close` response, pausing `pause` after the first buffer.
    static func fetch(port: Int, path: String, pause: Duration, receiveBuffer: Int? = nil) async throws -> [UInt8] {
        let channel = try await RawHTTPClient.connect(port: port, receiveBuffer: receiveBuffer)
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: "GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
            var received: [UInt8] = []
            var paused = false
            for try await buffer in inbound {
                received += buffer.readableBytesView
                if !paused {
                    paused = true
                    try await Task.sleep(for: pause)
                }
            }
            return received
        }
    }

    @Test("A client that pauses (within the idle timeout) still gets the whole body of a Connection: close response")
    func pausedReaderGetsEverything() async throws {
        let served = try await ServedStore { $0.chunkSize = 16 * 1024 }
        let (name, file) = try await served.add(randomBytes(12_000_000))
        let bytes = try await Self.fetch(port: served.port, path: "/\(name.text)", pause: .seconds(1))
        await served.finish()
        let response = try RawHTTPClient.parse(bytes)
        #expect(response.status == 200)
        #expect(response.body.count == file.count)
        let same = response.body == file
        #expect(same, "the body differs from the blob")
    }

    @Test("While a client does not read, the server reads at most a few chunks past what the sockets hold")
    func serverDoesNotRunAhead() async throws {
        var counting: CountingBlobStore?
        let served = try await ServedStore(serving: { base in
            let store = CountingBlobStore(base)
            counting = store
            return store
        })
        let store = try #require(counting)
        let (name, file) = try await served.add(randomBytes(24_000_000))
        // The client's receive buffer is fixed at 64 KiB; the server's send buffer grows to tcp_wmem's maximum.
        let sendBufferLimit = Self.sysctlMaximum("/proc/sys/net/ipv4/tcp_wmem") ?? 4 << 20
        let channel = try await RawHTTPClient.connect(port: served.port, receiveBuffer: 64 * 1024)
        let (aheadWhileStalled, received) = try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(
                ByteBuffer(string: "GET /\(name.text) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
            try await Task.sleep(for: .seconds(1))  // read nothing: the sockets fill and the server must wait
            let ahead = store.bytesRead.load(ordering: .relaxed)
            var count = 0
            for try await buffer in inbound { count += buffer.readableBytes }
            return (ahead, count)
        }
        await served.finish()
        // Socket buffers (the send buffer, the 64 KiB receive buffer, doubled by the kernel) plus the server's
        // write window of 4 chunks of 64 KiB and one chunk in hand; 1 MiB of slack.
        let bound = sendBufferLimit + 2 * 64 * 1024 + 5 * 64 * 1024 + (1 << 20)
        #expect(aheadWhileStalled <= bound, "the server read \(aheadWhileStalled) bytes ahead of a stalled client")
        #expect(received > file.count)  // and then the whole response (head + body) arrived
    }

    /// The last number of a sysctl file such as `tcp_wmem` (min default max).
    static func sysctlMaximum(_ path: String) -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return text.split(whereSeparator: \.isWhitespace).last.flatMap { Int($0) }
    }
}
