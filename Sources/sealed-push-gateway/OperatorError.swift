/// A command that was well formed but could not be done (a missing app or file, a configuration the gateway refuses,
/// a store that answers an error): printed as `Error: <message>` without the usage text ArgumentParser adds to a
/// `ValidationError`, and the process exits with status 1. Argument checks in `validate()` stay `ValidationError`s
/// (status 64, with the command's usage).
struct OperatorError: Error, CustomStringConvertible {
    /// What went wrong and what to do about it.
    let description: String

    /// - Parameter description: What went wrong and what to do about it.
    init(_ description: String) { self.description = description }
}
