/// CRC-32 as in zlib, PNG and Ethernet (reflected polynomial 0xEDB88320, initial value and final XOR 0xFFFFFFFF):
/// the check of a replay journal record (`Specs/keyring-v1.md` §5.4.1). `CRC32.checksum("123456789")` is
/// 0xCBF43926. It detects an append cut short by a crash, not tampering.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0xEDB8_8320 : value >> 1 }
        return value
    }

    /// The CRC-32 of `bytes`.
    static func checksum<Bytes: Sequence>(_ bytes: Bytes) -> UInt32 where Bytes.Element == UInt8 {
        finish(update(start, bytes))
    }

    /// The register before any byte.
    static let start: UInt32 = 0xFFFF_FFFF

    /// Feeds `bytes` into a running register (so a caller can checksum parts without joining them).
    static func update<Bytes: Sequence>(_ crc: UInt32, _ bytes: Bytes) -> UInt32 where Bytes.Element == UInt8 {
        var crc = crc
        table.withUnsafeBufferPointer { table in
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xff)] ^ (crc >> 8) }
        }
        return crc
    }

    /// The checksum of a register fed with every byte.
    static func finish(_ crc: UInt32) -> UInt32 { crc ^ 0xFFFF_FFFF }
}
