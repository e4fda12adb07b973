import Crypto
import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer
internal import CSodiumBench

/// Blob throughput (`Specs/blob-v1.md`): the server's libsodium encryptor and reader and the client's swift-crypto
/// reader, each beside its bare primitive — one ChaCha20-Poly1305-IETF call over the same bytes, what a user would
/// write without chunking — measured in the same interleaved rounds. Chunk framing (a 16-byte tag and a nonce per
/// 64 KiB), the HKDF of the payload key and the copies are the only extra work; the target is ≥ 0.9× the primitive.
enum BlobBenchmarks {
    static let size = 4 * 1_048_576

    static func run(_ report: Report) throws {
        precondition(sodium_init() >= 0)
        var generator = SystemRandomNumberGenerator()
        let plaintext = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let (blob, result) = try BlobEncryptor().encrypt(plaintext)
        let key = result.keyBytes
        guard try BlobDecryptor.decrypt(blob, key: key, plaintextSize: size) == plaintext else {
            throw SealedPushError(.blobAuthenticationFailure, "the benchmark's own blob did not open")
        }

        // The bare primitives over the same bytes, in one call.
        let primitiveKey = [UInt8](repeating: 0x42, count: 32)
        let nonce = [UInt8](repeating: 7, count: 12)
        var sealedWhole = [UInt8](repeating: 0, count: size + 16)
        var written: UInt64 = 0
        crypto_aead_chacha20poly1305_ietf_encrypt(
            &sealedWhole, &written, plaintext, UInt64(size), nil, 0, nil, nonce, primitiveKey)
        var openedWhole = [UInt8](repeating: 0, count: size)
        let cryptoKey = SymmetricKey(data: primitiveKey)
        let cryptoNonce = try ChaChaPoly.Nonce(data: nonce)
        let cryptoBox = try ChaChaPoly.seal(plaintext, using: cryptoKey, nonce: cryptoNonce)
        let cryptoCombined = cryptoBox.combined
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-blob-bench-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let samples = try Runner.compare([
            Benchmark(name: "encrypt") { count in
                var sink = 0
                for _ in 0..<count {
                    var offset = 0
                    _ = try BlobEncryptor().encrypt(
                        reading: { buffer in
                            let take = min(buffer.count, size - offset)
                            plaintext.withUnsafeBytes {
                                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + take]))
                            }
                            offset += take
                            return take
                        },
                        writing: { sink &+= Int($0[$0.count - 1]) })
                }
                return sink
            },
            Benchmark(name: "sodium-encrypt") { count in
                var sink = 0
                for _ in 0..<count {
                    crypto_aead_chacha20poly1305_ietf_encrypt(
                        &sealedWhole, &written, plaintext, UInt64(size), nil, 0, nil, nonce, primitiveKey)
                    sink &+= Int(sealedWhole[size])
                }
                return sink
            },
            Benchmark(name: "server-decrypt") { count in
                var sink = 0
                for _ in 0..<count {
                    let reader = try BlobDecryptor(key: key, plaintextSize: size)
                    try blob.withUnsafeBytes { try reader.append($0) { sink &+= Int($0[0]) } }
                    try reader.finish()
                }
                return sink
            },
            Benchmark(name: "sodium-decrypt") { count in
                var sink = 0
                for _ in 0..<count {
                    let status = crypto_aead_chacha20poly1305_ietf_decrypt(
                        &openedWhole, &written, nil, sealedWhole, UInt64(size + 16), nil, 0, nonce, primitiveKey)
                    sink &+= Int(status) &+ Int(openedWhole[0])
                }
                return sink
            },
            Benchmark(name: "client-decrypt") { count in
                var sink = 0
                for _ in 0..<count {
                    let opener = try BlobOpener(key: key, plaintextSize: size)
                    try blob.withUnsafeBytes { try opener.append($0) { sink &+= Int($0[0]) } }
                    try opener.finish()
                }
                return sink
            },
            Benchmark(name: "client-file") { count in
                var sink = 0
                for _ in 0..<count {
                    let opener = try BlobFileOpener(
                        key: key, plaintextSize: size, maxPlaintextSize: size, directory: directory, fileExtension: "bin")
                    try opener.append(blob)
                    let url = try opener.finish()
                    sink &+= url.path.count
                    try FileManager.default.removeItem(at: url)
                }
                return sink
            },
            Benchmark(name: "swift-crypto-decrypt") { count in
                var sink = 0
                for _ in 0..<count {
                    let opened = try ChaChaPoly.open(ChaChaPoly.SealedBox(combined: cryptoCombined), using: cryptoKey)
                    sink &+= Int(opened[0])
                }
                return sink
            },
        ])
        let t = Dictionary(uniqueKeysWithValues: samples.map { ($0.name, $0.median) })
        func rate(_ name: String) -> Double? { t[name].map { Double(size) / 1e6 / ($0 / 1e9) } }
        func row(_ figure: String, _ ours: String, _ comparison: String, _ theirs: String, target: Double?) {
            var row = Row(figure: figure, ours: rate(ours), comparison: comparison, theirs: rate(theirs),
                          ratio: .throughput, target: target)
            row.unit = "MB/s"
            report.add(row)
        }
        row("blob encrypt, server (libsodium), 4 MiB", "encrypt", "libsodium ChaCha20-Poly1305 one call", "sodium-encrypt",
            target: 0.9)
        row("blob decrypt, server (libsodium), 4 MiB", "server-decrypt", "libsodium ChaCha20-Poly1305 one call",
            "sodium-decrypt", target: 0.9)
        row("blob decrypt, client (swift-crypto), 4 MiB", "client-decrypt", "swift-crypto ChaChaPoly.open one call",
            "swift-crypto-decrypt", target: 0.9)
        row("blob decrypt into a file, client, 4 MiB", "client-file", "swift-crypto ChaChaPoly.open one call",
            "swift-crypto-decrypt", target: nil)
    }
}
