import DICOMData
import PXStorage

extension PXError {
    /// A zip place's error: `io` for a file-system failure, a missing entry or a placement that failed,
    /// `malformedFile` (naming the archive and the zip code) for an archive the reader refuses.
    public static func zip(_ error: ZipError) -> PXError {
        if let storage = error.storage { return .storage(storage) }
        switch error.code {
        case .io, .missingEntry: return .io(error.message, path: error.path)
        default: return .malformedFile(path: error.path ?? "zip archive", reason: "zip \(error.code): \(error.message)")
        }
    }
}

/// A zip place answers px-sync's questions from its archives: keys from each archive's manifest, counts and
/// instance UIDs from its central directory (no DICOM header is read); another tool's archive from its
/// entries' headers. An archive that cannot be read is a study of its own, keyed by its path in the place
/// (``ZipPlace/Failure/key``), whose every question throws the archive's error: it fails alone.
extension ZipPlace: PlaceInventory {
    public func studies(matching keys: DataSet) async throws(PXError) -> [StudyHolding] {
        let listing: ZipPlace.Listing
        do { listing = try self.listing() } catch { throw .zip(error) }
        // A study whose instances lie in several archives is one study with all of them.
        var parts: [String: [ZipPlace.Study]] = [:]
        var order: [String] = []
        for study in listing.studies {
            if parts[study.studyInstanceUID] == nil { order.append(study.studyInstanceUID) }
            parts[study.studyInstanceUID, default: []].append(study)
        }
        var holdings: [StudyHolding] = []
        for study in order.compactMap({ parts[$0] }).map(ZipPlace.merged) {
            var record = study.record
            // What a C-FIND SCP would answer for them (PS3.4 §C.6.2.1.2), so keys can match them too.
            record.set(InventoryKeys.numberOfStudyRelatedSeries, vr: .IS, string: String(study.series.count))
            record.set(InventoryKeys.numberOfStudyRelatedInstances, vr: .IS, string: String(study.instanceCount))
            let modalities = Set(study.series.compactMap { $0.record.string(.modality)?.trimmingSpaces }).sorted()
            if !modalities.isEmpty { record.set(Tag(0x0008, 0x0061), vr: .CS, strings: modalities) }
            guard AttributeMatching.matches(keys, record) else { continue }
            holdings.append(
                StudyHolding(
                    studyInstanceUID: study.studyInstanceUID, patientID: record.string(.patientID),
                    patientName: record.string(.patientName), studyDate: record.string(.studyDate),
                    studyDescription: record.string(.studyDescription),
                    accessionNumber: record.string(InventoryKeys.accessionNumber), seriesCount: study.series.count,
                    instanceCount: study.instanceCount))
        }
        for failure in listing.failures {
            var record = DataSet()
            record.set(.studyInstanceUID, vr: .UI, string: failure.key)
            if AttributeMatching.matches(keys, record) { holdings.append(StudyHolding(studyInstanceUID: failure.key)) }
        }
        return holdings
    }

    public func series(ofStudy studyInstanceUID: String) async throws(PXError) -> [SeriesHolding] {
        let found: ZipPlace.Study?
        do { found = try self.study(studyInstanceUID) } catch { throw .zip(error) }
        guard let study = found else { return [] }
        return study.series.map { series in
            SeriesHolding(
                studyInstanceUID: studyInstanceUID, seriesInstanceUID: series.seriesInstanceUID,
                modality: series.record.string(.modality),
                seriesNumber: series.record.string(InventoryKeys.seriesNumber),
                seriesDescription: series.record.string(.seriesDescription),
                instanceCount: series.sopInstanceUIDs.count)
        }
    }

    /// From the study's archives as listed (every archive that holds some of it).
    public func instancesBySeries(ofStudy studyInstanceUID: String) async throws(PXError) -> [String: Set<String>] {
        let found: ZipPlace.Study?
        do { found = try self.study(studyInstanceUID) } catch { throw .zip(error) }
        var out: [String: Set<String>] = [:]
        for series in found?.series ?? [] {
            out[series.seriesInstanceUID, default: []].formUnion(series.sopInstanceUIDs)
        }
        return out
    }

    public func instances(ofStudy studyInstanceUID: String, series seriesInstanceUID: String) async throws(PXError)
        -> Set<String>
    {
        let found: ZipPlace.Study?
        do { found = try self.study(studyInstanceUID) } catch { throw .zip(error) }
        return found?.series.first { $0.seriesInstanceUID == seriesInstanceUID }?.sopInstanceUIDs ?? []
    }
}

extension PXError {
    /// The archives of a zip place that could not be listed (``ZipPlace/Listing/failures``), `nil` for none:
    /// one archive's own error, or one error that names each archive and why.
    public static func zipArchives(_ failures: [ZipPlace.Failure]) -> PXError? {
        guard failures.count > 1 else { return failures.first.map { .zip($0.error) } }
        return .malformedFile(
            path: failures.map(\.key).joined(separator: ", "),
            reason: "\(failures.count) archives cannot be read: "
                + failures.map { "\($0.key): zip \($0.error.code): \($0.error.message)" }.joined(separator: "; "))
    }
}
