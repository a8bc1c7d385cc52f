import DICOMData
import Foundation
import PXCommandLine
import PXCore
import PXTestSupport
import Testing

/// px-find's formats against Orthanc (scripts/orthanc-start.sh, loaded with scripts/make-qr-corpus.py's corpus) and
/// the real pypx 3.12.6 of the test venv (issue 23): pypx's px-report gives on px-find's JSON what it gives on pypx's
/// own px-find JSON for the same query, the entries are pypx's key for key, the two-phase dicom-json is read by
/// pydicom, the csv by Python's csv module.
///
/// The documented differences (docs/commands.rst, "Formats") are fixes; the one this corpus shows is a value holding
/// `]` ("Chest [PA] view"), which pypx's findscu-log parser cuts at the `]` ("Chest [PA"). The comparison applies
/// that cut to px's JSON (``pypxCut(_:)``) and checks separately that px keeps the whole value.
@Suite(
    "px-find formats: pypx key for key (pypx's px-report), DICOM JSON, CSV", .tags(.integration), .integrationTier,
    .serialized, OrthancCommandPeer(), .timeLimit(.minutes(10)))
struct FindFormatTests {
    static let venvBin = TestSupport.venv + "/bin/"

    /// The queries compared: the whole archive, and one patient (a matching key at the study level).
    static let queries: [[String]] = [[], ["--PatientID", "PAT001"]]

    /// px-report's report formats: csv with each of its options, tabular, rawText and json.
    static let reports: [[String]] = [
        ["--printReport", "csv"], ["--printReport", "csv", "--csvPrintHeaders"],
        ["--printReport", "csv", "--csvSummarize"], ["--printReport", "csv", "--csvPrettify", "--csvPrintHeaders"],
        ["--printReport", "tabular"], ["--printReport", "rawText"],
        ["--printReport", "json"],
    ]

    /// pypx 3.12.6's px-find JSON for `query` against the suite's Orthanc.
    static func pypxFind(_ context: OrthancCommandPeer.Context, _ query: [String]) async throws -> JSONValue {
        let findscu = try #require(TestSupport.locate("findscu"), "findscu is not installed")
        let run = try await PeerHarness.runAsync(
            venvBin + "px-find",
            [
                "--aec", OrthancCommandPeer.orthancAETitle, "--aet", OrthancCommandPeer.callingAETitle, "--serverIP",
                "127.0.0.1", "--serverPort", String(context.dicomPort), "--findscu", findscu, "--json",
            ] + query)
        #expect(run.exitCode == 0, "pypx px-find: \(run.stderr)")
        let json = try JSONParser.parse(run.stdout)
        try #require(json["status"]?.stringValue == "success", "pypx px-find failed: \(run.stdout)")
        return json
    }

    /// px-find's JSON (default format) for `query`.
    static func pxFind(_ context: OrthancCommandPeer.Context, _ query: [String], backend: String) async throws
        -> JSONValue
    {
        let run = try await PeerHarness.runAsync("px-find", [context.peer, "--backend", backend] + query)
        #expect(run.exitCode == 0, "px-find: \(run.stderr)")
        return try JSONParser.parse(run.stdout)
    }

    /// pypx's parser on a value holding `]`: it takes the text between the first `[` and the first `]` of
    /// findscu's log line, stripped.
    static func pypxCut(_ json: JSONValue) -> JSONValue {
        switch json {
        case .object(let members):
            return .object(
                members.map { member in
                    if member.key == "value", case .string(let s) = member.value, let end = s.firstIndex(of: "]") {
                        return JSONMember("value", .string(String(s[..<end]).trimmingCharacters(in: .whitespaces)))
                    }
                    return JSONMember(member.key, pypxCut(member.value))
                })
        case .array(let values): return .array(values.map(pypxCut))
        default: return json
        }
    }

    /// `data` sorted by StudyInstanceUID and each `series` by SeriesInstanceUID, so the two runs' order (the
    /// peer's) does not count.
    static func sorted(_ json: JSONValue) -> JSONValue {
        func uid(_ entry: JSONValue, _ keyword: String) -> String { entry[keyword]?["value"]?.stringValue ?? "" }
        let studies = (json["data"]?.arrayValue ?? []).map { study in
            JSONValue.object(
                (study.objectValue ?? []).map { member in
                    member.key == "series"
                        ? JSONMember(
                            "series",
                            .array(
                                (member.value.arrayValue ?? []).sorted {
                                    uid($0, "SeriesInstanceUID") < uid($1, "SeriesInstanceUID")
                                }))
                        : member
                })
        }.sorted { uid($0, "StudyInstanceUID") < uid($1, "StudyInstanceUID") }
        return .object((json.objectValue ?? []).map { $0.key == "data" ? JSONMember("data", .array(studies)) : $0 })
    }

