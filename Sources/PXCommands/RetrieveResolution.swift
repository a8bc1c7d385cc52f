import DICOMData
import Logging
import PXCommandLine
import PXCore

/// What px-move and px-get were given, made into retrieves the peer serves (issue 23). The searches are the
/// peer's own (``Querying``: C-FIND, or QIDO-RS for a DICOMweb service, and errors name which):
/// - a series or instances without their study (pypx 0.8's `px-move --seriesUID S`) get it from one C-FIND at
///   SERIES (IMAGE) level, in the Study Root model (PS3.4 §C.6.2: no higher key is needed there);
/// - a whole patient (`--PatientID` alone) is one PATIENT-level retrieve in the Patient Root model
///   (PS3.4 §C.6.1.2, the Patient Root Q/R MOVE and GET SOP classes); in Study Root, which has no PATIENT level,
///   or when the peer refuses the patient-level retrieve, it becomes its studies, found with one STUDY-level
///   C-FIND, retrieved one after another.
enum RetrieveResolution {
    /// `selections` with each study found; whole patients stay whole when `expandPatients` is false.
    /// - Throws: ``PXError`` from the C-FINDs; ``PXError/usage(_:)`` when the peer holds nothing a selection names.
    static func resolve(
        _ selections: [RetrieveSelection], expandPatients: Bool, model: QueryModel, peer: any Querying,
        logger: Logger
    ) async throws(PXError) -> [RetrieveSelection] {
        var out: [RetrieveSelection] = []
        for selection in selections {
            if selection.isPatient {
                if expandPatients {
                    out += try await studies(
                        ofPatient: selection.patientID ?? "", model: model, peer: peer, logger: logger)
                } else {
                    out.append(selection)
                }
            } else if selection.needsStudy {
                out += try await locate(selection, peer: peer, logger: logger)
            } else {
                out.append(selection)
            }
        }
        var seen = Set<RetrieveSelection>()
        return out.filter { seen.insert($0).inserted }
    }

    /// The studies of a patient: one STUDY-level C-FIND on PatientID (PS3.4 §C.4.1), in `model`.
    /// - Throws: ``PXError/dimseFailure(_:operation:)`` for a failure status; ``PXError/usage(_:)`` for no study.
    static func studies(
        ofPatient patientID: String, model: QueryModel, peer: any Querying, logger: Logger
    ) async throws(PXError) -> [RetrieveSelection] {
        var keys = DataSet()
        keys.set(.patientID, vr: .LO, string: patientID)
        keys.set(.studyInstanceUID, vr: .UI, string: "")
        let matches = try await find(
            level: .study, model: model, keys: keys, what: "the studies of PatientID \(patientID)", peer: peer,
            logger: logger)
        var uids: [String] = []
        for match in matches {
            if let uid = match.string(.studyInstanceUID), !uid.isEmpty, !uids.contains(uid) { uids.append(uid) }
        }
        guard !uids.isEmpty else { throw .usage("the peer holds no study of PatientID \(patientID)") }
        logger.info(
            "retrieving the patient study by study",
            metadata: ["PatientID": "\(patientID)", "studies": "\(uids.count)"])
        return uids.map { RetrieveSelection(patientID: patientID, studyInstanceUID: $0) }
    }

