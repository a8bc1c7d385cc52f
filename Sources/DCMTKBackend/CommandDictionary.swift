import DICOMData
import PXCore

#if canImport(Glibc)
    import Glibc
#endif

/// A data dictionary holding only the DIMSE command elements (PS3.7 §E.1), for DCMTK tools that
/// never look at a data set's attributes.
///
/// Debian's DCMTK parses `dicom.dic` and `private.dic` (about 7,000 lines) at every start-up, which is
/// more than half of a bare `echoscu`'s wall time on loopback. C-ECHO needs nothing but the command
/// group, so ``DCMTKBackend/echo(connection:logger:)`` points `DCMDICTPATH` at this dictionary instead.
/// Tools that send or receive identifiers (findscu, movescu, getscu, storescu, storescp) keep the full
/// dictionary: they need every attribute's VR.
enum CommandDictionary {
    /// `dicom.dic` lines: tag, VR, keyword, VM, version. The non-retired elements of group 0000.
    static let text = """
        (0000,0000)\tUL\tCommandGroupLength\t1\tDICOM
        (0000,0002)\tUI\tAffectedSOPClassUID\t1\tDICOM
        (0000,0003)\tUI\tRequestedSOPClassUID\t1\tDICOM
        (0000,0100)\tUS\tCommandField\t1\tDICOM
        (0000,0110)\tUS\tMessageID\t1\tDICOM
        (0000,0120)\tUS\tMessageIDBeingRespondedTo\t1\tDICOM
        (0000,0600)\tAE\tMoveDestination\t1\tDICOM
        (0000,0700)\tUS\tPriority\t1\tDICOM
        (0000,0800)\tUS\tCommandDataSetType\t1\tDICOM
        (0000,0900)\tUS\tStatus\t1\tDICOM
        (0000,0901)\tAT\tOffendingElement\t1-n\tDICOM
        (0000,0902)\tLO\tErrorComment\t1\tDICOM
        (0000,0903)\tUS\tErrorID\t1\tDICOM
        (0000,1000)\tUI\tAffectedSOPInstanceUID\t1\tDICOM
        (0000,1001)\tUI\tRequestedSOPInstanceUID\t1\tDICOM
        (0000,1002)\tUS\tEventTypeID\t1\tDICOM
        (0000,1005)\tAT\tAttributeIdentifierList\t1-n\tDICOM
        (0000,1008)\tUS\tActionTypeID\t1\tDICOM
        (0000,1020)\tUS\tNumberOfRemainingSuboperations\t1\tDICOM
        (0000,1021)\tUS\tNumberOfCompletedSuboperations\t1\tDICOM
        (0000,1022)\tUS\tNumberOfFailedSuboperations\t1\tDICOM
        (0000,1023)\tUS\tNumberOfWarningSuboperations\t1\tDICOM
        (0000,1030)\tAE\tMoveOriginatorApplicationEntityTitle\t1\tDICOM
        (0000,1031)\tUS\tMoveOriginatorMessageID\t1\tDICOM

        """

    /// Writes the dictionary to a fresh file of its own (mkstemp, mode 0600) in `$TMPDIR` or `/tmp`, runs
    /// `body` with its path, and removes it.
    /// - Throws: ``PXError`` (code `io`) when the file cannot be written; rethrows `body`'s errors.
    static func withFile<T>(_ body: (String) async throws(PXError) -> T) async throws(PXError) -> T {
        let directory = ProcessEnvironment.value("TMPDIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let fd: Int32
        let path: String
        do {
            (fd, path) = try POSIX.makeTemporaryFile(prefix: directory + "/px-command-", suffix: ".dic")
        } catch {
            throw PXError.io("cannot create a temporary dictionary (errno \(error.code))", path: directory)
        }
        defer { unlink(path) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let writeErrno = errno
        close(fd)
        guard written == bytes.count else {
            throw PXError.io("cannot write a temporary dictionary (errno \(writeErrno))", path: path)
        }
        return try await body(path)
    }
}
