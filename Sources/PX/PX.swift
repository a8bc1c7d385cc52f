import DCMTKBackend
@_exported import DICOMData
@_exported import DICOMWeb
import NativeBackend
@_exported import PXCore
@_exported import PXIndex
@_exported import PXPlaces
@_exported import PXStorage

/// Which backend runs an operation.
public enum BackendChoice: String, Hashable, Sendable, CaseIterable {
    /// The installed DCMTK tools (echoscu, findscu, movescu, getscu, storescu, storescp), driven as child processes.
    case dcmtk
    /// px's own DICOM upper layer and DIMSE on SwiftNIO.
    case native
    /// DCMTK when its tools are on PATH, otherwise native.
    case auto
}

/// Entry points of the `PX` library.
///
/// ```swift
/// import PX
/// let backend = try PX.backend(.auto)
/// let connection = Connection(node: try DICOMNode(host: "127.0.0.1", port: 4242, calledAETitle: "ORTHANC"),
///                             local: try LocalAE(aeTitle: "PXSCU"))
/// let result = try await backend.echo(connection: connection, logger: logger)
/// ```
public enum PX {
    /// The backend for a choice.
    ///
    /// - Parameters:
    ///   - choice: `dcmtk`, `native` or `auto`.
    ///   - executables: explicit DCMTK tool paths by tool name (pypx's `--executable`).
    ///   - tool: the DCMTK tool the operation needs (`storescu` for ``DICOMBackend/push(_:connection:logger:onFile:)``,
    ///     `getscu` for ``DICOMBackend/get(_:connection:logger:onProgress:)``); `auto` picks DCMTK only when it is on PATH,
    ///     and never for `getscu`: getscu 3.6.7 proposes only uncompressed transfer syntaxes, so a compressed study
    ///     would arrive transcoded by the peer (or be refused), where the native C-GET keeps every file as stored.
    /// - Throws: ``PXError/toolMissing(_:)`` when `dcmtk` is chosen and the tool is missing.
    public static func backend(
        _ choice: BackendChoice, executables: [String: String] = [:], tool: String = "echoscu"
    ) throws(PXError) -> any DICOMBackend {
        switch choice {
        case .native:
            return NativeBackend()
        case .dcmtk:
            if executables[tool] == nil && !DCMTKBackend.isInstalled(tool) { throw .toolMissing(tool) }
            return DCMTKBackend(executables: executables)
        case .auto:
            if tool != "getscu" && (executables[tool] != nil || DCMTKBackend.isInstalled(tool)) {
                return DCMTKBackend(executables: executables)
            }
            return NativeBackend()
        }
    }
}
