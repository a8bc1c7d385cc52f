import DICOMData
import PXCore
import PXStorage
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A folder of DICOM files as a place, read by walking it: each regular file's header up to the series keys
/// (everything before (0020,0012)), files that are not DICOM skipped. Folders whose name starts with `.`
/// (the staging folder `.px-incoming`, px's own `.px`) are not walked.
///
/// ``refresh()`` reads the folder again; ``record(path:dataSet:)`` adds a file px-sync has just placed.
public final class FolderScan: PlaceInventory, Sendable {
    /// One instance found: its file and identity.
    public struct Entry: Hashable, Sendable {
        public var path: String
        public var sopInstanceUID: String
        public var series: SeriesHolding
        public var study: StudyHolding
    }

    public let root: String
    public let layout: StorageLayout
    private let entries = Mutex<[String: Entry]>([:])

    /// A place at `root` (absolute), not yet read: call ``refresh()``.
    public init(root: String, layout: StorageLayout) {
        self.root = root
        self.layout = layout
    }

    /// The key data elements come before this tag (PS3.5 §7.1: elements ascend by tag).
    static let stopBefore = Tag(0x0020, 0x0012)

    /// Walks the folder and reads what it holds now.
    /// - Throws: ``PXError/io(_:path:)`` when the root is not a folder that can be read.
    public func refresh() throws(PXError) {
        var found: [String: Entry] = [:]
        guard let dir = opendir(root) else {
            throw .io("cannot read the folder (\(POSIX.errorText()))", path: root)
        }
        closedir(dir)
        walk(root, into: &found)
        entries.withLock { $0 = found }
    }

    /// Adds the instance px has just placed at `path` (its data set as received).
    public func record(path: String, dataSet: DataSet) {
        guard let entry = Self.entry(path: path, dataSet: dataSet) else { return }
        entries.withLock { $0[entry.sopInstanceUID] = entry }
    }

    /// Every instance, or those of one study (and series).
    public func files(ofStudy studyInstanceUID: String, series seriesInstanceUID: String? = nil) -> [Entry] {
        entries.withLock { all in
            all.values.filter {
                $0.study.studyInstanceUID == studyInstanceUID
                    && (seriesInstanceUID == nil || $0.series.seriesInstanceUID == seriesInstanceUID)
            }
        }.sorted { $0.path < $1.path }
    }

    public func studies(matching keys: DataSet) async throws(PXError) -> [StudyHolding] {
        let matcher = try StudyMatcher(keys)
        let snapshot = entries.withLock { Array($0.values) }
        var studies: [String: StudyHolding] = [:]
        var series: [String: Set<String>] = [:]
        for entry in snapshot where matcher.matches(entry.study) {
            let uid = entry.study.studyInstanceUID
            var study = studies[uid] ?? entry.study
            study.instanceCount = (study.instanceCount ?? 0) + 1
            studies[uid] = study
            series[uid, default: []].insert(entry.series.seriesInstanceUID)
        }
        return studies.values.map { study in
            var study = study
            study.seriesCount = series[study.studyInstanceUID]?.count ?? 0
            return study
        }.sorted { $0.studyInstanceUID < $1.studyInstanceUID }
    }

    public func series(ofStudy studyInstanceUID: String) async throws(PXError) -> [SeriesHolding] {
        var out: [String: SeriesHolding] = [:]
        for entry in files(ofStudy: studyInstanceUID) {
            var series = out[entry.series.seriesInstanceUID] ?? entry.series
            series.instanceCount = (series.instanceCount ?? 0) + 1
            out[entry.series.seriesInstanceUID] = series
        }
        return out.values.sorted { $0.seriesInstanceUID < $1.seriesInstanceUID }
    }

    public func instances(ofStudy studyInstanceUID: String, series seriesInstanceUID: String) async throws(PXError)
        -> Set<String>
    {
        Set(files(ofStudy: studyInstanceUID, series: seriesInstanceUID).map(\.sopInstanceUID))
    }

