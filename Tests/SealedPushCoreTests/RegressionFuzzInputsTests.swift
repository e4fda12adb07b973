import Testing
import SealedPushCore

/// Inputs libFuzzer saved while fuzzing Core's parsers, kept so they stay handled. None was a real failure: the one
/// below was saved as a 10 s timeout during a run starved of CPU on a shared machine and parses in milliseconds
/// alone (`scripts/fuzz.sh` now re-runs such inputs and files non-reproducing ones under `unreproduced/`).
@Suite struct RegressionFuzzInputsTests {
    /// FuzzAPNsPayload `timeout-6b6732a7…`: whitespace runs, a bare letter and 0xFF bytes.
    static let apnsTimeoutInput: [UInt8] =
        [UInt8](repeating: 0x0A, count: 8) + [0x4A] + [UInt8](repeating: 0x0A, count: 3)
        + [UInt8](repeating: 0x0D, count: 64) + [UInt8](repeating: 0xFF, count: 113) + [0xF9]
        + [UInt8](repeating: 0xFF, count: 11) + [0x0A, 0x22, 0x6C, 0x6F, 0x42]

    @Test func apnsTimeoutInputIsMalformedPayload() {
        #expect(Self.apnsTimeoutInput.count == 206)
        do {
            _ = try APNsPayload.extractEnvelope(fromBody: Self.apnsTimeoutInput)
            Issue.record("accepted the input")
        } catch let error as SealedPushError {
            #expect(error.code == .malformedPayload)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
