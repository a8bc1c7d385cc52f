import DICOMData
import Logging
import PXCore

extension FindCommand {
    /// NumberOfStudyRelatedSeries (0020,1206), NumberOfStudyRelatedInstances (0020,1208) and
    /// NumberOfSeriesRelatedInstances (0020,1209): optional keys (PS3.4 §C.6.2.1.2) that some peers leave empty
    /// (DCMTK's dcmqrscp always does).
    static let studySeriesCount = Tag(0x0020, 0x1206)
    static let studyInstanceCount = Tag(0x0020, 0x1208)
    static let seriesInstanceCount = Tag(0x0020, 0x1209)

    /// `--format tree`'s counts one level down where the peer left them empty: for each such study one
    /// IMAGE-level C-FIND under it (asking SeriesInstanceUID) whose matches are counted, per series
    /// (`seriesKnown`: the two-phase query, NumberOfSeriesRelatedInstances of each series) or for the study
    /// (a STUDY-level query: its series and its instances). A count query that fails leaves the count
    /// unknown (`?`), with a warning.
    static func countingOneLevelDown(
        _ studies: [StudyWithSeries], seriesKnown: Bool, peer: any Querying, model: QueryModel,
        maxResponses: Int?, logger: Logger
    ) async -> [StudyWithSeries] {
        func missing(_ dataSet: DataSet, _ tag: Tag) -> Bool {
            Int(dataSet.string(tag)?.trimmingSpaces ?? "") == nil
        }
        var out: [StudyWithSeries] = []
        for var entry in studies {
            let needed =
                seriesKnown
                ? entry.series.contains { missing($0, seriesInstanceCount) }
                : missing(entry.study, studySeriesCount) || missing(entry.study, studyInstanceCount)
            guard needed, let uid = entry.study.string(.studyInstanceUID), !uid.isEmpty else {
                out.append(entry)
                continue
            }
            var identifier = DataSet()
            identifier.set(.studyInstanceUID, vr: .UI, string: uid)
            identifier.set(.seriesInstanceUID, vr: .UI, string: "")
            identifier.set(.sopInstanceUID, vr: .UI, string: "")
            if model == .patientRoot, let patient = entry.study.string(.patientID) {
                identifier.set(.patientID, vr: .LO, string: patient)
            }
            let result: FindResult
            do {
                result = try await peer.find(
                    FindRequest(
                        level: .image, model: model, identifier: identifier, maxResponses: maxResponses,
                        keepMatches: true),
                    logger: logger, onResponse: { _ in })
            } catch {
                logger.warning("cannot count the instances of study \(uid): \(error)")
                out.append(entry)
                continue
            }
            if result.status.isFailure {
                logger.warning("cannot count the instances of study \(uid): \(result.status.name)")
                out.append(entry)
                continue
            }
            // Distinct SOP Instance UIDs: a peer that answers one instance twice (two files of it) holds it once.
            var perSeries: [String: Set<String>] = [:]
            for match in result.matches {
                perSeries[match.string(.seriesInstanceUID) ?? "", default: []].insert(
                    match.string(.sopInstanceUID) ?? "")
            }
            if seriesKnown {
                for i in entry.series.indices where missing(entry.series[i], seriesInstanceCount) {
                    let count = perSeries[entry.series[i].string(.seriesInstanceUID) ?? ""]?.count ?? 0
                    entry.series[i].set(seriesInstanceCount, vr: .IS, string: String(count))
                }
            } else {
                if missing(entry.study, studySeriesCount) {
                    entry.study.set(studySeriesCount, vr: .IS, string: String(perSeries.count))
                }
                if missing(entry.study, studyInstanceCount) {
                    let instances = perSeries.values.reduce(0) { $0 + $1.count }
                    entry.study.set(studyInstanceCount, vr: .IS, string: String(instances))
                }
            }
            out.append(entry)
        }
        return out
    }
}

extension String {
    /// Without leading and trailing spaces (DICOM pads text values with them).
    fileprivate var trimmingSpaces: String {
        let body = drop { $0 == " " }
        return String(body.reversed().drop { $0 == " " }.reversed())
    }
}
