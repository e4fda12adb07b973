internal import COpenSSL
import SealedPushCore

/// Drains OpenSSL's thread-local error queue so a failure can be reported (and the queue is clean for the next
/// call on this thread).
enum OpenSSLErrorQueue {
    /// Bounded: OpenSSL's queue holds at most 16 entries; 64 is a safety cap.
    static let maximumEntries = 64

    /// Removes every pending error and returns their strings, oldest first.
    static func drain() -> [String] {
        var result: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        for _ in 0..<maximumEntries {
            let code = ERR_get_error()
            if code == 0 { break }
            buffer.withUnsafeMutableBufferPointer { pointer in
                ERR_error_string_n(code, pointer.baseAddress, pointer.count)
            }
            let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            result.append(String(decoding: bytes, as: UTF8.self))
        }
        return result
    }

    /// Makes an error whose message ends with the drained queue (library strings only, never key material).
    static func error(_ code: SealedPushError.Code, _ message: String) -> SealedPushError {
        let queue = drain()
        return SealedPushError(
            code, queue.isEmpty ? message : message + " [OpenSSL: " + queue.joined(separator: "; ") + "]")
    }
}
