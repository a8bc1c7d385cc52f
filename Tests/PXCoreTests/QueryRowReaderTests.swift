import DICOMData
import Foundation
import PXCore
import Testing

/// ``QueryRowReader``: the rows of px-find `--queries`, CSV or NDJSON, each row's failure its own.
@Suite struct QueryRowReaderTests {
    /// Every row of `text`: its number and `Keyword=value` keys, or `error: message`.
    static func rows(_ text: String) throws -> [String] {
        var reader = QueryRowReader(bytes: Array(text.utf8))
        var out: [String] = []
        while let row = try reader.next() {
            switch row {
            case .success(let row):
                let keys = row.keys.map { "\($0.keyword)=\($0.value ?? "")" }.joined(separator: " ")
                out.append("\(row.number): \(keys)")
            case .failure(let error): out.append("error: \(error.message)")
            }
        }
        return out
    }

    @Test func csvWithQuotesCRLFAndABOM() throws {
        let text =
            "\u{FEFF}AccessionNumber, PatientName ,StudyDate\r\n"
            + "A1,\"Doe^John\",20240101\r\n"
            + "\r\n"
            + "\"A,2\",\"O\"\"Brien^Pat\",\r\n"
            + "A3,\"two\nlines\",20240102-20240103\n"
        #expect(
            try Self.rows(text) == [
                "1: AccessionNumber=A1 PatientName=Doe^John StudyDate=20240101",
                "2: AccessionNumber=A,2 PatientName=O\"Brien^Pat StudyDate=",
                "3: AccessionNumber=A3 PatientName=two\nlines StudyDate=20240102-20240103",
            ])
    }

    @Test func aBadCSVRowIsThatRowsFailureAndTheNextRowsGoOn() throws {
        let text = "PatientID,StudyDate\nP1,20240101\nP2\nP3,20240102,extra\nP4,\n"
        let rows = try Self.rows(text)
        #expect(rows.count == 4)
        #expect(rows[0] == "1: PatientID=P1 StudyDate=20240101")
        #expect(rows[1] == "error: row 2: 1 cells where the header names 2 keys")
        #expect(rows[2] == "error: row 3: 3 cells where the header names 2 keys")
        #expect(rows[3] == "4: PatientID=P4 StudyDate=")
    }

    @Test func aHeaderThatIsNotKeysIsTheFilesError() throws {
        var reader = QueryRowReader(bytes: Array("PatientID,NotAKeyword\nP1,x\n".utf8))
        let row = try #require(try reader.next())
        guard case .failure(let error) = row else {
            Issue.record("an unknown keyword in the header must fail its rows")
            return
        }
        #expect(error.message.contains("NotAKeyword"))
    }

    @Test func ndjsonStringsNumbersArraysAndNull() throws {
        let text = """
            {"PatientID": "P1", "StudyDate": "20240101"}

            {"PatientID": ["P2", "P3"], "AccessionNumber": null, "(0020,0011)": 3}
            {"PatientID": {"nested": 1}}
            not json
            [1, 2]
            {"Unknown": "x"}
            {"PatientID": "P4"}
            """
        let rows = try Self.rows(text)
        #expect(rows.count == 7)
        #expect(rows[0] == "1: PatientID=P1 StudyDate=20240101")
        #expect(rows[1] == "2: PatientID=P2\\P3 AccessionNumber= SeriesNumber=3")
        #expect(rows[2] == "error: row 3: PatientID is not a string, a number or an array")
        #expect(rows[3].hasPrefix("error: row 4: not a JSON object"))
        #expect(rows[4] == "error: row 5: not a JSON object")
        #expect(rows[5].hasPrefix("error: row 6: unknown query key 'Unknown'"))
        #expect(rows[6] == "7: PatientID=P4")
    }

    /// A row longer than the cap is that row's failure; the reader holds one row, not the whole line.
    @Test func anOverlongRowFailsAlone() throws {
        let long = String(repeating: "x", count: QueryRowReader.maximumRowBytes + 10)
        let text = "{\"PatientID\": \"P1\"}\n{\"PatientID\": \"\(long)\"}\n{\"PatientID\": \"P3\"}\n"
        let rows = try Self.rows(text)
        #expect(rows.count == 3)
        #expect(rows[0] == "1: PatientID=P1")
        #expect(rows[1] == "error: row 2: longer than \(QueryRowReader.maximumRowBytes) bytes")
        #expect(rows[2] == "3: PatientID=P3")
    }

    /// From a file, and refusing what is not a file or a pipe.
    @Test func fromAFileAndNotFromADirectoryOrADevice() throws {
        let path = NSTemporaryDirectory() + "px-rows-\(UUID().uuidString).csv"
        try "StudyInstanceUID\n1.2.3\n1.2.4\n".write(toFile: path, atomically: false, encoding: .utf8)
        defer { unlink(path) }
        var reader = try QueryRowReader(path: path)
        var numbers: [Int] = []
        while let row = try reader.next() { numbers.append(try row.get().number) }
        #expect(numbers == [1, 2])
        for bad in ["/", "/dev/zero"] {
            #expect(throws: PXError.self) { _ = try QueryRowReader(path: bad) }
        }
        #expect(throws: PXError.self) { _ = try QueryRowReader(path: "/nonexistent/rows.csv") }
    }
}
