/// A database's schema versions, in order, kept in `PRAGMA user_version` (https://sqlite.org/pragma.html#pragma_user_version):
/// opening runs, once and in one transaction, every migration past the version the file records, and refuses a
/// file of a later version than the last one known (a later program's).
public struct SQLiteMigrations: Sendable {
    /// One schema version: what turns the previous version into this one.
    public struct Migration: Sendable {
        public let version: Int32
        public let body: @Sendable (SQLiteDatabase) throws(SQLiteError) -> Void
    }

    public private(set) var migrations: [Migration] = []

    public init() {}

    /// The last version registered (0 without any).
    public var latestVersion: Int32 { self.migrations.last?.version ?? 0 }

    /// Registers `version` (each above the one before), made by `body`.
    public mutating func register(
        version: Int32, _ body: @escaping @Sendable (SQLiteDatabase) throws(SQLiteError) -> Void
    ) {
        precondition(version > self.latestVersion, "schema versions are registered in increasing order")
        self.migrations.append(Migration(version: version, body: body))
    }

    /// Brings `database` to ``latestVersion`` in one `BEGIN IMMEDIATE` transaction (so two processes opening a
    /// new file do not both migrate it).
    ///
    /// - Throws: ``SQLiteError/laterSchema(version:known:)`` for a file of a later version, or the error of a
    ///   migration (nothing of it is kept).
    public func migrate(_ database: SQLiteDatabase) throws(SQLiteError) {
        try database.transaction { database throws(SQLiteError) in
            let current = try database.userVersion()
            guard current <= self.latestVersion else {
                throw SQLiteError.laterSchema(version: current, known: self.latestVersion)
            }
            for migration in self.migrations where migration.version > current {
                try migration.body(database)
                try database.setUserVersion(migration.version)
            }
        }
    }
}