    /// pypx's px-report on a JSON file: its stdout, after checking it exited 0.
    static func report(_ file: String, _ arguments: [String]) async throws -> String {
        let run = try await PeerHarness.runAsync(venvBin + "px-report", ["--reportDataFile", file] + arguments)
        #expect(run.exitCode == 0, "px-report \(arguments) on \(file): \(run.stdout) \(run.stderr)")
        return run.stdout
    }

    @Test("pypx's px-report prints the same csv, tabular, rawText and json reports from px-find's JSON as from pypx's")
    func pxReportEqual() async throws {
        let context = try OrthancCommandTests.context()
        for (n, query) in Self.queries.enumerated() {
            let pypxFile = context.work + "/pypx-\(n).json"
            try Data(Self.sorted(try await Self.pypxFind(context, query)).serialized(pretty: true).utf8).write(
                to: URL(fileURLWithPath: pypxFile))
            var expected: [String] = []
            for arguments in Self.reports {
                let fromPypx = try await Self.report(pypxFile, arguments)
                #expect(!fromPypx.isEmpty, "px-report \(arguments) printed nothing for pypx's JSON")
                expected.append(fromPypx)
            }
            for backend in ["native", "dcmtk"] {
                let px = try await Self.pxFind(context, query, backend: backend)
                try #require(px["status"]?.stringValue == "success", "\(px.serialized())")
                // px keeps the value pypx cuts.
                let descriptions = Set(
                    (px["data"]?.arrayValue ?? []).compactMap { $0["StudyDescription"]?["value"]?.stringValue })
                #expect(descriptions == ["Chest [PA] view"])
                let pxFile = context.work + "/px-\(backend)-\(n).json"
                try Data(Self.pypxCut(Self.sorted(px)).serialized(pretty: true).utf8).write(
                    to: URL(fileURLWithPath: pxFile))
                for (arguments, fromPypx) in zip(Self.reports, expected) {
                    let fromPX = try await Self.report(pxFile, arguments)
                    #expect(
                        fromPX == fromPypx,
                        "px-report \(arguments), query \(query), \(backend): px\n\(fromPX)\npypx\n\(fromPypx)")
                }
            }
        }
    }

    @Test("pypx format: study and series entries have pypx's keys in pypx's order, and pypx's values")
    func keyForKey() async throws {
        let context = try OrthancCommandTests.context()
        for query in Self.queries {
            let pypx = Self.sorted(try await Self.pypxFind(context, query))
            let px = Self.pypxCut(Self.sorted(try await Self.pxFind(context, query, backend: "native")))
            let pypxStudies = pypx["data"]?.arrayValue ?? []
            let pxStudies = px["data"]?.arrayValue ?? []
            #expect(pxStudies.count == pypxStudies.count)
            #expect(!pxStudies.isEmpty)
            // `uid` is the position in the peer's answer and `command` names the program: both differ by design.
            func compare(_ a: JSONValue, _ b: JSONValue, _ what: String) {
                #expect(a.objectValue?.map(\.key) == b.objectValue?.map(\.key), "keys of \(what)")
                for member in b.objectValue ?? [] where !["uid", "command", "series"].contains(member.key) {
                    #expect(a[member.key] == member.value, "\(what) \(member.key)")
                }
            }
            for (a, b) in zip(pxStudies, pypxStudies) {
                let uid = b["StudyInstanceUID"]?["value"]?.stringValue ?? "?"
                compare(a, b, "study \(uid)")
                let pxSeries = a["series"]?.arrayValue ?? []
                let pypxSeries = b["series"]?.arrayValue ?? []
                #expect(pxSeries.count == pypxSeries.count, "series of \(uid)")
                for (x, y) in zip(pxSeries, pypxSeries) { compare(x, y, "series of \(uid)") }
                // pypx's per-series command is its series query; px's names the same keys and the study.
                #expect(pxSeries.allSatisfy { $0["command"]?["value"]?.stringValue?.contains(uid) == true })
            }
            // px-report reads the keywords asked and the level from `command`, a string in pypx's shape.
            let command = try #require(px["command"]?.stringValue, "command is not a string: \(px.serialized())")
            #expect(command.contains("QueryRetrieveLevel=STUDY"))
            for keyword in ["PatientName", "NumberOfStudyRelatedInstances", "Modality", "PerformedStationAETitle"] {
                #expect(command.contains(keyword))
            }
        }
    }

    @Test("pypx-clean: the same keys, empty values \"\", the argv as command")
    func pypxClean() async throws {
        let context = try OrthancCommandTests.context()
        let strict = try await Self.pxFind(context, [], backend: "native")
        let clean = try await Self.pxFind(context, ["--format", "pypx-clean"], backend: "native")
        #expect(clean["command"]?.arrayValue?.first?.stringValue?.hasSuffix("px-find") == true)
        let strictStudies = strict["data"]?.arrayValue ?? []
        let cleanStudies = clean["data"]?.arrayValue ?? []
        #expect(strictStudies.count == cleanStudies.count)
        for (s, c) in zip(strictStudies, cleanStudies) {
            #expect(s.objectValue?.map(\.key) == c.objectValue?.map(\.key))
            #expect(s["PatientAge"]?["value"]?.stringValue == "no value provided for 0010,1010")
            #expect(c["PatientAge"]?["value"]?.stringValue == "")
        }
    }

    @Test("dicom-json of the two-phase query: pydicom's Dataset.from_json reads each study with its series")
    func dicomJSONReadByPydicom() async throws {
        let context = try OrthancCommandTests.context()
        let run = try await PeerHarness.runAsync(
            "px-find", [context.peer, "--backend", "native", "--format", "dicom-json"])
        #expect(run.exitCode == 0, "\(run.stderr)")
        let data = try #require(try JSONParser.parse(run.stdout)["data"])
        let file = context.work + "/two-phase.dicom.json"
        try Data(data.serialized().utf8).write(to: URL(fileURLWithPath: file))
        let script = """
            import json, sys
            from pydicom import Dataset
            out = {}
            for item in json.load(open(sys.argv[1])):
                ds = Dataset.from_json(item)
                out[ds.StudyInstanceUID] = sorted(s.SeriesInstanceUID for s in ds.ReferencedSeriesSequence)
            print(json.dumps(out, sort_keys=True))
            """
        let read = try await PeerHarness.runAsync(TestSupport.python, ["-c", script, file])
        #expect(read.exitCode == 0, "pydicom could not read px-find's DICOM JSON: \(read.stderr)")
        let studies = try JSONParser.parse(read.stdout)
        let corpus = context.corpus
        #expect(Set((studies.objectValue ?? []).map(\.key)) == Set(corpus.studies.keys))
        for (study, instances) in corpus.studies {
            let expected = Set(instances.compactMap { $0.string(.seriesInstanceUID) }).sorted()
            #expect(studies[study]?.arrayValue?.compactMap(\.stringValue) == expected, "series of \(study)")
        }
        // px-move reads the same shape: one target per series.
        let selections = try RetrieveSelection.parse(pxFindOutput: run.stdout).compactMap(\.seriesInstanceUID)
        #expect(Set(selections) == Set(corpus.series.keys))
    }

    @Test("csv: Python's csv module reads a header of the keywords asked and one row per series, names as stored")
    func csvReadByPython() async throws {
        let context = try OrthancCommandTests.context()
        for backend in ["native", "dcmtk"] {
            let run = try await PeerHarness.runAsync(
                "px-find", [context.peer, "--backend", backend, "--format", "csv", "-k", "OtherPatientIDs"])
            #expect(run.exitCode == 0, "\(run.stderr)")
            #expect(run.stdout.contains("\r\n"))
            let rows = try await Self.readCSV(run.stdout, in: context.work)
            let header = try #require(rows.first)
            #expect(header.first == "StudyDate")
            for keyword in ["PatientName", "StudyInstanceUID", "SeriesInstanceUID", "Modality", "OtherPatientIDs"] {
                #expect(header.contains(keyword), "\(keyword) in \(header)")
            }
            #expect(!header.contains("QueryRetrieveLevel"))
            #expect(rows.count == 1 + context.corpus.series.count)
            let column = { (name: String) in header.firstIndex(of: name) ?? 0 }
            for row in rows.dropFirst() {
                #expect(row.count == header.count)
                let series = row[column("SeriesInstanceUID")]
                let instance = try #require(context.corpus.series[series]?.first, "unexpected series \(series)")
                #expect(row[column("PatientName")] == instance.string(.patientName))
                #expect(row[column("StudyDescription")] == "Chest [PA] view")
                #expect(row[column("Modality")] == instance.string(.modality))
            }
            let names = Set(rows.dropFirst().map { $0[column("PatientName")] })
            #expect(names.contains("山田^太郎=やまだ^たろう"))
            #expect(names.contains("Müller^Jürgen"))
        }
    }

    /// Rows of `text` as Python's csv module reads them (RFC 4180 dialect, the file opened with newline="").
    static func readCSV(_ text: String, in work: String) async throws -> [[String]] {
        let file = work + "/read-\(UInt32.random(in: 0...UInt32.max)).csv"
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        let script = """
            import csv, json, sys
            with open(sys.argv[1], newline="", encoding="utf-8") as f:
                print(json.dumps(list(csv.reader(f, strict=True))))
            """
        let read = try await PeerHarness.runAsync(TestSupport.python, ["-c", script, file])
        #expect(read.exitCode == 0, "csv module: \(read.stderr)")
        let rows = try JSONParser.parse(read.stdout).arrayValue ?? []
        return rows.map { ($0.arrayValue ?? []).compactMap(\.stringValue) }
    }
}

