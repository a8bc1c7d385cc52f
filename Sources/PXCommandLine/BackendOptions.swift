import ArgumentParser
import PX
import PXCore

/// `--backend dcmtk|native|auto`.
public struct BackendOptions: ParsableArguments {
    @Option(
        name: .customLong("backend"),
        help: """
            dcmtk, native or auto (auto: dcmtk when its tools are on PATH, otherwise native; C-GET and px-sync \
            always native, since getscu offers only uncompressed syntaxes and compressed studies would be \
            transcoded).
            """)
    public var backend: BackendChoice = .auto

    public init() {}

    /// The name the envelope reports before a backend exists (for usage errors).
    public var reportedName: String { backend == .native ? "native" : "dcmtk" }

    /// The backend to use for `operation` (``PX/backend(_:executables:for:userIdentity:)``).
    /// - Throws: ``PXError/toolMissing(_:)`` for `dcmtk` without the operation's tool.
    public func make(
        executables: [String: String], for operation: BackendOperation = .echo, userIdentity: Bool = false
    ) throws(PXError) -> any DICOMBackend {
        try PX.backend(backend, executables: executables, for: operation, userIdentity: userIdentity)
    }
}

extension BackendChoice: ExpressibleByArgument {}
