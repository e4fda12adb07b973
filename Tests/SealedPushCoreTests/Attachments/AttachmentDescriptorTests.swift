import SealedPushCore
import SealedPushTestSupport
import Testing

/// `Specs/blob-v1.md` §6: which descriptor defects skip an attachment (and with which code), which only drop its
/// thumbnail, the caps and extensions of §6.3, and the size formula's worked examples of §3.
@Suite("AttachmentDescriptor and BlobReference: blob-v1 §6")
struct AttachmentDescriptorTests {
    static let keyText = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"  // bytes 0x00 ... 0x1f

    static func members(_ changes: [String: JSONValue?] = [:]) -> JSONValue {
        var members: JSONObject = [
            "url": .string("https://blobs.example.com/abc"), "key": .string(keyText), "size": .number(482_113),
            "type": .string("image/jpeg"),
        ]
        for (name, value) in changes { members[name] = value }
        return .object(members)
    }

    func code(_ value: JSONValue) -> String? {
        do {
            _ = try AttachmentDescriptor(parsing: value)
            return nil
        } catch let error as SealedPushError {
            return error.code.name
        } catch {
            return "\(error)"
        }
    }

    @Test func aValidDescriptorParses() throws {
        let descriptor = try AttachmentDescriptor(
            parsing: Self.members(["name": .string("photo.jpg"), "extra": .array([])]))
        #expect(descriptor.blob.url == "https://blobs.example.com/abc")
        #expect(descriptor.blob.key == Array(0..<32))
        #expect(descriptor.blob.size == 482_113)
        #expect(descriptor.mediaType.mimeType == "image/jpeg" && descriptor.mediaType.kind == .image)
        #expect(descriptor.mediaType.fileExtension == "jpg")
        #expect(descriptor.name == "photo.jpg")
        #expect(descriptor.thumbnail == nil && descriptor.droppedThumbnailError == nil)
        #expect(try AttachmentDescriptor(parsing: descriptor.jsonValue) == descriptor)
    }

    @Test(arguments: [
        ("url missing", ["url": nil], "malformedAttachment"),
        ("url not a string", ["url": .number(1)], "malformedAttachment"),
        ("ftp url", ["url": .string("ftp://x/y")], "malformedAttachment"),
        ("no host", ["url": .string("https:///path")], "malformedAttachment"),
        ("only a scheme", ["url": .string("https://")], "malformedAttachment"),
        ("space in url", ["url": .string("https://a b")], "malformedAttachment"),
        ("non-ASCII url", ["url": .string("https://ä.example")], "malformedAttachment"),
        ("url too long", ["url": .string("https://a/" + String(repeating: "x", count: 2_039))], "malformedAttachment"),
        ("key missing", ["key": nil], "malformedAttachment"),
        ("key 31 bytes", ["key": .string(String(keyText.dropLast(2)))], "malformedAttachment"),
        ("key padded", ["key": .string(keyText + "=")], "malformedAttachment"),
        ("key not canonical", ["key": .string(String(keyText.dropLast()) + "9")], "malformedAttachment"),
        ("key standard base64", ["key": .string(String(keyText.dropLast()) + "+")], "malformedAttachment"),
        ("size missing", ["size": nil], "malformedAttachment"),
        ("size a string", ["size": .string("5")], "malformedAttachment"),
        ("size fractional", ["size": .number(1.5)], "malformedAttachment"),
        ("size negative", ["size": .number(-1)], "malformedAttachment"),
        ("size over the image cap", ["size": .number(10_000_001)], "blobTooLarge"),
        ("type missing", ["type": nil], "malformedAttachment"),
        ("type unsupported", ["type": .string("image/webp")], "malformedAttachment"),
        ("type with parameters", ["type": .string("image/jpeg; q=1")], "malformedAttachment"),
        ("type not a string", ["type": .bool(true)], "malformedAttachment"),
        ("name empty", ["name": .string("")], "malformedAttachment"),
        ("name too long", ["name": .string(String(repeating: "é", count: 128))], "malformedAttachment"),
        ("name not a string", ["name": .null], "malformedAttachment"),
    ] as [(String, [String: JSONValue?], String)])
    func aDefectSkipsTheAttachmentWithItsCode(name: String, changes: [String: JSONValue?], expected: String) {
        #expect(code(Self.members(changes)) == expected, "\(name)")
    }

    @Test func theCapsAreAppleLimitsInDecimalMegabytes() {
        for (type, cap) in [("image/png", 10_000_000), ("audio/mpeg", 5_000_000), ("video/quicktime", 50_000_000)] {
            #expect(code(Self.members(["type": .string(type), "size": .number(Double(cap))])) == nil, "\(type)")
            #expect(code(Self.members(["type": .string(type), "size": .number(Double(cap + 1))])) == "blobTooLarge")
        }
        #expect(code(Self.members(["size": .number(0)])) == nil)
        #expect(code(Self.members(["url": .string("HTTP://127.0.0.1:8080/b")])) == nil)
    }

