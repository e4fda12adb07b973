/// A contiguous run of bytes that can be read through a raw buffer pointer.
///
/// Lets the primitives take public inputs (`[UInt8]`) and secrets (``SecretBytes``) alike without copying
/// secrets into arrays.
package protocol RawBytes {
    /// Calls `body` with a pointer to the bytes; the pointer is valid only inside `body`.
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

extension Array: RawBytes where Element == UInt8 {}
extension ArraySlice: RawBytes where Element == UInt8 {}

extension UnsafeRawBufferPointer {
    /// Calls `body` with a non-null `UInt8` pointer and the count, even for an empty buffer (some libsodium
    /// parameters are declared `nonnull` although their length may be zero).
    func withNonNullBytes<R>(_ body: (UnsafePointer<UInt8>, Int) throws -> R) rethrows -> R {
        if let base = baseAddress, count > 0 {
            return try body(base.assumingMemoryBound(to: UInt8.self), count)
        }
        var placeholder: UInt8 = 0
        return try withUnsafePointer(to: &placeholder) { try body($0, 0) }
    }
}
