import Foundation

/// A backend that sends `total` notifications from 16 workers and retries each request that got no answer (the
/// gateway process is gone) with the same `Idempotency-Key` until it gets its `202`, against whichever gateway
/// ``current`` names (nil while none runs). For the `kill -9` process tests.
struct RetryingBackend: Sendable {
    /// The gateway to send to now; nil pauses the workers.
    let current: Locked<HTTPTestClient?>
    /// The notification id answered for each index.
    let acknowledged = Locked<[Int: String]>([:])
    /// Answers marked `Idempotent-Replayed`.
    let replayed = Locked(0)
    /// Requests that got no answer and were sent again.
    let retried = Locked(0)

    init(first: HTTPTestClient) {
        current = Locked(first)
    }

    /// Starts the workers; the task ends when every notification got its `202` (or throws after 180 s for one).
    /// - Parameters:
    ///   - total: Notifications to send (index 0 ..< total; idempotency key `kill-<index>`).
    ///   - path: The send path.
    ///   - key: The API key.
    ///   - body: The JSON body for an index.
    func start(
        total: Int, path: String, key: String, body: @escaping @Sendable (Int) -> [String: Any]
    ) -> Task<Void, any Error> {
        let backend = self
        return Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<16 {
                    group.addTask {
                        for index in stride(from: worker, to: total, by: 16) {
                            try await backend.send(index, path: path, key: key, json: body(index))
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    private func send(_ index: Int, path: String, key: String, json: [String: Any]) async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(180))
        while true {
            guard ContinuousClock.now < deadline else { throw TestFailure("notification \(index) got no 202 within 180 s") }
            guard let client = current.withLock({ $0 }) else {
                try await Task.sleep(for: .milliseconds(50))
                continue
            }
            let answer: HTTPExchange
            do {
                answer = try await client.send("POST", path, key: key, json: json, headers: ["Idempotency-Key": "kill-\(index)"])
            } catch {
                retried.withLock { $0 += 1 }  // no answer: the process is gone; retry
                try await Task.sleep(for: .milliseconds(100))
                continue
            }
            guard answer.status == 202, let id = answer.json["id"] as? String else {
                throw TestFailure("notification \(index) answered \(answer.status): \(answer.text)")
            }
            if answer.header("Idempotent-Replayed") != nil { replayed.withLock { $0 += 1 } }
            acknowledged.withLock { $0[index] = id }
            return
        }
    }
}
