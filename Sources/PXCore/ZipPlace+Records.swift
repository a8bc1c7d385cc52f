import DICOMData
import PXStorage

extension ZipPlace {
    /// One record per instance from what the archives say without reading a DICOM header: its study's and
    /// series' manifest keys plus its SOP Instance UID (from the entry's name), in archive, series and UID
    /// order, with the counts a folder's records carry (``DICOMData/EntityMatching/Counts``). What px-ls matches
    /// with ``DICOMData/EntityMatching``. Another tool's archives are read from their entries' headers; those
    /// that cannot be read are returned apart, each with its error, so that one broken archive fails alone.
    public func instanceRecords() throws(PXError) -> (records: [DataSet], failures: [ZipPlace.Failure]) {
        let listing: ZipPlace.Listing
        do { listing = try self.listing() } catch { throw .zip(error) }
        let studies = listing.studies
        var records: [DataSet] = []
        for study in studies {
            for series in study.series {
                var seriesRecord = study.record
                for element in series.record.elements { seriesRecord.set(element) }
                seriesRecord.set(.studyInstanceUID, vr: .UI, string: study.studyInstanceUID)
                seriesRecord.set(.seriesInstanceUID, vr: .UI, string: series.seriesInstanceUID)
                for uid in series.sopInstanceUIDs.sorted() {
                    var record = seriesRecord
                    record.set(.sopInstanceUID, vr: .UI, string: uid)
                    records.append(record)
                }
            }
        }
        return (EntityMatching.addingComputedAttributes(records), listing.failures)
    }
}
