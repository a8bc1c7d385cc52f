import DICOMData

extension PXOutput {
    /// One study of a tree: the study and, when known, its series (`nil`: only the study level was asked).
    public struct TreeStudy: Hashable, Sendable {
        public var study: StudyHolding
        public var series: [SeriesHolding]?

        public init(study: StudyHolding, series: [SeriesHolding]?) {
            self.study = study
            self.series = series
        }

        /// How many series: the list's length when there is one, else the study's count (`nil`: unknown).
        var seriesCount: Int? { series?.count ?? study.seriesCount }

        /// How many instances: the sum over the series when every series said, else the study's count.
        var instanceCount: Int? {
            if let series, !series.isEmpty, series.allSatisfy({ $0.instanceCount != nil }) {
                return series.reduce(0) { $0 + ($1.instanceCount ?? 0) }
            }
            return study.instanceCount
        }
    }

    /// The tree view of what a place holds (dcm's): a summary line, `2 patients | 3 studies | 56 series |
    /// 17174 instances`, then patient → study (→ series) with counts, in the order given (patients in the
    /// order of their first study). A count the place did not give is `?`, and a total that misses some
    /// is marked `>=` (`?` when none said). px-find --format tree renders a node's studies with it (``treeStudies(_:)``), px-ls a
    /// folder or zip place's holdings.
    public static func tree(_ studies: [TreeStudy]) -> String {
        var patients: [String] = []
        var byPatient: [String: [TreeStudy]] = [:]
        for entry in studies {
            let key = (entry.study.patientID ?? "") + "\u{0}" + (entry.study.patientName ?? "")
            if byPatient[key] == nil { patients.append(key) }
            byPatient[key, default: []].append(entry)
        }
        func total(_ values: [Int?]) -> String {
            let known = values.compactMap { $0 }
            if known.isEmpty && !values.isEmpty { return "?" }
            return known.count < values.count ? ">=\(known.reduce(0, +))" : "\(known.reduce(0, +))"
        }
        func count(_ value: Int?, _ one: String, _ many: String) -> String {
            "\(value.map(String.init) ?? "?") \(value == 1 ? one : many)"
        }
        // Every value a peer or a file gave is escaped (``HumanText/escaped(_:)``): none acts on the terminal.
        func words(_ parts: [String?]) -> String {
            parts.compactMap { $0.map { String($0.trimmed) } }.filter { !$0.isEmpty }.map(HumanText.escaped).joined(
                separator: " ")
        }
        var out =
            "\(count(patients.count, "patient", "patients")) | \(count(studies.count, "study", "studies")) | "
            + "\(total(studies.map(\.seriesCount))) series | \(total(studies.map(\.instanceCount))) instances\n"
        for key in patients {
            let entries = byPatient[key] ?? []
            let first = entries[0].study
            out +=
                words([first.patientID, first.patientName]).ifEmpty("(no patient)")
                + "  \(count(entries.count, "study", "studies"))\n"
            for (studyIndex, entry) in entries.enumerated() {
                let lastStudy = studyIndex == entries.count - 1
                let study = entry.study
                out +=
                    (lastStudy ? "└─ " : "├─ ")
                    + words([study.studyDate, study.studyDescription, study.accessionNumber])
                    .ifEmpty(HumanText.escaped(study.studyInstanceUID))
                    + "  \(count(entry.seriesCount, "series", "series")), \(count(entry.instanceCount, "instance", "instances"))\n"
                for (seriesIndex, series) in (entry.series ?? []).enumerated() {
                    let lastSeries = seriesIndex == (entry.series?.count ?? 0) - 1
                    out +=
                        (lastStudy ? "   " : "│  ") + (lastSeries ? "└─ " : "├─ ")
                        + words([series.modality, series.seriesNumber.map { "#" + $0 }, series.seriesDescription])
                        .ifEmpty(HumanText.escaped(series.seriesInstanceUID))
                        + "  \(count(series.instanceCount, "instance", "instances"))\n"
                }
            }
        }
        return out
    }

    /// px-find's studies (with their series, or `seriesKnown` false for a STUDY-level query) as tree entries.
    public static func treeStudies(_ studies: [StudyWithSeries], seriesKnown: Bool = true) -> [TreeStudy] {
        studies.map { entry in
            let holding = StudyHolding(study: entry.study)
            return TreeStudy(
                study: holding,
                series: seriesKnown
                    ? entry.series.map { SeriesHolding(series: $0, studyInstanceUID: holding.studyInstanceUID) } : nil)
        }
    }
}

extension StudyHolding {
    /// A study from a C-FIND response (PS3.4 §C.6.2.1.2): its keys and NumberOfStudyRelated* counts.
    public init(study: DataSet) {
        self.init(
            studyInstanceUID: study.string(.studyInstanceUID) ?? "", patientID: study.string(.patientID),
            patientName: study.string(.patientName), studyDate: study.string(.studyDate),
            studyDescription: study.string(Tag(0x0008, 0x1030)), accessionNumber: study.string(Tag(0x0008, 0x0050)),
            seriesCount: study.string(Tag(0x0020, 0x1206)).flatMap { Int($0.trimmed) },
            instanceCount: study.string(Tag(0x0020, 0x1208)).flatMap { Int($0.trimmed) })
    }
}

extension SeriesHolding {
    /// A series from a C-FIND response: its keys and NumberOfSeriesRelatedInstances.
    public init(series: DataSet, studyInstanceUID: String) {
        self.init(
            studyInstanceUID: series.string(.studyInstanceUID) ?? studyInstanceUID,
            seriesInstanceUID: series.string(.seriesInstanceUID) ?? "", modality: series.string(Tag(0x0008, 0x0060)),
            seriesNumber: series.string(Tag(0x0020, 0x0011)), seriesDescription: series.string(Tag(0x0008, 0x103E)),
            instanceCount: series.string(Tag(0x0020, 0x1209)).flatMap { Int($0.trimmed) })
    }
}

extension String {
    fileprivate func ifEmpty(_ other: String) -> String { isEmpty ? other : self }
}
