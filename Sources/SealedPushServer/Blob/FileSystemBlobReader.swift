#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SealedPushCore

/// An open blob file of a ``FileSystemBlobStore``, read with `pread` within its range.
actor FileSystemBlobReader: BlobReader {
    nonisolated let blobSize: Int
    nonisolated let range: Range<Int>
    private let what: String
    private var descriptor: Int32
    private var position: Int

    init(descriptor: Int32, blobSize: Int, range: Range<Int>, what: String) {
        self.descriptor = descriptor
        self.blobSize = blobSize
        self.range = range
        self.position = range.lowerBound
        self.what = what
    }

    deinit { if descriptor >= 0 { closeDescriptor(descriptor) } }

    func read(maxCount: Int) async throws -> [UInt8] {
        guard descriptor >= 0 else { throw SealedPushError(.invalidArgument, "\(what) is closed") }
        let count = min(max(maxCount, 0), range.upperBound - position)
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = try bytes.withUnsafeMutableBytes {
            try POSIXBlobIO.pread(descriptor, into: $0, offset: position, what: what)
        }
        guard read > 0 else { throw SealedPushError(.io, "\(what) ended early (was it changed while being read?)") }
        position += read
        if read < count { bytes.removeLast(count - read) }
        return bytes
    }

    func close() async {
        if descriptor >= 0 { closeDescriptor(descriptor) }
        descriptor = -1
    }
}

/// Unambiguous `close` (the reader has a `close()` member).
private func closeDescriptor(_ descriptor: Int32) {
    #if canImport(Darwin)
    _ = Darwin.close(descriptor)
    #elseif canImport(Musl)
    _ = Musl.close(descriptor)
    #else
    _ = Glibc.close(descriptor)
    #endif
}
