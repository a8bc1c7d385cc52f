import CSQLite

/// An error from SQLite (a result code other than `SQLITE_OK`, `SQLITE_ROW` or `SQLITE_DONE`, see
/// https://sqlite.org/rescode.html) or from this layer's own checks (a schema of a later version).
///
/// Built only through the named factories, so every error carries its ``code``; its ``description`` reads
/// like GRDB's (`SQLite error 11: message - while executing `SQL``) so messages px wraps in
/// `PXError.io` stay what they were.
public struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A primary SQLite result code (the low byte of an extended one).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The primary result code's value (`SQLITE_BUSY` is 5...).
        public let rawValue: Int32

        init(_ rawValue: Int32) { self.rawValue = rawValue & 0xff }

        /// `SQLITE_ERROR`: a generic error (an SQL syntax error, a missing table...).
        public static let error = Code(SQLITE_ERROR)
        /// `SQLITE_BUSY`: another connection held the lock past the busy timeout.
        public static let busy = Code(SQLITE_BUSY)
        /// `SQLITE_CORRUPT`: the file is not an index this code can use (also a schema of a later version).
        public static let corrupt = Code(SQLITE_CORRUPT)
        /// `SQLITE_NOTADB`: the file is not an SQLite database.
        public static let notADatabase = Code(SQLITE_NOTADB)
        /// `SQLITE_CANTOPEN`: the file cannot be opened.
        public static let cannotOpen = Code(SQLITE_CANTOPEN)
        /// `SQLITE_MISUSE`: the C API was called out of order.
        public static let misuse = Code(SQLITE_MISUSE)
        /// `SQLITE_RANGE`: a bind index out of range.
        public static let range = Code(SQLITE_RANGE)

        public var description: String { "\(self.rawValue)" }
    }

    /// The primary result code.
    public let code: Code
    /// The extended result code (https://sqlite.org/rescode.html#extrc), the primary one when there is none.
    public let extendedCode: Int32
    /// SQLite's message (`sqlite3_errmsg`) or this layer's.
    public let message: String
    /// The statement that failed, when there was one.
    public let sql: String?

    private init(extendedCode: Int32, message: String, sql: String?) {
        self.code = Code(extendedCode)
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
    }

    /// The error SQLite reported with `result` on `connection` (its message, or the code's text without one).
    static func failed(_ result: Int32, connection: OpaquePointer?, sql: String? = nil) -> SQLiteError {
        let text = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
        let message = text ?? String(cString: sqlite3_errstr(result))
        return SQLiteError(extendedCode: result, message: message, sql: sql)
    }

    /// A database this code must not use: `SQLITE_CORRUPT` with `message` (an index of another version).
    public static func corrupt(_ message: String) -> SQLiteError {
        SQLiteError(extendedCode: SQLITE_CORRUPT, message: message, sql: nil)
    }

    /// A database whose `PRAGMA user_version` is past the last migration this code knows (made by a later
    /// program): `SQLITE_CORRUPT`, so that it is treated as a file this code cannot use.
    public static func laterSchema(version: Int32, known: Int32) -> SQLiteError {
        SQLiteError(
            extendedCode: SQLITE_CORRUPT, message: "schema version \(version) is later than \(known)", sql: nil)
    }

    /// A column read with the wrong type or out of range (`SQLITE_MISMATCH`).
    static func mismatch(_ message: String, sql: String?) -> SQLiteError {
        SQLiteError(extendedCode: SQLITE_MISMATCH, message: message, sql: sql)
    }

    public var description: String {
        var text = "SQLite error \(self.extendedCode): \(self.message)"
        if let sql { text += " - while executing `\(sql)`" }
        return text
    }
}
