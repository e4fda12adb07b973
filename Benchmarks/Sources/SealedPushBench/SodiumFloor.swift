internal import CSodiumBench

/// The libsodium primitive floor of one HPKE mode_auth seal (RFC 9180, X25519/HKDF-SHA256/ChaCha20-Poly1305),
/// measured directly: one X25519 key generation, the X25519 operations, the HMAC-SHA256 calls of DHKEM's
/// ExtractAndExpand and the key schedule (with the topic's `psk_id_hash`/`info_hash` precomputed, as a sender
/// does), and one ChaCha20-Poly1305-IETF encryption. No allocation, no formatting: nothing a real sealer can skip.
///
/// Key generation comes in two routes (``KeyGeneration``): libsodium's X25519 ladder `crypto_scalarmult_base`,
/// and its fixed-base Edwards table `crypto_scalarmult_ed25519_base` alone — without the u-coordinate map a real
/// sealer must add, so that floor is a strict lower bound. HMACs that share a key are keyed once (the empty
/// key of `eae_prk`, and `secret` for `key` and `base_nonce`), as a careful sealer does.
///
/// HMAC inputs have the exact lengths of the real labeled inputs (RFC 9180 §4, §5.1, §4.1).
final class SodiumFloor {
    private var skE = [UInt8](repeating: 0, count: 32)
    private var pkE = [UInt8](repeating: 0, count: 32)
    private let skS: [UInt8]
    private let pkR: [UInt8]
    private var dh = [UInt8](repeating: 0, count: 64)
    private var eaePRKInput: [UInt8]        // "HPKE-v1" || "KEM" I2OSP(0x20,2) || "eae_prk" || dh(64)
    private var sharedSecretInfo: [UInt8]   // I2OSP(32,2) || "HPKE-v1" || suite || "shared_secret" || kem_context || 0x01
    private let secretInput: [UInt8]        // "HPKE-v1" || "HPKE" suite(10) || "secret" || psk("")
    private let keyInfo: [UInt8]            // I2OSP(32,2) || "HPKE-v1" || suite || "key" || ks_context(65) || 0x01
    private let nonceInfo: [UInt8]          // I2OSP(12,2) || "HPKE-v1" || suite || "base_nonce" || ks_context || 0x01
    private var prk = [UInt8](repeating: 0, count: 32)
    private var sharedSecret = [UInt8](repeating: 0, count: 32)
    private var secret = [UInt8](repeating: 0, count: 32)
    private var key = [UInt8](repeating: 0, count: 32)
    private var nonce = [UInt8](repeating: 0, count: 32)
    private let plaintext: [UInt8]
    private let aad: [UInt8]
    private var ciphertext: [UInt8]

    /// - Parameters:
    ///   - plaintextLength: The padded plaintext length (a padding bucket).
    init(plaintextLength: Int) {
        precondition(sodium_init() >= 0, "libsodium failed to initialize")
        var sk = [UInt8](repeating: 0, count: 32)
        var pk = [UInt8](repeating: 0, count: 32)
        randombytes_buf(&sk, 32)
        skS = sk
        randombytes_buf(&sk, 32)
        crypto_scalarmult_base(&pk, sk)
        pkR = pk
        let v1 = Array("HPKE-v1".utf8)
        let kemSuite = Array("KEM".utf8) + [0x00, 0x20]
        let hpkeSuite = Array("HPKE".utf8) + [0x00, 0x20, 0x00, 0x01, 0x00, 0x03]
        let ksContext = [UInt8](repeating: 0x02, count: 1 + 32 + 32)
        eaePRKInput = v1 + kemSuite + Array("eae_prk".utf8) + [UInt8](repeating: 0, count: 64)
        sharedSecretInfo = [0, 32] + v1 + kemSuite + Array("shared_secret".utf8) + [UInt8](repeating: 0, count: 96) + [1]
        secretInput = v1 + hpkeSuite + Array("secret".utf8)
        keyInfo = [0, 32] + v1 + hpkeSuite + Array("key".utf8) + ksContext + [1]
        nonceInfo = [0, 12] + v1 + hpkeSuite + Array("base_nonce".utf8) + ksContext + [1]
        plaintext = [UInt8](repeating: 0x41, count: plaintextLength)
        aad = [UInt8](repeating: 0x01, count: 82)
        ciphertext = [UInt8](repeating: 0, count: plaintextLength + 16)
        prepareOpen()
    }

    /// How the floor derives the ephemeral public key.
    enum KeyGeneration {
        /// `crypto_scalarmult_base`: libsodium's X25519 Montgomery ladder.
        case ladder
        /// `crypto_scalarmult_ed25519_base`: libsodium's fixed-base Edwards table, without the map to u.
        case edwardsTable
    }

    private static func hmac(keyed: crypto_auth_hmacsha256_state, message: [UInt8], into out: inout [UInt8]) {
        var state = keyed
        crypto_auth_hmacsha256_update(&state, message, UInt64(message.count))
        crypto_auth_hmacsha256_final(&state, &out)
    }

