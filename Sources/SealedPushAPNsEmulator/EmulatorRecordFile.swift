import Foundation
import Logging
import SealedPushAPNsEmulatorRules
import SealedPushCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The emulator's full history on disk: one JSON object per accepted notification and line, appended in the order
/// the answers were written, through a 64 KiB buffer (written out when full, on ``flush()`` and at stop).
///
/// ```json
/// {"apns-id":"…","token":"…","topic":"…","push-type":"alert","priority":10,"expiration":null,
///  "collapse-id":null,"accepted-at-ms":1800000000000,"payload":{"aps":{…}}}
/// ```
///
/// `payload` is the body as received, except that CR and LF bytes (valid JSON has them only as whitespace between
/// tokens) become spaces so that each record stays on one line.
final class EmulatorRecordFile: @unchecked Sendable {
    static let bufferLimit = 64 * 1024

    let path: String
    private let logger: Logger
    private let lock = NSLock()
    private var descriptor: Int32 = -1
    private var buffer: [UInt8] = []
    private var failed = false

    init(path: String, logger: Logger) {
        self.path = path
        self.logger = logger
    }

    /// Creates or truncates the file (mode 0600; a symbolic link is refused).
    func create() throws {
        try lock.withLock {
            guard descriptor < 0 else { return }
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                throw SealedPushError(
                    .io, "APNs emulator: cannot open the record file \(path): \(String(cString: strerror(errno)))")
            }
            descriptor = fd
            buffer.reserveCapacity(Self.bufferLimit)
        }
    }

    func append(_ notification: RecordedNotification) {
        let line = Self.line(notification)
        lock.withLock {
            guard descriptor >= 0 else { return }
            buffer += line
            if buffer.count >= Self.bufferLimit { writeBuffer() }
        }
    }

    func flush() { lock.withLock { writeBuffer() } }

    func finish() {
        lock.withLock {
            writeBuffer()
            if descriptor >= 0 { _ = close(descriptor) }
            descriptor = -1
        }
    }

    /// Must hold the lock.
    private func writeBuffer() {
        guard descriptor >= 0, !buffer.isEmpty else { return }
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { bytes in
                write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                if !failed {
                    failed = true
                    logger.error(
                        "cannot write the record file",
                        metadata: ["file": "\(path)", "error": "\(String(cString: strerror(errno)))"])
                }
                break
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }

    static func line(_ notification: RecordedNotification) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(notification.body.count + 256)
        func raw(_ text: String) { out += Array(text.utf8) }
        func string(_ value: String?) {
            guard let value else { return raw("null") }
            out.append(0x22)
            for byte in value.utf8 {
                switch byte {
                case 0x22: raw("\\\"")
                case 0x5C: raw("\\\\")
                case 0x00..<0x20: raw(String(format: "\\u%04x", byte))
                default: out.append(byte)
                }
            }
            out.append(0x22)
        }
        func number<T: BinaryInteger>(_ value: T?) { raw(value.map { "\($0)" } ?? "null") }
        raw("{\"apns-id\":")
        string(notification.apnsID)
        raw(",\"token\":")
        string(notification.deviceToken)
        raw(",\"topic\":")
        string(notification.topic)
        raw(",\"push-type\":")
        string(notification.pushType)
        raw(",\"priority\":")
        number(notification.priority)
        raw(",\"expiration\":")
        number(notification.expiration)
        raw(",\"collapse-id\":")
        string(notification.collapseID)
        raw(",\"accepted-at-ms\":")
        number(Int64((notification.acceptedAt.timeIntervalSince1970 * 1000).rounded()))
        raw(",\"payload\":")
        for byte in notification.body { out.append(byte == 0x0A || byte == 0x0D ? 0x20 : byte) }
        raw("}\n")
        return out
    }
}
