#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SealedPushClient
import SealedPushCore

/// A one-shot open process using only the library (no CLI framework): the lower bound for the peak resident memory
/// of `sealed-push open --keyring`. `sealed-push-open-probe KEYRING_DIR SERVER_PUBLIC_KEY TOPIC PAYLOAD_FILE`
/// prints the content's canonical JSON; `sealed-push-open-probe --noop` exits at once (the runtime's own footprint).
@main
struct OpenProbe {
    static func main() {
        let arguments = CommandLine.arguments
        if arguments.count == 2, arguments[1] == "--noop" { return }
        guard arguments.count == 5 else {
            writeAll(2, ("usage: sealed-push-open-probe DIR SPK1:… TOPIC PAYLOAD\n".utf8))
            exit(2)
        }
        do {
            let receiver = try SealedPushReceiver(
                directory: URL(fileURLWithPath: arguments[1]),
                serverPublicKeys: [try KeyText.decodePublicKey(arguments[2])], topic: arguments[3])
            let body = try [UInt8](Data(contentsOf: URL(fileURLWithPath: arguments[4])))
            let opened = try receiver.open(body: body)
            writeAll(1, (try opened.content.canonicalJSON() + [0x0A]))
        } catch let error as SealedPushError {
            writeAll(2, ("\(error.code): \(error.message)\n".utf8))
            exit(1)
        } catch {
            writeAll(2, ("\(error)\n".utf8))
            exit(1)
        }
    }
}

/// Writes bytes to a file descriptor (no FileHandle: it lives in full Foundation on Linux).
private func writeAll(_ descriptor: Int32, _ bytes: some Sequence<UInt8>) {
    let buffer = Array(bytes)
    var offset = 0
    while offset < buffer.count {
        let written = buffer.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
        if written <= 0 { return }
        offset += written
    }
}
