import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A listener that could not bind its address, said as an operator needs it: which listener, which address, why.
public struct ListenError: Error, CustomStringConvertible {
    /// What went wrong and what to do about it.
    public let description: String

    /// The error for a failed bind, or nil when `error` is not one (it is then rethrown as it was).
    /// - Parameters:
    ///   - error: What the server's `run()` threw.
    ///   - listener: Which listener (`the API`, `/metrics`).
    ///   - host: The address it was given.
    ///   - port: The port it was given.
    static func bind(_ error: any Error, listener: String, host: String, port: Int) -> ListenError? {
        guard let error = error as? IOError else { return nil }
        let why: String
        switch error.errnoCode {
        case EADDRINUSE: why = "the address is in use (another process listens there; pick another port or stop it)"
        case EACCES: why = "permission denied (ports below 1024 need privileges)"
        case EADDRNOTAVAIL: why = "this machine has no such address"
        default: return nil
        }
        return ListenError(description: "cannot listen on \(host):\(port) for \(listener): \(why)")
    }
}
