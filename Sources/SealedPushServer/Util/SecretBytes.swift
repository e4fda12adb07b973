internal import CSodium

/// A heap buffer for secret bytes that is overwritten with zeros (`sodium_memzero`) when the last reference
/// goes away.
///
/// It is a class on purpose: copies share one buffer, so there is exactly one place to wipe and no stray copies
/// left behind by copy-on-write. The bytes are written only while the value is being created (the initializer's
/// closure), so sharing it across threads afterwards is safe.
package final class SecretBytes: RawBytes, @unchecked Sendable {
    private let base: UnsafeMutableRawPointer
    /// The number of bytes.
    package let count: Int

    /// Allocates `count` zeroed bytes and lets `initializer` fill them.
    ///
    /// - Parameters:
    ///   - count: The number of bytes.
    ///   - initializer: Writes the secret into the buffer. If it throws, the buffer is wiped and freed.
    /// - Throws: Whatever `initializer` throws.
    package init(count: Int, initializer: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        self.count = count
        self.base = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
        self.base.initializeMemory(as: UInt8.self, repeating: 0, count: max(count, 1))
        try initializer(UnsafeMutableRawBufferPointer(start: base, count: count))
    }

    /// Copies `bytes` into a new secret buffer. The caller remains responsible for wiping its own copy.
    ///
    /// - Parameter bytes: The bytes to copy.
    package convenience init(copying bytes: some RawBytes) {
        let count = bytes.withUnsafeBytes { $0.count }
        self.init(count: count) { out in
            bytes.withUnsafeBytes { source in
                if count > 0, let from = source.baseAddress, let to = out.baseAddress {
                    to.copyMemory(from: from, byteCount: count)
                }
            }
        }
    }

    deinit {
        sodium_memzero(base, max(count, 1))
        base.deallocate()
    }

    /// Calls `body` with a read-only view of the secret.
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// A copy of the bytes as an array: for public results (such as an encapsulated key) and for tests. The
    /// array is not wiped automatically.
    package var bytes: [UInt8] {
        Array(UnsafeRawBufferPointer(start: base, count: count))
    }
}
