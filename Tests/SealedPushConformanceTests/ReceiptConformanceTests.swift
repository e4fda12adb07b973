import Foundation
import SealedPushClient
import SealedPushCore
import SealedPushServer
import SealedPushTestSupport
import Testing

/// `Specs/control-v1.md` §4 across the module boundary: receipts sealed by the client (swift-crypto) open on the
/// server (libsodium) to the same record, and everything the spec refuses is refused with its code.
@Suite("Receipts: client seals, server opens (control-v1 §4)")
final class ReceiptConformanceTests {
    /// This test's device key rings, removed when the test ends.
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("receipts-\(UUID().uuidString)")
    deinit { try? FileManager.default.removeItem(at: scratch) }

    let topic = "com.example.receipts"
    let now: UInt64 = 1_800_000_000

    struct Fixture {
        let identity: ServerIdentity
        let manager: DeviceKeyManager
        let directory: URL
        let devicePublic: [UInt8]
        let deviceKeyID: KeyID
        let sealer: ReceiptSealer
    }

    func fixture() throws -> Fixture {
        let identity = try ServerIdentity.generate()
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let directory = scratch.appendingPathComponent(UUID().uuidString)
        let manager = DeviceKeyManager(directory: directory)
        let registration = try manager.create(now: now - 100)
        let devicePublic = try KeyText.decodePublicKey(registration.publicKey)
        let sealer = try ReceiptSealer(
            keyStore: FileKeyStore(directory: directory, access: .readOnly), serverPublicKeys: [identity.publicKey],
            topic: topic)
        return Fixture(identity: identity, manager: manager, directory: directory, devicePublic: devicePublic,
                       deviceKeyID: try KeyID.derived(fromPublicKey: devicePublic), sealer: sealer)
    }

    func code(_ body: () throws -> Void) -> SealedPushError.Code? {
        do { try body(); return nil } catch let error as SealedPushError { return error.code } catch { return nil }
    }

    @Test func sealedOnTheDeviceOpensOnTheServer() throws {
        let f = try fixture()
        let receipt = DeliveryReceipt(messageID: Array(repeating: 7, count: 16), outcome: .fallback(reason: "replayed"),
                                      attachmentsDelivered: 0, attachmentsFailed: 1, deviceTime: now)
        let bytes = try f.sealer.seal(receipt, deviceKeyID: f.deviceKeyID, serverKeyID: f.identity.keyID, now: now)
        #expect(bytes.count == 82 + 256 + 16)
        let opener = try ReceiptOpener(identity: f.identity, topic: topic)
        let opened = try opener.open(bytes, devicePublicKey: { $0 == f.deviceKeyID ? f.devicePublic : nil }, now: now + 5)
        #expect(opened.receipt == receipt)
        #expect(opened.deviceKeyID == f.deviceKeyID && opened.expiresAt == now + 604_800)
        // Two receipts of the same record differ (fresh ephemeral key and receipt id) and both open.
        let second = try f.sealer.seal(receipt, deviceKeyID: f.deviceKeyID, serverKeyID: f.identity.keyID, now: now)
        #expect(second != bytes)
        #expect(try opener.open(second, devicePublicKey: { _ in f.devicePublic }, now: now).receiptID != opened.receiptID)
    }

    /// The opener keeps `DH(skR, pkS)` per device key: receipts from devices heard from before open to the same
    /// records through the kept value, and the cache holds one value per device key up to its capacity (a forgery
    /// under a kept device's key id: the vectors' negatives, opened after the positives by the same openers).
    @Test func keptStaticValuesOpenTheSameAndRefuseForgeries() throws {
        let devices = try (0..<3).map { _ in try fixture() }
        let identity = devices[0].identity
        let sealers = try devices.map {
            try ReceiptSealer(
                keyStore: FileKeyStore(directory: $0.directory, access: .readOnly),
                serverPublicKeys: [identity.publicKey], topic: topic)
        }
        let keys = Dictionary(uniqueKeysWithValues: devices.map { ($0.deviceKeyID, $0.devicePublic) })
        for capacity in [0, 2, 16] {
            let opener = try ReceiptOpener(identity: identity, topic: topic, cacheCapacity: capacity)
            for round in 0..<3 {
                for (index, device) in devices.enumerated() {
                    let receipt = DeliveryReceipt(
                        messageID: Array(repeating: UInt8(index * 16 + round), count: 16), outcome: .duplicate,
                        attachmentsDelivered: round, deviceTime: now)
                    let bytes = try sealers[index].seal(
                        receipt, deviceKeyID: device.deviceKeyID, serverKeyID: identity.keyID, now: now)
                    let opened = try opener.open(bytes, devicePublicKey: { keys[$0] }, now: now)
                    #expect(opened.receipt == receipt && opened.deviceKeyID == device.deviceKeyID, "capacity \(capacity)")
                }
            }
            #expect(opener.cachedDeviceCount == min(capacity, devices.count))
        }
        #expect(code { _ = try ReceiptOpener(identity: identity, topic: topic, cacheCapacity: -1) } == .invalidArgument)
    }

