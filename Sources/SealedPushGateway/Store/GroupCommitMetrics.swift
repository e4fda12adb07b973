import Metrics

/// What a ``GroupCommit`` records of each batch it writes, through swift-metrics, labelled by `write` — the group:
/// `enqueue` (the API's sends), `finish` (the delivery loop's job ends), `receipt` (the receipts endpoint's records).
///
/// - `sealedpush_gateway_store_batch_size{write}`: how many items one store call wrote together (a histogram). Near 1
///   under light load; large when the store is the stage everything waits for.
/// - `sealedpush_gateway_store_write_seconds{write}`: one store call's time for the batch, its transaction and commit
///   (and, for `enqueue`, its fsync) included, waits for the database included.
public struct GroupCommitMetrics: Sendable {
    /// The batch sizes' name.
    public static let batchSizeLabel = "sealedpush_gateway_store_batch_size"
    /// The batch write times' name.
    public static let writeSecondsLabel = "sealedpush_gateway_store_write_seconds"

    private let size: Recorder
    private let seconds: Timer

    /// Creates the group's two series.
    /// - Parameters:
    ///   - write: The group's name (the `write` label).
    ///   - factory: Where the metrics go.
    public init(write: String, factory: any MetricsFactory) {
        let dimensions = [("write", write)]
        size = Recorder(label: Self.batchSizeLabel, dimensions: dimensions, aggregate: true, factory: factory)
        seconds = Timer(label: Self.writeSecondsLabel, dimensions: dimensions, factory: factory)
    }

    /// Records one batch: its items and how long its write took.
    func record(items: Int, took duration: Duration) {
        size.record(items)
        seconds.record(duration: duration)
    }
}
