import ArgumentParser
import Foundation
import SealedPushGateway

/// `sealed-push-gateway backup`: a consistent copy of a SQLite gateway database, taken while `serve` keeps running.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the gateway's SQLite database to a new file (0600) while it runs: one consistent snapshot, integrity-checked.",
        discussion: """
            The copy is one file (no -wal or -shm beside it). To restore: stop every `serve`, move the database and \
            its -wal and -shm files away, put the copy in the database's place, start again. PostgreSQL databases \
            are backed up with pg_dump or the provider's snapshots.
            """)

    @Option(help: "The configuration file `init` wrote.")
    var config: String

    @Option(help: "The backup file to write (must not exist).")
    var out: String

    func run() async throws {
        let store = try await OperatorStore.open(config: config)
        guard let sqlite = store as? SQLiteGatewayStore else {
            try? await store.close()
            throw OperatorError(
                "the gateway's database is PostgreSQL: back it up with pg_dump (or the provider's snapshots); "
                    + "`backup` copies SQLite databases")
        }
        let started = Date()
        let result: (pages: Int, pageSize: Int)
        do {
            result = try await sqlite.backup(to: out) { copied, total in
                guard total > 0 else { return }
                let line = "backup: \(copied * 100 / total) % (\(copied) of \(total) pages)\n"
                FileHandle.standardError.write(Data(line.utf8))
            }
        } catch let error as GatewayStoreError {
            try? await store.close()
            throw OperatorError(error.message)
        }
        try await store.close()
        let megabytes = Double(result.pages * result.pageSize) / 1_048_576
        let seconds = Date().timeIntervalSince(started)
        print(
            "backup: \(out) (\(result.pages) pages, \(String(format: "%.1f", megabytes)) MB, integrity ok, "
                + "\(String(format: "%.1f", seconds)) s)")
    }
}