    private static func keyed(_ key: [UInt8]) -> crypto_auth_hmacsha256_state {
        var state = crypto_auth_hmacsha256_state()
        crypto_auth_hmacsha256_init(&state, key, key.count)
        return state
    }

    private static let emptyKeyed = keyed([])

    /// The DHKEM ExtractAndExpand and the key schedule: 5 HMAC-SHA256 calls over the current `dh` and the given
    /// encapsulated key, leaving `key` and `nonce` set. The DH output feeds the extract input, as in the real
    /// computation (data dependence).
    @inline(__always)
    private func keySchedule(enc: [UInt8]) {
        for i in 0..<64 { eaePRKInput[eaePRKInput.count - 64 + i] = dh[i] }
        Self.hmac(keyed: Self.emptyKeyed, message: eaePRKInput, into: &prk)
        for i in 0..<32 { sharedSecretInfo[sharedSecretInfo.count - 97 + i] = enc[i] }
        Self.hmac(keyed: Self.keyed(prk), message: sharedSecretInfo, into: &sharedSecret)
        Self.hmac(keyed: Self.keyed(sharedSecret), message: secretInput, into: &secret)
        let keyedBySecret = Self.keyed(secret)
        Self.hmac(keyed: keyedBySecret, message: keyInfo, into: &key)
        Self.hmac(keyed: keyedBySecret, message: nonceInfo, into: &nonce)
    }

    /// The X25519 operations: `ephemeral`·pkR, and (when `staticDH`) the static-static skS·pkR.
    @inline(__always)
    private func diffieHellman(ephemeral: [UInt8], staticDH: Bool) {
        dh.withUnsafeMutableBufferPointer { out in
            _ = crypto_scalarmult(out.baseAddress!, ephemeral, pkR)
            if staticDH { _ = crypto_scalarmult(out.baseAddress! + 32, skS, pkR) }
        }
    }

    /// One seal's primitives; `staticDH` adds the static-static X25519 (a first seal, no cache).
    /// - Returns: A byte of the output, for the sink.
    func sealPrimitives(staticDH: Bool, keyGeneration: KeyGeneration) -> Int {
        randombytes_buf(&skE, 32)
        switch keyGeneration {
        case .ladder: crypto_scalarmult_base(&pkE, skE)
        case .edwardsTable: _ = crypto_scalarmult_ed25519_base(&pkE, skE)
        }
        diffieHellman(ephemeral: skE, staticDH: staticDH)
        keySchedule(enc: pkE)
        var written: UInt64 = 0
        crypto_aead_chacha20poly1305_ietf_encrypt(
            &ciphertext, &written, plaintext, UInt64(plaintext.count), aad, UInt64(aad.count), nil, nonce, key)
        return Int(ciphertext[0])
    }

    /// A benchmark of ``sealPrimitives(staticDH:keyGeneration:)``.
    func sealBenchmark(_ name: String, staticDH: Bool, keyGeneration: KeyGeneration) -> Benchmark {
        Benchmark(name: name) { count in
            var sink = 0
            for _ in 0..<count { sink &+= self.sealPrimitives(staticDH: staticDH, keyGeneration: keyGeneration) }
            return sink
        }
    }

    /// The opening side's primitives (2 X25519, 5 HMAC, one ChaCha20-Poly1305 decryption of a valid ciphertext),
    /// the floor for an open. Uses its own fixed ephemeral key so the derived key matches ``openCiphertext``.
    func openPrimitives() -> Int {
        diffieHellman(ephemeral: openSkE, staticDH: true)
        keySchedule(enc: openPkE)
        var written: UInt64 = 0
        let status = crypto_aead_chacha20poly1305_ietf_decrypt(
            &opened, &written, nil, openCiphertext, UInt64(openCiphertext.count), aad, UInt64(aad.count), nonce, key)
        precondition(status == 0, "the floor's own ciphertext failed to open")
        return Int(written)
    }

    private var openSkE = [UInt8](repeating: 7, count: 32)
    private var openPkE = [UInt8](repeating: 0, count: 32)
    private var openCiphertext = [UInt8]()
    private var opened = [UInt8]()

    /// Seals once with the fixed open key so ``openPrimitives()`` decrypts a ciphertext with a valid tag.
    func prepareOpen() {
        crypto_scalarmult_base(&openPkE, openSkE)
        diffieHellman(ephemeral: openSkE, staticDH: true)
        keySchedule(enc: openPkE)
        var written: UInt64 = 0
        openCiphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        opened = [UInt8](repeating: 0, count: plaintext.count)
        crypto_aead_chacha20poly1305_ietf_encrypt(
            &openCiphertext, &written, plaintext, UInt64(plaintext.count), aad, UInt64(aad.count), nil, nonce, key)
    }
}