    @Test func theMediaTypeTableOfTheSpec() {
        let table: [(String, String, AttachmentMediaType.Kind)] = [
            ("image/jpeg", "jpg", .image), ("image/png", "png", .image), ("image/gif", "gif", .image),
            ("audio/mpeg", "mp3", .audio), ("audio/mp4", "m4a", .audio), ("audio/x-m4a", "m4a", .audio),
            ("audio/m4a", "m4a", .audio), ("audio/wav", "wav", .audio), ("audio/x-wav", "wav", .audio),
            ("audio/wave", "wav", .audio), ("audio/aiff", "aiff", .audio), ("audio/x-aiff", "aiff", .audio),
            ("video/mp4", "mp4", .video), ("video/x-m4v", "m4v", .video), ("video/quicktime", "mov", .video),
            ("video/mpeg", "mpg", .video), ("video/x-msvideo", "avi", .video), ("video/avi", "avi", .video),
        ]
        for (type, fileExtension, kind) in table {
            let media = AttachmentMediaType(mimeType: type.uppercased())
            #expect(media?.mimeType == type && media?.fileExtension == fileExtension && media?.kind == kind, "\(type)")
        }
        #expect(AttachmentMediaType.supported.count == table.count)
        #expect(AttachmentMediaType(mimeType: "text/plain") == nil)
    }

    @Test func aDefectiveThumbnailIsDroppedAndTheAttachmentKept() throws {
        let goodThumbnail = Self.members(["size": .number(3_912)])
        let withThumbnail = try AttachmentDescriptor(
            parsing: Self.members(["type": .string("video/mp4"), "size": .number(40_000_000), "thumbnail": goodThumbnail]))
        #expect(withThumbnail.thumbnail?.blob.size == 3_912)
        #expect(withThumbnail.droppedThumbnailError == nil)
        for (name, thumbnail, expected) in [
            ("not an object", JSONValue.string("x"), "malformedAttachment"),
            ("a video", Self.members(["type": .string("video/mp4")]), "malformedAttachment"),
            ("nested thumbnail", Self.members(["thumbnail": goodThumbnail]), "malformedAttachment"),
            ("bad key", Self.members(["key": .string("x")]), "malformedAttachment"),
            ("over the image cap", Self.members(["size": .number(10_000_001)]), "blobTooLarge"),
        ] {
            let descriptor = try AttachmentDescriptor(parsing: Self.members(["type": .string("video/mp4"), "thumbnail": thumbnail]))
            #expect(descriptor.thumbnail == nil, "\(name)")
            #expect(descriptor.droppedThumbnailError?.code.name == expected, "\(name)")
            #expect(descriptor.mediaType.kind == .video)
        }
    }

    /// FuzzBlob finding (crash-2181aa92…): a descriptor whose thumbnail was dropped did not equal the descriptor
    /// parsed back from its own `jsonValue`, because equality included the drop's diagnostic.
    @Test func aDescriptorWithADroppedThumbnailEqualsItsJSONRoundTrip() throws {
        let badThumbnail = Self.members(["url": .string("https:1e309bs.example.com/9c1e")])
        let descriptor = try AttachmentDescriptor(parsing: Self.members(["thumbnail": badThumbnail]))
        #expect(descriptor.droppedThumbnailError != nil)
        let again = try AttachmentDescriptor(parsing: descriptor.jsonValue)
        #expect(again == descriptor)
        #expect(Set([again, descriptor]).count == 1)
    }

    @Test func parseAllKeepsEachElementsOwnResult() {
        let results = AttachmentDescriptor.parseAll([
            Self.members(), Self.members(["key": nil]), .number(1), Self.members(["type": .string("audio/wav")]),
        ])
        #expect(results.count == 4)
        #expect((try? results[0].get()) != nil)
        #expect(results.map { (try? $0.get()) == nil } == [false, true, true, false])
    }

    @Test func contentReferencesUseTheContentCap() throws {
        let reference = JSONValue.object([
            "url": .string("https://b.example/c"), "key": .string(Self.keyText), "size": .number(65_536),
        ])
        #expect(try BlobReference(parsing: reference, maxSize: BlobReference.defaultContentCap).size == 65_536)
        do {
            _ = try BlobReference(
                parsing: .object({ var object = reference.objectValue!; object["size"] = .number(65_537); return object }()),
                maxSize: BlobReference.defaultContentCap)
            Issue.record("content over 64 KiB was accepted")
        } catch let error as SealedPushError {
            #expect(error.code == .blobTooLarge)
        }
    }

    @Test func theKeyIsNeverPrinted() throws {
        let descriptor = try AttachmentDescriptor(parsing: Self.members(["thumbnail": Self.members()]))
        var dumped = ""
        dump(descriptor, to: &dumped)
        for text in ["\(descriptor)", String(reflecting: descriptor), dumped, "\(descriptor.blob)"] {
            #expect(!text.contains(Self.keyText) && !text.contains("[0, 1, 2"), "\(text)")
        }
    }

    @Test func sizeFormulaMatchesTheSpecsWorkedExamples() {
        #expect(BlobFormat.ciphertextSize(plaintextSize: 0) == 37)
        #expect(BlobFormat.ciphertextSize(plaintextSize: 1) == 38)
        #expect(BlobFormat.ciphertextSize(plaintextSize: 65_536) == 65_573)
        #expect(BlobFormat.ciphertextSize(plaintextSize: 65_537) == 65_590)
        #expect(BlobFormat.nonce(index: 0x0102, isLast: true) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 1])
        #expect(BlobFormat.nonce(index: 0, isLast: false) == [UInt8](repeating: 0, count: 12))
    }
}
