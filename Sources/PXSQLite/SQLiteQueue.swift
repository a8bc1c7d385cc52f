import Dispatch
import Synchronization

/// One ``SQLiteDatabase`` shared by any number of tasks: each use runs alone, in turn, on a serial dispatch
/// queue of its own (off Swift's cooperative threads, which a disk wait would block), the role GRDB's
/// `DatabaseQueue` played. The connection sits in a `Mutex`, so no use can reach it outside its turn.
public final class SQLiteQueue: Sendable {
    private let connection: Mutex<SQLiteDatabase>
    private let queue: DispatchQueue

    /// Takes `database` over: from now on it is used only through ``run(_:)``.
    public init(_ database: sending SQLiteDatabase, label: String) {
        self.connection = Mutex(database)
        self.queue = DispatchQueue(label: label)
    }

    /// Runs `body` with the connection once the uses before it are done, and returns what it returns.
    public func run<T: Sendable>(_ body: @escaping @Sendable (SQLiteDatabase) throws(SQLiteError) -> T)
        async throws(SQLiteError) -> T
    {
        let result: Result<T, SQLiteError> = await withCheckedContinuation { continuation in
            self.queue.async {
                continuation.resume(
                    returning: self.connection.withLock { database in
                        Result { () throws(SQLiteError) -> T in try body(database) }
                    })
            }
        }
        return try result.get()
    }
}
