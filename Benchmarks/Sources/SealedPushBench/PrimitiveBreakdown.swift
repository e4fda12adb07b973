import Crypto
import Foundation
import SealedPushServer
internal import CSodiumBench

/// Where a seal's time goes, primitive by primitive, in libsodium (the server's library) and swift-crypto
/// (BoringSSL, the alternative): X25519 key generation, X25519 DH, one HMAC-SHA256 of HPKE's size, and
/// ChaCha20-Poly1305 of a 256-byte bucket. Key generation is shown both ways libsodium offers: the X25519
/// ladder, and the fixed-base Edwards table that SealedPush uses (followed by its own map to u, whose result is
/// checked against the ladder on 1,000 keys through the public `ServerIdentity`).
enum PrimitiveBreakdown {
    static func run(_ report: Report) throws {
        precondition(sodium_init() >= 0)
        var sk = [UInt8](repeating: 0, count: 32)
        var pk = [UInt8](repeating: 0, count: 32)
        var out = [UInt8](repeating: 0, count: 32)
        var edwards = [UInt8](repeating: 0, count: 32)
        var peer = [UInt8](repeating: 0, count: 32)
        randombytes_buf(&sk, 32)
        crypto_scalarmult_base(&peer, sk)

        // SealedPush's public keys (Edwards table + u-map) against the ladder X25519(sk, 9), on 1,000 keys.
        var agree = true
        for _ in 0..<1_000 {
            randombytes_buf(&sk, 32)
            crypto_scalarmult_base(&pk, sk)
            if try ServerIdentity(privateKey: sk).publicKey != pk { agree = false; break }
        }

        let message = [UInt8](repeating: 0x55, count: 150)
        let key32 = [UInt8](repeating: 0x33, count: 32)
        var mac = [UInt8](repeating: 0, count: 32)
        let plaintext = [UInt8](repeating: 0x41, count: 256)
        var ciphertext = [UInt8](repeating: 0, count: 256 + 16)
        let aad = [UInt8](repeating: 1, count: 82)
        let nonce = [UInt8](repeating: 2, count: 12)
        let cryptoPeer = Curve25519.KeyAgreement.PrivateKey().publicKey
        let cryptoKey = Curve25519.KeyAgreement.PrivateKey()
        let symmetric = SymmetricKey(data: key32)
        let chachaNonce = try ChaChaPoly.Nonce(data: nonce)

        let samples = try Runner.compare([
            Benchmark(name: "sodium-keygen") { count in
                for _ in 0..<count {
                    randombytes_buf(&sk, 32)
                    crypto_scalarmult_base(&pk, sk)
                }
                return Int(pk[0])
            },
            Benchmark(name: "sodium-keygen-edwards") { count in
                for _ in 0..<count {
                    randombytes_buf(&sk, 32)
                    _ = crypto_scalarmult_ed25519_base(&edwards, sk)
                }
                return Int(pk[0])
            },
            Benchmark(name: "sealedpush-identity") { count in
                var sink = 0
                for _ in 0..<count { sink &+= Int(try ServerIdentity.generate().publicKey[0]) }
                return sink
            },
            Benchmark(name: "sodium-dh") { count in
                for _ in 0..<count { _ = crypto_scalarmult(&out, sk, peer) }
                return Int(out[0])
            },
            Benchmark(name: "sodium-hmac") { count in
                for _ in 0..<count {
                    var state = crypto_auth_hmacsha256_state()
                    crypto_auth_hmacsha256_init(&state, key32, 32)
                    crypto_auth_hmacsha256_update(&state, message, UInt64(message.count))
                    crypto_auth_hmacsha256_final(&state, &mac)
                }
                return Int(mac[0])
            },
            Benchmark(name: "sodium-aead") { count in
                var written: UInt64 = 0
                for _ in 0..<count {
                    crypto_aead_chacha20poly1305_ietf_encrypt(
                        &ciphertext, &written, plaintext, 256, aad, 82, nil, nonce, key32)
                }
                return Int(ciphertext[0])
            },
            Benchmark(name: "crypto-keygen") { count in
                var sink = 0
                for _ in 0..<count { sink &+= Int(Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation.first!) }
                return sink
            },
            Benchmark(name: "crypto-dh") { count in
                var sink = 0
                for _ in 0..<count {
                    sink &+= try cryptoKey.sharedSecretFromKeyAgreement(with: cryptoPeer).withUnsafeBytes { Int($0[0]) }
                }
                return sink
            },
            Benchmark(name: "crypto-hmac") { count in
                var sink = 0
                for _ in 0..<count {
                    sink &+= HMAC<SHA256>.authenticationCode(for: message, using: symmetric).withUnsafeBytes { Int($0[0]) }
                }
                return sink
            },
            Benchmark(name: "crypto-aead") { count in
                var sink = 0
                for _ in 0..<count {
                    sink &+= try ChaChaPoly.seal(plaintext, using: symmetric, nonce: chachaNonce, authenticating: aad)
                        .tag.count
                }
                return sink
            },
        ])
        let t = Dictionary(uniqueKeysWithValues: samples.map { ($0.name, $0.median) })
        report.add(Row(figure: "X25519 key generation (libsodium)", ours: t["sodium-keygen"], comparison:
            "swift-crypto key generation", theirs: t["crypto-keygen"], ratio: .speedup, target: nil))
        report.add(Row(figure: "X25519 DH (libsodium)", ours: t["sodium-dh"], comparison:
            "swift-crypto DH", theirs: t["crypto-dh"], ratio: .speedup, target: nil))
        report.add(Row(figure: "HMAC-SHA256, 150 B (libsodium)", ours: t["sodium-hmac"], comparison:
            "swift-crypto HMAC", theirs: t["crypto-hmac"], ratio: .speedup, target: nil))
        report.add(Row(figure: "ChaCha20-Poly1305, 256 B (libsodium)", ours: t["sodium-aead"], comparison:
            "swift-crypto ChaChaPoly", theirs: t["crypto-aead"], ratio: .speedup, target: nil))
        report.add(Row(figure: "Edwards base table, crypto_scalarmult_ed25519_base (libsodium)",
            ours: t["sodium-keygen-edwards"], comparison: "libsodium ladder crypto_scalarmult_base",
            theirs: t["sodium-keygen"], ratio: .speedup, target: nil))
        report.add(Row(figure: "SealedPush key pair (ServerIdentity.generate: random, table, u-map, key id)",
            ours: t["sealedpush-identity"], comparison: "libsodium ladder crypto_scalarmult_base",
            theirs: t["sodium-keygen"], ratio: .speedup, target: nil))
        report.note("SealedPush public keys (Edwards table + u-map) equal the ladder's X25519(sk, 9) on 1,000 random "
            + "keys: \(agree ? "yes" : "NO")")
    }
}
