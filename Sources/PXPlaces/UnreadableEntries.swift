import PXCore
import PXStorage

/// A source that can hold what it cannot read: another tool's zip archive whose entries look like DICOM but do
/// not parse (``PXStorage/ZipPlace/BadEntry``). px-sync asks it for every study it plans, so a study whose
/// readable instances are all in the destination still fails while such entries remain: a second run says
/// what the first said, never Success for data it could not move.
public protocol UnreadableEntriesReporting: Sendable {
    /// The failure naming the study's unreadable entries, `nil` when it has none.
    /// - Throws: ``PXError`` when the source cannot be listed.
    func unreadableEntries(ofStudy studyInstanceUID: String) async throws(PXError) -> PXError?
}

extension ZipPlace: UnreadableEntriesReporting {
    public func unreadableEntries(ofStudy studyInstanceUID: String) async throws(PXError) -> PXError? {
        let parts: [Study]
        do { parts = try archives(of: studyInstanceUID) } catch { throw .zip(error) }
        let damaged = parts.filter { !$0.badEntries.isEmpty }
        guard !damaged.isEmpty else { return nil }
        let described = damaged.map { "\($0.path): " + BadEntry.describe($0.badEntries) }
        return .zip(.malformed(described.joined(separator: "; "), path: damaged.count == 1 ? damaged[0].path : root))
    }
}
