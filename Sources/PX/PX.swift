import DCMTKBackend
@_exported import DICOMData
@_exported import DICOMNetwork
@_exported import DICOMWeb
@_exported import Logging
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

/// What a backend is chosen for: the DIMSE operation a command runs, which names the DCMTK tool that runs it and
/// decides what `auto` picks.
public enum BackendOperation: String, Hashable, Sendable, CaseIterable {
    /// C-ECHO (PS3.7 §9.1.5).
    case echo
    /// C-FIND (PS3.4 §C.4.1).
    case find
    /// Many C-FINDs in a row, a cohort (px-find `--queries`).
    case findCohort
    /// C-MOVE (PS3.4 §C.4.2).
    case move
    /// C-GET (PS3.4 §C.4.3).
    case get
    /// C-STORE as an SCU (PS3.4 Annex B).
    case push
    /// C-STORE as an SCP (PS3.4 Annex B).
    case listen

    /// The DCMTK tool that runs it.
    public var dcmtkTool: String {
        switch self {
        case .echo: return "echoscu"
        case .find, .findCohort: return "findscu"
        case .move: return "movescu"
        case .get: return "getscu"
        case .push: return "storescu"
        case .listen: return "storescp"
        }
    }

    /// Whether its DCMTK tool can present a user identity (PS3.7 §D.3.3.7): in DCMTK 3.6.7 only storescu.
    public var dcmtkPresentsUserIdentity: Bool { DCMTKBackend.toolsWithUserIdentity.contains(dcmtkTool) }

    /// Whether `auto` runs it with DCMTK when the tool is installed. Not C-GET: getscu 3.6.7 proposes only
    /// uncompressed transfer syntaxes, so a compressed study would arrive transcoded by the peer (or be
    /// refused), where the native C-GET keeps every file as stored. Not a cohort: findscu makes an
    /// association (and a process) per row, where the native backend asks every row on one association.
    public var autoPrefersDCMTK: Bool {
        switch self {
        case .echo, .find, .move, .push, .listen: return true
        case .get, .findCohort: return false
        }
    }
}

/// Entry points of the `PX` library: places made from the text the commands take (`place(_:config:backend:logger:)`,
/// `destination(_:config:backend:logger:)`), the operations on them (``PXPlaces/Endpoint/echo()``,
/// ``PXPlaces/Endpoint/find(_:_:returning:)``, ``PXPlaces/Endpoint/retrieve(study:into:logger:)``,
/// ``PXPlaces/Endpoint/store(_:)``), `sync(from:to:where:options:logger:)`, `listen(port:aeTitle:into:logger:configure:)`,
/// and `json(_:pretty:)`, which renders any result as its command prints it.
///
/// ```swift
/// import PX
/// let pacs = try await PX.place("ORTHANC@127.0.0.1:4242")
/// print(PX.json(try await pacs.echo()))
/// ```
public enum PX {
    /// The backend for a choice.
    ///
    /// - Parameters:
    ///   - choice: `dcmtk`, `native` or `auto`.
    ///   - executables: explicit DCMTK tool paths by tool name (pypx's `--executable`); `auto` leaves out a path
    ///     that is not an executable file.
    ///   - operation: what the backend is for (no default: `auto` differs by operation): its DCMTK tool
    ///     (``BackendOperation/dcmtkTool``) must be there for
    ///     `dcmtk`; `auto` picks DCMTK only when that tool is there and the operation prefers it
    ///     (``BackendOperation/autoPrefersDCMTK``: never C-GET).
    ///   - userIdentity: whether the association presents a user identity: `auto` then picks DCMTK only when its
    ///     tool can present one (``BackendOperation/dcmtkPresentsUserIdentity``); `dcmtk` fails when it runs.
    /// - Throws: `PXError.toolMissing(_:)` when `dcmtk` is chosen and the tool is missing (its explicit path,
    ///   when one is given, is not an executable file).
    public static func backend(
        _ choice: BackendChoice, executables: [String: String] = [:], for operation: BackendOperation,
        userIdentity: Bool = false
    ) throws(PXError) -> any DICOMBackend {
        let tool = operation.dcmtkTool
        switch choice {
        case .native:
            return NativeBackend()
        case .dcmtk:
            if let path = executables[tool] {
                guard DCMTKBackend.isExecutable(path) else { throw .toolMissing(path) }
            } else if !DCMTKBackend.isInstalled(tool) {
                throw .toolMissing(tool)
            }
            return DCMTKBackend(executables: executables)
        case .auto:
            // An explicit path that cannot run (pypx's `--executable` from another machine) is left out: the tool
            // on PATH, else the native backend, runs the operation instead of a usage failure.
            let runnable = executables.filter { DCMTKBackend.isExecutable($0.value) }
            if operation.autoPrefersDCMTK && (!userIdentity || operation.dcmtkPresentsUserIdentity)
                && (runnable[tool] != nil || DCMTKBackend.isInstalled(tool))
            {
                return DCMTKBackend(executables: runnable)
            }
            return NativeBackend()
        }
    }
}
