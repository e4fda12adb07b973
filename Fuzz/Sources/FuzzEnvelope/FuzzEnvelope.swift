import FuzzSupport
import SealedPushCore

/// `Envelope(parsing:)` on arbitrary bytes: the error is the one spec §8 steps 4–7 name (by an independent oracle),
/// and an accepted envelope re-encodes to exactly the input with the fields at the spec's offsets.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEnvelope(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Fuzz.bytes(data, size)
    let expected = Oracle.envelopeError(bytes)
    do {
        let envelope = try Envelope(parsing: bytes)
        Fuzz.check(expected == nil, "accepted an envelope the spec rejects with \(expected ?? "")")
        Fuzz.check(envelope.encoded() == bytes, "encoded() differs from the parsed bytes")
        let header = envelope.header
        Fuzz.check(header.encoded() == Array(bytes[0..<82]), "header.encoded() differs from bytes 0..<82")
        Fuzz.check(header.recipientKeyID.bytes == Array(bytes[2..<10]), "recipientKeyID not at offset 2")
        Fuzz.check(header.senderKeyID.bytes == Array(bytes[10..<18]), "senderKeyID not at offset 10")
        Fuzz.check(header.messageID == Array(bytes[18..<34]), "messageID not at offset 18")
        Fuzz.check(header.issuedAt == Oracle.bigEndian(bytes[34..<42]), "issuedAt not at offset 34")
        Fuzz.check(header.expiresAt == Oracle.bigEndian(bytes[42..<50]), "expiresAt not at offset 42")
        Fuzz.check(header.enc == Array(bytes[50..<82]), "enc not at offset 50")
        Fuzz.check(envelope.ciphertext == Array(bytes[82...]), "ciphertext not at offset 82")
    } catch let error as SealedPushError {
        Fuzz.check(error.code.name == expected, "threw \(error.code) but the spec expects \(expected ?? "success")")
        Fuzz.check(!error.message.isEmpty, "empty error message")
    } catch {
        Fuzz.check(false, "unexpected error type: \(error)")
    }
    return 0
}

/// The process entry: SwiftPM aliases `main` to this symbol; it hands the target to libFuzzer's driver.
@_cdecl("FuzzEnvelope_main")
public func fuzzEnvelopeMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.run(argc, argv, fuzzEnvelope)
}
