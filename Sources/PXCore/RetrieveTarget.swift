/// What a C-MOVE or C-GET names (PS3.4 §C.4.2, §C.4.3): one study, optionally one series, optionally
/// instances of it; or, in the Patient Root model, a whole patient (an empty StudyInstanceUID: PATIENT level,
/// PS3.4 §C.6.1.2). ``MoveRequest`` and ``GetRequest`` share its checks, level and identifier keys.
///
/// StudyInstanceUID is always sent with SeriesInstanceUID, and both with SOPInstanceUIDs, because
/// some archives require the higher-level keys even in study root.
enum RetrieveTarget {
    /// - Throws: ``PXError/usage(_:)`` for a missing StudyInstanceUID (other than a patient-root PATIENT-level
    ///   retrieve), instance UIDs without a series, or a patient-root model without a PatientID. `verb` names
    ///   the operation in the message ("move", "get").
    static func validate(
        verb: String, model: QueryModel, patientID: String?, studyInstanceUID: String, seriesInstanceUID: String?,
        sopInstanceUIDs: [String]
    ) throws(PXError) {
        guard model.canRetrieve else {
            throw .usage("the worklist model has no C-MOVE or C-GET (PS3.4 Annex K): use --model study or patient")
        }
        if model == .patientRoot && (patientID ?? "").isEmpty {
            throw .usage("the patient-root model needs a PatientID")
        }
        if studyInstanceUID.isEmpty {
            guard model == .patientRoot else {
                throw .usage("a \(verb) needs a StudyInstanceUID (or --model patient and a PatientID)")
            }
            guard seriesInstanceUID == nil && sopInstanceUIDs.isEmpty else {
                throw .usage("a \(verb) of a series or instances needs their StudyInstanceUID")
            }
        }
        if !sopInstanceUIDs.isEmpty && (seriesInstanceUID ?? "").isEmpty {
            throw .usage("\(verb == "move" ? "moving" : "getting") instances needs their SeriesInstanceUID")
        }
    }

    /// The level implied by the deepest UID given: PATIENT when there is no StudyInstanceUID.
    static func level(studyInstanceUID: String, seriesInstanceUID: String?, sopInstanceUIDs: [String]) -> QueryLevel {
        if !sopInstanceUIDs.isEmpty { return .image }
        if seriesInstanceUID != nil { return .series }
        return studyInstanceUID.isEmpty ? .patient : .study
    }

    /// The identifier keys in order, as (keyword, value) pairs, QueryRetrieveLevel first.
    static func keys(
        model: QueryModel, patientID: String?, studyInstanceUID: String, seriesInstanceUID: String?,
        sopInstanceUIDs: [String]
    ) -> [(keyword: String, value: String)] {
        let level = level(
            studyInstanceUID: studyInstanceUID, seriesInstanceUID: seriesInstanceUID, sopInstanceUIDs: sopInstanceUIDs)
        var keys: [(String, String)] = [("QueryRetrieveLevel", level.dicomValue)]
        if model == .patientRoot, let patientID { keys.append(("PatientID", patientID)) }
        if level == .patient { return keys }
        keys.append(("StudyInstanceUID", studyInstanceUID))
        if let seriesInstanceUID { keys.append(("SeriesInstanceUID", seriesInstanceUID)) }
        if !sopInstanceUIDs.isEmpty { keys.append(("SOPInstanceUID", sopInstanceUIDs.joined(separator: "\\"))) }
        return keys
    }
}

/// What a C-MOVE or C-GET request names (``MoveRequest``, ``GetRequest``): its level and identifier keys follow
/// from it (``RetrieveTarget``).
public protocol RetrieveIdentifier {
    var model: QueryModel { get }
    var patientID: String? { get }
    var studyInstanceUID: String { get }
    var seriesInstanceUID: String? { get }
    var sopInstanceUIDs: [String] { get }
}

extension RetrieveIdentifier {
    /// The level implied by the deepest UID given (PATIENT for a whole patient, patient root only).
    public var level: QueryLevel {
        RetrieveTarget.level(
            studyInstanceUID: studyInstanceUID, seriesInstanceUID: seriesInstanceUID, sopInstanceUIDs: sopInstanceUIDs)
    }

    /// The identifier keys in order, as (keyword, value) pairs, QueryRetrieveLevel first.
    public var keys: [(keyword: String, value: String)] {
        RetrieveTarget.keys(
            model: model, patientID: patientID, studyInstanceUID: studyInstanceUID,
            seriesInstanceUID: seriesInstanceUID, sopInstanceUIDs: sopInstanceUIDs)
    }
}
