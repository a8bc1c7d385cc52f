import DICOMData
import DICOMNetwork
import Logging
import PXCore
import PXIndex
import PXStorage

/// One piece of a study to transfer: the whole study, one series, or instances of one series.
public struct TransferUnit: Hashable, Sendable {
    public var studyInstanceUID: String
    public var seriesInstanceUID: String?
    public var sopInstanceUIDs: [String]
    /// How many instances it holds, when the source said (or the UIDs were listed).
    public var instances: Int?

    public init(
        studyInstanceUID: String, seriesInstanceUID: String? = nil, sopInstanceUIDs: [String] = [],
        instances: Int? = nil
    ) {
        self.studyInstanceUID = studyInstanceUID
        self.seriesInstanceUID = seriesInstanceUID
        self.sopInstanceUIDs = sopInstanceUIDs
        self.instances = instances
    }

    /// The Query/Retrieve level the unit is retrieved at (PS3.4 §C.4.2.1.4).
    public var level: QueryLevel {
        !sopInstanceUIDs.isEmpty ? .image : seriesInstanceUID != nil ? .series : .study
    }
}

/// What one study needs: nothing (the destination holds it), or the units to transfer.
public struct StudyPlan: Sendable {
    public var study: StudyHolding
    /// Index of the source in the command's list.
    public var source: Int
    public var units: [TransferUnit]

    /// Instances the units hold, `nil` when a unit's count is unknown.
    public var instances: Int? {
        units.reduce(Int?(0)) { total, unit in total.flatMap { t in unit.instances.map { t + $0 } } }
    }
}

/// Compares a study in a source with the destination by identity: the study is present only when the
/// destination holds every SOP Instance UID the source lists for it (PS3.4 §C.6.2.1.2 image-level keys).
///
/// Counts only prune work where they prove absence: a study the destination does not list at all is planned
/// whole without listing its instances. An equal (or larger) count proves nothing, since the destination may
/// hold other instances, or one instance twice, so the UIDs of both sides decide: one listing of the study on
/// each side (``PXCore/PlaceInventory/instancesBySeries(ofStudy:)``: an index query for a folder or zip place,
/// an IMAGE-level C-FIND for a node or px-serve, a QIDO-RS search for a DICOMweb service).
public enum SyncPlanner {
    public static func plan(
        _ study: StudyHolding, source index: Int, from source: any PlaceInventory,
        to destination: any PlaceInventory, force: Bool
    ) async throws(PXError) -> StudyPlan {
        let uid = study.studyInstanceUID
        var plan = StudyPlan(study: study, source: index, units: [])
        let whole = TransferUnit(
            studyInstanceUID: uid, seriesInstanceUID: nil, sopInstanceUIDs: [], instances: study.instanceCount)
        if force {
            plan.units = [whole]
            return plan
        }
        var keys = DataSet()
        keys.set(.studyInstanceUID, vr: .UI, string: uid)
        guard try await destination.studies(matching: keys).contains(where: { $0.studyInstanceUID == uid }) else {
            plan.units = [whole]
            return plan
        }
        let wanted = try await source.instancesBySeries(ofStudy: uid)
        guard !wanted.isEmpty else {
            // The source names no instance of a study it listed: nothing to compare, so nothing is taken as
            // present; the retrieval of the whole study says what there is.
            plan.units = [whole]
            return plan
        }
        let present = try await destination.instancesBySeries(ofStudy: uid)
        for (seriesUID, uids) in wanted.sorted(by: { $0.key < $1.key }) {
            let missing = uids.subtracting(present[seriesUID] ?? [])
            guard !missing.isEmpty else { continue }
            // A series missing whole is asked for as a series, the rest by their UIDs.
            let whole = missing.count == uids.count && !seriesUID.isEmpty
            plan.units.append(
                TransferUnit(
                    studyInstanceUID: uid, seriesInstanceUID: seriesUID.isEmpty ? nil : seriesUID,
                    sopInstanceUIDs: whole ? [] : missing.sorted(), instances: missing.count))
        }
        return plan
    }
}

extension FolderPlace {
    /// The files of a transfer unit, from the index, each with what the index recorded of it
    /// (``DICOMNetwork/StorableFile/indexed``): sent only if it is still that file.
    func storableFiles(of unit: TransferUnit) async throws(PXError) -> [StorableFile] {
        try await files(
            study: unit.studyInstanceUID, series: unit.seriesInstanceUID, instances: unit.sopInstanceUIDs)
    }

    /// Records instances px has just placed here (paths below ``root``) in one transaction, each with the
    /// header parsed when it was received (``DeliveredFile/header``), else read now; a file that cannot be
    /// read is left to the next ``refresh()``.
    func recordPlaced(_ placed: [DeliveredFile], logger: Logger) async throws(PXError) {
        var files: [PlacedFile] = []
        files.reserveCapacity(placed.count)
        for file in placed {
            if let header = file.header {
                files.append(PlacedFile(path: file.path, header: header))
                continue
            }
            do {
                files.append(PlacedFile(path: file.path, header: try Part10File.readHeader(contentsOf: file.path)))
            } catch {
                logger.warning("placed file not indexed", metadata: ["file": "\(file.path)", "error": "\(error)"])
            }
        }
        if !files.isEmpty { try await record(files) }
    }
}
