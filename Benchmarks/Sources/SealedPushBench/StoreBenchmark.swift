import Foundation
import SealedPushCore
import SealedPushGateway
import SealedPushServer

/// What the gateway's SQLite store costs a one-device send (issue 17 §13): the durable enqueue of a group of sends
/// (one `BEGIN IMMEDIATE` … `COMMIT` with an fsync, as the gateway's group commit writes it, each send leased to its
/// node as the hand-over leaves it) and, after it, the same group's job ends (one transaction without an fsync of its
/// own), against the floor: the same statements and transactions on the same schema through SQLite's C API on the
/// calling thread — no GRDB, no Swift concurrency, no dispatch queue, no check but that the device is there.
///
/// Both sides write a database of their own in the same folder, alternately, round after round; the figure is
/// process CPU time (the store's writer runs on GRDB's thread) and wall time per send, medians of the rounds.
enum StoreBenchmark {
    static let group = 14  // the gateway's mean group at capacity (BENCHMARKS.md, stop 44)
    static let devices = 1_000

    static func run(_ report: Report, fixture: Fixture, batches: Int, rounds: Int) async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("sealed-push-store-\(getpid())", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        // One sealed body per device, sealed to the device's own key, so the store's key check passes.
        let now = Date()
        let sealer = try Sealer(identity: fixture.identity, topic: Fixture.topic)
        var bodies: [(body: SealedBody, keyID: String, key: DeviceRegistration)] = []
        for _ in 0..<devices {
            let key = try ServerIdentity.generate()  // an X25519 key pair like a device's
            let sealed = try sealer.seal(Fixture.content, to: DevicePublicKey(rawRepresentation: key.publicKey))
            bodies.append(
                (try SealedBody(apnsBody: sealed.payload), sealed.recipientKeyID.hex,
                 DeviceRegistration(publicKey: key.publicKeyText, keyId: key.keyID.hex, createdAt: now)))
        }

        let ours = try SQLiteGatewayStore(path: directory.appendingPathComponent("ours.sqlite").path)
        _ = try await ours.migrate()
        let floorPath = directory.appendingPathComponent("floor.sqlite").path
        let schema = try SQLiteGatewayStore(path: floorPath)  // the floor's schema: the store's own migrations
        _ = try await schema.migrate()
        for store in [ours, schema] {
            try await store.putApp(
                GatewayApp(
                    id: "bench", topic: Fixture.topic, teamID: "TEAM123456", apnsKeyID: "KEY1234567",
                    apnsKeyPath: "/dev/null", serverIdentityPath: "/dev/null"), now: now)
            for (index, device) in bodies.enumerated() {
                _ = try await store.putDevice(
                    appID: "bench", deviceID: "device-\(index)", apnsToken: String(format: "%064x", index + 1),
                    environment: .sandbox, registration: device.key, now: now)
            }
        }
        try await schema.close()
        let floor = try StoreFloorWriter(path: floorPath)

        var messageNumber = 0
        func sends() -> [NewNotification] {
            (0..<group).map { _ in
                let device = Int.random(in: 0..<devices)
                messageNumber += 1
                let created = Date()
                return NewNotification(
                    appID: "bench", createdAt: created, expiresAt: created.addingTimeInterval(3600),
                    jobs: [
                        .init(
                            deviceID: "device-\(device)", body: bodies[device].body,
                            messageID: String(format: "%032x", messageNumber), keyID: bodies[device].keyID)
                    ],
                    lease: JobLease(owner: "bench-node", expiresAt: created.addingTimeInterval(90)))
            }
        }

        var oursCPU: [Double] = [], oursWall: [Double] = [], floorCPU: [Double] = [], floorWall: [Double] = []
        for _ in 0..<rounds {
            var work = (0..<batches).map { _ in sends() }
            var (cpu, wall) = (Clock.processCPUNanos(), Clock.wallNanos())
            for batch in work {
                let claimed = try await ours.enqueueBatch(batch).flatMap { try $0.get().claimed }
                let ends = claimed.map {
                    JobFinish(
                        jobID: $0.id, owner: "bench-node", outcome: .sent(apnsID: "apns-\($0.id)"), requests: 1,
                        transientReason: nil, now: Date())
                }
                guard try await ours.finish(ends).allSatisfy({ $0 }) else { throw StoreBenchmarkError.lostJob }
            }
            let sent = Double(batches * group)
            oursCPU.append(Double(Clock.processCPUNanos() - cpu) / sent)
            oursWall.append(Double(Clock.wallNanos() - wall) / sent)

            work = (0..<batches).map { _ in sends() }
            (cpu, wall) = (Clock.processCPUNanos(), Clock.wallNanos())
            for batch in work { try floor.write(batch) }
            floorCPU.append(Double(Clock.processCPUNanos() - cpu) / sent)
            floorWall.append(Double(Clock.wallNanos() - wall) / sent)
        }
        try await ours.close()
        floor.close()

        func median(_ values: [Double]) -> Double { Sample(name: "", nanosPerOp: values).median }
        let floorName = "the same statements through SQLite's C API"
        report.add(
            Row(
                figure: "SQLite store, a one-device send's enqueue and job end (groups of \(group)), process CPU",
                ours: median(oursCPU), comparison: floorName, theirs: median(floorCPU), ratio: .cost, target: nil))
        report.add(
            Row(
                figure: "SQLite store, the same, wall time a send", ours: median(oursWall), comparison: floorName,
                theirs: median(floorWall), ratio: .cost, target: nil))
        report.note(
            "store: \(rounds) rounds of \(batches) groups of \(group) sends to \(devices) devices, each side its own "
                + "database file, alternated; the enqueue commits with synchronous = FULL, the job ends with NORMAL")
    }
}

enum StoreBenchmarkError: Error, CustomStringConvertible {
    case lostJob
    case sqlite(String)

    var description: String {
        switch self {
        case .lostJob: "a job the store had just leased did not end"
        case .sqlite(let message): "SQLite: \(message)"
        }
    }
}
