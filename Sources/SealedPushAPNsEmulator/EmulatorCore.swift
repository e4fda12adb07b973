import Foundation
import Logging
import SealedPushAPNsEmulatorRules
import SealedPushCore

/// State shared by every connection of one emulator: rules, recorder and the fault generator.
final class EmulatorCore: @unchecked Sendable {
    let configuration: APNsEmulatorConfiguration
    let validator: EmulatorRequestValidator
    let recorder: APNsEmulatorRecorder
    let logger: Logger
    private let lock = NSLock()
    private var sequence = 0
    private var random: SplitMix64

    init(configuration: APNsEmulatorConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.validator = EmulatorRequestValidator(
            configuration: configuration, tokens: try EmulatorTokenVerifier(configuration: configuration))
        self.recorder = APNsEmulatorRecorder(configuration: configuration, logger: logger)
        self.logger = logger
        self.random = SplitMix64(seed: configuration.faults.seed)
    }

    /// The fault for the next request, by arrival order.
    func nextFault() -> EmulatorFault? {
        let plan = configuration.faults
        return lock.withLock {
            let index = sequence
            sequence += 1
            if index < plan.script.count { return plan.script[index] }
            guard !plan.random.isEmpty else { return nil }
            let draw = Double(random.next() >> 11) / Double(1 << 53)
            var cumulative = 0.0
            for weighted in plan.random {
                cumulative += weighted.probability
                if draw < cumulative { return weighted.fault }
            }
            return nil
        }
    }
}
