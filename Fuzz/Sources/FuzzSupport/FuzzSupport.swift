internal import CFuzzDriver

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Helpers shared by the fuzz targets.
public enum Fuzz {
    /// The libFuzzer callback shape.
    public typealias Callback = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32

    /// Runs libFuzzer's driver with the target's callback; call it from the target's `<Module>_main`.
    /// - Parameters:
    ///   - argc: The process's argument count.
    ///   - argv: The process's arguments.
    ///   - callback: The target's `LLVMFuzzerTestOneInput`.
    /// - Returns: libFuzzer's exit status.
    public static func run(
        _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ callback: Callback
    ) -> Int32 {
        sp_fuzz_run(argc, argv, callback)
    }

    /// Copies libFuzzer's input into an array.
    /// - Parameters:
    ///   - data: The input pointer (may be `nil` when `size` is 0).
    ///   - size: The input length.
    /// - Returns: The bytes.
    public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        guard let data, size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    /// Aborts (which libFuzzer reports as a crash and saves the input) when an invariant does not hold.
    /// - Parameters:
    ///   - condition: The invariant.
    ///   - message: What was expected, printed before aborting.
    public static func check(
        _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
        file: StaticString = #fileID, line: UInt = #line
    ) {
        guard !condition() else { return }
        var text = "FUZZ INVARIANT FAILED at \(file):\(line): \(message())\n"
        text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
        abort()
    }

    /// Fails when an error is not one of the allowed codes (by name), so an unexpected error type or code is a
    /// finding, not noise.
    /// - Parameters:
    ///   - error: The thrown error.
    ///   - allowed: The error code names the API documents for this input.
    ///   - codeName: Extracts the code name if the error is a `SealedPushError`, else `nil`.
    public static func expectCode(
        _ error: any Error, in allowed: Set<String>, codeName: (any Error) -> String?,
        file: StaticString = #fileID, line: UInt = #line
    ) {
        guard let name = codeName(error) else {
            check(false, "unexpected error type \(type(of: error)): \(error)", file: file, line: line)
            return
        }
        check(allowed.contains(name), "unexpected error code \(name) (allowed: \(allowed.sorted())): \(error)",
              file: file, line: line)
    }
}
