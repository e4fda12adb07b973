import Foundation
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
            FileHandle.standardError.write(Data("usage: sealed-push-open-probe DIR SPK1:… TOPIC PAYLOAD\n".utf8))
            exit(2)
        }
        do {
            let receiver = try SealedPushReceiver(
                directory: URL(fileURLWithPath: arguments[1]),
                serverPublicKeys: [try KeyText.decodePublicKey(arguments[2])], topic: arguments[3])
            let body = try [UInt8](Data(contentsOf: URL(fileURLWithPath: arguments[4])))
            let opened = try receiver.open(body: body)
            FileHandle.standardOutput.write(Data(try opened.content.canonicalJSON() + [0x0A]))
        } catch let error as SealedPushError {
            FileHandle.standardError.write(Data("\(error.code): \(error.message)\n".utf8))
            exit(1)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(1)
        }
    }
}
