import DICOMData

#if canImport(Glibc)
    import Glibc
#endif

/// One row of a cohort file (px-find `--queries`): its number and its query keys.
public struct QueryRow: Sendable {
    /// 1 for the first row of queries (a CSV file's header is row 0; an NDJSON file's rows are its non-blank
    /// lines).
    public var number: Int
    /// The row's keys: a cell or member with a value matches it, an empty one (or `null`) asks the key back.
    public var keys: [QueryKey]
}

/// Reads a cohort file row by row (px-find `--queries FILE`): a CSV file whose header row names DICOM keywords
/// or tags (RFC 4180: quoted cells, `""` inside them, CRLF or LF), or NDJSON, one JSON object of
/// `"Keyword": value` per line (a string, a number, an array of strings for several values, `null` to ask the
/// key back). The first byte that is not blank decides: `{` is NDJSON.
///
/// Rows are read as they are needed, so a cohort of any length takes the memory of one row; a row is at
/// most ``maximumRowBytes`` (a longer one is that row's error, and reading goes on with the next line).
/// A row that cannot be read (a cell count other than the header's, an unknown keyword, a line that is
/// not a JSON object) is that row's failure, not the file's.
public struct QueryRowReader: ~Copyable {
    /// The longest row read: 1 MiB (a row of a cohort is a few keys).
    public static let maximumRowBytes = 1 << 20

    enum Shape {
        case csv(header: [String])
        case ndjson
    }

    private var lines: LineReader
    private var shape: Shape?
    private var number = 0

    /// Opens `path` (`-`: stdin). A regular file or a pipe (`<(...)`, stdin from another command); a
    /// directory or a device is refused.
    /// - Throws: ``PXError/usage(_:)`` naming the file and the reason.
    public init(path: String) throws(PXError) {
        lines = try LineReader(path: path, role: "--queries", maximumLineBytes: Self.maximumRowBytes)
    }

    /// A reader of `bytes` (tests).
    public init(bytes: [UInt8]) {
        lines = LineReader(bytes: bytes, maximumLineBytes: Self.maximumRowBytes)
    }

    /// The next row, or its failure; `nil` at the end of the file.
    /// - Throws: ``PXError/usage(_:)`` when the file cannot be read, or its CSV header row is not keys.
    public mutating func next() throws(PXError) -> Result<QueryRow, PXError>? {
        while true {
            guard var line = try lines.next() else { return nil }
            if line.tooLong {
                number += 1
                return .failure(.usage("row \(number): longer than \(Self.maximumRowBytes) bytes"))
            }
            if shape == nil {
                if line.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { line.bytes.removeFirst(3) }  // a UTF-8 BOM
                guard let first = line.bytes.first(where: { !Self.isBlank($0) }) else { continue }
                if first == UInt8(ascii: "{") {
                    shape = .ndjson
                } else {
                    let header = try csvRecord(starting: line.bytes, header: true)
                    shape = .csv(header: header.map { String($0.trimmed) })
                    continue
                }
            }
            guard line.bytes.contains(where: { !Self.isBlank($0) }) else { continue }
            number += 1
            let row = number
            switch shape {
            case .csv(let header)?:
                let cells: [String]
                do { cells = try csvRecord(starting: line.bytes, header: false) } catch { return .failure(error) }
                guard cells.count == header.count else {
                    return .failure(
                        .usage("row \(row): \(cells.count) cells where the header names \(header.count) keys"))
                }
                return Result { () throws(PXError) in
                    var keys: [QueryKey] = []
                    for (name, cell) in zip(header, cells) {
                        keys.append(try Self.key(row, name, cell.isEmpty ? nil : cell))
                    }
                    return QueryRow(number: row, keys: keys)
                }
            case .ndjson?, nil:
                return Result { () throws(PXError) in
                    QueryRow(number: row, keys: try Self.ndjsonKeys(row, line.bytes))
                }
            }
        }
    }

    /// One CSV record starting with `line`: a quoted cell may hold line ends, so further lines are read while
    /// a quote is open.
    private mutating func csvRecord(starting line: [UInt8], header: Bool) throws(PXError) -> [String] {
        var record = line
        while Self.quoteOpen(record) {
            guard let more = try lines.next(), !more.tooLong, record.count + more.bytes.count < Self.maximumRowBytes
            else {
                let what = header ? "the header row" : "row \(number)"
                throw .usage("--queries: \(what) has a quote that is never closed")
            }
            record.append(0x0A)
            record += more.bytes
        }
        return Self.csvCells(record)
    }

