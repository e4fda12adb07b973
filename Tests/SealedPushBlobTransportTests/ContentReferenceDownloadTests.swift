import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer
import Testing

/// Content by reference is read as every blob is (`Specs/blob-v1.md` §5, "Over-long streams"): each chunk is checked
/// as its bytes arrive. An outside audit found the Swift receiver buffering the whole body first and reporting what
/// the transport saw at its end — `blobTrailingData` for a declared size smaller than the blob, `blobTruncated` for a
/// body that is not a blob — where the spec and the Java receiver give `blobAuthenticationFailure` and `malformedBlob`.
@Suite("Content by reference download")
struct ContentReferenceDownloadTests {
    @Test("a declared size smaller than the blob, a body that is no blob, and a whole blob", arguments: TransportKind.allCases)
    func codesAsTheSpecOrdersThem(kind: TransportKind) async throws {
        let content = Array(#"{"body":"the full content, fetched by reference"}"#.utf8)
        let fixture = try SealedFixture(size: content.count, plaintext: content)
        let server = try await FaultHTTPServer(routes: [
            "/blob": .serve(fixture.blob),
            "/hello": .serve(Array("HELLO".utf8)),
        ])
        let base = "http://127.0.0.1:\(server.port)"
        func download(_ path: String, size: Int) async throws -> [UInt8] {
            try await ContentReferenceDownload.plaintext(
                of: BlobReference(url: base + path, key: fixture.key, size: size),
                maxPlaintextSize: BlobReference.defaultContentCap, transport: kind.transport, deadline: .now + .seconds(20))
        }
        #expect(try await download("/blob", size: content.count) == content)
        // The chunk that ends at the declared size is not the blob's last: it fails before the extra bytes count.
        _ = await expectCode(.blobAuthenticationFailure) { _ = try await download("/blob", size: content.count - 10) }
        // "HELLO" is not the blob format's magic: the first bytes decide, not the missing rest.
        _ = await expectCode(.malformedBlob) { _ = try await download("/hello", size: content.count) }
        await server.stop()
    }
}
