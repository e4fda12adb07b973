import Testing
@testable import SealedPushCore

@Suite struct PaddingTests {
    // Bucket choice from spec §5: smallest bucket ≥ 2 + len(content).
    @Test(arguments: [(0, 128), (126, 128), (127, 256), (254, 256), (255, 512), (1534, 1536), (2558, 2560),
                      (2559, 2912), (2910, 2912)])
    func bucketChoice(contentLength: Int, bucket: Int) throws {
        let padded = try Padding.pad([UInt8](repeating: 0x41, count: contentLength))
        #expect(padded.count == bucket)
        #expect(padded[0] == UInt8(contentLength >> 8))
        #expect(padded[1] == UInt8(contentLength & 0xFF))
        #expect(padded[(2 + contentLength)...].allSatisfy { $0 == 0 })
        #expect(try Padding.unpad(padded) == [UInt8](repeating: 0x41, count: contentLength))
    }

    @Test func tooLarge() {
        do {
            _ = try Padding.pad([UInt8](repeating: 0, count: 2911))
            Issue.record("2911 bytes were padded")
        } catch let error as SealedPushError {
            #expect(error.code == .contentTooLarge)
            #expect(error.message.contains("2911"))
            #expect(error.message.contains("2910"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func unpadRejectsBadPadding() {
        var padded = [UInt8](repeating: 0, count: 128)
        padded[1] = 3
        padded[127] = 1  // non-zero padding
        #expect(throws: SealedPushError.self) { try Padding.unpad(padded) }
        var long = [UInt8](repeating: 0, count: 128)
        long[0] = 0x01  // length 256 > 126
        #expect(throws: SealedPushError.self) { try Padding.unpad(long) }
        #expect(throws: SealedPushError.self) { try Padding.unpad([0]) }
    }
}
