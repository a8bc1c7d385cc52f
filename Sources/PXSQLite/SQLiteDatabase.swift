import CSQLite

/// A value bound to a statement's parameter (https://sqlite.org/datatype3.html storage classes, without REAL:
/// px stores none).
public enum SQLiteValue: Hashable, Sendable {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case null

    public init(_ value: Int) { self = .integer(Int64(value)) }
    public init(_ value: Int64) { self = .integer(value) }
    public init(_ value: String) { self = .text(value) }
    public init(_ value: [UInt8]) { self = .blob(value) }
    /// `nil` is NULL.
    public init(_ value: String?) { self = value.map { .text($0) } ?? .null }
}

/// One SQLite connection (`sqlite3 *`), closed when the value goes. Not `Sendable`: one thread uses it at a
/// time (``SQLiteQueue`` shares one between tasks).
///
/// Statements are prepared, used and finalized inside ``withStatement(_:_:)`` (or owned by a
/// ``SQLiteStatement`` whose `deinit` finalizes it); nothing leaks when a step throws.
public final class SQLiteDatabase {
    /// The flags of `sqlite3_open_v2` (https://sqlite.org/c3ref/open.html).
    public struct OpenFlags: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        public static let readOnly = OpenFlags(rawValue: SQLITE_OPEN_READONLY)
        public static let readWrite = OpenFlags(rawValue: SQLITE_OPEN_READWRITE)
        public static let create = OpenFlags(rawValue: SQLITE_OPEN_CREATE)
        /// The connection is used by one thread at a time (the caller serialises it).
        public static let noMutex = OpenFlags(rawValue: SQLITE_OPEN_NOMUTEX)
        /// The last component of the path must not be a symbolic link.
        public static let noFollow = OpenFlags(rawValue: SQLITE_OPEN_NOFOLLOW)
    }

    let handle: OpaquePointer
    /// The file, as given.
    public let path: String

    /// Opens (or, with `.create`, creates) the database at `path`; a locked database is retried for up to
    /// `busyTimeoutMilliseconds` (`sqlite3_busy_timeout`) before an operation fails with `SQLITE_BUSY`.
    public init(
        path: String, flags: OpenFlags = [.readWrite, .create, .noMutex], busyTimeoutMilliseconds: Int32 = 30_000
    ) throws(SQLiteError) {
        var handle: OpaquePointer?
        let result = sqlite3_open_v2(path, &handle, flags.rawValue, nil)
        guard result == SQLITE_OK, let handle else {
            let error = SQLiteError.failed(result, connection: handle)
            // sqlite3_open_v2 returns a handle to close even when it fails.
            sqlite3_close_v2(handle)
            throw error
        }
        self.handle = handle
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
    }

    deinit {
        sqlite3_close_v2(self.handle)
    }

    /// Runs `sql`, one or more statements separated by `;`, without parameters (rows they return are ignored).
    public func execute(_ sql: String) throws(SQLiteError) {
        let result = sqlite3_exec(self.handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw SQLiteError.failed(result, connection: self.handle, sql: sql) }
    }

    /// Runs one statement with `arguments` bound to its parameters, to completion.
    public func execute(_ sql: String, _ arguments: [SQLiteValue]) throws(SQLiteError) {
        try self.withStatement(sql) { statement throws(SQLiteError) in try statement.execute(arguments) }
    }

    /// Prepares `sql` (one statement); the statement is finalized when the returned value goes.
    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v2(self.handle, sql, -1, &statement, nil)
        guard result == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw SQLiteError.failed(result == SQLITE_OK ? SQLITE_MISUSE : result, connection: self.handle, sql: sql)
        }
        return SQLiteStatement(statement, database: self, sql: sql)
    }

    /// Prepares `sql`, runs `body` with it and finalizes it, whatever `body` does.
    public func withStatement<T>(_ sql: String, _ body: (SQLiteStatement) throws(SQLiteError) -> T)
        throws(SQLiteError) -> T
    {
        let statement = try self.prepare(sql)
        defer { statement.finalize() }
        return try body(statement)
    }

    /// Every row `sql` returns with `arguments`, each made by `row` (columns read by index, from 0).
    public func fetchAll<T>(
        _ sql: String, _ arguments: [SQLiteValue] = [], row: (SQLiteStatement) throws(SQLiteError) -> T
    ) throws(SQLiteError) -> [T] {
        try self.withStatement(sql) { statement throws(SQLiteError) in
            try statement.bind(arguments)
            var rows: [T] = []
            while try statement.step() { rows.append(try row(statement)) }
            return rows
        }
    }

    /// The first column of the first row `sql` returns, as an integer (`nil` without a row or for NULL).
    public func fetchInt(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) -> Int64? {
        try self.withStatement(sql) { statement throws(SQLiteError) in
            try statement.bind(arguments)
            guard try statement.step(), !statement.isNull(at: 0) else { return nil }
            return statement.int64(at: 0)
        }
    }

    /// Rows the last INSERT, UPDATE or DELETE changed (`sqlite3_changes`).
    public var changes: Int { Int(sqlite3_changes(self.handle)) }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE`: the write lock is taken first, so the transaction
    /// never fails half-way for another writer) and commits, or rolls back when `body` throws.
    public func transaction<T>(_ body: (SQLiteDatabase) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try self.transaction(beginning: "BEGIN IMMEDIATE", body)
    }

    /// Runs `body`'s reads in one read transaction (`BEGIN DEFERRED`): one snapshot, and the file locks taken
    /// once for all of them, where a statement outside a transaction takes and releases them each time.
    public func readTransaction<T>(_ body: (SQLiteDatabase) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try self.transaction(beginning: "BEGIN DEFERRED", body)
    }

    private func transaction<T>(beginning begin: String, _ body: (SQLiteDatabase) throws(SQLiteError) -> T)
        throws(SQLiteError) -> T
    {
        try self.execute(begin)
        let value: T
        do {
            value = try body(self)
        } catch {
            // The rollback's own failure (the transaction is already gone after some errors) does not hide
            // the error that caused it.
            if sqlite3_get_autocommit(self.handle) == 0 { sqlite3_exec(self.handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
        do {
            try self.execute("COMMIT")
        } catch {
            if sqlite3_get_autocommit(self.handle) == 0 { sqlite3_exec(self.handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
        return value
    }

    /// Whether a table (or view) named `name` exists in the main database.
    public func tableExists(_ name: String) throws(SQLiteError) -> Bool {
        try self.fetchInt(
            "SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?", [.text(name)]) ?? 0 > 0
    }

    /// `PRAGMA user_version`: the schema version ``SQLiteMigrations`` keeps.
    public func userVersion() throws(SQLiteError) -> Int32 {
        Int32(truncatingIfNeeded: try self.fetchInt("PRAGMA user_version") ?? 0)
    }

    /// Sets `PRAGMA user_version`.
    public func setUserVersion(_ version: Int32) throws(SQLiteError) {
        try self.execute("PRAGMA user_version = \(version)")
    }
}

/// A prepared statement (`sqlite3_stmt *`), finalized by ``finalize()`` or when the value goes.
public final class SQLiteStatement {
    private var handle: OpaquePointer?
    private let database: SQLiteDatabase
    /// The statement's SQL, for errors.
    public let sql: String

    init(_ handle: OpaquePointer, database: SQLiteDatabase, sql: String) {
        self.handle = handle
        self.database = database
        self.sql = sql
    }

    deinit {
        self.finalize()
    }

    /// Releases the statement; later uses fail with `SQLITE_MISUSE`.
    public func finalize() {
        sqlite3_finalize(self.handle)
        self.handle = nil
    }

    private func check(_ result: Int32) throws(SQLiteError) {
        guard result == SQLITE_OK else {
            throw SQLiteError.failed(result, connection: self.database.handle, sql: self.sql)
        }
    }

    private func live() throws(SQLiteError) -> OpaquePointer {
        guard let handle else {
            throw SQLiteError.failed(SQLITE_MISUSE, connection: nil, sql: self.sql)
        }
        return handle
    }

    /// Resets the statement and binds `arguments` to its parameters `?1`, `?2`... in order.
    public func bind(_ arguments: [SQLiteValue]) throws(SQLiteError) {
        let handle = try self.live()
        sqlite3_reset(handle)
        try self.check(sqlite3_clear_bindings(handle))
        let count = Int(sqlite3_bind_parameter_count(handle))
        guard arguments.count == count else {
            throw SQLiteError.failed(SQLITE_RANGE, connection: nil, sql: self.sql + " (\(arguments.count) arguments)")
        }
        // SQLITE_TRANSIENT: SQLite copies the value before the call returns.
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch argument {
            case .integer(let value):
                result = sqlite3_bind_int64(handle, index, value)
            case .text(let value):
                var value = value
                result = value.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { text in
                        // An empty buffer may have no address: bind an empty string, not NULL.
                        guard let address = text.baseAddress else {
                            return sqlite3_bind_text(handle, index, "", 0, transient)
                        }
                        return sqlite3_bind_text(handle, index, address, Int32(text.count), transient)
                    }
                }
            case .blob(let value):
                result =
                    value.isEmpty
                    ? sqlite3_bind_zeroblob(handle, index, 0)
                    : value.withUnsafeBytes {
                        sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), transient)
                    }
            case .null:
                result = sqlite3_bind_null(handle, index)
            }
            try self.check(result)
        }
    }

    /// Steps once: `true` when a row is ready to read, `false` when the statement is done.
    public func step() throws(SQLiteError) -> Bool {
        let handle = try self.live()
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = SQLiteError.failed(result, connection: self.database.handle, sql: self.sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Binds `arguments` and steps to the end (an INSERT, UPDATE or DELETE), ready to run again.
    public func execute(_ arguments: [SQLiteValue]) throws(SQLiteError) {
        try self.bind(arguments)
        while try self.step() {}
    }

    /// Whether column `index` of the current row is NULL.
    public func isNull(at index: Int32) -> Bool {
        sqlite3_column_type(self.handle, index) == SQLITE_NULL
    }

    /// Column `index` of the current row as an integer (NULL is 0).
    public func int64(at index: Int32) -> Int64 {
        sqlite3_column_int64(self.handle, index)
    }

    /// Column `index` of the current row as an `Int` (NULL is 0).
    public func int(at index: Int32) -> Int {
        Int(truncatingIfNeeded: sqlite3_column_int64(self.handle, index))
    }

    /// Column `index` of the current row as text (UTF-8), `nil` for NULL.
    public func string(at index: Int32) -> String? {
        guard !self.isNull(at: index), let text = sqlite3_column_text(self.handle, index) else { return nil }
        let count = Int(sqlite3_column_bytes(self.handle, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Column `index` of the current row as bytes (`[]` for NULL or an empty blob).
    public func bytes(at index: Int32) -> [UInt8] {
        guard let blob = sqlite3_column_blob(self.handle, index) else { return [] }
        let count = Int(sqlite3_column_bytes(self.handle, index))
        return Array(UnsafeRawBufferPointer(start: blob, count: count))
    }
}