    @Test func whatTheSpecRefuses() throws {
        let f = try fixture()
        let receipt = DeliveryReceipt(messageID: Array(repeating: 1, count: 16), outcome: .decrypted, deviceTime: now)
        let bytes = try f.sealer.seal(receipt, deviceKeyID: f.deviceKeyID, serverKeyID: f.identity.keyID, now: now)
        let opener = try ReceiptOpener(identity: f.identity, topic: topic)
        let device: (KeyID) -> [UInt8]? = { $0 == f.deviceKeyID ? f.devicePublic : nil }
        // A lookup that answers with a key of another id is not the device's key (a forgery sealed with another key
        // under the device's id is in Specs/vectors/control-v1.json: authenticationFailure).
        let other = try ServerIdentity.generate().publicKey
        #expect(code { _ = try opener.open(bytes, devicePublicKey: { _ in other }, now: now) } == .unknownSenderKey)
        // Sealed for another app (topic) or to another server identity.
        #expect(code { _ = try ReceiptOpener(identity: f.identity, topic: "com.example.other")
            .open(bytes, devicePublicKey: device, now: now) } == .authenticationFailure)
        #expect(code { _ = try ReceiptOpener(identity: try ServerIdentity.generate(), topic: topic)
            .open(bytes, devicePublicKey: device, now: now) } == .unknownRecipientKey)
        // A device key the app never registered; a receipt past its expiry; one from the future.
        #expect(code { _ = try opener.open(bytes, devicePublicKey: { _ in nil }, now: now) } == .unknownSenderKey)
        #expect(code { _ = try opener.open(bytes, devicePublicKey: device, now: now + 604_800) } == .expired)
        #expect(code { _ = try opener.open(bytes, devicePublicKey: device, now: now - 601) } == .notYetValid)
        // Any flipped byte of the ciphertext or of the header's authenticated fields.
        for index in [90, 200, bytes.count - 1, 20, 40] {
            var tampered = bytes
            tampered[index] ^= 0x10
            #expect(code { _ = try opener.open(tampered, devicePublicKey: device, now: now) } != nil, "byte \(index)")
        }
        // Oversized or truncated: refused before any cryptography.
        #expect(code { _ = try opener.open(bytes + [0], devicePublicKey: device, now: now) } == .malformedEnvelope)
        #expect(code { _ = try opener.open(Array(bytes.dropLast()), devicePublicKey: device, now: now) } == .malformedEnvelope)
        // A notification envelope is never a receipt: the server seals one to the device; presented as a receipt,
        // it names the device key as recipient.
        let sealer = try Sealer(identity: f.identity, topic: topic)
        let notification = try sealer.seal(
            NotificationContent(body: "hi"), to: DevicePublicKey(rawRepresentation: f.devicePublic), now: now)
        #expect(code { _ = try opener.open(notification.envelope, devicePublicKey: device, now: now) } != nil)
        // The device cannot seal with a key it does not hold, nor to a server key it did not pin.
        #expect(code { _ = try f.sealer.seal(receipt, deviceKeyID: try KeyID.derived(fromPublicKey: other),
                                             serverKeyID: f.identity.keyID, now: now) } == .unknownRecipientKey)
        #expect(code { _ = try f.sealer.seal(receipt, deviceKeyID: f.deviceKeyID,
                                             serverKeyID: try KeyID.derived(fromPublicKey: other), now: now) } == .unknownSenderKey)
    }
}

/// `Specs/vectors/control-v1.json`, generated by the libsodium sender code and checked by the Python tool: Core reads
/// every content case as the vector says, and the server opens every receipt and refuses every negative with its code.
@Suite("Control vectors (control-v1)")
struct ControlVectorTests {
    @Test func contentCases() throws {
        let file = try ControlVectorFile.load()
        #expect(file.contentCases.count >= 30)
        for vector in file.contentCases {
            let parsed = try? NotificationContent(json: Array(vector.json.utf8))
            if let canonical = vector.canonical {
                let content = try #require(parsed, "\(vector.name) refused")
                #expect(String(decoding: try content.canonicalJSON(), as: UTF8.self) == canonical, "\(vector.name)")
                #expect(content.control?.kind.rawValue == vector.action, "\(vector.name)")
            } else {
                #expect(parsed == nil, "\(vector.name) accepted")
            }
        }
    }

    @Test func receipts() throws {
        let file = try ControlVectorFile.load()
        let server = try ServerIdentity(privateKey: try Hex.decode(file.receipts[0].serverPrivateKey))
        // One opener per topic for all cases, so the negatives meet the static values the positives left kept.
        var openers: [String: ReceiptOpener] = [:]
        func opener(_ topic: String) throws -> ReceiptOpener {
            if let opener = openers[topic] { return opener }
            let opener = try ReceiptOpener(identity: server, topic: topic)
            openers[topic] = opener
            return opener
        }
        for vector in file.receipts {
            let device = try Hex.decode(vector.devicePublicKey)
            let opener = try opener(vector.topic)
            let record = try DeliveryReceipt(paddedPlaintext: try Hex.decode(vector.paddedPlaintext))
            for pass in ["computed", "kept"] {  // the second open uses the kept DH(skR, pkS)
                let opened = try opener.open(try Hex.decode(vector.receipt), devicePublicKey: { _ in device }, now: vector.now)
                #expect(opened.receipt == record, "\(vector.name), \(pass)")
                #expect(Hex.encode(opened.receiptID) == vector.receiptId)
            }
        }
        for vector in file.receiptNegatives {
            let device = try vector.devicePublicKey.map { try Hex.decode($0) }
            var got: String?
            do {
                _ = try opener(vector.topic).open(
                    try Hex.decode(vector.receipt), devicePublicKey: { _ in device }, now: vector.now)
            } catch let error as SealedPushError {
                got = error.code.name
            }
            #expect(got == vector.expectedError, "\(vector.name)")
        }
    }
}
