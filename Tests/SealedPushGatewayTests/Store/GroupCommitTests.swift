import MetricsTestKit
import SealedPushGateway
import Synchronization
import Testing

/// Items that arrive while a batch is written go together in the next one, each gets its own answer, and every
/// batch's size and write time are recorded (`GroupCommitMetrics`).
@Suite("Group commit")
struct GroupCommitTests {
    @Test func waitingItemsGoTogetherAndEveryBatchIsRecorded() async throws {
        let metrics = TestMetrics()
        let seen = Mutex<[Int]>([])  // the batch sizes the write was given, as the write itself saw them
        let held = Mutex(true)
        let group = GroupCommit<Int, Int>(maxBatch: 64, metrics: GroupCommitMetrics(write: "test", factory: metrics)) {
            items in
            let first = seen.withLock { sizes in
                sizes.append(items.count)
                return sizes.count == 1
            }
            // The first write lasts until the test lets it go: the items sent meanwhile wait for the next batch.
            while first, held.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
            return items.map { $0 * 10 }
        }
        let answers = try await withThrowingTaskGroup(of: (Int, Int).self) { tasks in
            tasks.addTask { (0, try await group.submit(0)) }
            while seen.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(1)) }
            for item in 1..<20 { tasks.addTask { (item, try await group.submit(item)) } }
            try await Task.sleep(for: .milliseconds(100))
            held.withLock { $0 = false }
            var answers: [Int: Int] = [:]
            for try await (item, answer) in tasks { answers[item] = answer }
            return answers
        }
        #expect(answers == Dictionary(uniqueKeysWithValues: (0..<20).map { ($0, $0 * 10) }))
        let sizes = seen.withLock { $0 }
        #expect(sizes.first == 1 && sizes.count < 20, "the items sent during the first write went together: \(sizes)")
        #expect(sizes.reduce(0, +) == 20)

        let recorded = try metrics.expectRecorder(GroupCommitMetrics.batchSizeLabel, [("write", "test")])
        #expect(recorded.values.map { Int($0) } == sizes)
        let times = try metrics.expectTimer(GroupCommitMetrics.writeSecondsLabel, [("write", "test")]).values
        #expect(times.count == sizes.count)
        #expect(times.first.map { $0 >= 100_000_000 } == true, "the first write was held 100 ms: \(times)")
    }
}
