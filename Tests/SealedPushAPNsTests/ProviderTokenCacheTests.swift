import Foundation
import SealedPushCore
import SealedPushServer
import Testing

/// A clock the test moves by hand.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    init(_ start: Date) { current = start }

    var now: Date { lock.withLock { current } }

    func advance(minutes: Double) { lock.withLock { current = current.addingTimeInterval(minutes * 60) } }
}

@Suite("Provider token renewal")
struct ProviderTokenCacheTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func makeCache(_ clock: ManualClock, renewalAge: TimeInterval = 50 * 60) throws -> ProviderTokenCache {
        let key = try APNsSigningKey(pemBytes: try APNsKeyGenerator.generatePEM())
        let issuer = try ProviderTokenIssuer(key: key, keyID: "ABC123DEFG", teamID: "TEAM123456")
        return try ProviderTokenCache(issuer: issuer, renewalAge: renewalAge, clock: { clock.now })
    }

    /// Decodes the JWT's claims independently (Foundation base64 + JSON).
    static func claims(_ jwt: String) throws -> [String: Any] {
        let parts = jwt.split(separator: ".")
        #expect(parts.count == 3)
        var text = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        let data = try #require(Data(base64Encoded: text))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func oneTokenUntilFiftyMinutesThenANewOne() throws {
        let clock = ManualClock(Self.start)
        let cache = try Self.makeCache(clock)
        let first = try cache.token()
        #expect(try Self.claims(first.jwt)["iat"] as? Int == 1_800_000_000)
        #expect(try Self.claims(first.jwt)["iss"] as? String == "TEAM123456")
        clock.advance(minutes: 49.9)
        #expect(try cache.token() == first)
        clock.advance(minutes: 0.1)
        let second = try cache.token()
        #expect(second.jwt != first.jwt)
        #expect(try Self.claims(second.jwt)["iat"] as? Int == 1_800_000_000 + 50 * 60)
    }

    @Test func overFourHoursNeverOlderThanSixtyNeverRenewedWithinTwenty() throws {
        let clock = ManualClock(Self.start)
        let cache = try Self.makeCache(clock)
        var issueTimes: [Date] = []
        var last: ProviderToken?
        for _ in 0..<(4 * 60 * 2) {  // every 30 s for 4 hours
            let token = try cache.token()
            let age = clock.now.timeIntervalSince(token.issuedAt)
            #expect(age >= 0 && age < 60 * 60)
            if token != last {
                issueTimes.append(token.issuedAt)
                last = token
            }
            // Asking for a renewal (as after a 403 ExpiredProviderToken) never forces one within 20 minutes.
            cache.invalidate(token)
            clock.advance(minutes: 0.5)
        }
        #expect(issueTimes.count >= 4)
        for (earlier, later) in zip(issueTimes, issueTimes.dropFirst()) {
            #expect(later.timeIntervalSince(earlier) >= 20 * 60)
            #expect(later.timeIntervalSince(earlier) <= 50 * 60)
        }
    }

    @Test func invalidationRenewsOnlyAfterTwentyMinutes() throws {
        let clock = ManualClock(Self.start)
        let cache = try Self.makeCache(clock)
        let first = try cache.token()
        clock.advance(minutes: 10)
        cache.invalidate(first)
        #expect(try cache.token() == first)
        clock.advance(minutes: 10)
        let second = try cache.token()
        #expect(second != first)
        #expect(second.generation == first.generation + 1)
    }

    @Test func renewalAgeMustLieInsideApplesWindow() throws {
        let clock = ManualClock(Self.start)
        #expect(throws: SealedPushError.self) { try Self.makeCache(clock, renewalAge: 19 * 60) }
        #expect(throws: SealedPushError.self) { try Self.makeCache(clock, renewalAge: 60 * 60) }
        _ = try Self.makeCache(clock, renewalAge: 20 * 60)
        _ = try Self.makeCache(clock, renewalAge: 59 * 60)
    }
}