/// The csv and table text of data sets with names in several character sets and with the characters CSV quotes:
/// Python's csv module reads the CSV back, the table's columns line up in terminal columns. The names come from
/// pydicom's character set test files (chrH31.dcm Japanese in ISO 2022, chrKoreanMulti.dcm, chrX1.dcm UTF-8 Chinese, chrH32.dcm half-width katakana, ...).
@Suite("csv and table text: RFC 4180 quoting, display-width columns", .tags(.integration), .integrationTier)
struct FindFormatTextTests {
    static let charsetFiles = TestSupport.venv + "/lib/python3.11/site-packages/pydicom/data/charset_files/"

    /// PatientName and PatientID (with the file's SpecificCharacterSet) of pydicom's character set files.
    static func names() throws -> [DataSet] {
        try [
            "chrH31.dcm", "chrX1.dcm", "chrJapMulti.dcm", "chrKoreanMulti.dcm", "chrH32.dcm", "chrGerm.dcm",
            "chrFren.dcm",
        ].map {
            let full = try Part10File(contentsOf: charsetFiles + $0).dataSet
            var dataSet = DataSet()
            for element in full.elements
            where [Tag(0x0008, 0x0005), .patientName, .patientID].contains(element.tag) {
                dataSet.set(element)
            }
            return dataSet
        }
    }

