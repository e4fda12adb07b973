import SealedPushCore

/// Encrypts a file or byte stream into a blob (`Specs/blob-v1.md` §3–4) with libsodium, in constant memory.
///
/// Each encryptor makes one blob under a fresh random 32-byte key and 16-byte salt. It reads the plaintext once,
/// one 64 KiB chunk at a time (plus one byte of look-ahead to know which chunk is the last), so a 50 MB video is
/// never in memory. The blob key and the derived payload key live in ``SecretBytes`` and are wiped when the
/// encryptor and the returned ``EncryptedBlob`` go away.
///
/// ```swift
/// let encryptor = try BlobEncryptor()
/// let result = try encryptor.encrypt(reading: { try file.read(into: $0) }, writing: { try out.write($0) })
/// let reference = try result.reference(url: "https://blobs.example.com/\(name)")
/// ```
public final class BlobEncryptor {
    /// A source of plaintext: fills a prefix of the buffer and returns how many bytes it wrote; 0 means the end.
    public typealias Read = (UnsafeMutableRawBufferPointer) throws -> Int

    /// The 21-byte header (magic, version, salt). It is the first thing written.
    public let header: [UInt8]
    private let blobKey: SecretBytes
    private let payloadKey: SecretBytes
    private let maxPlaintextSize: Int

    private var input: [UInt8]
    private var output: [UInt8]
    private var filled = 0
    private var chunkIndex = 0
    private var plaintextCount = 0
    private var headerWritten = false
    private var endOfInput = false
    private var finished = false

    /// Creates an encryptor with a fresh random blob key and salt.
    ///
    /// - Parameter maxPlaintextSize: The largest plaintext accepted (at most ``BlobFormat/maxPlaintextSize``);
    ///   for an attachment, its kind's cap.
    /// - Throws: `SealedPushError` `keysUnavailable` if libsodium could not initialize.
    public convenience init(maxPlaintextSize: Int = BlobFormat.maxPlaintextSize) throws {
        try Self.initializeSodium()
        let key = SecretBytes(count: BlobFormat.keyLength) { Sodium.randomBytes(into: $0) }
        try self.init(key: key, salt: Sodium.randomBytes(count: BlobFormat.saltLength), maxPlaintextSize: maxPlaintextSize)
    }

    /// Creates an encryptor with a given key and salt: for the spec vectors only. A real blob needs a fresh key.
    package init(key: SecretBytes, salt: [UInt8], maxPlaintextSize: Int = BlobFormat.maxPlaintextSize) throws {
        try Self.initializeSodium()
        guard key.count == BlobFormat.keyLength, salt.count == BlobFormat.saltLength else {
            throw SealedPushError(.invalidKey, "a blob key is 32 bytes and a salt 16 bytes, got \(key.count) and \(salt.count)")
        }
        guard maxPlaintextSize >= 0 else {
            throw SealedPushError(.invalidArgument, "the plaintext limit cannot be negative")
        }
        self.blobKey = key
        self.payloadKey = try BlobKeyDerivation.payloadKey(blobKey: key, salt: salt)
        self.header = BlobFormat.magic + [BlobFormat.version] + salt
        self.maxPlaintextSize = min(maxPlaintextSize, BlobFormat.maxPlaintextSize)
        self.input = [UInt8](repeating: 0, count: BlobFormat.chunkSize)
        self.output = [UInt8](repeating: 0, count: BlobFormat.chunkSize + BlobFormat.tagLength)
    }

    deinit {
        Sodium.wipe(&input)
    }