    /// The study (and series) of a series or of instances: one C-FIND at SERIES level on SeriesInstanceUID, or at
    /// IMAGE level on the SOPInstanceUIDs (a list, PS3.4 §C.2.2.2.2), Study Root model. Instances found in several
    /// series are one selection per series.
    static func locate(
        _ selection: RetrieveSelection, peer: any Querying, logger: Logger
    ) async throws(PXError) -> [RetrieveSelection] {
        let level: QueryLevel = selection.sopInstanceUIDs.isEmpty ? .series : .image
        var keys = DataSet()
        keys.set(.patientID, vr: .LO, string: "")
        keys.set(.studyInstanceUID, vr: .UI, string: "")
        keys.set(.seriesInstanceUID, vr: .UI, string: selection.seriesInstanceUID ?? "")
        if level == .image {
            keys.set(.sopInstanceUID, vr: .UI, string: selection.sopInstanceUIDs.joined(separator: "\\"))
        }
        let named =
            level == .series
            ? "series \(selection.seriesInstanceUID ?? "")"
            : "instances \(selection.sopInstanceUIDs.joined(separator: ", "))"
        let matches = try await find(
            level: level, model: .studyRoot, keys: keys, what: "the study of \(named)", peer: peer, logger: logger)
        var out: [RetrieveSelection] = []
        for match in matches {
            guard let study = match.string(.studyInstanceUID), !study.isEmpty,
                let series = match.string(.seriesInstanceUID) ?? selection.seriesInstanceUID, !series.isEmpty
            else { continue }
            let patientID = selection.patientID ?? match.string(.patientID).flatMap { $0.isEmpty ? nil : $0 }
            let sop = level == .image ? match.string(.sopInstanceUID) : nil
            if let index = out.firstIndex(where: { $0.studyInstanceUID == study && $0.seriesInstanceUID == series }) {
                if let sop, selection.sopInstanceUIDs.contains(sop), !out[index].sopInstanceUIDs.contains(sop) {
                    out[index].sopInstanceUIDs.append(sop)
                }
                continue
            }
            if level == .image && !(sop.map(selection.sopInstanceUIDs.contains) ?? false) { continue }
            out.append(
                RetrieveSelection(
                    patientID: patientID, studyInstanceUID: study, seriesInstanceUID: series,
                    sopInstanceUIDs: sop.map { [$0] } ?? []))
        }
        guard !out.isEmpty else {
            throw .usage("the peer holds no \(named) (\(peer.queryOperation) at \(level.dicomValue) level)")
        }
        let found = Set(out.flatMap(\.sopInstanceUIDs))
        let missing = selection.sopInstanceUIDs.filter { !found.contains($0) }
        if !missing.isEmpty {
            logger.notice("the peer holds not every instance named", metadata: ["missing": "\(missing)"])
        }
        return out
    }

    /// One search of the peer (bounded by ``FindRequest/defaultMaxResponses``) and its matches.
    static func find(
        level: QueryLevel, model: QueryModel, keys: DataSet, what: String, peer: any Querying, logger: Logger
    ) async throws(PXError) -> [DataSet] {
        let result = try await peer.find(
            FindRequest(level: level, model: model, identifier: keys, maxResponses: FindRequest.defaultMaxResponses),
            logger: logger, onResponse: { _ in })
        if result.status.isFailure {
            throw .dimseFailure(result.status, operation: "\(peer.queryOperation) (\(what))")
        }
        return result.matches
    }

    /// Whether a PATIENT-level retrieve was refused rather than failed: the peer accepted no Patient Root
    /// MOVE/GET context, or answered a failure status with nothing retrieved that says the request is not
    /// served (0xA900 identifier does not match the SOP class, 0xCxxx unable to process, PS3.4 §C.4.2.1.5).
    /// Then px retrieves the patient study by study.
    static func refusedPatientLevel(error: PXError) -> Bool {
        error.code == .noAcceptablePresentationContext
    }

    /// ``refusedPatientLevel(error:)`` for a final status.
    static func refusedPatientLevel(status: DIMSEStatus, completed: Int) -> Bool {
        guard status.isFailure, completed == 0 else { return false }
        return status.code & 0xFF00 == 0xA900 || status.code & 0xF000 == 0xC000
    }

    /// Retrieves `selection` in `model` with `retrieve`; a whole patient the peer refuses at PATIENT level is
    /// retrieved again study by study, in the Study Root model (the peer may have refused the Patient Root one),
    /// each with `retrieve`, every study whether an earlier one failed or not.
    static func retrieve<Result>(
        _ selection: RetrieveSelection, model: QueryModel, peer: any Querying, logger: Logger,
        status: (Result) -> DIMSEStatus, completed: (Result) -> Int,
        _ retrieve: (RetrieveSelection, QueryModel) async throws(PXError) -> Result
    ) async throws(PXError) -> [Result] {
        guard selection.isPatient else { return [try await retrieve(selection, model)] }
        do {
            let result = try await retrieve(selection, model)
            guard refusedPatientLevel(status: status(result), completed: completed(result)) else { return [result] }
            logger.notice(
                "the peer refused the PATIENT-level retrieve; study by study",
                metadata: ["status": "\(status(result).hexCode)"])
        } catch  where refusedPatientLevel(error: error) {
            logger.notice(
                "the peer refused the PATIENT-level retrieve; study by study", metadata: ["error": "\(error)"])
        }
        var results: [Result] = []
        for study in try await studies(
            ofPatient: selection.patientID ?? "", model: .studyRoot, peer: peer, logger: logger)
        {
            // Every study is tried: a failed one does not keep the patient's others (issue 32).
            results.append(try await retrieve(study, .studyRoot))
        }
        return results
    }
}
