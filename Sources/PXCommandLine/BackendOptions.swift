import ArgumentParser
import DCMTKBackend
import PXCore

/// `--backend dcmtk|native|auto`.
public struct BackendOptions: ParsableArguments {
    public enum Choice: String, ExpressibleByArgument, CaseIterable, Sendable {
        case dcmtk, native, auto
    }

    @Option(name: .customLong("backend"), help: "dcmtk, native or auto (auto: dcmtk when its tools are on PATH).")
    public var backend: Choice = .auto

    public init() {}

    /// The name the envelope reports before a backend exists (for usage errors).
    public var reportedName: String { backend == .native ? "native" : "dcmtk" }

    /// The backend to use.
    /// - Throws: ``PXError/backendUnavailable(_:reason:)`` for `native`, which this build lacks.
    public func make(executables: [String: String]) throws(PXError) -> any DICOMBackend {
        switch backend {
        case .dcmtk, .auto:
            return DCMTKBackend(executables: executables)
        case .native:
            throw .backendUnavailable("native", reason: "not built yet; use --backend dcmtk")
        }
    }
}
