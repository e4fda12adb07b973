import Foundation
import Testing

@testable import SealedPushGatewayHTTP

/// The `202`'s body, written without Foundation's encoder, is what the encoder writes for the contract's
/// `SendAccepted` (sorted keys), for a notification id as the gateway prints them and device counts up to the
/// largest.
@Suite struct SendAcceptedModelTests {
    @Test(arguments: [0, 1, 7, 1_000, 10_000, Int.max])
    func theBodyIsWhatTheEncoderWrites(devices: Int) throws {
        let model = SendAcceptedModel(id: UUID().uuidString.lowercased(), devices: devices)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(model.json == Array(try encoder.encode(model)))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(model.json)) as? [String: Any])
        #expect(object["id"] as? String == model.id && (object["devices"] as? NSNumber)?.intValue == devices)
    }
}
