import ArgumentParser
import PX
import PXCore
import PXPlaces
import PXStorage

/// px-listen's receiver: port, AE titles, the storage tree, series completion, timeouts and the hook.
public struct ListenOptions: ParsableArguments {
    @Option(
        name: [.customShort("p"), .long], help: "TCP port to listen on (0: any free port, see the listening event).")
    public var port: Int = 11113
    @Option(name: .customLong("aet"), help: "The AE title to answer to.") public var aeTitle: String = "PXLISTEN"
    @Flag(
        name: .customLong("strict-called-aet"),
        help: ArgumentHelp(
            "Refuse associations that call another AE title than --aet (native backend).",
            discussion: "By default px-listen, like storescp and pypx's listener, answers whatever AE title a "
                + "peer calls; a refusal is logged as a warning."))
    public var strictCalledAET = false
    /// Before answering any called AE title was the default: kept so that scripts giving it still run.
    @Flag(name: .customLong("any-called-aet"), help: .hidden) public var anyCalledAET = false
    @Option(
        name: .customLong("allow-calling"),
        help: "Accept only these calling AE titles (comma-separated; native backend).")
    public var allowCalling: String?
    @Option(name: [.customShort("d"), .customLong("datadir")], help: "Root of the storage tree.") public var root:
        String = "./px-data"
    @Option(
        name: .customLong("layout"),
        help:
            "Path template under the root, {Keyword} fields, e.g. {PatientID}/{StudyInstanceUID}/{SOPInstanceUID}.dcm.")
    public var layout: String?
    @Option(
        name: .customLong("on-duplicate"),
        help: "An instance received again: keep (the first), overwrite, or rename (store as -1, -2...).")
    public var onDuplicate: DuplicatePolicy = .keep
    @Flag(name: .customLong("fsync"), help: "fsync each file before renaming it into place, and its folder after.")
    public var fsync = false
    @Option(
        name: .customLong("series-timeout"), help: "A series with no new instance for this many seconds is complete.")
    public var seriesTimeout: Double?
    @Option(name: [.customShort("t"), .customLong("tmpdir")], help: .hidden) public var tmpdir: String?
    @Option(name: [.customShort("l"), .customLong("logdir")], help: .hidden) public var logdir: String?
    @Option(name: [.customShort("e"), .customLong("executable")], help: "pypx: path of storescp.") public
        var executable: String?
    @OptionGroup(title: "TLS") public var tls: ListenTLSOptions
    /// Associations, timeouts and the defences against hostile peers, shared with px-serve.
    @OptionGroup public var server: ServerOptions
    @Option(
        name: .customLong("on-series-complete"), parsing: .remaining,
        help: ArgumentHelp(
            "CMD ARGS...: run once per completed series (no shell), with PX_SERIES_DIR, PX_SERIES_UID, PX_STUDY_UID, PX_PATIENT_ID, PX_INSTANCES and PX_COMPLETION_REASON set. Must come last.",
            valueName: "command"))
    public var onSeriesComplete: [String] = []

    public init() {}

    /// The DCMTK tool path `--executable` gives, for the DCMTK backend.
    public var executables: [String: String] {
        executable.map { [BackendOperation.listen.dcmtkTool: $0] } ?? [:]
    }

    public func validate() throws {
        if !(0...65535).contains(port) { throw ValidationError("--port \(port) is out of range 0-65535") }
        do { try AETitle.validate(aeTitle, role: "--aet") } catch { throw ValidationError(error.message) }
        if let layout { do { _ = try StorageLayout(template: layout) } catch { throw ValidationError(error.message) } }
        if let seriesTimeout, !(seriesTimeout > 0) { throw ValidationError("--series-timeout must be positive") }
    }

    /// The receiver these options describe, the root made absolute.
    /// - Throws: ``PXError/usage(_:)`` for a bad layout or AE title.
    public func configuration() throws(PXError) -> ListenConfiguration {
        let allowed: Set<String>? = allowCalling.map { Set($0.split(separator: ",").map { String($0) }) }
        var configuration = try ListenConfiguration(
            port: port, aeTitle: aeTitle, root: absolutePath(root),
            layout: try layout.map { (template: String) throws(PXError) in
                do throws(StorageError) { return try StorageLayout(template: template) } catch { throw .storage(error) }
            } ?? StorageLayout(),
            timeouts: server.timeouts,
            duplicates: onDuplicate, fsync: fsync, seriesTimeout: seriesTimeout,
            maximumAssociations: server.maxAssociations, acceptsAnyCalledAETitle: !strictCalledAET,
            allowedCallingAETitles: allowed, shutdownGrace: server.shutdownGrace)
        configuration.limits = try server.limits()
        configuration.userAccounts = try server.userAccounts()
        configuration.commitmentDestinations = try server.commitmentDestinations()
        return try tls.applied(to: configuration)
    }
}
