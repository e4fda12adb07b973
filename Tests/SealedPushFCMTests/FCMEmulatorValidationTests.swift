import Foundation
import SealedPushCore
import SealedPushFCM
import SealedPushFCMEmulator
import Testing

/// The emulator's message rules (FCM's ErrorCode reference, `Specs/fcm-v1.md` §3), through the real client.
@Suite struct FCMEmulatorValidationTests {
    static let token = FCMTestFixture.token

    static func body(_ message: String) -> [UInt8] { Array(("{\"message\":" + message + "}").utf8) }

    @Test func rulesAndErrorShapes() async throws {
        let fixture = try await FCMTestFixture.start()
        let client = try fixture.client()
        let t = "\"token\":\"\(Self.token)\""
        let cases: [(String, String, FCMFailure.Reason?)] = [
            ("accepted", "{\(t),\"data\":{\"sp\":\"AAAA\"},\"android\":{\"priority\":\"high\",\"ttl\":\"3600s\"}}", nil),
            ("collapse_key word is allowed", "{\(t),\"data\":{\"collapse_key\":\"x\",\"sp\":\"A\"}}", nil),
            ("fractional ttl", "{\(t),\"android\":{\"ttl\":\"1.5s\"}}", nil),
            ("28 days", "{\(t),\"android\":{\"ttl\":\"2419200s\"}}", nil),
            ("from key", "{\(t),\"data\":{\"from\":\"x\"}}", .invalidArgument),
            ("gcm key", "{\(t),\"data\":{\"gcm\":\"x\"}}", .invalidArgument),
            ("google prefix", "{\(t),\"data\":{\"google.c.a\":\"x\"}}", .invalidArgument),
            ("number value", "{\(t),\"data\":{\"sp\":1}}", .invalidArgument),
            ("ttl without s", "{\(t),\"android\":{\"ttl\":\"3600\"}}", .invalidArgument),
            ("ttl over 28 days", "{\(t),\"android\":{\"ttl\":\"2419201s\"}}", .invalidArgument),
            ("negative ttl", "{\(t),\"android\":{\"ttl\":\"-1s\"}}", .invalidArgument),
            ("bad priority", "{\(t),\"android\":{\"priority\":\"urgent\"}}", .invalidArgument),
            ("no target", "{\"data\":{\"sp\":\"A\"}}", .invalidArgument),
            ("unknown field", "{\(t),\"extra\":1}", .invalidArgument),
            ("short token", "{\"token\":\"abc\"}", .invalidToken),
        ]
        for (name, message, expected) in cases {
            let result = await client.send(body: Self.body(message))
            if let expected {
                #expect(result.failure?.reason == expected, "\(name): \(String(describing: result.failure))")
                #expect(result.failure?.status == 400, "\(name)")
            } else {
                #expect(result.isSuccess, "\(name): \(String(describing: result.failure))")
            }
        }
        #expect(fixture.emulator.recorder.totalAccepted == 4)
        await client.shutdown()
        await fixture.stop()
    }

    @Test func unregisteredByRateStaysUnregistered() async throws {
        let fixture = try await FCMTestFixture.start { $0.unregisterProbability = 1 }
        let client = try fixture.client()
        let first = await client.send(FCMTestFixture.message())
        #expect(first.failure?.reason == .unregistered)
        #expect(fixture.emulator.recorder.totalAccepted == 0)
        await client.shutdown()
        await fixture.stop()
    }

    @Test func recorderIsBounded() async throws {
        let fixture = try await FCMTestFixture.start {
            $0.recordedMessagesLimit = 5
            $0.trackedEnvelopes = 3
        }
        let client = try fixture.client()
        for index in 0..<12 {
            #expect(await client.send(FCMMessage(token: Self.token, envelope: [UInt8(index)], ttlSeconds: 1)).isSuccess)
        }
        _ = await client.send(FCMMessage(token: Self.token, envelope: [11], ttlSeconds: 1))
        let recorder = fixture.emulator.recorder
        #expect(recorder.allMessages.count == 5)
        #expect(recorder.totalAccepted == 13)
        #expect(recorder.duplicateAcceptances == 1)
        #expect(recorder.acceptedCount(envelopeText: Base64URL.encode([11])) == 2)
        #expect(recorder.acceptedCount(envelopeText: Base64URL.encode([0])) == 0, "forgotten beyond the bound")
        await client.shutdown()
        await fixture.stop()
    }
}
