import FuzzSupport
import SealedPushCore

/// Key text forms (spec §7) and key id text (spec §2.2) on arbitrary bytes: each parser accepts exactly what the
/// spec describes (independent oracle), fails only with `invalidKey`, never echoes private key characters, and an
/// accepted text re-encodes to itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeyText(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Fuzz.bytes(data, size)

    // Private key file: the line with or without one final "\n".
    let line = bytes.last == 0x0A ? Array(bytes.dropLast()) : bytes
    let privateValid = Oracle.isKeyText(line, prefix: "SPSK1:")
    do {
        let key = try KeyText.decodePrivateKeyFile(bytes)
        Fuzz.check(privateValid, "accepted a private key file the spec rejects")
        Fuzz.check(key.count == 32, "private key of \(key.count) bytes")
        Fuzz.check(KeyText.encodePrivateKeyFile(key) == line + [0x0A], "private key file does not re-encode")
    } catch let error as SealedPushError {
        Fuzz.check(!privateValid, "rejected a valid private key file: \(error)")
        Fuzz.check(error.code == .invalidKey, "private key file threw \(error.code)")
        let run = Array(line.dropFirst(6).prefix(12))
        if run.count == 12, run.allSatisfy({ Oracle.value(of: $0) != nil }) {
            // Never echo key material: a run of 12 key characters after the prefix must not appear in the message.
            let shown = String(decoding: run, as: UTF8.self)
            Fuzz.check(!error.message.contains(shown), "error message echoes the private key")
        }
    } catch {
        Fuzz.check(false, "unexpected error type: \(error)")
    }

    // Public key text, from the same bytes read as UTF-8 (invalid sequences become U+FFFD, as from a CLI argument).
    let text = String(decoding: bytes, as: UTF8.self)
    let publicValid = Oracle.isKeyText(Array(text.utf8), prefix: "SPK1:")
        && Oracle.isCanonicalPublicKey(Oracle.decodeBase64URL(Array(text.utf8.dropFirst(5))))
    do {
        let key = try KeyText.decodePublicKey(text)
        Fuzz.check(publicValid, "accepted a public key the spec rejects")
        Fuzz.check(key.count == 32, "public key of \(key.count) bytes")
        Fuzz.check(KeyText.encodePublicKey(key) == text, "public key does not re-encode")
    } catch let error as SealedPushError {
        Fuzz.check(!publicValid, "rejected a valid public key: \(error)")
        Fuzz.check(error.code == .invalidKey, "public key threw \(error.code)")
    } catch {
        Fuzz.check(false, "unexpected error type: \(error)")
    }

    // Key id text: 16 hex digits.
    let hexDigits = Array("0123456789abcdefABCDEF".utf8)
    let idValid = text.utf8.count == 16 && text.utf8.allSatisfy { hexDigits.contains($0) }
    do {
        let id = try KeyID(hex: text)
        Fuzz.check(idValid, "accepted key id text \(text)")
        Fuzz.check(id.hex == text.lowercased(), "key id does not re-encode in lowercase")
        Fuzz.check(id.bytes.count == 8, "key id of \(id.bytes.count) bytes")
    } catch let error as SealedPushError {
        Fuzz.check(!idValid, "rejected key id text \(text)")
        Fuzz.check(error.code == .invalidKey, "key id threw \(error.code)")
    } catch {
        Fuzz.check(false, "unexpected error type: \(error)")
    }
    return 0
}

/// The process entry: SwiftPM aliases `main` to this symbol; it hands the target to libFuzzer's driver.
@_cdecl("FuzzKeyText_main")
public func fuzzKeyTextMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.run(argc, argv, fuzzKeyText)
}