    @Test("Python's csv module reads back commas, double quotes, line breaks and CJK names")
    func csvRoundTrip() async throws {
        var dataSets = try Self.names()
        for (name, id) in [("Smith, John", "ID,1"), ("O\"Neil^\"Jack\"", "Q\"1"), ("Line\r\nBreak", "  pad")] {
            var dataSet = DataSet()
            dataSet.set(Tag(0x0008, 0x0005), vr: .CS, string: "ISO_IR 192")
            dataSet.set(.patientName, vr: .PN, string: name)
            dataSet.set(.patientID, vr: .LO, string: id)
            dataSets.append(dataSet)
        }
        let columns = ["PatientName", "PatientID"]
        let text =
            PXOutput.csvRecord(columns)
            + dataSets.map { PXOutput.csvRecord(PXOutput.csvFields([$0], columns: columns)) }.joined()
        let rows = try await TestSupport.withTemporaryDirectory { work in
            try await FindFormatTests.readCSV(text, in: work)
        }
        #expect(rows.first == columns)
        #expect(rows.count == dataSets.count + 1)
        for (row, dataSet) in zip(rows.dropFirst(), dataSets) {
            #expect(row == [dataSet.string(.patientName) ?? "", dataSet.string(.patientID) ?? ""])
        }
        let read = Set(rows.map { $0[0] })
        #expect(read.contains("Smith, John"))
        #expect(read.contains("O\"Neil^\"Jack\""))
        #expect(read.contains("Yamada^Tarou=山田^太郎=やまだ^たろう"))  // chrH31.dcm
        #expect(read.contains("김희중"))  // chrKoreanMulti.dcm
        #expect(read.contains { $0.contains("王") })  // chrX1.dcm
    }

    @Test("table: every row's columns start at the same terminal column, CJK and Hangul counted 2")
    func tableAlignsByDisplayWidth() throws {
        let dataSets = try Self.names()
        let lines = PXOutput.table(dataSets).split(separator: "\n").map(String.init)
        #expect(lines.count == dataSets.count + 2)
        // The PatientID column starts where the header's does, in terminal columns, on every line.
        let header = try #require(lines.first)
        let idHeader = try #require(header.range(of: "PatientID"))
        let idColumn = PXOutput.displayWidth(String(header[..<idHeader.lowerBound]))
        for (line, dataSet) in zip(lines.dropFirst(2), dataSets) {
            let id = try #require(dataSet.string(.patientID))
            let start = try #require(line.range(of: id, options: .backwards)?.lowerBound, "\(id) in \(line)")
            #expect(PXOutput.displayWidth(String(line[..<start])) == idColumn, "\(line)")
            #expect(PXOutput.displayWidth(line) == PXOutput.displayWidth(header), "\(line)")
        }
        #expect(lines.contains { $0.hasPrefix("김희중 ") })
        #expect(lines.contains { $0.hasPrefix("ﾔﾏﾀﾞ^ﾀﾛｳ=山田^太郎=やまだ^たろう") })
    }
}