    private func walk(_ folder: String, into found: inout [String: Entry]) {
        guard let dir = opendir(folder) else { return }
        var names: [(String, UInt8)] = []
        while let item = readdir(dir) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix(".") { continue }
            names.append((name, item.pointee.d_type))
        }
        closedir(dir)
        for (name, type) in names {
            let path = folder + "/" + name
            if type == UInt8(DT_DIR) {
                walk(path, into: &found)
            } else if type == UInt8(DT_REG) {
                let header: Part10File
                do {
                    header = try Part10File.readHeader(contentsOf: path, stopBefore: Self.stopBefore)
                } catch {
                    continue  // not a DICOM file: not part of the place
                }
                guard !header.meta.isEmpty, let entry = Self.entry(path: path, dataSet: header.dataSet) else { continue }
                found[entry.sopInstanceUID] = entry
            }
        }
    }

    static func entry(path: String, dataSet: DataSet) -> Entry? {
        func text(_ tag: Tag) -> String? {
            guard let value = dataSet.string(tag), !value.isEmpty else { return nil }
            return value
        }
        guard let sop = text(.sopInstanceUID), let study = text(.studyInstanceUID),
            let series = text(.seriesInstanceUID)
        else { return nil }
        return Entry(
            path: path, sopInstanceUID: sop,
            series: SeriesHolding(
                studyInstanceUID: study, seriesInstanceUID: series, modality: text(.modality),
                seriesNumber: text(NodePlace.seriesNumber), seriesDescription: text(.seriesDescription)),
            study: StudyHolding(
                studyInstanceUID: study, patientID: text(.patientID), patientName: text(.patientName),
                studyDate: text(.studyDate), studyDescription: text(.studyDescription),
                accessionNumber: text(NodePlace.accessionNumber)))
    }
}

/// C-FIND matching of study keys against a place that holds files (PS3.4 §C.2.2.2): single values, `*` and
/// `?` wildcards, UID lists (`\`), and date ranges (`A-B`, `A-`, `-B`) for StudyDate. Empty values are return
/// keys and match everything.
struct StudyMatcher: Sendable {
    var keys: [(Tag, String)] = []

    static let supported: [Tag: String] = [
        .patientID: "PatientID", .patientName: "PatientName", .studyDate: "StudyDate",
        .studyDescription: "StudyDescription", .studyInstanceUID: "StudyInstanceUID",
        NodePlace.accessionNumber: "AccessionNumber",
    ]

    /// - Throws: ``PXError/usage(_:)`` for a matching key a folder place cannot match.
    init(_ identifier: DataSet) throws(PXError) {
        for element in identifier where element.tag != .queryRetrieveLevel && element.tag != .specificCharacterSet {
            guard let value = identifier.strings(element.tag)?.joined(separator: "\\"), !value.isEmpty else {
                continue
            }
            guard Self.supported[element.tag] != nil else {
                throw .usage(
                    "a folder place matches only \(Self.supported.values.sorted().joined(separator: ", ")), "
                        + "not \(DataDictionary.entry(for: element.tag)?.keyword ?? element.tag.hexString)")
            }
            keys.append((element.tag, value))
        }
    }

    func matches(_ study: StudyHolding) -> Bool {
        keys.allSatisfy { tag, pattern in
            let value: String? =
                switch tag {
                case .patientID: study.patientID
                case .patientName: study.patientName
                case .studyDate: study.studyDate
                case .studyDescription: study.studyDescription
                case .studyInstanceUID: study.studyInstanceUID
                default: study.accessionNumber
                }
            if tag == .studyDate, pattern.contains("-") {
                guard let value else { return false }
                let bounds = pattern.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
                return (bounds[0].isEmpty || value >= bounds[0]) && (bounds.last!.isEmpty || value <= bounds.last!)
            }
            if tag == .studyInstanceUID { return pattern.split(separator: "\\").contains { $0 == value ?? "" } }
            return Self.wildcard(Array(pattern.unicodeScalars), Array((value ?? "").unicodeScalars))
        }
    }

    /// `*` any run, `?` one character, everything else itself.
    static func wildcard(_ pattern: [Unicode.Scalar], _ value: [Unicode.Scalar]) -> Bool {
        var p = 0
        var v = 0
        var star: Int?
        var mark = 0
        while v < value.count {
            if p < pattern.count && (pattern[p] == "?" || pattern[p] == value[v]) {
                p += 1
                v += 1
            } else if p < pattern.count && pattern[p] == "*" {
                star = p
                mark = v
                p += 1
            } else if let s = star {
                p = s + 1
                mark += 1
                v = mark
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
