import Logging
import PXCore
import PXPlaces
import Synchronization

extension PX {
    /// The config file (`$PX_CONFIG`, `~/.config/px/config.toml`, else dcm's), read once per process the first
    /// time a place is made without one (`PXConfig.load()`); a failure to read it is thrown each time.
    /// - Throws: `PXError.usage(_:)` for a config file px cannot read.
    public static func config() throws(PXError) -> PXConfig {
        try loadedConfig.withLock { (loaded: inout Result<PXConfig, PXError>?) throws(PXError) -> PXConfig in
            if loaded == nil {
                do throws(PXError) { loaded = .success(try PXConfig.load()) } catch { loaded = .failure(error) }
            }
            guard let loaded else { preconditionFailure("PX.config: not loaded") }
            return try loaded.get()
        }
    }

    private static let loadedConfig = Mutex<Result<PXConfig, PXError>?>(nil)

    /// A place to read studies from, named as the commands name one:
    ///
    /// - a DIMSE node: `AE@host:port`, `host:AE:port`, `host:port` (an IPv6 address in brackets), or a
    ///   `[nodes.NAME]` of the config file;
    /// - a DICOMweb service: `https://host/dicom-web`, or a `[nodes.NAME]` with `url`;
    /// - a folder of DICOM files: a path with a `/` (`/data/in`, `./in`), `folder:PATH`, or a `[places.NAME]`;
    /// - a zip folder, one archive per study: `zip:PATH`.
    ///
    /// Nothing is made or written in it (a folder's index is its own when it has one, else px's cache).
    ///
    /// ```swift
    /// let pacs = try await PX.place("ORTHANC@127.0.0.1:4242")
    /// ```
    ///
    /// - Parameters:
    ///   - text: the place, as above.
    ///   - config: names resolved in it and the calling AE title taken from it (`[local] ae_title`, else
    ///     `PXSCU`); `nil`: the config file, read once (`config()`).
    ///   - backend: the DIMSE backend for a node: `auto` (px's own, native, as the commands' C-GET and
    ///     px-sync: files arrive as stored, never transcoded), `native`, or `dcmtk` (its tools on PATH).
    ///   - logger: where the place's operations log; the default writes warnings to stderr (`logger`).
    /// - Throws: `PXError.usage(_:)` for a malformed place or an unknown name.
    public static func place(
        _ text: String, config: PXConfig? = nil, backend: BackendChoice = .auto, logger: Logger = PX.logger
    ) async throws(PXError) -> Endpoint {
        try await context(config: config, backend: backend, logger: logger).resolve(text, asDestination: false)
    }

    /// A place to write studies into, named as `place(_:config:backend:logger:)` names one; a folder or a zip
    /// folder is made when it is missing, and a folder keeps its index in it.
    ///
    /// ```swift
    /// let zips = try await PX.destination("zip:/data/zips")
    /// ```
    /// - Throws: `PXError`: a malformed place, an unknown name, a folder that cannot be made.
    public static func destination(
        _ text: String, config: PXConfig? = nil, backend: BackendChoice = .auto, logger: Logger = PX.logger
    ) async throws(PXError) -> Endpoint {
        try await context(config: config, backend: backend, logger: logger).resolve(text, asDestination: true)
    }

    /// What resolves places: the config, the calling AE title, the standard timeouts, the backend for nodes
    /// (the one ``BackendOperation/get`` gets: `auto` is native).
    static func context(config given: PXConfig?, backend: BackendChoice, logger: Logger) throws(PXError)
        -> PlaceContext
    {
        let config: PXConfig
        if let given { config = given } else { config = try Self.config() }
        return PlaceContext(
            config: config, calling: try LocalAE(aeTitle: config.localAETitle ?? LocalAE.defaultTitle),
            timeouts: .standard, backend: try PX.backend(backend, for: .get), logger: logger)
    }
}