    /// Encrypts everything `reading` yields and hands the blob to `writing` piece by piece (the header, then one
    /// sealed chunk per call).
    ///
    /// - Parameters:
    ///   - reading: The plaintext source.
    ///   - writing: The blob sink; the buffer is valid only during the call.
    /// - Returns: The blob key and sizes for the descriptor.
    /// - Throws: `blobTooLarge` if the plaintext exceeds the limit, `invalidArgument` if the encryptor was used
    ///   before, or what a closure throws.
    public func encrypt(
        reading: Read, writing: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> EncryptedBlob {
        try begin()
        while let piece = try nextPiece(reading) {
            try piece.withUnsafeBytes { try writing($0) }
        }
        return result
    }

    /// Encrypts everything `reading` yields into a ``BlobWriter`` of a ``BlobStore`` (the header, then one sealed
    /// chunk per write). The writer is not committed: the caller commits it, or aborts it on an error.
    ///
    /// - Parameters:
    ///   - reading: The plaintext source.
    ///   - writer: The store's writer for the new blob.
    /// - Returns: The blob key and sizes for the descriptor.
    /// - Throws: As the synchronous `encrypt(reading:writing:)`, or what the writer throws.
    public func encrypt(reading: Read, into writer: any BlobWriter) async throws -> EncryptedBlob {
        try begin()
        while let piece = try nextPiece(reading) {
            try await writer.write(Array(piece))
        }
        return result
    }

    /// Encrypts a byte array (a convenience for small blobs such as overflow content).
    ///
    /// - Parameter plaintext: The plaintext.
    /// - Returns: The whole blob and its key and sizes.
    /// - Throws: As `encrypt(reading:writing:)`.
    public func encrypt(_ plaintext: [UInt8]) throws -> (blob: [UInt8], result: EncryptedBlob) {
        var blob: [UInt8] = []
        blob.reserveCapacity(BlobFormat.ciphertextSize(plaintextSize: plaintext.count))
        var offset = 0
        let result = try encrypt(
            reading: { buffer in
                let count = min(buffer.count, plaintext.count - offset)
                plaintext.withUnsafeBytes { source in
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<offset + count]))
                }
                offset += count
                return count
            },
            writing: { blob.append(contentsOf: $0) })
        return (blob, result)
    }

    /// Seals one chunk with an explicit index and final flag, outside the normal stream: for the spec vectors'
    /// damaged blobs (a wrong flag on a genuine chunk).
    package func sealChunk(index: Int, isLast: Bool, plaintext: [UInt8]) throws -> [UInt8] {
        var sealed = [UInt8](repeating: 0, count: plaintext.count + BlobFormat.tagLength)
        try plaintext.withUnsafeBytes { source in
            try sealed.withUnsafeMutableBytes { try seal(index: index, isLast: isLast, plaintext: source, into: $0) }
        }
        return sealed
    }

    /// A copy of the derived payload key: for the spec vectors' intermediate value only.
    package func payloadKeyForVectors() throws -> [UInt8] { payloadKey.bytes }

    private var result: EncryptedBlob {
        EncryptedBlob(
            key: blobKey, plaintextSize: plaintextCount,
            ciphertextSize: BlobFormat.ciphertextSize(plaintextSize: plaintextCount))
    }

    private func begin() throws {
        guard !headerWritten else {
            throw SealedPushError(.invalidArgument, "a BlobEncryptor makes one blob; create a new one for the next")
        }
    }

    /// The next piece of the blob (the header first), or `nil` after the last chunk.
    private func nextPiece(_ reading: Read) throws -> ArraySlice<UInt8>? {
        if !headerWritten {
            headerWritten = true
            return header[...]
        }
        if finished { return nil }
        while filled < BlobFormat.chunkSize, !endOfInput {
            let count = try input.withUnsafeMutableBytes {
                try reading(UnsafeMutableRawBufferPointer(rebasing: $0[filled...]))
            }
            guard count >= 0, count <= BlobFormat.chunkSize - filled else {
                throw SealedPushError(.invalidArgument, "the blob source returned an impossible byte count \(count)")
            }
            if count == 0 { endOfInput = true }
            filled += count
        }
        // A full chunk is the last one only if nothing follows: read one byte ahead.
        var lookAhead: UInt8 = 0
        var haveLookAhead = false
        if !endOfInput {
            let count = try withUnsafeMutableBytes(of: &lookAhead) { try reading($0) }
            guard count == 0 || count == 1 else {
                throw SealedPushError(.invalidArgument, "the blob source returned an impossible byte count \(count)")
            }
            if count == 0 { endOfInput = true } else { haveLookAhead = true }
        }
        let isLast = !haveLookAhead
        guard plaintextCount + filled + (haveLookAhead ? 1 : 0) <= maxPlaintextSize else {
            throw SealedPushError(.blobTooLarge, "the plaintext is over the \(maxPlaintextSize)-byte limit")
        }
        let sealedLength = filled + BlobFormat.tagLength
        try input.withUnsafeBytes { source in
            try output.withUnsafeMutableBytes { target in
                try seal(
                    index: chunkIndex, isLast: isLast, plaintext: UnsafeRawBufferPointer(rebasing: source[0..<filled]),
                    into: UnsafeMutableRawBufferPointer(rebasing: target[0..<sealedLength]))
            }
        }
        plaintextCount += filled
        chunkIndex += 1
        filled = 0
        if haveLookAhead {
            input[0] = lookAhead
            filled = 1
        }
        if isLast { finished = true }
        return output[0..<sealedLength]
    }

    private func seal(
        index: Int, isLast: Bool, plaintext: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer
    ) throws {
        var nonce = (UInt64(0), UInt32(0))
        try withUnsafeMutableBytes(of: &nonce) { nonceBytes in
            let nonceBuffer = UnsafeMutableRawBufferPointer(rebasing: nonceBytes[0..<BlobFormat.nonceLength])
            BlobFormat.writeNonce(index: index, isLast: isLast, into: nonceBuffer)
            try payloadKey.withUnsafeBytes { key in
                do {
                    try ChaCha20Poly1305.seal(
                        key: key, nonce: UnsafeRawBufferPointer(nonceBuffer), aad: UnsafeRawBufferPointer(start: nil, count: 0),
                        plaintext: plaintext, into: out)
                } catch let error as HPKEError {
                    throw SealedPushError(hpke: error, context: "sealing blob chunk \(index)")
                }
            }
        }
    }

    private static func initializeSodium() throws {
        do {
            try Sodium.ensureInitialized()
        } catch let error as HPKEError {
            throw SealedPushError(hpke: error, context: "starting a blob")
        }
    }
}
