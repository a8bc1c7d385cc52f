import PXSQLite
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// PXSQLite, the layer the folder index runs on: typed binds and reads, transactions that roll back on a
/// throw, user_version migrations, and one connection shared by many tasks.
@Suite(.timeLimit(.minutes(1))) struct SQLiteDatabaseTests {
    static func temporaryFile() throws -> String {
        var template = Array("/tmp/px-sqlite-test-XXXXXX".utf8CString)
        let descriptor = mkstemp(&template)
        try #require(descriptor >= 0)
        close(descriptor)
        return String(cString: template)
    }

    static func cleanUp(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }

    @Test func typedBindsComeBackAsTheyWent() throws {
        let path = try Self.temporaryFile()
        defer { Self.cleanUp(path) }
        let db = try SQLiteDatabase(path: path)
        try db.execute("CREATE TABLE t (i INTEGER, s TEXT, b BLOB, n TEXT)")
        let text = "Ünïcode \u{0} inside"
        try db.execute(
            "INSERT INTO t VALUES (?, ?, ?, ?)",
            [.integer(Int64.max), .text(text), .blob([0, 1, 255]), SQLiteValue(nil as String?)])
        try db.execute("INSERT INTO t VALUES (?, ?, ?, ?)", [SQLiteValue(-1), .text(""), .blob([]), .text("x")])
        let rows = try db.fetchAll("SELECT i, s, b, n FROM t ORDER BY i") { row in
            (row.int64(at: 0), row.string(at: 1), row.bytes(at: 2), row.string(at: 3), row.isNull(at: 3))
        }
        #expect(rows.count == 2)
        #expect(rows[0].0 == -1 && rows[0].1 == "" && rows[0].2 == [] && rows[0].3 == "x" && !rows[0].4)
        #expect(rows[1].0 == Int64.max && rows[1].1 == text && rows[1].2 == [0, 1, 255])
        #expect(rows[1].3 == nil && rows[1].4)
        // A wrong number of arguments is an error, not a silent NULL.
        #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (?, ?, ?, ?)", [.integer(1)]) }
        let error = #expect(throws: SQLiteError.self) { try db.execute("SELECT * FROM missing") }
        #expect(error?.code == .error)
        #expect(error?.description.contains("while executing `SELECT * FROM missing`") == true)
    }

    @Test func aTransactionRollsBackWhenItsBodyThrows() throws {
        let path = try Self.temporaryFile()
        defer { Self.cleanUp(path) }
        let db = try SQLiteDatabase(path: path)
        try db.execute("CREATE TABLE t (i INTEGER PRIMARY KEY)")
        #expect(throws: SQLiteError.self) {
            try db.transaction { db throws(SQLiteError) in
                try db.execute("INSERT INTO t VALUES (1)", [])
                try db.execute("INSERT INTO t VALUES (1)", [])  // a constraint failure
            }
        }
        #expect(try db.fetchInt("SELECT count(*) FROM t") == 0)
        let kept = try db.transaction { db throws(SQLiteError) in
            try db.execute("INSERT INTO t VALUES (2)", [])
            return db.changes
        }
        #expect(kept == 1)
        #expect(try db.fetchInt("SELECT count(*) FROM t") == 1)
    }

    @Test func migrationsRunOnceAndRefuseALaterSchema() throws {
        let path = try Self.temporaryFile()
        defer { Self.cleanUp(path) }
        var migrations = SQLiteMigrations()
        migrations.register(version: 1) { db throws(SQLiteError) in try db.execute("CREATE TABLE a (x)") }
        migrations.register(version: 3) { db throws(SQLiteError) in try db.execute("CREATE TABLE b (x)") }
        let db = try SQLiteDatabase(path: path)
        try migrations.migrate(db)
        try migrations.migrate(db)
        #expect(try db.userVersion() == 3)
        #expect(try db.tableExists("a") && db.tableExists("b"))

        try db.setUserVersion(4)
        let error = #expect(throws: SQLiteError.self) { try migrations.migrate(db) }
        #expect(error?.code == .corrupt)
    }

    @Test func aQueueRunsManyTasksUsesInTurn() async throws {
        let path = try Self.temporaryFile()
        defer { Self.cleanUp(path) }
        let db = try SQLiteDatabase(path: path)
        try db.execute("CREATE TABLE t (i INTEGER)")
        let queue = SQLiteQueue(db, label: "px.test")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for value in 0..<200 {
                group.addTask {
                    try await queue.run { db throws(SQLiteError) in
                        try db.transaction { db throws(SQLiteError) in
                            try db.execute("INSERT INTO t VALUES (?)", [SQLiteValue(value)])
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let sum = try await queue.run { db throws(SQLiteError) in try db.fetchInt("SELECT sum(i) FROM t") }
        #expect(sum == Int64((0..<200).reduce(0, +)))
    }
}
