/// Length padding inside the ciphertext (spec §5): `uint16(len) || content || zeros`, to a fixed bucket.
public enum Padding {
    /// The padded lengths, smallest first. Content lengths within one bucket give envelopes of equal length.
    public static let buckets = [128, 256, 512, 1024, 1536, 2048, 2560, 2912]

    /// The longest content that can be padded: the largest bucket less the 2-byte length.
    public static var maxContentLength: Int { buckets[buckets.count - 1] - 2 }

    /// The padded length for content of a given length.
    /// - Parameter contentLength: The content's length in bytes.
    /// - Returns: The bucket, or `nil` if the content is too long.
    public static func paddedLength(forContentLength contentLength: Int) -> Int? {
        buckets.first { $0 >= contentLength + 2 }
    }

    /// Pads content to its bucket.
    /// - Parameter content: The canonical content JSON.
    /// - Returns: The padded plaintext. Callers own and should zero it after sealing.
    /// - Throws: ``SealedPushError`` with `contentTooLarge` stating the size and the limit.
    public static func pad(_ content: [UInt8]) throws -> [UInt8] {
        guard let length = paddedLength(forContentLength: content.count) else {
            throw SealedPushError(
                .contentTooLarge,
                "the content is \(content.count) bytes of JSON; at most \(maxContentLength) fit the largest padding bucket (\(buckets[buckets.count - 1]) bytes)")
        }
        var out = [UInt8]()
        out.reserveCapacity(length)
        out.append(UInt8(content.count >> 8))
        out.append(UInt8(content.count & 0xFF))
        out.append(contentsOf: content)
        out.append(contentsOf: repeatElement(0, count: length - out.count))
        return out
    }

    /// Removes padding, checking the length prefix and that every padding byte is zero.
    /// - Parameter padded: The decrypted plaintext.
    /// - Returns: The content bytes.
    /// - Throws: ``SealedPushError`` with `malformedContent`.
    public static func unpad(_ padded: [UInt8]) throws -> [UInt8] {
        guard padded.count >= 2 else {
            throw SealedPushError(.malformedContent, "the padded plaintext is \(padded.count) bytes; at least 2 required")
        }
        let length = Int(padded[0]) << 8 | Int(padded[1])
        guard 2 + length <= padded.count else {
            // The prefix is decrypted plaintext: say what is wrong, never its value.
            throw SealedPushError(
                .malformedContent, "the content length prefix exceeds the padded plaintext (\(padded.count) bytes)")
        }
        guard padded[(2 + length)...].allSatisfy({ $0 == 0 }) else {
            throw SealedPushError(.malformedContent, "the padding contains non-zero bytes")
        }
        return Array(padded[2..<(2 + length)])
    }
}