    static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }

    /// Whether `record` ends inside a quoted cell (an odd number of quotes).
    static func quoteOpen(_ record: [UInt8]) -> Bool {
        record.reduce(false) { open, byte in byte == UInt8(ascii: "\"") ? !open : open }
    }

    /// The cells of one CSV record (RFC 4180 §2): comma-separated, a cell in quotes may hold commas, line
    /// ends and `""` for a quote; a trailing CR is dropped.
    static func csvCells(_ record: [UInt8]) -> [String] {
        var bytes = record[...]
        if bytes.last == 0x0D { bytes = bytes.dropLast() }
        var cells: [String] = []
        var cell: [UInt8] = []
        var quoted = false
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    let next = bytes.index(after: index)
                    if next < bytes.endIndex && bytes[next] == UInt8(ascii: "\"") {
                        cell.append(byte)
                        index = next
                    } else {
                        quoted = false
                    }
                } else {
                    cell.append(byte)
                }
            } else if byte == UInt8(ascii: "\"") {
                quoted = true
            } else if byte == UInt8(ascii: ",") {
                cells.append(String(decoding: cell, as: UTF8.self))
                cell = []
            } else {
                cell.append(byte)
            }
            index = bytes.index(after: index)
        }
        cells.append(String(decoding: cell, as: UTF8.self))
        return cells
    }

    /// The keys of one NDJSON row.
    static func ndjsonKeys(_ row: Int, _ line: [UInt8]) throws(PXError) -> [QueryKey] {
        let value: JSONValue
        do { value = try JSONParser.parse(line, maximumDepth: 4) } catch {
            throw .usage("row \(row): not a JSON object (\(error))")
        }
        guard case .object(let members) = value else { throw .usage("row \(row): not a JSON object") }
        var keys: [QueryKey] = []
        for member in members {
            let text: String?
            switch member.value {
            case .string(let s): text = s.isEmpty ? nil : s
            case .number(let n): text = n
            case .null: text = nil
            case .array(let items):
                let values = items.compactMap(\.stringValue)
                guard values.count == items.count else {
                    throw .usage("row \(row): \(HumanText.escaped(member.key)) has a value that is not a string")
                }
                text = values.isEmpty ? nil : values.joined(separator: "\\")
            default:
                throw .usage("row \(row): \(HumanText.escaped(member.key)) is not a string, a number or an array")
            }
            keys.append(try key(row, member.key, text))
        }
        return keys
    }

    static func key(_ row: Int, _ name: String, _ value: String?) throws(PXError) -> QueryKey {
        do throws(PXError) { return try QueryKey.make(name: String(name.trimmed), value: value) } catch {
            throw .usage("row \(row): \(error.message)")
        }
    }
}

/// Lines of a file or of stdin, read in 64 KiB chunks: one line in memory at a time, at most
/// `maximumLineBytes` of it (the rest of a longer line is skipped, and the line is marked ``Line/tooLong``).
struct LineReader: ~Copyable {
    struct Line {
        var bytes: [UInt8]
        var tooLong: Bool
    }

    private let descriptor: Int32
    private let owned: Bool
    private let role: String
    private let maximumLineBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var ended = false

    init(path: String, role: String, maximumLineBytes: Int) throws(PXError) {
        self.role = role
        self.maximumLineBytes = maximumLineBytes
        if path == "-" {
            descriptor = 0
            owned = false
            return
        }
        // O_NONBLOCK: opening a FIFO with no writer returns at once; reads block again below.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw .usage("\(role) \(path): cannot open: \(BoundedFile.reason(errno))") }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw .usage("\(role) \(path): cannot read: \(BoundedFile.reason(code))")
        }
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFREG || kind == S_IFIFO else {
            close(fd)
            throw .usage("\(role) \(path): not a regular file or a pipe (\(BoundedFile.describe(kind)))")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        descriptor = fd
        owned = true
    }

    init(bytes: [UInt8], maximumLineBytes: Int) {
        descriptor = -1
        owned = false
        role = "input"
        self.maximumLineBytes = maximumLineBytes
        buffer = bytes
        ended = true
    }

    deinit {
        if owned { close(descriptor) }
    }

    /// The next line without its LF; `nil` at the end.
    /// - Throws: ``PXError/usage(_:)`` for a read error.
    mutating func next() throws(PXError) -> Line? {
        var tooLong = false
        while true {
            if let newline = buffer[start...].firstIndex(of: 0x0A) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                return Line(bytes: tooLong ? [] : line, tooLong: tooLong || line.count > maximumLineBytes)
            }
            if ended {
                guard start < buffer.count else { return nil }
                let line = Array(buffer[start...])
                start = buffer.count
                return Line(bytes: tooLong ? [] : line, tooLong: tooLong || line.count > maximumLineBytes)
            }
            if buffer.count - start > maximumLineBytes {
                // Keep the memory of one line: drop what is read of an overlong one.
                tooLong = true
                buffer = []
                start = 0
            } else if start > 0 {
                buffer.removeFirst(start)
                start = 0
            }
            try fill()
        }
    }

    private mutating func fill() throws(PXError) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                throw .usage("\(role): cannot read: \(BoundedFile.reason(code))")
            }
            if n == 0 { ended = true } else { buffer += chunk[0..<n] }
            return
        }
    }
}
