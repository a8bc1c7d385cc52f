import ArgumentParser
import DICOMData
import PXCommandLine
import PXCore

#if canImport(Glibc)
    import Glibc
#endif

public struct PXDump: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "px-dump",
        abstract: "Print DICOM files as JSON (the DICOM JSON Model), pypx entries, or a readable dump.",
        discussion: """
            Each file is printed as one JSON document on stdout, in the order given (a
            file's data set alone, as dcm2json prints it). A file that cannot be read
            prints {"status": "error", "file": ..., "error": {"code": ..., "message": ...,
            "offset": ...}} in its place, and the remaining files are still printed.

            With --compact: one line per file (NDJSON), then the envelope every px
            command ends with, whose data.files names the file of each line in order:
            {"status": ..., "backend": "none", "command": [...], "data": {"files":
            [{"file": ..., "status": "success"|"error"}], "read": N, "failed": N},
            "error": ...} (error.code partialFailure when a file could not be read).

            Formats:
              dicom-json  PS3.18 Annex F.2, as DCMTK's dcm2json writes it (text
                          decoded with the file's Specific Character Set,
                          written as UTF-8)
              pypx        {"PatientID": {"tag": "0010,0020", "value": "32124",
                          "label": "PatientID"}}
              text        one line per element, like dcmdump

            Exit status:
              0   every file was read
              1   at least one file could not be read
              64  usage error
            """,
        version: PXVersion.description
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case dicomJSON = "dicom-json"
        case pypx
        case text
    }

    @Option(name: .shortAndLong, help: "Output format: \(Format.allCases.map(\.rawValue).joined(separator: ", ")).")
    var format: Format = .dicomJSON

    @Flag(
        name: .long,
        help:
            "Read only up to Pixel Data, leaving out values over 1 MiB (fast, bounded memory; what px-listen reads to sort files)."
    )
    var headerOnly = false

    @Flag(name: .long, help: "Include the file meta information (group 0002).")
    var meta = false

    @Flag(name: .long, help: "One line per file instead of indented JSON.")
    var compact = false

    @Argument(help: "DICOM files to print.")
    var files: [String]

    public func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one file") }
    }

    public init() {}

    public func run() throws {
        var failed = 0
        var out: [UInt8] = []
        var outcomes: [DumpSummary.File] = []
        for path in files {
            out.removeAll(keepingCapacity: true)
            var read = false
            do {
                let file =
                    headerOnly
                    ? try Part10File.readHeader(contentsOf: path)
                    : try Part10File(contentsOf: path)
                var dataSet = file.dataSet
                if meta {
                    for element in file.meta.elements { dataSet.set(element) }
                }
                switch format {
                case .dicomJSON:
                    dataSet.dicomJSON().write(into: &out, pretty: !compact, indent: 0)
                case .pypx:
                    dataSet.pypxJSON().write(into: &out, pretty: !compact, indent: 0)
                case .text:
                    out.append(
                        contentsOf:
                            "# \(HumanText.escaped(path)) (\(HumanText.escaped(file.transferSyntax.uid)))\n".utf8)
                    out.append(contentsOf: dataSet.textDump().utf8)
                }
                read = true
            } catch {
                failed += 1
                JSONValueEncoder.encode(DumpFailure(file: path, error: error))
                    .write(into: &out, pretty: false, indent: 0)
            }
            out.append(0x0A)
            CommandOutput.writeStandardOutput(out)
            if compact {
                outcomes.append(DumpSummary.File(file: path, status: read ? "success" : "error"))
            }
        }
        if compact {
            let data = JSONValueEncoder.encode(
                DumpSummary(files: outcomes, read: files.count - failed, failed: failed))
            let error = failed == 0 ? nil : PXError.partialFailure(failed: failed, total: files.count, what: "files")
            CommandOutput(pretty: false).finish(backend: "none", data: data, error: error)
        }
        if failed > 0 { throw ExitCode(1) }
    }
}

/// px-dump's line for a file it cannot read: `{"status": "error", "file", "error": {"code", "message",
/// "offset"}}`, `offset` (where in the file the reading stopped) only when known.
struct DumpFailure: Encodable {
    struct Detail: Encodable {
        var code: String
        var message: String
        var offset: Int?
    }
    let status = "error"
    var file: String
    var error: Detail

    init(file: String, error: DICOMDataError) {
        self.file = file
        self.error = Detail(code: error.code.description, message: error.description, offset: error.offset)
    }
}

/// px-dump's envelope data with `--compact`: each file with its line's status, in the order printed, and the
/// counts: `{"files": [{"file", "status"}], "read", "failed"}`.
struct DumpSummary: Encodable {
    struct File: Encodable {
        var file: String
        var status: String
    }
    var files: [File]
    var read: Int
    var failed: Int
}
