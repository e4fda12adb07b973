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
///
/// With four more arguments, `BLOB_KEY_HEX BLOB_SIZE BLOB_FILE OUT_DIR`, it then decrypts an attachment blob the
/// way an extension does: the blob file is read in 64 KiB pieces (as a download arrives) into a `BlobFileOpener`
/// writing into `OUT_DIR`, and the decrypted file's path is printed.
@main
struct OpenProbe {
    static func main() {
        let arguments = CommandLine.arguments
        if arguments.count == 2, arguments[1] == "--noop" { return }
        guard arguments.count == 5 || arguments.count == 9 else {
            writeAll(2, ("usage: sealed-push-open-probe DIR SPK1:… TOPIC PAYLOAD [BLOB_KEY_HEX SIZE BLOB_FILE OUT_DIR]\n".utf8))
            exit(2)
        }
        do {
            let receiver = try SealedPushReceiver(
                directory: URL(fileURLWithPath: arguments[1]),
                serverPublicKeys: [try KeyText.decodePublicKey(arguments[2])], topic: arguments[3])
            let body = try [UInt8](Data(contentsOf: URL(fileURLWithPath: arguments[4])))
            let opened = try receiver.open(body: body)
            writeAll(1, (try opened.content.canonicalJSON() + [0x0A]))
            if arguments.count == 9 {
                let url = try decryptBlob(
                    key: Hex.decode(arguments[5]), size: Int(arguments[6]) ?? -1, path: arguments[7],
                    directory: URL(fileURLWithPath: arguments[8]))
                writeAll(1, Array((url.path + "\n").utf8))
            }
        } catch let error as SealedPushError {
            writeAll(2, ("\(error.code): \(error.message)\n".utf8))
            exit(1)
        } catch {
            writeAll(2, ("\(error)\n".utf8))
            exit(1)
        }
    }
}

/// Streams a blob file through a `BlobFileOpener` in 64 KiB reads, as a download would deliver it.
private func decryptBlob(key: [UInt8], size: Int, path: String, directory: URL) throws -> URL {
    let opener = try BlobFileOpener(
        key: key, plaintextSize: size, maxPlaintextSize: 50_000_000, directory: directory, fileExtension: "mp4")
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { throw SealedPushError(.io, "cannot open \(path)") }
    defer { close(descriptor) }
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count >= 0 else { throw SealedPushError(.io, "cannot read \(path)") }
        if count == 0 { break }
        try opener.append(buffer[0..<count])
    }
    return try opener.finish()
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
