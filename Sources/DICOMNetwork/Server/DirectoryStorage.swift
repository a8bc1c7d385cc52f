import DICOMData
import DICOMProtocol

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A ``StorageDelegate`` that renames each received file to `DIRECTORY/<SOP Instance UID>.dcm`
/// (replacing an earlier copy, as DCMTK's storescp does by default with `-uf`). A SOP Instance UID that
/// is not digits and dots (PS3.5 §9.1) is refused rather than cleaned up, so two instances never share
/// a name. px's own receivers place files with PXStorage's InstancePlacer instead.
public struct DirectoryStorage: StorageDelegate {
    /// Where instances are placed.
    public var directory: String

    public init(directory: String) {
        self.directory = directory
    }

    public func didReceive(_ instance: IncomingInstance) async throws -> DIMSEStatus {
        let name = instance.sopInstanceUID
        guard !name.isEmpty,
            name.utf8.allSatisfy({ $0 == UInt8(ascii: ".") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else {
            throw DICOMNetworkError.invalidArgument("SOP Instance UID \(instance.sopInstanceUID) is not a UID")
        }
        let target = self.directory + "/" + name + ".dcm"
        guard rename(instance.path, target) == 0 else {
            throw DICOMNetworkError.fileError("cannot rename \(instance.path) to \(target): errno \(errno)")
        }
        return .success
    }
}
