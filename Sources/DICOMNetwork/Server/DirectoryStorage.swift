import DICOMData
import DICOMProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A ``StorageDelegate`` that renames each received file to `DIRECTORY/<SOP Instance UID>.dcm`
/// (replacing an earlier copy, as DCMTK's storescp does by default with `-uf`).
public struct DirectoryStorage: StorageDelegate {
    /// Where instances are placed.
    public var directory: String

    public init(directory: String) {
        self.directory = directory
    }

    public func didReceive(_ instance: ReceivedInstance) async throws -> DIMSEStatus {
        let name = instance.sopInstanceUID.filter { $0.isNumber || $0 == "." }
        guard !name.isEmpty else {
            throw DICOMNetworkError.invalidArgument("SOP Instance UID \(instance.sopInstanceUID) is not a UID")
        }
        let target = self.directory + "/" + name + ".dcm"
        guard rename(instance.path, target) == 0 else {
            throw DICOMNetworkError.fileError("cannot rename \(instance.path) to \(target): errno \(errno)")
        }
        return .success
    }
}
